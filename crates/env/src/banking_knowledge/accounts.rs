//! Discoverable agent tools on bank (checking and savings) accounts: opening and closing
//! with their eligibility and early-closure rules, listings, transfers, credits and
//! interest reports.

use super::args::{Args, account_balance, field_is, field_str, key, record, to_float};
use super::card_orders::age_days;
use super::db::{Db, format_records};
use super::pyfmt::{f2, float_value};
use super::{TODAY, debit_disputes, ids};
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use tauguard_core::pyjson;

/// Runs `name` if it is one of this file's tools.
pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    if let Some(out) = debit_disputes::call(db, name, a)? {
        return Ok(Some(out));
    }
    Ok(Some(match name {
        "open_bank_account_4821" => open(db, a)?,
        "close_bank_account_7392" => close(db, a)?,
        "get_all_user_accounts_by_user_id_3847" => all_accounts(db, a),
        "transfer_funds_between_bank_accounts_7291" => transfer(db, a)?,
        "apply_checking_account_credit_5829" => credit(db, a, Credit::Checking)?,
        "apply_savings_account_credit_6831" => credit(db, a, Credit::Savings)?,
        "submit_interest_discrepancy_report_7294" => interest_report(db, a)?,
        "get_bank_account_transactions_9173" => transactions(db, a)?,
        _ => return Ok(None),
    }))
}

const ELIGIBILITY: &str = "Error: Account eligibility requirements not met.";

/// `acc.get("account_type", acc.get("class", ""))`.
fn account_kind(acc: &Map<String, Value>) -> String {
    acc.get("account_type")
        .or_else(|| acc.get("class"))
        .map_or_else(String::new, pyjson::py_str)
}

fn open_or_active(acc: &Map<String, Value>) -> bool {
    field_is(acc, "status", "OPEN") || field_is(acc, "status", "ACTIVE")
}

/// `get_account_age_days`: 0 when the date does not parse.
fn age(acc: &Map<String, Value>) -> i64 {
    acc.get("date_opened")
        .and_then(Value::as_str)
        .and_then(age_days)
        .unwrap_or(0)
}

fn open(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if a.missing(&["user_id", "account_type", "account_class"]) {
        return Ok("Error: Missing required parameters.".into());
    }
    const TYPES: &[&str] = &[
        "checking",
        "savings",
        "business_checking",
        "business_savings",
    ];
    let kind = a.v("account_type");
    if !super::args::one_of(kind, TYPES) {
        return Ok(super::tools::invalid("account_type", TYPES));
    }
    let user = a.v("user_id");
    let mine: Vec<&Map<String, Value>> = db
        .records("accounts")
        .into_iter()
        .map(|(_, acc)| acc)
        .filter(|acc| acc.get("user_id") == Some(user))
        .collect();
    let checking = |acc: &Map<String, Value>| {
        let k = account_kind(acc);
        (k == "checking" || k == "personal_checking") && open_or_active(acc)
    };
    let eligible = match kind.as_str().unwrap_or("") {
        "savings" => mine.iter().any(|acc| checking(acc) && age(acc) >= 14),
        "business_checking" => {
            !mine.iter().any(|acc| field_is(acc, "status", "CLOSED"))
                && mine.iter().any(|acc| checking(acc))
        }
        "business_savings" => {
            for acc in &mine {
                if account_balance(acc)? < 0.0 {
                    return Ok(ELIGIBILITY.into());
                }
            }
            mine.iter().any(|acc| {
                account_kind(acc) == "business_checking" && open_or_active(acc) && age(acc) >= 30
            })
        }
        _ => true,
    };
    if !eligible {
        return Ok(ELIGIBILITY.into());
    }
    let (user_s, kind_s, class_s) = (a.s("user_id"), a.s("account_type"), a.s("account_class"));
    let id = ids::deterministic(&format!("account:{user_s}:{kind_s}:{class_s}"), 16);
    let rec = record(vec![
        ("account_id", Value::String(id.clone())),
        ("user_id", user.clone()),
        ("account_type", kind.clone()),
        ("account_class", a.v("account_class").clone()),
        ("current_holdings", Value::from("0.00")),
        ("status", Value::from("OPEN")),
        ("date_opened", Value::from(TODAY)),
    ]);
    if !db.add("accounts", &id, rec) {
        return Ok(format!(
            "Failed to open account: Account ID '{id}' may already exist."
        ));
    }
    Ok(format!(
        "Bank account opened successfully!\n  - Account ID: {id}\n  - User ID: {user_s}\n  - Account Type: {kind_s}\n  - Account Class: {class_s}\n  - Status: OPEN\n  - Initial Balance: $0.00\n  - Date Opened: {TODAY}"
    ))
}

/// Early-closure fee and window (days) by account level, per class.
fn early_closure(class: &str, level: &str) -> Option<(f64, i64)> {
    let table: &[(&str, f64, i64)] = match class {
        "checking" => &[
            ("Light Blue Account", 15.0, 30),
            ("Light Green Account", 15.0, 30),
            ("Green Fee-Free Account", 15.0, 30),
            ("Blue Account", 25.0, 60),
            ("Green Account", 25.0, 60),
            ("Evergreen Account", 50.0, 90),
            ("Bluest Account", 100.0, 180),
        ],
        "savings" => &[
            ("Bronze Account", 20.0, 60),
            ("Silver Account", 35.0, 90),
            ("Silver Plus Account", 35.0, 90),
            ("Gold Account", 75.0, 180),
            ("Gold Plus Account", 75.0, 180),
            ("Gold Years Account", 75.0, 180),
            ("Platinum Account", 150.0, 270),
            ("Platinum Plus Account", 150.0, 270),
            ("Diamond Elite Account", 150.0, 270),
        ],
        _ => &[],
    };
    table
        .iter()
        .find(|(l, _, _)| *l == level)
        .map(|(_, fee, days)| (*fee, *days))
}

fn close(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("account_id") {
        return Ok("Error: Missing required parameter (account_id).".into());
    }
    let reason =
        a.0.get("reason")
            .cloned()
            .unwrap_or(Value::from("Customer requested closure"));
    let waive =
        a.0.get("waive_early_closure_fee")
            .cloned()
            .unwrap_or(Value::Bool(false));
    let id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    if field_is(account, "status", "CLOSED") {
        return Ok(format!("Error: Account '{id}' is already closed."));
    }
    let balance = account_balance(account)?;
    let mut fee = 0.0;
    if !super::pyfmt::truthy(&waive) {
        let rule = early_closure(field_str(account, "class"), field_str(account, "level"));
        let opened = field_str(account, "date_opened");
        if let (Some((required, window)), false) = (rule, opened.is_empty())
            && let Some(days) = age_days(opened)
            && days < window
        {
            if balance < required {
                return Ok("Error: Account unable to be closed.".into());
            }
            fee = required;
        }
    }
    if balance - fee != 0.0 {
        return Ok(format!(
            "Error: Account balance must be $0.00 before closing. Current balance: ${}",
            f2(balance)
        ));
    }
    let Some(account) = db.get_mut("accounts", &id) else {
        return Ok(format!("Error: Account '{id}' not found."));
    };
    account.insert("status".into(), Value::from("CLOSED"));
    account.insert("date_closed".into(), Value::from(TODAY));
    account.insert("closure_reason".into(), reason.clone());
    account.insert("early_closure_fee_waived".into(), waive.clone());
    let shown = |k: &str| {
        account
            .get(k)
            .map_or_else(|| "N/A".to_string(), pyjson::py_str)
    };
    Ok(format!(
        "Bank account closed successfully!\n  - Account ID: {id}\n  - Account Type: {}\n  - Account Class: {}\n  - Status: CLOSED\n  - Date Closed: {TODAY}\n  - Reason: {}\n  - Early Closure Fee Waived: {}",
        shown("account_type"),
        shown("account_class"),
        pyjson::py_str(&reason),
        if super::pyfmt::truthy(&waive) {
            "Yes"
        } else {
            "No"
        }
    ))
}

fn all_accounts(db: &Db, a: Args) -> String {
    if !a.truthy("user_id") {
        return "Error: Missing required parameter: user_id".into();
    }
    let user = a.s("user_id");
    let constraint = format!("{{\"user_id\": \"{user}\"}}");
    let accounts = db.query_tool("accounts", &constraint);
    let cards = db.query_tool("credit_card_accounts", &constraint);
    let found = |r: &str| !r.contains("No records found") && !r.contains("No results found");
    let mut parts = vec![
        "User accounts retrieved successfully.".to_string(),
        String::new(),
        "Executed: get_all_user_accounts_by_user_id_3847".into(),
        format!("Accounts for user {user}:"),
        String::new(),
        "Bank Accounts:".into(),
    ];
    parts.push(if found(&accounts) {
        accounts
    } else {
        "  No bank accounts found.".into()
    });
    parts.push("\nCredit Card Accounts:".into());
    parts.push(if found(&cards) {
        cards
    } else {
        "  No credit card accounts found.".into()
    });
    parts.join("\n")
}

fn transfer(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("source_account_id") || !a.truthy("destination_account_id") || a.is_none("amount")
    {
        return Ok("Error: Missing required parameters (source_account_id, destination_account_id, amount).".into());
    }
    let Some(amount) = to_float(a.v("amount")) else {
        return Ok(format!(
            "Error: Invalid amount '{}'. Must be a number.",
            a.s("amount")
        ));
    };
    if amount <= 0.0 {
        return Ok("Error: Transfer amount must be positive.".into());
    }
    if a.v("source_account_id") == a.v("destination_account_id") {
        return Ok("Error: Source and destination accounts cannot be the same.".into());
    }
    let (src, dst) = (
        key(a.v("source_account_id"))?,
        key(a.v("destination_account_id"))?,
    );
    let Some(source) = db.get("accounts", &src) else {
        return Ok(format!(
            "Error: Source account '{}' not found.",
            a.s("source_account_id")
        ));
    };
    let Some(dest) = db.get("accounts", &dst) else {
        return Ok(format!(
            "Error: Destination account '{}' not found.",
            a.s("destination_account_id")
        ));
    };
    if !open_or_active(source) {
        return Ok(format!("Error: Source account '{src}' is not active."));
    }
    if !open_or_active(dest) {
        return Ok(format!("Error: Destination account '{dst}' is not active."));
    }
    let from = account_balance(source)?;
    if from < amount {
        return Ok(format!(
            "Error: Insufficient funds. Source account balance is ${}, but transfer amount is ${}.",
            f2(from),
            f2(amount)
        ));
    }
    let to = account_balance(dest)?;
    let (new_from, new_to) = (from - amount, to + amount);
    db.update(
        "accounts",
        &src,
        &[(
            "current_holdings",
            Value::String(format!("${}", f2(new_from))),
        )],
    );
    db.update(
        "accounts",
        &dst,
        &[(
            "current_holdings",
            Value::String(format!("${}", f2(new_to))),
        )],
    );
    Ok(format!(
        "Transfer completed successfully!\n  - Amount: ${}\n  - From: {src} (new balance: ${})\n  - To: {dst} (new balance: ${})",
        f2(amount),
        f2(new_from),
        f2(new_to)
    ))
}

#[derive(Clone, Copy, PartialEq)]
enum Credit {
    Checking,
    Savings,
}

fn credit(db: &mut Db, a: Args, which: Credit) -> Result<String, ToolError> {
    if !a.truthy("account_id") || a.is_none("amount") || !a.truthy("credit_type") {
        return Ok("Error: Missing required parameters.".into());
    }
    let Some(amount) = to_float(a.v("amount")) else {
        return Ok("Error: Invalid credit amount. Must be a number.".into());
    };
    if amount <= 0.0 {
        return Ok("Error: Credit amount must be positive.".into());
    }
    let types: &[&str] = match which {
        Credit::Checking => &["rebate_credit", "fee_refund"],
        Credit::Savings => &["interest_correction", "fee_refund", "goodwill_credit"],
    };
    if let Some(refusal) = a.not_one_of("credit_type", types) {
        return Ok(refusal);
    }
    let id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    let class = crate::py::lower(account.get("class").unwrap_or(&Value::from("")))?;
    match which {
        Credit::Checking if class != "checking" => {
            return Ok(format!(
                "Error: Account '{id}' is not a checking account. Credits can only be applied to checking accounts."
            ));
        }
        Credit::Savings if class != "saving" && class != "savings" => {
            return Ok(format!(
                "Error: Account '{id}' is not a savings account. This tool only applies to savings accounts."
            ));
        }
        _ => {}
    }
    if !open_or_active(account) {
        return Ok(format!("Error: Account '{id}' is not active."));
    }
    let before = account_balance(account)?;
    let after = before + amount;
    let holdings = match which {
        Credit::Checking => format!("${}", f2(after)),
        Credit::Savings => f2(after),
    };
    db.update(
        "accounts",
        &id,
        &[("current_holdings", Value::String(holdings))],
    );
    let kind = a.s("credit_type");
    let prefix = if which == Credit::Checking {
        "checking_credit"
    } else {
        "savings_credit"
    };
    let seed = format!(
        "{prefix}:{id}:{kind}:{}:{TODAY}",
        pyjson::float_repr(amount)
    );
    let txn_id = format!("txn_{}", ids::deterministic(&seed, 16));
    let description = match kind.as_str() {
        "rebate_credit" => "REBATE CREDIT - CUSTOMER SERVICE",
        "interest_correction" => "INTEREST CORRECTION - CUSTOMER SERVICE",
        "fee_refund" => "FEE REFUND - CUSTOMER SERVICE",
        _ => "GOODWILL CREDIT - CUSTOMER SERVICE",
    };
    let txn = record(vec![
        ("transaction_id", Value::String(txn_id.clone())),
        ("account_id", a.v("account_id").clone()),
        ("date", Value::from(TODAY)),
        ("description", Value::from(description)),
        ("amount", float_value(amount)),
        ("type", a.v("credit_type").clone()),
        ("status", Value::from("posted")),
    ]);
    db.put("bank_account_transaction_history", &txn_id, txn);
    Ok(format!(
        "\nCredit applied successfully!\n  - Transaction ID: {txn_id}\n  - Account: {id}\n  - Credit Type: {kind}\n  - Amount: ${}\n  - Previous Balance: ${}\n  - New Balance: ${}",
        f2(amount),
        f2(before),
        f2(after)
    ))
}

/// Python `round(x, 4)`: correctly rounded on the binary value, then its repr.
fn round4(x: f64) -> f64 {
    format!("{x:.4}").parse().unwrap_or(x)
}

fn interest_report(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let names = ["expected_apy", "actual_apy", "amount_difference"];
    if !a.truthy("account_id") || !a.truthy("user_id") || names.iter().any(|k| a.is_none(k)) {
        return Ok("Error: Missing required parameters.".into());
    }
    let parsed: Option<Vec<f64>> = names.iter().map(|k| to_float(a.v(k))).collect();
    let Some(values) = parsed else {
        return Ok(
            "Error: expected_apy, actual_apy, and amount_difference must be numbers.".into(),
        );
    };
    let (expected, actual, difference) = (values[0], values[1], values[2]);
    let id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    let user_key = key(a.v("user_id"))?;
    let Some(user) = db.get("users", &user_key) else {
        return Ok(format!("Error: User '{}' not found.", a.s("user_id")));
    };
    let level = account
        .get("level")
        .map_or_else(|| "Unknown".to_string(), pyjson::py_str);
    let name = user
        .get("name")
        .map_or_else(|| "Unknown".to_string(), pyjson::py_str);
    // The report goes to a table the model does not have (`interest_discrepancy_reports`):
    // upstream's `add_to_db` finds no such table and stores nothing.
    let apy_diff = pyjson::float_repr(round4(expected - actual));
    Ok(format!(
        "\nInterest Discrepancy Report Submitted Successfully!\n  - Report ID: IDR_{}\n  - Account: {id} ({level})\n  - Customer: {name}\n  - Expected APY: {}%\n  - Actual APY: {}%\n  - APY Difference: {apy_diff}%\n  - Amount Difference: ${}\n  - Status: PENDING_REVIEW\n\nThe backend team will investigate this discrepancy and ensure correct APY calculations are applied going forward.",
        ids::deterministic(
            &format!(
                "interest_report:{id}:{}:{}:{}:{TODAY}",
                a.s("user_id"),
                pyjson::float_repr(expected),
                pyjson::float_repr(actual)
            ),
            16
        ),
        pyjson::float_repr(expected),
        pyjson::float_repr(actual),
        f2(difference)
    ))
}

/// The sort key of a transaction date: `%m/%d/%Y %H:%M:%S` or `%m/%d/%Y`, else `datetime.min`.
fn txn_time(record: &Map<String, Value>) -> (i64, i64) {
    let raw = record.get("date").map_or_else(String::new, pyjson::py_str);
    let (day, time) = match raw.split_once(' ') {
        Some((d, t)) => (d, Some(t)),
        None => (raw.as_str(), None),
    };
    let seconds = match time {
        None => Some(0),
        Some(t) => {
            let p: Vec<&str> = t.split(':').collect();
            let ok = p.len() == 3
                && p.iter().all(|x| {
                    !x.is_empty() && x.len() <= 2 && x.chars().all(|c| c.is_ascii_digit())
                });
            ok.then(|| {
                let n: Vec<i64> = p.iter().map(|x| x.parse().unwrap_or(0)).collect();
                (n[0] < 24 && n[1] < 60 && n[2] < 62).then_some(n[0] * 3600 + n[1] * 60 + n[2])
            })
            .flatten()
        }
    };
    match (super::card_orders::day_number(day), seconds) {
        (Some(d), Some(s)) => (d, s),
        _ => (i64::MIN, 0),
    }
}

fn transactions(db: &Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("account_id") {
        return Ok("Error: Missing required parameter: account_id".into());
    }
    let id = key(a.v("account_id"))?;
    if !db.contains("accounts", &id) {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    }
    let mut txns: Vec<(&String, &Map<String, Value>)> = db
        .records("bank_account_transaction_history")
        .into_iter()
        .filter(|(_, t)| t.get("account_id") == Some(a.v("account_id")))
        .collect();
    txns.sort_by_key(|(_, t)| std::cmp::Reverse(txn_time(t)));
    let mut parts = vec![
        "Bank account transactions retrieved successfully.".to_string(),
        String::new(),
        "Executed: get_bank_account_transactions_9173".into(),
        format!("Transactions for account {id}:"),
    ];
    if txns.is_empty() {
        parts.push("\nNo transactions found for this account.".into());
    } else {
        parts.push(format_records("bank_account_transaction_history", &txns));
    }
    Ok(parts.join("\n"))
}
