//! The user simulator's toolkit (`KnowledgeUserTools`): credit card applications,
//! referrals, transactions, transfer requests, and the discoverable tools the agent gives.
//! It writes the agent's database (upstream shares the one `TransactionalDB` object), so
//! user writes appear among the agent's changed records.

use super::args::{Args, fmt2, key, number, parse_balance, record, to_float};
use super::db::Db;
use super::pyfmt::f2;
use super::{TODAY, defs, ids, pyfmt};
use crate::py;
use crate::tooling::{ToolError, bind_method};
use serde_json::{Map, Value};
use tauguard_core::pyjson;

const OWNER: &str = "KnowledgeUserTools";

const CARD_TYPES: &[&str] = &[
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
];

/// `CREDIT_CARD_REWARDS`: per card, the rate by category and the default, in order.
/// A card, its rates by category, its default rate.
type Rewards = (&'static str, &'static [(&'static str, f64)], f64);

const REWARDS: &[Rewards] = &[
    ("Bronze Rewards Card", &[], 1.0),
    (
        "Silver Rewards Card",
        &[("Travel", 4.0), ("Software", 4.0)],
        1.0,
    ),
    ("Gold Rewards Card", &[], 2.5),
    ("Platinum Rewards Card", &[], 10.0),
    ("Business Bronze Rewards Card", &[], 1.0),
    (
        "Business Silver Rewards Card",
        &[("Travel", 10.0), ("Software", 10.0)],
        1.0,
    ),
    ("Green Rewards Card", &[("Sustainable", 3.0)], 1.0),
    ("Business Gold Rewards Card", &[("Operations", 2.5)], 1.0),
    (
        "Business Platinum Rewards Card",
        &[("Travel", 4.0), ("Software", 4.0), ("Media", 4.0)],
        1.5,
    ),
    ("Silver Zoom Card", &[("Transportation", 3.0)], 1.0),
    ("Diamond Elite Card", &[], 5.0),
    ("EcoCard", &[("Green", 5.0)], 1.0),
    ("Crypto-Cash Back", &[], 2.0),
];

pub(super) fn call(db: &mut Db, name: &str, raw: &Map<String, Value>) -> Result<String, ToolError> {
    bind_method(OWNER, defs::USER, name, raw)?;
    let a = Args(raw);
    match name {
        "apply_for_credit_card" => apply_for_card(db, a),
        "submit_referral" => {
            let (user, kind) = (a.s("user_id"), a.s("account_type"));
            let id = ids::referral(&user, &kind);
            Ok(if !add_referral(db, &id, a, "account_type") {
                format!("Failed to submit referral: Record ID '{id}' may already exist.")
            } else {
                format!(
                    "Referral request submitted successfully!\n  - Referral ID: {id}\n  - Referrer ID: {user}\n  - Account Type: {kind}\n  - Status: NO_PROGRESS\n  - Date: {TODAY}\n\nShare your referral ID with the person you're referring. They will need to use this when applying for their account."
                )
            })
        }
        "call_discoverable_user_tool" => call_discoverable(db, a),
        "list_discoverable_user_tools" => Ok(format!(
            "Tools given to you by the agent:\n{}",
            db.query_tool("user_discoverable_tools", "{}")
        )),
        "request_human_agent_transfer" => {
            let existing = db.query_tool("human_transfer_requests", "{}");
            let count =
                if existing.contains("No records found") || existing.contains("No results found") {
                    1
                } else {
                    existing.matches("request_id").count() + 1
                };
            let id = format!("transfer_request_{count}");
            let rec = record(vec![
                ("request_id", Value::String(id.clone())),
                ("request_number", Value::from(count)),
                ("requested_at", Value::from(TODAY)),
                ("status", Value::from("PENDING")),
            ]);
            db.add("human_transfer_requests", &id, rec);
            Ok(format!(
                "Transfer request #{count} submitted.\nThe agent will process your request."
            ))
        }
        "submit_transaction" => submit_transaction(db, a),
        "query_database" => Ok(db.query_tool(
            &a.s("database_name"),
            raw.get("constraints")
                .and_then(Value::as_str)
                .unwrap_or("{}"),
        )),
        other => Err(py::no_attribute(OWNER, other)),
    }
}

fn apply_for_card(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !super::args::one_of(a.v("card_type"), CARD_TYPES) {
        return Ok(format!(
            "Error: Invalid card_type '{}'. Must be one of: {}",
            a.s("card_type"),
            super::args::list_repr(CARD_TYPES)
        ));
    }
    let Some(income) = to_float(a.v("annual_income")) else {
        return Ok("Error: Invalid annual_income. Must be a number.".into());
    };
    let subscription =
        a.0.get("rho_bank_subscription")
            .cloned()
            .unwrap_or(Value::Bool(false));
    let id = ids::application(
        &a.s("card_type"),
        &a.s("customer_name"),
        income,
        &subscription,
    );
    let rec = record(vec![
        ("application_id", Value::String(id.clone())),
        ("card_type", a.v("card_type").clone()),
        ("customer_name", a.v("customer_name").clone()),
        ("annual_income", pyfmt::float_value(income)),
        ("rho_bank_subscription", subscription),
        ("status", Value::from("PENDING")),
        ("date", Value::from(TODAY)),
    ]);
    Ok(if !db.add("credit_card_applications", &id, rec) {
        format!("Failed to submit application: Record ID '{id}' may already exist.")
    } else {
        "Credit card application submitted:\nYour application has been successfully submitted. You will receive a decision within 5-7 business days via email.".into()
    })
}

fn submit_transaction(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let card = a.v("credit_card_type");
    let Some((_, rates, default)) = REWARDS.iter().find(|(c, _, _)| card.as_str() == Some(c))
    else {
        let names: Vec<&str> = REWARDS.iter().map(|(c, _, _)| *c).collect();
        return Ok(format!(
            "Error: Unknown credit card type '{}'. Available types: {}",
            a.s("credit_card_type"),
            super::args::list_repr(&names)
        ));
    };
    let amount_text = fmt2(a.v("amount"))?;
    let (user, card_s, merchant, category) = (
        a.s("user_id"),
        a.s("credit_card_type"),
        a.s("merchant_name"),
        a.s("category"),
    );
    let amount = number(a.v("amount")).unwrap_or(0.0);
    let id = ids::transaction(&user, &card_s, &merchant, amount, &category);
    py::dict_key(a.v("category"))?;
    let rate = rates
        .iter()
        .find(|(c, _)| a.v("category").as_str() == Some(c))
        .map_or(*default, |(_, r)| *r);
    let points = (amount * rate).trunc() as i64;
    let rec = record(vec![
        ("transaction_id", Value::String(id.clone())),
        ("user_id", a.v("user_id").clone()),
        ("credit_card_type", card.clone()),
        ("merchant_name", a.v("merchant_name").clone()),
        (
            "transaction_amount",
            Value::String(format!("${amount_text}")),
        ),
        ("transaction_date", Value::from(TODAY)),
        ("category", a.v("category").clone()),
        ("status", Value::from("COMPLETED")),
        ("rewards_earned", Value::String(format!("{points} points"))),
    ]);
    if !db.add("credit_card_transaction_history", &id, rec) {
        return Ok(format!(
            "Failed to submit transaction: Record ID '{id}' may already exist."
        ));
    }
    Ok(format!(
        "Transaction submitted successfully!\n  - Transaction ID: {id}\n  - User ID: {user}\n  - Card Type: {card_s}\n  - Merchant: {merchant}\n  - Amount: ${amount_text}\n  - Category: {category}\n  - Date: {TODAY}\n  - Rewards Earned: {points} points ({}% cashback rate)\n",
        pyjson::float_repr(rate)
    ))
}

/// `param_name in args_dict` for whatever JSON the arguments decoded to.
fn contains(args: &Value, name: &str) -> Result<bool, ToolError> {
    match args {
        Value::Object(m) => Ok(m.contains_key(name)),
        Value::Array(items) => Ok(items.iter().any(|i| i.as_str() == Some(name))),
        Value::String(s) => Ok(s.contains(name)),
        other => Err(ToolError::type_error(format!(
            "argument of type '{}' is not iterable",
            pyjson::type_name(other)
        ))),
    }
}

fn call_discoverable(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let name_v = a.v("discoverable_tool_name");
    let Some(def) = py::dict_key(name_v)?.and_then(defs::user_discoverable) else {
        return Ok(format!(
            "Error: Unknown discoverable tool '{}'.",
            pyjson::py_str(name_v)
        ));
    };
    let args = match a.0.get("arguments") {
        None => Value::Object(Map::new()),
        Some(Value::String(s)) => match pyfmt::loads(s, true) {
            Ok(v) => v,
            Err(e) => return Ok(format!("Error: Invalid JSON in arguments: {e}")),
        },
        Some(other) => {
            return Err(ToolError::type_error(format!(
                "the JSON object must be str, bytes or bytearray, not {}",
                pyjson::type_name(other)
            )));
        }
    };
    for p in def.params.iter().filter(|p| p.required) {
        if !contains(&args, p.name)? {
            return Ok(format!("Error: Missing required parameter: {}", p.name));
        }
    }
    for item in py::iterate(&args)?.iter() {
        if !item
            .as_str()
            .is_some_and(|k| def.params.iter().any(|p| p.name == k))
        {
            py::dict_key(item)?;
            return Ok(format!(
                "Error: Unexpected parameter: {}",
                pyjson::py_str(item)
            ));
        }
    }
    let invalid = |message: String| {
        format!(
            "Error: Invalid arguments for tool '{}': {message}",
            def.name
        )
    };
    let Value::Object(args) = args else {
        return Ok(invalid(format!(
            "{OWNER}.{}() argument after ** must be a mapping, not {}",
            def.name,
            pyjson::type_name(&args)
        )));
    };
    match run(db, def.name, Args(&args)) {
        Err(e) if e.class == "TypeError" => Ok(invalid(e.message)),
        other => other,
    }
}

/// `_check_tool_given`: the error text when the agent has not given `name`.
fn not_given(db: &Db, name: &str) -> Option<String> {
    let result = db.query_tool(
        "user_discoverable_tools",
        &format!("{{\"tool_name\": \"{name}\"}}"),
    );
    result.contains("No records found").then(|| {
        format!(
            "Error: Tool '{name}' has not been given to you by the agent. The agent must first use `give_discoverable_user_tool` to give this tool to you."
        )
    })
}

/// `_log_user_tool_call`.
fn log_call(db: &mut Db, name: &str, args: &Value) {
    let rec = record(vec![
        ("tool_name", Value::String(name.to_string())),
        ("arguments", args.clone()),
        ("called_at", Value::from(TODAY)),
        ("status", Value::from("CALLED")),
    ]);
    db.add(
        "user_discoverable_tool_calls",
        &ids::user_discoverable_tool_call(name, args),
        rec,
    );
}

/// The given discoverable tool `name`, once the agent has given it.
fn run(db: &mut Db, name: &str, a: Args) -> Result<String, ToolError> {
    if let Some(error) = not_given(db, name) {
        return Ok(error);
    }
    match name {
        "submit_cash_back_dispute_0589" => Ok(submit_cash_back_dispute(db, name, a)),
        "get_referral_link" => Ok(referral_link(db, name, a)),
        "get_card_last_4_digits" => Ok(card_last_4_digits(db, name, a)),
        "deposit_check_3847" => deposit_check(db, name, a),
        other => Err(py::no_attribute(OWNER, other)),
    }
}

/// The arguments a discoverable tool logs and echoes, in its signature's order.
fn pick(a: Args, names: &[&str]) -> Value {
    Value::Object(
        names
            .iter()
            .map(|n| ((*n).to_string(), a.v(n).clone()))
            .collect(),
    )
}

fn submit_cash_back_dispute(db: &mut Db, name: &str, a: Args) -> String {
    let args = pick(a, &["user_id", "transaction_id"]);
    log_call(db, name, &args);
    let id = ids::dispute(&a.s("user_id"), &a.s("transaction_id"));
    let auto = db
        .get("task_config", "dispute_settings")
        .and_then(|c| c.get("auto_resolve_disputes"))
        .is_some_and(pyfmt::truthy);
    let mut fields = vec![
        ("dispute_id", Value::String(id.clone())),
        ("user_id", a.v("user_id").clone()),
        ("transaction_id", a.v("transaction_id").clone()),
        ("submitted_at", Value::from(TODAY)),
    ];
    let status = if auto {
        fields.push(("status", Value::from("RESOLVED")));
        fields.push(("resolution", Value::from("APPROVED")));
        "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be updated."
    } else {
        fields.push(("status", Value::from("SUBMITTED")));
        "Status: SUBMITTED - Your dispute has been queued for review."
    };
    let added = db.add("cash_back_disputes", &id, record(fields));
    let mut out = format!(
        "Cash back dispute submitted successfully. Your case has been queued for review.\n\nExecuted: {name}\nArguments: {}\n",
        pyfmt::dumps_indent2(&args)
    );
    if added {
        out.push_str(&format!("Dispute ID: {id}\n{status}"));
    } else {
        out.push_str("Note: Dispute may have already been submitted for this transaction.");
    }
    out
}

/// Adds a `referrals` record, referred to what the `referred` argument names; false when
/// the id is taken.
fn add_referral(db: &mut Db, id: &str, a: Args, referred: &str) -> bool {
    let rec = record(vec![
        ("referral_id", Value::String(id.to_string())),
        ("referrer_id", a.v("user_id").clone()),
        ("referred_account_type", a.v(referred).clone()),
        ("referral_status", Value::from("NO_PROGRESS")),
        ("date", Value::from(TODAY)),
    ]);
    db.add("referrals", id, rec)
}

fn referral_link(db: &mut Db, name: &str, a: Args) -> String {
    let args = pick(a, &["user_id", "card_name"]);
    log_call(db, name, &args);
    let id = ids::referral_link(&a.s("user_id"), &a.s("card_name"));
    let added = add_referral(db, &id, a, "card_name");
    let mut out = format!(
        "Referral link generated successfully. Share this link with the person you want to refer.\n\nExecuted: {name}\nArguments: {}\n",
        pyfmt::dumps_indent2(&args)
    );
    if added {
        out.push_str(&format!(
            "Referral ID: {id}\nReferral link: https://rhobank.com/refer/{id}"
        ));
    } else {
        out.push_str("Note: A referral link for this card may have already been generated.");
    }
    out
}

fn card_last_4_digits(db: &mut Db, name: &str, a: Args) -> String {
    let args = pick(a, &["credit_card_account_id"]);
    log_call(db, name, &args);
    let account = a.s("credit_card_account_id");
    let result = db.query_tool(
        "credit_card_accounts",
        &format!("{{\"account_id\": \"{account}\"}}"),
    );
    if result.contains("No results found") || result.contains("No records found") {
        return format!("Error: Credit card account '{account}' not found.");
    }
    let digest = ids::sha256_hex(&format!("card_last4:{account}"));
    let last4: String = digest
        .chars()
        .filter(char::is_ascii_digit)
        .take(4)
        .collect();
    format!(
        "Card information retrieved successfully.\n\nExecuted: {name}\nArguments: {}\nLast 4 digits of card: {last4:0<4}",
        pyfmt::dumps_indent2(&args)
    )
}

fn deposit_check(db: &mut Db, name: &str, a: Args) -> Result<String, ToolError> {
    let args = pick(a, &["account_id", "check_amount"]);
    log_call(db, name, &args);
    let Some(amount) = to_float(a.v("check_amount")) else {
        return Ok(format!(
            "Error: Invalid check amount '{}'. Must be a number.",
            a.s("check_amount")
        ));
    };
    if amount <= 0.0 {
        return Ok("Error: Check amount must be positive.".into());
    }
    let id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    if !super::args::field_is(account, "status", "ACTIVE")
        && !super::args::field_is(account, "status", "OPEN")
    {
        return Ok(format!("Error: Account '{id}' is not active."));
    }
    let held = account
        .get("current_holdings")
        .or_else(|| account.get("balance"))
        .cloned()
        .unwrap_or(Value::from(0));
    let before = parse_balance(&held)?;
    let after = before + amount;
    db.update(
        "accounts",
        &id,
        &[("current_holdings", Value::String(format!("${}", f2(after))))],
    );
    Ok(format!(
        "Check deposited successfully. Funds will be available according to your account's deposit policy.\n\nExecuted: {name}\nArguments: {}\nCheck deposit processed!\n  - Account: {id}\n  - Check Amount: ${}\n  - Previous Balance: ${}\n  - New Balance: ${}",
        pyfmt::dumps_indent2(&args),
        f2(amount),
        f2(before),
        f2(after)
    ))
}
