//! The temporary debit card limit increase: its own module because the checks (account
//! age, default ATM limits by account level, the 150% cap) and Python's int/float limit
//! arithmetic make it as long as ordering a card.

use super::TODAY;
use super::args::{Args, field, field_str, key, require_field, to_float};
use super::card_orders::age_days;
use super::db::Db;
use crate::tooling::ToolError;
use serde_json::{Map, Number, Value};
use tauguard_core::pyjson;

/// A limit as Python holds it: an int, or a float once arithmetic made it one.
#[derive(Clone, Copy)]
enum Limit {
    Int(i64),
    Float(f64),
}

impl Limit {
    fn of(v: &Value) -> Option<Limit> {
        match v {
            Value::Number(n) => n
                .as_i64()
                .map(Limit::Int)
                .or_else(|| n.as_f64().map(Limit::Float)),
            Value::Bool(b) => Some(Limit::Int(i64::from(*b))),
            _ => None,
        }
    }
    fn f(self) -> f64 {
        match self {
            Limit::Int(i) => i as f64,
            Limit::Float(x) => x,
        }
    }
    fn show(self) -> String {
        match self {
            Limit::Int(i) => i.to_string(),
            Limit::Float(x) => pyjson::float_repr(x),
        }
    }
    fn value(self) -> Value {
        match self {
            Limit::Int(i) => Value::from(i),
            Limit::Float(x) => Number::from_f64(x).map_or(Value::Null, Value::Number),
        }
    }
}

/// Which of a card's two limits a request raises.
#[derive(Clone, Copy)]
struct LimitKind {
    is_atm: bool,
    /// The card's field holding the limit.
    field: &'static str,
    /// The limit's name in the reply.
    name: &'static str,
}

impl LimitKind {
    fn of(limit_type: &Value) -> LimitKind {
        if limit_type == "atm" {
            LimitKind {
                is_atm: true,
                field: "daily_atm_limit",
                name: "Daily ATM Withdrawal Limit",
            }
        } else {
            LimitKind {
                is_atm: false,
                field: "daily_purchase_limit",
                name: "Daily Purchase Limit",
            }
        }
    }
}

pub(super) fn limit_increase(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let new_limit = match requested_limit(a) {
        Ok(new_limit) => new_limit,
        Err(message) => return Ok(message),
    };
    let card_id = key(a.v("card_id"))?;
    let kind = LimitKind::of(a.v("limit_type"));
    let current = match current_limit(db, a, &card_id, kind) {
        Ok(current) => current,
        Err(message) => return Ok(message),
    };
    if let Some(message) = increase_refusal(new_limit, current) {
        return Ok(message);
    }
    record_temporary_limit(db, &card_id, &a.s("limit_type"), kind, new_limit, current);
    Ok(increase_granted(&card_id, kind, new_limit, current))
}

/// The requested limit, or the error text for a missing or invalid argument.
fn requested_limit(a: Args) -> Result<i64, String> {
    if !a.truthy("card_id") {
        return Err("Error: Missing required parameter: card_id.".into());
    }
    if !a.truthy("limit_type") {
        return Err("Error: Missing required parameter: limit_type.".into());
    }
    if !super::args::one_of(a.v("limit_type"), &["atm", "purchase"]) {
        return Err(format!(
            "Error: Invalid limit_type '{}'. Must be 'atm' or 'purchase'.",
            a.s("limit_type")
        ));
    }
    if a.is_none("new_limit") {
        return Err("Error: Missing required parameter: new_limit.".into());
    }
    let new_limit = match to_float(a.v("new_limit")) {
        Some(x) if x.fract() == 0.0 && x.is_finite() => x as i64,
        Some(x) => {
            return Err(format!(
                "Error: new_limit must be an integer, got '{}'.",
                pyjson::float_repr(x)
            ));
        }
        None => {
            return Err(format!(
                "Error: new_limit must be an integer, got '{}'.",
                a.s("new_limit")
            ));
        }
    };
    if new_limit <= 0 {
        return Err("Error: new_limit must be a positive amount.".into());
    }
    Ok(new_limit)
}

/// The card's current limit, or the error text for a card or account that may not be
/// raised (card not active, account not open or under 60 days old, no limit to raise).
fn current_limit(db: &Db, a: Args, card_id: &str, kind: LimitKind) -> Result<Limit, String> {
    let Some(card) = db.get("debit_cards", card_id) else {
        return Err(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    require_field(card, "status", "ACTIVE", |status| {
        format!(
            "Error: Debit card '{card_id}' is not active. Current status: {status}. Only ACTIVE cards can have limit increases."
        )
    })?;
    let account_id = field_str(card, "account_id").to_string();
    let Some(account) = db
        .get("accounts", &account_id)
        .filter(|_| !account_id.is_empty())
    else {
        return Err(format!(
            "Error: Could not find linked account for debit card '{card_id}'."
        ));
    };
    require_field(account, "status", "OPEN", |status| {
        format!(
            "Error: The linked account '{account_id}' is not in good standing. Account status: {status}."
        )
    })?;
    if let Some(age) = account
        .get("date_opened")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .and_then(age_days)
        && age < 60
    {
        return Err(format!(
            "Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} days."
        ));
    }
    let current = card
        .get(kind.field)
        .filter(|v| !v.is_null())
        .and_then(Limit::of);
    match current {
        None if kind.is_atm => default_atm_limit(account),
        Some(current) => Ok(current),
        None => Err(format!(
            "Error: The card does not have a {} configured. This may be a restricted account type where limits are set by account policy and cannot be modified.",
            kind.name.to_lowercase()
        )),
    }
}

/// The ATM limit a card without one has by its account's level, or the error text for
/// a teen account (fixed by policy) or an unknown level.
fn default_atm_limit(account: &Map<String, Value>) -> Result<Limit, String> {
    let level = field_str(account, "level").to_lowercase();
    if level.contains("light green") {
        return Err("Error: Light Green Account (teen checking) cards have policy-based limits that cannot be modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety reasons. The customer may request the parent/guardian to withdraw cash from their own account if needed.".into());
    }
    let default = match level.as_str() {
        "blue account" => 500,
        "green account" => 600,
        "light blue account" => 400,
        "green fee-free account" => 500,
        "evergreen account" => 750,
        "bluest account" => 1500,
        "dark green account" => 300,
        "gold years account" => 600,
        "purple account" => 1000,
        _ => {
            return Err(format!(
                "Error: Could not determine the default ATM limit for account type '{}'. Please verify the account type.",
                field(account, "level")
            ));
        }
    };
    Ok(Limit::Int(default))
}

/// The error text for a request above 150% of the current limit or not above it.
fn increase_refusal(new_limit: i64, current: Limit) -> Option<String> {
    let max_allowed = (current.f() * 1.5).trunc() as i64;
    if new_limit > max_allowed {
        return Some(format!(
            "Error: Requested limit ${new_limit} exceeds the maximum allowed temporary increase. Maximum temporary limit is ${max_allowed} (150% of current ${} limit).",
            current.show()
        ));
    }
    if (new_limit as f64) <= current.f() {
        return Some(format!(
            "Error: Requested limit ${new_limit} is not higher than the current limit of ${}.",
            current.show()
        ));
    }
    None
}

/// Sets the new limit on the card with the original it reverts to and when.
fn record_temporary_limit(
    db: &mut Db,
    card_id: &str,
    limit_type: &str,
    kind: LimitKind,
    new_limit: i64,
    current: Limit,
) {
    if let Some(card) = db.get_mut("debit_cards", card_id) {
        card.insert(kind.field.into(), Value::from(new_limit));
        card.insert(
            format!("temporary_{limit_type}_limit_increase"),
            Value::Bool(true),
        );
        card.insert(format!("original_{limit_type}_limit"), current.value());
        card.insert(
            format!("temporary_{limit_type}_limit_expires"),
            Value::from(TODAY),
        );
    }
}

/// The reply to a granted increase: the limits, then the 24-hour and third-party ATM notes.
fn increase_granted(card_id: &str, kind: LimitKind, new_limit: i64, current: Limit) -> String {
    let limit_name = kind.name;
    let increase = match current {
        Limit::Int(i) => (new_limit - i).to_string(),
        Limit::Float(x) => pyjson::float_repr(new_limit as f64 - x),
    };
    let original = current.show();
    let parts = [
        format!("Temporary {limit_name} Increase Granted Successfully"),
        format!("Card ID: {card_id}"),
        format!("Previous Limit: ${original}"),
        format!("New Temporary Limit: ${new_limit}"),
        format!("Increase Amount: ${increase}"),
        String::new(),
        "Important Information:".into(),
        "- This temporary increase expires in 24 hours".into(),
        format!("- After expiration, the limit will revert to ${original}"),
        "- Only one temporary increase is allowed per 24-hour period".into(),
        String::new(),
        "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own"
            .into(),
        "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to"
            .into(),
        "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.".into(),
    ];
    parts.join("\n")
}
