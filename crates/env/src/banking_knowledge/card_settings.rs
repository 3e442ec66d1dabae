//! Discoverable agent tools on a debit card's settings: PIN reset and change, the card
//! listing of an account, and the recurring-payment block.

use super::TODAY;
use super::args::{Args, field, field_is, field_str, key};
use super::cards::{digits, pin_error};
use super::db::Db;
use super::pyfmt::dumps_indent2;
use crate::tooling::ToolError;
use serde_json::{Map, Value};

/// Runs `name` if it is one of this file's tools.
pub(super) fn call(db: &mut Db, name: &str, a: Args) -> Result<Option<String>, ToolError> {
    Ok(Some(match name {
        "reset_debit_card_pin_6284" => reset_pin(db, a)?,
        "change_debit_card_pin_6285" => change_pin(db, a)?,
        "get_debit_cards_by_account_id_7823" => list_cards(db, a)?,
        "set_debit_card_recurring_block_7382" => recurring_block(db, a)?,
        _ => return Ok(None),
    }))
}

fn reset_pin(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if a.missing(&["card_id", "last_4_digits", "new_pin"]) {
        return Ok(
            "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin.".into(),
        );
    }
    if !digits(a.v("last_4_digits"), 4)? {
        return Ok("Error: Last 4 digits must be exactly 4 digits.".into());
    }
    if let Some(e) = pin_error(a.v("new_pin")) {
        return Ok(format!("Error: {e}"));
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if card.get("last_4_digits") != Some(a.v("last_4_digits")) {
        return Ok(
            "Error: Card verification failed. The last 4 digits do not match our records.".into(),
        );
    }
    if !field_is(card, "status", "ACTIVE") {
        return Ok(format!(
            "Error: Cannot reset PIN. Card status is {}. Only ACTIVE cards can have their PIN reset.",
            field(card, "status")
        ));
    }
    card.insert("pin_last_changed".into(), Value::from(TODAY));
    card.insert("pin_locked".into(), Value::Bool(false));
    card.insert("pin_attempts_remaining".into(), Value::from(3));
    let parts = [
        "Debit Card PIN Reset Successfully".to_string(),
        format!("Card ID: {id}"),
        format!("PIN Changed: {TODAY}"),
        String::new(),
        "The new PIN is effective immediately.".into(),
        "Your card has been unlocked and is ready to use.".into(),
        "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.".into(),
        String::new(),
        "Security reminder: Never share your PIN with anyone.".into(),
    ];
    Ok(parts.join("\n"))
}

fn change_pin(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if a.missing(&["card_id", "current_pin", "new_pin"]) {
        return Ok(
            "Error: Missing required parameters. Required: card_id, current_pin, new_pin.".into(),
        );
    }
    if !digits(a.v("current_pin"), 4)? {
        return Ok("Error: Current PIN must be exactly 4 digits.".into());
    }
    if let Some(e) = pin_error(a.v("new_pin")) {
        return Ok(format!("Error: {e}"));
    }
    if a.v("current_pin") == a.v("new_pin") {
        return Ok("Error: New PIN must be different from current PIN.".into());
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if !field_is(card, "status", "ACTIVE") {
        return Ok(format!(
            "Error: Cannot change PIN. Card status is {}. Only ACTIVE cards can have their PIN changed.",
            field(card, "status")
        ));
    }
    card.insert("pin_last_changed".into(), Value::from(TODAY));
    let parts = [
        "Debit Card PIN Changed Successfully".to_string(),
        format!("Card ID: {id}"),
        format!("PIN Changed: {TODAY}"),
        String::new(),
        "The new PIN is effective immediately.".into(),
        "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.".into(),
        String::new(),
        "Security reminder: Never share your PIN with anyone.".into(),
    ];
    Ok(parts.join("\n"))
}

fn list_cards(db: &Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("account_id") {
        return Ok("Error: Missing required parameter 'account_id'.".into());
    }
    let id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    let class = field_str(account, "class").to_lowercase();
    if class != "checking" && class != "business_checking" {
        return Ok(format!(
            "Error: Account '{id}' is not a checking account. Debit cards are only available for checking accounts."
        ));
    }
    let mut cards: Vec<Map<String, Value>> = Vec::new();
    for (card_id, card) in db.records("debit_cards") {
        if card.get("account_id").and_then(Value::as_str) != Some(id.as_str()) {
            continue;
        }
        let mut info = Map::new();
        info.insert("card_id".into(), Value::String(card_id.clone()));
        for (k, v) in card {
            info.insert(k.clone(), v.clone());
        }
        if info.contains_key("last_4_digits") && !info.contains_key("card_number_last_4") {
            let v = info.shift_remove("last_4_digits").unwrap_or(Value::Null);
            info.insert("card_number_last_4".into(), v);
        }
        if info.contains_key("issue_date") && !info.contains_key("date_issued") {
            let v = info.shift_remove("issue_date").unwrap_or(Value::Null);
            info.insert("date_issued".into(), v);
        } else if info.contains_key("created_date") && !info.contains_key("date_issued") {
            let v = info.shift_remove("created_date").unwrap_or(Value::Null);
            info.insert("date_issued".into(), v);
        }
        cards.push(info);
    }
    if cards.is_empty() {
        return Ok(format!("No debit cards found for account '{id}'."));
    }
    let issued = |c: &Map<String, Value>| {
        c.get("date_issued")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    cards.sort_by_key(|c| std::cmp::Reverse(issued(c)));
    Ok(dumps_indent2(&Value::Array(
        cards.into_iter().map(Value::Object).collect(),
    )))
}

fn recurring_block(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") {
        return Ok("Error: Missing required parameter: card_id".into());
    }
    let id = key(a.v("card_id"))?;
    let Some(card) = db.get_mut("debit_cards", &id).filter(|c| !c.is_empty()) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    let status = field_str(card, "status").to_uppercase();
    if status != "ACTIVE" {
        return Ok(format!(
            "Error: Cannot update recurring block settings for a card with status '{status}'. Card must be ACTIVE."
        ));
    }
    card.insert("recurring_blocked".into(), a.v("block_recurring").clone());
    Ok(if a.truthy("block_recurring") {
        format!(
            "Recurring payments BLOCKED for debit card {id}.\nAll recurring/subscription charges will be declined.\nOne-time purchases are not affected.\nThis change takes effect within 24 hours."
        )
    } else {
        format!(
            "Recurring payments UNBLOCKED for debit card {id}.\nRecurring/subscription charges will now be allowed.\nThis change takes effect within 24 hours."
        )
    })
}
