//! Discoverable agent tools on credit card money: paying a card from checking, payment
//! history, and credit limit increase requests (submit, approve, deny).

use super::args::{Args, account_balance, field, field_is, number, record, to_float};
use super::db::{Db, Record};
use super::pyfmt::{f2, thousands};
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::Value;

/// Runs `name` if it is one of this file's tools.
pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    Ok(Some(match name {
        "pay_credit_card_from_checking_9182" => pay_from_checking(db, a)?,
        "submit_credit_limit_increase_request_7392" => submit_cli(db, a)?,
        "get_payment_history_6183" => payment_history(db, a)?,
        "approve_credit_limit_increase_5847" => approve_cli(db, a)?,
        "deny_credit_limit_increase_5848" => deny_cli(db, a)?,
        _ => return Ok(None),
    }))
}

/// A `"$1,234.50"`-style amount field, 0 when it does not parse.
fn dollars(record: &serde_json::Map<String, Value>, name: &str, default: &str) -> f64 {
    let raw = record
        .get(name)
        .map_or_else(|| default.to_string(), tauguard_core::pyjson::py_str);
    super::args::parse_float_text(&raw.replace(['$', ','], "")).unwrap_or(0.0)
}

/// The `table` record the `arg` argument names, with its key, if it belongs to the `user_id`
/// argument; `Err` holds upstream's refusal, which calls the record `what`.
fn users_record<'d>(
    db: &'d Db,
    a: Args,
    table: &str,
    arg: &str,
    what: &str,
) -> Result<Result<(String, &'d Record), String>, ToolError> {
    let id = super::args::key(a.v(arg))?;
    let name = a.s(arg);
    Ok(match db.get(table, &id) {
        None => Err(format!("Error: {what} '{name}' not found.")),
        Some(found) if found.get("user_id") != Some(a.v("user_id")) => Err(format!(
            "Error: {what} '{name}' does not belong to user '{}'.",
            a.s("user_id")
        )),
        Some(found) => Ok((id, found)),
    })
}

fn pay_from_checking(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("user_id")
        || !a.truthy("checking_account_id")
        || !a.truthy("credit_card_account_id")
        || a.is_none("amount")
    {
        return Ok("Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount).".into());
    }
    let Some(amount) = to_float(a.v("amount")) else {
        return Ok("Error: Invalid payment amount. Must be a positive number.".into());
    };
    if amount <= 0.0 {
        return Ok("Error: Payment amount must be a positive number.".into());
    }
    let (checking_name, card_name) = (a.s("checking_account_id"), a.s("credit_card_account_id"));
    let (checking_id, checking) =
        match users_record(db, a, "accounts", "checking_account_id", "Checking account")? {
            Ok(found) => found,
            Err(refusal) => return Ok(refusal),
        };
    if !field_is(checking, "class", "checking") {
        return Ok(format!(
            "Error: Account '{checking_name}' is not a checking account."
        ));
    }
    let balance = account_balance(checking)?;
    if amount > balance {
        return Ok(format!(
            "Error: Insufficient funds in checking account. Available balance: ${}, requested payment: ${}.",
            f2(balance),
            f2(amount)
        ));
    }
    let (card_id, card) = match users_record(
        db,
        a,
        "credit_card_accounts",
        "credit_card_account_id",
        "Credit card account",
    )? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let owed = dollars(card, "current_balance", "$0.00");
    if amount > owed {
        return Ok(format!(
            "Error: Payment amount (${}) exceeds credit card balance (${}). Please specify an amount up to the outstanding balance.",
            f2(amount),
            f2(owed)
        ));
    }
    let (new_checking, new_card) = (balance - amount, owed - amount);
    db.update(
        "accounts",
        &checking_id,
        &[("current_holdings", Value::String(f2(new_checking)))],
    );
    db.update(
        "credit_card_accounts",
        &card_id,
        &[(
            "current_balance",
            Value::String(format!("${}", f2(new_card))),
        )],
    );
    Ok(format!(
        "Payment processed successfully!\n  - Payment Amount: ${}\n  - From Checking Account: {checking_name}\n  - To Credit Card Account: {card_name}\n  - New Checking Balance: ${}\n  - New Credit Card Balance: ${}\nThe payment has been applied immediately.",
        f2(amount),
        f2(new_checking),
        f2(new_card)
    ))
}

/// The credit card account `credit_card_account_id` names, with its display name and
/// table key, when it exists and belongs to `user_id`; else the refusal the agent reads.
fn users_card<'d>(
    db: &'d Db,
    a: Args,
) -> Result<Result<(String, String, &'d Record), String>, ToolError> {
    let account = a.s("credit_card_account_id");
    let key = super::args::key(a.v("credit_card_account_id"))?;
    let Some(card) = db.get("credit_card_accounts", &key) else {
        return Ok(Err(format!(
            "Error: Credit card account '{account}' not found."
        )));
    };
    if card.get("user_id") != Some(a.v("user_id")) {
        return Ok(Err(format!(
            "Error: Credit card account '{account}' does not belong to user '{}'.",
            a.s("user_id")
        )));
    }
    Ok(Ok((account, key, card)))
}

fn submit_cli(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("credit_card_account_id")
        || !a.truthy("user_id")
        || a.is_none("requested_increase_amount")
    {
        return Ok("Error: Missing required parameters.".into());
    }
    let Some(requested) = to_float(a.v("requested_increase_amount")) else {
        return Ok("Error: Invalid requested_increase_amount. Must be a whole number.".into());
    };
    if requested.fract() != 0.0 || !requested.is_finite() {
        return Ok(
            "Error: Invalid requested_increase_amount. Must be a whole number of dollars.".into(),
        );
    }
    let requested = requested as i64;
    if requested <= 0 {
        return Ok("Error: Requested increase amount must be positive.".into());
    }
    let (account, _, _) = match users_card(db, a)? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let id = ids::credit_limit_request(&account, &a.s("user_id"), requested as f64);
    let rec = record(vec![
        ("request_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("requested_increase_amount", Value::from(requested)),
        ("submitted_at", Value::from(TODAY)),
        ("status", Value::from("PENDING")),
    ]);
    if !db.add("credit_limit_increase_requests", &id, rec) {
        return Ok("Error: A similar request may already exist.".into());
    }
    Ok(format!(
        "Credit limit increase request submitted successfully.\n\nExecuted: submit_credit_limit_increase_request_7392\n  - Request ID: {id}\n  - Account: {account}\n  - Requested Increase: ${}\n  - Status: PENDING",
        thousands(requested)
    ))
}

fn payment_history(db: &Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("credit_card_account_id") || a.is_none("months") {
        return Ok("Error: Missing required parameters (credit_card_account_id, months).".into());
    }
    // `int(months)`: floats truncate, numeric strings of digits parse, others fail.
    let months = match a.v("months") {
        Value::String(s) => s.trim().parse::<i64>().ok(),
        v => number(v)
            .filter(|x| x.is_finite())
            .map(|x| x.trunc() as i64),
    };
    let Some(months) = months else {
        return Ok("Error: Invalid months value. Must be a positive integer.".into());
    };
    if months <= 0 {
        return Ok("Error: months must be a positive integer.".into());
    }
    let account = a.v("credit_card_account_id");
    let mut payments: Vec<&serde_json::Map<String, Value>> = db
        .records("payment_history")
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| p.get("credit_card_account_id") == Some(account))
        .collect();
    let name = a.s("credit_card_account_id");
    if payments.is_empty() {
        return Ok(format!("No payment history found for account '{name}'."));
    }
    let date = |p: &serde_json::Map<String, Value>| {
        p.get("payment_date")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    // A stable sort on the reversed key keeps ties in their original order, as Python's
    // `sort(reverse=True)` does.
    payments.sort_by_key(|p| std::cmp::Reverse(date(p)));
    payments.truncate(usize::try_from(months).unwrap_or(usize::MAX));
    let on_time = payments
        .iter()
        .take_while(|p| field_is(p, "status", "ON_TIME"))
        .count();
    let mut parts = vec![
        format!("Payment history for account '{name}' (last {months} months):"),
        format!("Consecutive on-time payments: {on_time}"),
    ];
    for p in payments {
        parts.push(format!(
            "\n  - Payment Date: {}\n    Amount: {}\n    Status: {}",
            field(p, "payment_date"),
            field(p, "amount"),
            field(p, "status")
        ));
    }
    Ok(parts.join("\n"))
}

fn approve_cli(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("credit_card_account_id") || !a.truthy("user_id") || a.is_none("new_credit_limit")
    {
        return Ok("Error: Missing required parameters.".into());
    }
    let (account, key, card) = match users_card(db, a)? {
        Ok(found) => found,
        Err(refusal) => return Ok(refusal),
    };
    let user = a.v("user_id");
    let open_dispute = db.records("transaction_disputes").iter().any(|(_, d)| {
        d.get("user_id") == Some(user)
            && d.get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| ["SUBMITTED", "UNDER_REVIEW", "PENDING"].contains(&s))
    });
    let open_order = db.records("credit_card_orders").iter().any(|(_, o)| {
        o.get("credit_card_account_id") == Some(a.v("credit_card_account_id"))
            && o.get("status")
                .and_then(Value::as_str)
                .is_some_and(|s| ["PENDING", "PROCESSING", "SHIPPED"].contains(&s))
    });
    let status = super::args::field_str(card, "account_status").to_uppercase();
    let bad_standing =
        ["PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED"].contains(&status.as_str());
    if open_dispute || open_order || bad_standing {
        return Ok("Error: Credit limit increase request cannot be approved at this time.".into());
    }
    let current = dollars(card, "credit_limit", "$0.00");
    let new_limit = to_float(a.v("new_credit_limit")).ok_or_else(|| {
        ToolError::type_error(format!(
            "float() argument must be a string or a real number, not '{}'",
            tauguard_core::pyjson::type_name(a.v("new_credit_limit"))
        ))
    })?;
    db.update(
        "credit_card_accounts",
        &key,
        &[("credit_limit", Value::String(format!("${}", f2(new_limit))))],
    );
    let increase = new_limit - current;
    let id = ids::credit_limit_request(&account, &a.s("user_id"), increase);
    let rec = record(vec![
        ("request_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("previous_limit", Value::String(format!("${}", f2(current)))),
        ("new_limit", Value::String(format!("${}", f2(new_limit)))),
        (
            "increase_amount",
            Value::String(format!("${}", f2(increase))),
        ),
        ("decision_date", Value::from(TODAY)),
        ("status", Value::from("APPROVED")),
    ]);
    db.add("credit_limit_increase_requests", &id, rec);
    Ok(format!(
        "Credit limit increase approved!\n  - Account: {account}\n  - Previous Limit: ${}\n  - New Limit: ${}\n  - Increase: ${}\n  - Effective Date: {TODAY}\nThe customer will receive a confirmation email.",
        f2(current),
        f2(new_limit),
        f2(increase)
    ))
}

fn deny_cli(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if a.missing(&["credit_card_account_id", "user_id", "denial_reason"]) {
        return Ok("Error: Missing required parameters.".into());
    }
    const REASONS: &[&str] = &[
        "insufficient_account_age",
        "cooldown_period_active",
        "pending_disputes",
        "pending_replacement_card",
        "past_due_balance",
        "high_utilization",
        "insufficient_payment_history",
        "requested_amount_exceeds_limit",
        "other",
    ];
    if !super::args::one_of(a.v("denial_reason"), REASONS) {
        return Ok(format!(
            "Error: Invalid denial_reason. Must be one of: {}",
            REASONS.join(", ")
        ));
    }
    let account = a.s("credit_card_account_id");
    let key = super::args::key(a.v("credit_card_account_id"))?;
    if !db.contains("credit_card_accounts", &key) {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    }
    let id = ids::credit_limit_request(&account, &a.s("user_id"), 0.0);
    let rec = record(vec![
        ("request_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("denial_reason", a.v("denial_reason").clone()),
        ("decision_date", Value::from(TODAY)),
        ("status", Value::from("DENIED")),
    ]);
    db.add("credit_limit_increase_requests", &id, rec);
    Ok(format!(
        "Credit limit increase request denied.\n  - Account: {account}\n  - Denial Reason: {}\n  - Date: {TODAY}\nThe customer will receive a notification explaining the denial.",
        a.s("denial_reason")
    ))
}
