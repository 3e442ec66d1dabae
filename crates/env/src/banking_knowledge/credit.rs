//! Discoverable agent tools on credit card accounts: rewards corrections, disputes,
//! replacement orders, closure, statement credits, flags, payments and credit limit
//! requests.

use super::args::{Args, cmp_num, fmt2, number, record};
use super::db::Db;
use super::pyfmt::{display, dumps_indent2, f2};
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::{Value, json};

/// Runs `name` if it is one of this file's tools.
pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
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
        _ => return super::credit_limits::call(db, name, a),
    }))
}

/// The read tools that print a header and one table's records for one id.
pub(super) fn history(
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

/// The not-found text when `query_database_tool("credit_card_accounts", {"account_id": id})`
/// finds nothing.
fn unknown_card_account(db: &Db, id: &str) -> Option<String> {
    let result = db.query_tool(
        "credit_card_accounts",
        &format!("{{\"account_id\": \"{id}\"}}"),
    );
    (result.contains("No results found") || result.contains("No records found"))
        .then(|| format!("Error: Credit card account '{id}' not found."))
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
    let choices = [
        ("card_action", ACTIONS),
        ("dispute_reason", REASONS),
        ("resolution_requested", RESOLUTIONS),
    ];
    if let Some(refusal) = choices
        .iter()
        .find_map(|(arg, options)| a.not_one_of(arg, options))
    {
        return Ok(refusal);
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
    if let Some(refusal) = a.missing_listed(&required) {
        return Ok(refusal);
    }
    const REASONS: &[&str] = &[
        "fraud_suspected",
        "lost",
        "stolen",
        "damaged",
        "expired",
        "other",
    ];
    if let Some(refusal) = a.not_one_of("reason", REASONS) {
        return Ok(refusal);
    }
    let account = a.s("credit_card_account_id");
    if let Some(refusal) = unknown_card_account(db, &account) {
        return Ok(refusal);
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
    if a.missing(&["credit_card_account_id", "user_id", "closure_reason"]) {
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
    if let Some(refusal) = a.not_one_of("closure_reason", REASONS) {
        return Ok(refusal);
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
    if let Some(refusal) = a.not_one_of("reason", REASONS) {
        return Ok(refusal);
    }
    let account = a.s("credit_card_account_id");
    if let Some(refusal) = unknown_card_account(db, &account) {
        return Ok(refusal);
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
    if let Some(refusal) = a.missing_listed(&required) {
        return Ok(refusal);
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
    if let Some(refusal) = a.not_one_of("flag_type", FLAGS) {
        return Ok(refusal);
    }
    if let Some(refusal) = a.not_one_of("reason", REASONS) {
        return Ok(refusal);
    }
    let account = a.s("credit_card_account_id");
    if let Some(refusal) = unknown_card_account(db, &account) {
        return Ok(refusal);
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
    if let Some(refusal) = a.missing_listed(&["credit_card_account_id", "user_id"]) {
        return Ok(refusal);
    }
    let account = a.s("credit_card_account_id");
    if let Some(refusal) = unknown_card_account(db, &account) {
        return Ok(refusal);
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
