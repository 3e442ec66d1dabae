//! Discoverable agent tools on debit cards: ordering, the three activation tools, close,
//! freeze and unfreeze, fraud alerts, PINs, card listings, limits and recurring blocks.

use super::args::{Args, field, field_is, key, text};
use super::db::Db;
use super::pyfmt::display;
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use tauguard_core::pyjson;

/// Runs `name` if it is one of this file's tools.
pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    Ok(Some(match name {
        "order_debit_card_5739" => super::card_orders::order(db, a)?,
        "activate_debit_card_8291" => activate(db, a, Kind::New)?,
        "activate_debit_card_8292" => activate(db, a, Kind::Replacement)?,
        "activate_debit_card_8293" => activate(db, a, Kind::Reissue)?,
        "close_debit_card_4721" => close(db, a)?,
        "freeze_debit_card_3892" => freeze(db, a)?,
        "unfreeze_debit_card_3893" => unfreeze(db, a)?,
        "clear_debit_card_fraud_alert_4892" => clear_alert(db, a)?,
        "request_temporary_debit_card_limit_increase_8374" => {
            super::debit_limits::limit_increase(db, a)?
        }
        _ => return super::card_settings::call(db, name, a),
    }))
}

/// `_validate_pin`.
pub(super) fn pin_error(pin: &Value) -> Option<&'static str> {
    let ok = pin
        .as_str()
        .is_some_and(|p| p.chars().count() == 4 && p.chars().all(|c| c.is_ascii_digit()));
    if !ok {
        return Some("PIN must be exactly 4 digits.");
    }
    let p = pin.as_str().unwrap_or("");
    const SEQUENTIAL: &[&str] = &[
        "0123", "1234", "2345", "3456", "4567", "5678", "6789", "9876", "8765", "7654", "6543",
        "5432", "4321", "3210",
    ];
    if SEQUENTIAL.contains(&p) {
        return Some("PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN.");
    }
    if p.chars().all(|c| p.starts_with(c)) {
        return Some(
            "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN.",
        );
    }
    None
}

/// `s.isdigit() and len(s) == n` on an argument that must be a string.
pub(super) fn digits(v: &Value, n: usize) -> Result<bool, ToolError> {
    let s = text(v, "isdigit")?;
    Ok(!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) && s.chars().count() == n)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    New,
    Replacement,
    Reissue,
}

impl Kind {
    fn tool(self) -> &'static str {
        match self {
            Kind::New => "activate_debit_card_8291",
            Kind::Replacement => "activate_debit_card_8292",
            Kind::Reissue => "activate_debit_card_8293",
        }
    }

    fn reasons(self) -> &'static [&'static str] {
        match self {
            Kind::New => &["new_account", "first_card"],
            Kind::Replacement => &["lost", "stolen", "fraud"],
            Kind::Reissue => &["expired", "damaged", "upgrade", "bank_reissue"],
        }
    }
}

/// `_validate_activation_common`: the error text, or the card id.
fn validate_activation(db: &Db, a: Args, kind: Kind) -> Result<Result<String, String>, ToolError> {
    let names = ["card_id", "last_4_digits", "expiration_date", "cvv", "pin"];
    if names.iter().any(|n| !a.truthy(n)) {
        return Ok(Err("Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin.".into()));
    }
    if let Some(e) = pin_error(a.v("pin")) {
        return Ok(Err(format!("Error: {e}")));
    }
    if !digits(a.v("cvv"), 3)? {
        return Ok(Err("Error: CVV must be exactly 3 digits.".into()));
    }
    if !digits(a.v("last_4_digits"), 4)? {
        return Ok(Err("Error: Last 4 digits must be exactly 4 digits.".into()));
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get("debit_cards", &id) else {
        return Ok(Err(format!(
            "Error: Debit card '{}' not found.",
            a.s("card_id")
        )));
    };
    let reason = card
        .get("issue_reason")
        .cloned()
        .unwrap_or(Value::from("new_account"));
    let reason_s = pyjson::py_str(&reason);
    if !kind.reasons().contains(&reason_s.as_str()) || !reason.is_string() {
        let correct = match reason_s.as_str() {
            "new_account" | "first_card" => "activate_debit_card_8291",
            "lost" | "stolen" | "fraud" => "activate_debit_card_8292",
            "expired" | "damaged" | "upgrade" | "bank_reissue" => "activate_debit_card_8293",
            _ => "unknown",
        };
        return Ok(Err(format!(
            "Error: Wrong activation tool. This card has issue_reason='{reason_s}'. Please use {correct} instead of {}.",
            kind.tool()
        )));
    }
    if let Some(refusal) = status_refusal(card, &id, ("PENDING", "ACTIVE"), "activated") {
        return Ok(Err(refusal));
    }
    if card.get("last_4_digits") != Some(a.v("last_4_digits")) {
        return Ok(Err(
            "Error: Card verification failed. The last 4 digits do not match our records.".into(),
        ));
    }
    if let Some(refusal) = closed_account_refusal(db, card, "activated") {
        return Ok(Err(refusal));
    }
    Ok(Ok(id))
}

/// Upstream's refusal of a debit card status change `from` → `to` (activation, freeze,
/// unfreeze) when the card already is `to` or is not `from`.
fn status_refusal(
    card: &Map<String, Value>,
    id: &str,
    (from, to): (&str, &str),
    verb: &str,
) -> Option<String> {
    if field_is(card, "status", to) {
        return Some(format!(
            "Error: Debit card '{id}' is already {}.",
            to.to_lowercase()
        ));
    }
    (!field_is(card, "status", from)).then(|| {
        format!(
            "Error: Debit card '{id}' cannot be {verb}. Current status: {}. Only {from} cards can be {verb}.",
            field(card, "status")
        )
    })
}

/// Upstream's refusal when the card's linked checking account exists and is not open.
fn closed_account_refusal(db: &Db, card: &Map<String, Value>, verb: &str) -> Option<String> {
    let account_id = card
        .get("account_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())?;
    db.get("accounts", account_id)
        .is_some_and(|account| !field_is(account, "status", "OPEN"))
        .then(|| {
            format!(
                "Error: The linked checking account '{account_id}' is no longer open. Card cannot be {verb}."
            )
        })
}

fn activate(db: &mut Db, a: Args, kind: Kind) -> Result<String, ToolError> {
    let id = match validate_activation(db, a, kind)? {
        Ok(id) => id,
        Err(message) => return Ok(message),
    };
    let card = db.get("debit_cards", &id).cloned().unwrap_or_default();
    let account = card.get("account_id").cloned().unwrap_or(Value::Null);
    let default = if kind == Kind::Reissue {
        "expired"
    } else {
        "lost"
    };
    let reason = card
        .get("issue_reason")
        .map_or_else(|| default.to_string(), pyjson::py_str);
    if let Some(c) = db.get_mut("debit_cards", &id) {
        c.insert("status".into(), Value::from("ACTIVE"));
        c.insert("activated_date".into(), Value::from(TODAY));
    }
    let others: Vec<String> = db
        .records("debit_cards")
        .into_iter()
        .filter(|(other, c)| {
            **other != id
                && c.get("account_id") == Some(&account)
                && field_is(c, "status", "ACTIVE")
        })
        .map(|(other, _)| other.clone())
        .collect();
    for other in &others {
        let Some(c) = db.get_mut("debit_cards", other) else {
            continue;
        };
        match kind {
            Kind::Reissue => {
                c.insert("status".into(), Value::from("GRACE_PERIOD"));
                c.insert("grace_period_ends".into(), Value::from(TODAY));
                c.insert(
                    "deactivation_reason".into(),
                    Value::String(format!("Reissued card activated ({reason})")),
                );
            }
            _ => {
                c.insert("status".into(), Value::from("DEACTIVATED"));
                c.insert("deactivated_date".into(), Value::from(TODAY));
                let why = if kind == Kind::New {
                    "New card activated".to_string()
                } else {
                    format!("Replacement card activated ({reason})")
                };
                c.insert("deactivation_reason".into(), Value::String(why));
            }
        }
    }
    let list = others.join(", ");
    let mut parts: Vec<String> = match kind {
        Kind::New => vec![
            "New Debit Card Activation Successful".into(),
            format!("Card ID: {id}"),
            "Status: ACTIVE".into(),
            format!("Activation Date: {TODAY}"),
            String::new(),
            "Your card is now ready to use at any ATM or point of sale terminal.".into(),
            "For security, please sign the back of your card.".into(),
        ],
        Kind::Replacement => vec![
            "Replacement Debit Card Activation Successful".into(),
            format!("Card ID: {id}"),
            format!("Replacement Reason: {}", display(&reason)),
            "Status: ACTIVE".into(),
            format!("Activation Date: {TODAY}"),
            String::new(),
            "Your replacement card is now ready to use.".into(),
            String::new(),
            "IMPORTANT SECURITY REMINDERS:".into(),
            "- Please review your recent transactions for any unauthorized charges".into(),
            "- Report any suspicious activity immediately".into(),
        ],
        Kind::Reissue => vec![
            "Reissued Debit Card Activation Successful".into(),
            format!("Card ID: {id}"),
            format!("Reissue Reason: {}", display(&reason)),
            "Status: ACTIVE".into(),
            format!("Activation Date: {TODAY}"),
            String::new(),
            "Your reissued card is now ready to use.".into(),
        ],
    };
    match kind {
        Kind::New if !others.is_empty() => {
            parts.push(format!(
                "\nNote: Previous card(s) have been deactivated: {list}"
            ));
        }
        Kind::Replacement => {
            if reason == "fraud" {
                parts.push("- Since fraud was suspected, we recommend changing your online banking password".into());
            }
            if !others.is_empty() {
                parts.push(format!(
                    "\nPrevious card(s) have been deactivated for security: {list}"
                ));
            }
        }
        Kind::Reissue => {
            if !others.is_empty() {
                parts.push(format!("\nNote: Your previous card(s) ({list}) will remain active for 24 hours as a grace period."));
                parts.push(
                    "After 24 hours, the old card(s) will be automatically deactivated.".into(),
                );
            }
            if reason == "expired" || reason == "bank_reissue" {
                parts.push("\nReminder: If your card number changed, please update any recurring payments with your new card details.".into());
            }
        }
        Kind::New => {}
    }
    Ok(parts.join("\n"))
}

fn close(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") || !a.truthy("reason") {
        return Ok("Error: Missing required parameters. Required: card_id, reason.".into());
    }
    const REASONS: &[&str] = &[
        "lost",
        "stolen",
        "fraud_suspected",
        "damaged",
        "no_longer_needed",
        "account_closing",
    ];
    let reason = crate::py::lower(a.v("reason"))?;
    if !REASONS.contains(&reason.as_str()) {
        return Ok(super::tools::invalid("reason", REASONS));
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if !field_is(card, "status", "ACTIVE") && !field_is(card, "status", "PENDING") {
        return Ok(format!(
            "Error: Debit card '{id}' cannot be closed. Current status: {}. Only ACTIVE or PENDING cards can be closed.",
            field(card, "status")
        ));
    }
    let previous = field(card, "status");
    card.insert("status".into(), Value::from("CLOSED"));
    card.insert("closed_date".into(), Value::from(TODAY));
    card.insert("closure_reason".into(), Value::String(reason.clone()));
    let mut parts = vec![
        "Debit Card Closed Successfully".to_string(),
        format!("Card ID: {id}"),
        format!("Previous Status: {previous}"),
        "New Status: CLOSED".into(),
        format!("Closure Reason: {}", display(&reason)),
        format!("Closure Date: {TODAY}"),
        String::new(),
    ];
    if ["lost", "stolen", "fraud_suspected"].contains(&reason.as_str()) {
        parts.push("IMPORTANT: This card has been immediately deactivated for security.".into());
        parts.push("Any pending transactions may still be processed.".into());
        if reason == "fraud_suspected" {
            parts.push("Please advise the customer to review recent transactions and file disputes for any unauthorized charges.".into());
            parts.push("Also recommend changing their online banking password.".into());
        }
    }
    parts.push(String::new());
    parts.push("Note: This card cannot be reactivated. If the customer needs a new card, they can order one through the standard ordering process.".into());
    parts.push("Any recurring payments linked to this card will need to be updated with new payment information.".into());
    Ok(parts.join("\n"))
}

fn freeze(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") {
        return Ok("Error: Missing required parameter: card_id.".into());
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if let Some(refusal) = status_refusal(card, &id, ("ACTIVE", "FROZEN"), "frozen") {
        return Ok(refusal);
    }
    card.insert("status".into(), Value::from("FROZEN"));
    card.insert("frozen_date".into(), Value::from(TODAY));
    let parts = [
        "Debit Card Frozen Successfully".to_string(),
        format!("Card ID: {id}"),
        "Status: FROZEN".into(),
        format!("Frozen Date: {TODAY}"),
        String::new(),
        "While frozen:".into(),
        "- All new purchase transactions will be declined".into(),
        "- Recurring payments and subscriptions will be declined".into(),
        "- Pending transactions already authorized may still process".into(),
        String::new(),
        "To unfreeze, the customer can call customer service or use the mobile app.".into(),
        "If the card is confirmed lost or stolen, recommend closing the card permanently instead."
            .into(),
    ];
    Ok(parts.join("\n"))
}

fn unfreeze(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") {
        return Ok("Error: Missing required parameter: card_id.".into());
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if let Some(refusal) = status_refusal(card, &id, ("FROZEN", "ACTIVE"), "unfrozen")
        .or_else(|| closed_account_refusal(db, card, "unfrozen"))
    {
        return Ok(refusal);
    }
    if let Some(card) = db.get_mut("debit_cards", &id) {
        card.insert("status".into(), Value::from("ACTIVE"));
        card.insert("unfrozen_date".into(), Value::from(TODAY));
    }
    let parts = [
        "Debit Card Unfrozen Successfully".to_string(),
        format!("Card ID: {id}"),
        "Status: ACTIVE".into(),
        format!("Unfrozen Date: {TODAY}"),
        String::new(),
        "The card is now active and ready to use immediately.".into(),
        "All transactions will process normally.".into(),
    ];
    Ok(parts.join("\n"))
}

fn clear_alert(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") {
        return Ok("Error: Missing required parameter: card_id.".into());
    }
    if !a.truthy("reason") {
        return Ok("Error: Missing required parameter: reason.".into());
    }
    let reason = a.v("reason");
    if !super::args::one_of(reason, &["customer_verified", "velocity_clear"]) {
        return Ok(format!(
            "Error: Invalid reason '{}'. Must be one of: customer_verified, velocity_clear",
            a.s("reason")
        ));
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    let flag = |c: &Map<String, Value>, k: &str| c.get(k).is_some_and(super::pyfmt::truthy);
    if reason == "velocity_clear" {
        if !flag(card, "velocity_blocked") {
            return Ok(format!(
                "Error: Debit card '{id}' does not have an active velocity block."
            ));
        }
        card.insert("velocity_blocked".into(), Value::Bool(false));
        card.insert("velocity_cleared_date".into(), Value::from(TODAY));
        let parts = [
            "Velocity Block Cleared Successfully".to_string(),
            format!("Card ID: {id}"),
            format!("Cleared Date: {TODAY}"),
            String::new(),
            "The card is now unblocked and ready for normal use.".into(),
            "The velocity monitoring will continue - if the same unusual patterns recur,".into(),
            "the card may be blocked again automatically.".into(),
        ];
        return Ok(parts.join("\n"));
    }
    if !flag(card, "fraud_alert_active") {
        return Ok(format!(
            "Error: Debit card '{id}' does not have an active fraud alert."
        ));
    }
    if field_is(card, "alert_source", "bank_initiated") {
        return Ok("Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system and cannot be cleared by customer service agents. Please transfer the customer to the security team using transfer_to_human_agents.".into());
    }
    card.insert("fraud_alert_active".into(), Value::Bool(false));
    card.insert("alert_source".into(), Value::Null);
    card.insert("fraud_alert_cleared_date".into(), Value::from(TODAY));
    let parts = [
        "Fraud Alert Cleared Successfully".to_string(),
        format!("Card ID: {id}"),
        format!("Cleared Date: {TODAY}"),
        String::new(),
        "The fraud alert has been removed from the card.".into(),
        "All transactions will process normally.".into(),
        String::new(),
        "Remind the customer to review recent transactions and report any unauthorized charges."
            .into(),
    ];
    Ok(parts.join("\n"))
}

/// A fresh debit card's number and CVV digits: the decimal digits of hash prefixes.
pub(super) fn card_secrets(card_id: &str) -> (String, String) {
    let seed = format!("card_details:{card_id}");
    let pick = |hash: String, n: usize| {
        let d: String = hash.chars().filter(char::is_ascii_digit).take(n).collect();
        format!("{d:0>n$}")
    };
    (
        pick(ids::deterministic(&format!("{seed}:last4"), 8), 4),
        pick(ids::deterministic(&format!("{seed}:cvv"), 6), 3),
    )
}
