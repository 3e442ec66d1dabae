//! Discoverable agent tools on credit card accounts: rewards corrections, disputes,
//! replacement orders, closure, statement credits, flags, payments and credit limit
//! requests.

use super::args::{
    Args, account_balance, cmp_num, field, field_is, fmt2, number, record, to_float,
};
use super::db::Db;
use super::pyfmt::{display, dumps_indent2, f2, thousands};
use super::tools::invalid;
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::{Value, json};

/// Runs `name` if it is one of this file's tools.
pub fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    Ok(Some(match name {
        "update_transaction_rewards_3847" => update_rewards(db, a)?,
        "file_credit_card_transaction_dispute_4829" => file_dispute(db, a)?,
        "order_replacement_credit_card_7291" => order_replacement(db, a)?,
        "get_user_dispute_history_7291" => history(
            db,
            a,
            "user_id",
            (
                "User transaction dispute history retrieved successfully.",
                name,
            ),
            (
                "Transaction dispute history for user",
                "transaction_disputes",
                "user_id",
            ),
            "\nNo transaction disputes found for this user.",
        ),
        "get_pending_replacement_orders_5765" => history(
            db,
            a,
            "credit_card_account_id",
            ("Pending replacement orders check completed.", name),
            (
                "Replacement orders for credit card account",
                "credit_card_orders",
                "credit_card_account_id",
            ),
            "\nNo pending replacement orders found for this credit card account.",
        ),
        "log_credit_card_closure_reason_4521" => log_closure_reason(db, a)?,
        "get_closure_reason_history_8293" => history(
            db,
            a,
            "credit_card_account_id",
            ("Closure reason history retrieved successfully.", name),
            (
                "Closure reason history for credit card account",
                "credit_card_closure_reasons",
                "credit_card_account_id",
            ),
            "\nNo closure reason records found for this credit card account.",
        ),
        "apply_statement_credit_8472" => statement_credit(db, a)?,
        "apply_credit_card_account_flag_6147" => account_flag(db, a)?,
        "close_credit_card_account_7834" => close_account(db, a)?,
        "pay_credit_card_from_checking_9182" => pay_from_checking(db, a)?,
        "submit_credit_limit_increase_request_7392" => submit_cli(db, a)?,
        "get_credit_limit_increase_history_4829" => history(
            db,
            a,
            "credit_card_account_id",
            ("Credit limit increase history retrieved.", name),
            (
                "Credit limit increase history for account",
                "credit_limit_increase_requests",
                "credit_card_account_id",
            ),
            "\nNo credit limit increase requests found for this account.",
        ),
        "get_payment_history_6183" => payment_history(db, a)?,
        "approve_credit_limit_increase_5847" => approve_cli(db, a)?,
        "deny_credit_limit_increase_5848" => deny_cli(db, a)?,
        _ => return Ok(None),
    }))
}

/// The read tools that print a header and one table's records for one id.
pub fn history(
    db: &Db,
    a: Args,
    arg: &str,
    (first, tool): (&str, &str),
    (heading, table, field): (&str, &str, &str),
    none: &str,
) -> String {
    if !a.truthy(arg) {
        return format!("Error: Missing required parameter: {arg}");
    }
    let id = a.s(arg);
    let result = db.query_tool(table, &format!("{{\"{field}\": \"{id}\"}}"));
    let mut parts = vec![
        first.to_string(),
        String::new(),
        format!("Executed: {tool}"),
        format!("{heading} {id}:"),
    ];
    if !result.contains("No records found") && !result.contains("No results found") {
        parts.push(result);
    } else {
        parts.push(none.to_string());
    }
    parts.join("\n")
}

/// `query_database_tool("credit_card_accounts", {"account_id": id})` found nothing.
fn no_card_account(db: &Db, id: &str) -> bool {
    let result = db.query_tool(
        "credit_card_accounts",
        &format!("{{\"account_id\": \"{id}\"}}"),
    );
    result.contains("No results found") || result.contains("No records found")
}

fn update_rewards(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("transaction_id") || !a.truthy("new_rewards_earned") {
        return Ok("Error: Missing required parameters.".into());
    }
    let id = &super::args::key(a.v("transaction_id"))?;
    let updates = [("rewards_earned", a.v("new_rewards_earned").clone())];
    if !db.update("credit_card_transaction_history", id, &updates) {
        return Ok(format!(
            "Error: Transaction '{}' not found.",
            a.s("transaction_id")
        ));
    }
    let shown = json!({"transaction_id": a.v("transaction_id"), "new_rewards_earned": a.v("new_rewards_earned")});
    Ok(format!(
        "Transaction rewards updated successfully.\n\nExecuted: update_transaction_rewards_3847\n\
         Arguments: {}\nTransaction updated:\n  - Transaction ID: {}\n  - New Rewards: {}",
        dumps_indent2(&shown),
        a.s("transaction_id"),
        a.s("new_rewards_earned")
    ))
}

fn file_dispute(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("transaction_id") || !a.truthy("user_id") {
        return Ok("Error: Missing required parameters.".into());
    }
    const ACTIONS: &[&str] = &["keep_active", "cancel_and_reissue"];
    const REASONS: &[&str] = &[
        "unauthorized_fraudulent_charge",
        "duplicate_charge",
        "incorrect_amount",
        "goods_services_not_received",
        "goods_services_not_as_described",
        "canceled_subscription_still_charging",
        "refund_never_processed",
    ];
    const RESOLUTIONS: &[&str] = &["full_refund", "partial_refund"];
    if !super::args::one_of(a.v("card_action"), ACTIONS) {
        return Ok(invalid("card_action", ACTIONS));
    }
    if !super::args::one_of(a.v("dispute_reason"), REASONS) {
        return Ok(invalid("dispute_reason", REASONS));
    }
    if !super::args::one_of(a.v("resolution_requested"), RESOLUTIONS) {
        return Ok(invalid("resolution_requested", RESOLUTIONS));
    }
    let partial = a.v("partial_refund_amount");
    if a.v("resolution_requested") == "partial_refund" && partial.is_null() {
        return Ok("Error: partial_refund_amount is required when resolution_requested is 'partial_refund'.".into());
    }
    let id = ids::dispute(&a.s("user_id"), &a.s("transaction_id"));
    let eligible = a.v("eligible_for_provisional_credit");
    let keys = [
        "transaction_id",
        "user_id",
        "card_action",
        "card_last_4_digits",
        "full_name",
        "phone",
        "email",
        "address",
        "contacted_merchant",
        "purchase_date",
        "issue_noticed_date",
        "dispute_reason",
        "resolution_requested",
        "partial_refund_amount",
        "eligible_for_provisional_credit",
    ];
    let mut fields = vec![("dispute_id", Value::String(id.clone()))];
    fields.extend(keys.iter().map(|k| (*k, a.v(k).clone())));
    fields.push(("provisional_credit_given", eligible.clone()));
    fields.push(("submitted_at", Value::from(TODAY)));
    fields.push(("status", Value::from("SUBMITTED")));
    if !db.add("transaction_disputes", &id, record(fields)) {
        return Ok("Error: Dispute may have already been filed for this transaction.".into());
    }
    let mut parts = vec![
        "Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.".to_string(),
        String::new(),
        "Executed: file_credit_card_transaction_dispute_4829".into(),
        format!("Dispute ID: {id}"),
        format!("Transaction: {}", a.s("transaction_id")),
        format!("Reason: {}", display(&a.s("dispute_reason"))),
        format!("Resolution Requested: {}", display(&a.s("resolution_requested"))),
    ];
    if a.truthy("partial_refund_amount") {
        parts.push(format!("Partial Refund Amount: ${}", fmt2(partial)?));
    }
    parts.push(if a.truthy("eligible_for_provisional_credit") {
        "Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days.".into()
    } else {
        "Provisional Credit: Not eligible at this time.".into()
    });
    Ok(parts.join("\n"))
}

fn order_replacement(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let required = [
        "credit_card_account_id",
        "user_id",
        "shipping_address",
        "reason",
    ];
    if required.iter().any(|k| !a.truthy(k)) {
        return Ok("Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason).".into());
    }
    const REASONS: &[&str] = &[
        "fraud_suspected",
        "lost",
        "stolen",
        "damaged",
        "expired",
        "other",
    ];
    if !super::args::one_of(a.v("reason"), REASONS) {
        return Ok(invalid("reason", REASONS));
    }
    let account = a.s("credit_card_account_id");
    if no_card_account(db, &account) {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    }
    let id = ids::credit_card_order(&account, &a.s("user_id"), &a.s("reason"));
    let expedited =
        a.0.get("expedited_shipping")
            .cloned()
            .unwrap_or(Value::Bool(false));
    let rec = record(vec![
        ("order_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("shipping_address", a.v("shipping_address").clone()),
        ("reason", a.v("reason").clone()),
        ("expedited_shipping", expedited.clone()),
        ("order_date", Value::from(TODAY)),
        ("status", Value::from("ORDERED")),
        ("old_card_cancelled", Value::Bool(true)),
    ]);
    if !db.add("credit_card_orders", &id, rec) {
        return Ok("Error: Order may have already been placed for this card replacement.".into());
    }
    let key = super::args::key(a.v("credit_card_account_id"))?;
    if let Some(card) = db.get_mut("credit_card_accounts", &key) {
        card.insert("status".into(), Value::from("CLOSED"));
        card.insert("closed_date".into(), Value::from(TODAY));
    }
    let fast = super::pyfmt::truthy(&expedited);
    let parts = [
        format!("Order ID: {id}"),
        format!("Card Account: {account}"),
        format!("Reason: {}", display(&a.s("reason"))),
        format!("Shipping Address: {}", a.s("shipping_address")),
        format!("Shipping Method: {}", if fast { "Expedited" } else { "Standard" }),
        format!("Expected Delivery: {}", if fast { "2-3 business days" } else { "7-10 business days" }),
        String::new(),
        "The old card has been cancelled for security. The new card will have the same account number but a new card number and CVV.".into(),
    ];
    Ok(parts.join("\n"))
}

fn log_closure_reason(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if ["credit_card_account_id", "user_id", "closure_reason"]
        .iter()
        .any(|k| !a.truthy(k))
    {
        return Ok("Error: Missing required parameters.".into());
    }
    const REASONS: &[&str] = &[
        "annual_fee",
        "not_using_card",
        "found_better_card",
        "unhappy_with_rewards",
        "simplifying_finances",
        "negative_experience",
        "other",
    ];
    if !super::args::one_of(a.v("closure_reason"), REASONS) {
        return Ok(invalid("closure_reason", REASONS));
    }
    let id = ids::closure_reason(&a.s("credit_card_account_id"), &a.s("user_id"));
    let rec = record(vec![
        ("record_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("closure_reason", a.v("closure_reason").clone()),
        ("logged_at", Value::from(TODAY)),
        ("status", Value::from("LOGGED")),
    ]);
    db.add("credit_card_closure_reasons", &id, rec);
    let shown = json!({
        "credit_card_account_id": a.v("credit_card_account_id"),
        "user_id": a.v("user_id"),
        "closure_reason": a.v("closure_reason"),
    });
    Ok(format!(
        "Closure reason logged successfully.\n\nExecuted: log_credit_card_closure_reason_4521\n\
         Arguments: {}\nClosure reason '{}' logged for account {}.",
        dumps_indent2(&shown),
        a.s("closure_reason"),
        a.s("credit_card_account_id")
    ))
}

fn statement_credit(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("user_id")
        || !a.truthy("credit_card_account_id")
        || a.is_none("amount")
        || !a.truthy("reason")
    {
        return Ok(
            "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
                .into(),
        );
    }
    if cmp_num(a.v("amount"), "<=", 0.0)? {
        return Ok("Error: Credit amount must be positive.".into());
    }
    const REASONS: &[&str] = &[
        "goodwill_adjustment",
        "promotional_credit",
        "annual_fee_reversal",
        "late_fee_reversal",
        "interest_charge_reversal",
        "dispute_resolution",
        "price_match",
        "retention_offer",
        "error_correction",
        "other",
    ];
    if !super::args::one_of(a.v("reason"), REASONS) {
        return Ok(invalid("reason", REASONS));
    }
    let account = a.s("credit_card_account_id");
    if no_card_account(db, &account) {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    }
    let amount = number(a.v("amount")).unwrap_or(0.0);
    let reason = a.s("reason");
    let id = ids::transaction(
        &a.s("user_id"),
        "STATEMENT_CREDIT",
        &reason,
        amount,
        "Statement Credit",
    );
    let rec = record(vec![
        ("transaction_id", Value::String(id.clone())),
        ("user_id", a.v("user_id").clone()),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("credit_card_type", Value::from("N/A")),
        ("merchant_name", Value::from("Rho-Bank Statement Credit")),
        (
            "transaction_amount",
            Value::String(format!("-${}", f2(amount))),
        ),
        ("transaction_date", Value::from(TODAY)),
        ("category", Value::from("Statement Credit")),
        ("status", Value::from("COMPLETED")),
        ("rewards_earned", Value::from("0 points")),
        ("credit_reason", a.v("reason").clone()),
    ]);
    if !db.add("credit_card_transaction_history", &id, rec) {
        return Ok(format!(
            "Error: Failed to apply statement credit. Transaction ID '{id}' may already exist."
        ));
    }
    Ok(format!(
        "Statement credit applied successfully.\n\nExecuted: apply_statement_credit_8472\n  - Transaction ID: {id}\n  - User ID: {}\n  - Account: {account}\n  - Credit Amount: ${}\n  - Reason: {}\n  - Date: {TODAY}",
        a.s("user_id"),
        f2(amount),
        display(&reason)
    ))
}

fn account_flag(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let required = [
        "credit_card_account_id",
        "user_id",
        "flag_type",
        "expiration_date",
        "reason",
    ];
    if required.iter().any(|k| !a.truthy(k)) {
        return Ok("Error: Missing required parameters (credit_card_account_id, user_id, flag_type, expiration_date, reason).".into());
    }
    const FLAGS: &[&str] = &[
        "annual_fee_waived",
        "promotional_apr",
        "rewards_bonus",
        "other",
    ];
    const REASONS: &[&str] = &[
        "retention_offer",
        "loyalty_benefit",
        "promotional",
        "error_correction",
        "other",
    ];
    if !super::args::one_of(a.v("flag_type"), FLAGS) {
        return Ok(invalid("flag_type", FLAGS));
    }
    if !super::args::one_of(a.v("reason"), REASONS) {
        return Ok(invalid("reason", REASONS));
    }
    let account = a.s("credit_card_account_id");
    if no_card_account(db, &account) {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    }
    let id = ids::account_flag(&account, &a.s("flag_type"), &a.s("expiration_date"));
    let rec = record(vec![
        ("flag_id", Value::String(id.clone())),
        (
            "credit_card_account_id",
            a.v("credit_card_account_id").clone(),
        ),
        ("user_id", a.v("user_id").clone()),
        ("flag_type", a.v("flag_type").clone()),
        ("effective_date", Value::from(TODAY)),
        ("expiration_date", a.v("expiration_date").clone()),
        ("reason", a.v("reason").clone()),
        ("applied_at", Value::from(TODAY)),
        ("status", Value::from("ACTIVE")),
    ]);
    if !db.add("credit_card_account_flags", &id, rec) {
        return Ok(format!(
            "Error: Failed to apply account flag. Flag ID '{id}' may already exist."
        ));
    }
    Ok(format!(
        "Account flag applied successfully!\n  - Flag ID: {id}\n  - Account: {account}\n  - User ID: {}\n  - Flag Type: {}\n  - Effective Date: {TODAY}\n  - Expiration Date: {}\n  - Reason: {}",
        a.s("user_id"),
        display(&a.s("flag_type")),
        a.s("expiration_date"),
        display(&a.s("reason"))
    ))
}

fn close_account(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("credit_card_account_id") || !a.truthy("user_id") {
        return Ok("Error: Missing required parameters (credit_card_account_id, user_id).".into());
    }
    let account = a.s("credit_card_account_id");
    if no_card_account(db, &account) {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    }
    let key = super::args::key(a.v("credit_card_account_id"))?;
    let updates = [
        ("status", Value::from("CLOSED")),
        ("closed_date", Value::from(TODAY)),
        ("closed_by", a.v("user_id").clone()),
    ];
    if !db.update("credit_card_accounts", &key, &updates) {
        return Ok(format!(
            "Error: Failed to close credit card account '{account}'."
        ));
    }
    let shown =
        json!({"credit_card_account_id": a.v("credit_card_account_id"), "user_id": a.v("user_id")});
    Ok(format!(
        "Credit card account closed successfully.\n\nExecuted: close_credit_card_account_7834\n\
         Arguments: {}\nAccount {account} has been closed.",
        dumps_indent2(&shown)
    ))
}

/// A `"$1,234.50"`-style amount field, 0 when it does not parse.
fn dollars(record: &serde_json::Map<String, Value>, name: &str, default: &str) -> f64 {
    let raw = record
        .get(name)
        .map_or_else(|| default.to_string(), tauguard_core::pyjson::py_str);
    super::args::parse_float_text(&raw.replace(['$', ','], "")).unwrap_or(0.0)
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
    let checking_id = super::args::key(a.v("checking_account_id"))?;
    let (user, checking_name, card_name) = (
        a.s("user_id"),
        a.s("checking_account_id"),
        a.s("credit_card_account_id"),
    );
    let Some(checking) = db.get("accounts", &checking_id) else {
        return Ok(format!(
            "Error: Checking account '{checking_name}' not found."
        ));
    };
    if checking.get("user_id") != Some(a.v("user_id")) {
        return Ok(format!(
            "Error: Checking account '{checking_name}' does not belong to user '{user}'."
        ));
    }
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
    let card_id = super::args::key(a.v("credit_card_account_id"))?;
    let Some(card) = db.get("credit_card_accounts", &card_id) else {
        return Ok(format!(
            "Error: Credit card account '{card_name}' not found."
        ));
    };
    if card.get("user_id") != Some(a.v("user_id")) {
        return Ok(format!(
            "Error: Credit card account '{card_name}' does not belong to user '{user}'."
        ));
    }
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
    let account = a.s("credit_card_account_id");
    let key = super::args::key(a.v("credit_card_account_id"))?;
    let Some(card) = db.get("credit_card_accounts", &key) else {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    };
    if card.get("user_id") != Some(a.v("user_id")) {
        return Ok(format!(
            "Error: Credit card account '{account}' does not belong to user '{}'.",
            a.s("user_id")
        ));
    }
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
    let account = a.s("credit_card_account_id");
    let key = super::args::key(a.v("credit_card_account_id"))?;
    let Some(card) = db.get("credit_card_accounts", &key) else {
        return Ok(format!("Error: Credit card account '{account}' not found."));
    };
    if card.get("user_id") != Some(a.v("user_id")) {
        return Ok(format!(
            "Error: Credit card account '{account}' does not belong to user '{}'.",
            a.s("user_id")
        ));
    }
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
    if ["credit_card_account_id", "user_id", "denial_reason"]
        .iter()
        .any(|k| !a.truthy(k))
    {
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
