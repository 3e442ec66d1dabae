//! The two debit card tools that involve money or dates: ordering a card (fees, the new
//! card's secrets and issue reason) and a temporary limit increase (account age, default
//! limits by account level), plus the `MM/DD/YYYY` date arithmetic both need.

use super::args::{Args, field, field_is, field_str, key, record, text, to_float};
use super::cards::card_secrets;
use super::db::Db;
use super::pyfmt::{f2, float_value};
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::{Number, Value};
use tauguard_core::pyjson;

/// Days from 1970-01-01 of a `datetime.strptime(s, "%m/%d/%Y")` date, `None` where
/// strptime raises.
pub fn day_number(s: &str) -> Option<i64> {
    let mut parts = s.split('/');
    let (m, d, y) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let num = |t: &str, max_len: usize| -> Option<i64> {
        (!t.is_empty() && t.len() <= max_len && t.chars().all(|c| c.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (m, d, y) = (num(m, 2)?, num(d, 2)?, num(y, 4)?);
    if y.to_string().len() != 4 && y < 1000 {
        // `%Y` takes four digits.
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// Whole days from `date_opened` to the domain's fixed today (its 03:40 adds no day).
pub fn age_days(date_opened: &str) -> Option<i64> {
    Some(day_number(TODAY)? - day_number(date_opened)?)
}

pub fn order(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let excess_arg = if a.truthy("excess_replacement_fee") {
        a.v("excess_replacement_fee").clone()
    } else {
        Value::from(0)
    };
    let delivery_fee = match a.v("delivery_fee") {
        Value::Null => None,
        v => match to_float(v) {
            Some(x) => Some(x),
            None => return Ok("Error: delivery_fee must be a number.".into()),
        },
    };
    let design_fee = match a.v("design_fee") {
        Value::Null => None,
        v => match to_float(v) {
            Some(x) => Some(x),
            None => return Ok("Error: design_fee must be a number.".into()),
        },
    };
    // `float(excess)`, falling back to the int 0.
    let (excess, excess_value) = match to_float(&excess_arg) {
        Some(x) => (x, float_value(x)),
        None => (0.0, Value::from(0)),
    };
    let present = a.truthy("account_id")
        && a.truthy("user_id")
        && a.truthy("delivery_option")
        && delivery_fee.is_some()
        && a.truthy("card_design")
        && design_fee.is_some()
        && a.truthy("shipping_address");
    let (Some(delivery_fee), Some(design_fee)) = (delivery_fee.filter(|_| present), design_fee)
    else {
        return Ok("Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, card_design, design_fee, shipping_address.".into());
    };
    let delivery = text(a.v("delivery_option"), "upper")?.to_uppercase();
    if !["STANDARD", "EXPEDITED", "RUSH"].contains(&delivery.as_str()) {
        return Ok(super::tools::invalid(
            "delivery_option",
            &["STANDARD", "EXPEDITED", "RUSH"],
        ));
    }
    let design = text(a.v("card_design"), "upper")?.to_uppercase();
    if !["CLASSIC", "PREMIUM", "CUSTOM"].contains(&design.as_str()) {
        return Ok(super::tools::invalid(
            "card_design",
            &["CLASSIC", "PREMIUM", "CUSTOM"],
        ));
    }
    let account_id = key(a.v("account_id"))?;
    let Some(account) = db.get("accounts", &account_id) else {
        return Ok(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    if !field_is(account, "class", "checking") {
        return Ok(format!(
            "Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a {} account.",
            field(account, "class")
        ));
    }
    if !field_is(account, "status", "OPEN") {
        return Ok(format!(
            "Error: Account must be OPEN. Account '{account_id}' has status: {}",
            field(account, "status")
        ));
    }
    let user = a.s("user_id");
    if account.get("user_id") != Some(a.v("user_id")) {
        return Ok(format!(
            "Error: Account '{account_id}' does not belong to user '{user}'."
        ));
    }
    let holdings_text = account
        .get("current_holdings")
        .map_or_else(|| "0".to_string(), pyjson::py_str)
        .replace(',', "");
    let holdings = super::args::parse_float_text(&holdings_text).unwrap_or(0.0);
    if holdings < 25.0 {
        return Ok(format!(
            "Error: Account must have a minimum balance of $25. Current balance: ${}",
            f2(holdings)
        ));
    }
    let of_account = |r: &serde_json::Map<String, Value>| field_str(r, "account_id") == account_id;
    if db
        .records("debit_card_orders")
        .iter()
        .any(|(_, o)| of_account(o) && field_is(o, "status", "PENDING"))
    {
        return Ok(format!(
            "Error: There is already a pending debit card order for account '{account_id}'."
        ));
    }
    if db
        .records("debit_cards")
        .iter()
        .any(|(_, c)| of_account(c) && field_is(c, "status", "ACTIVE"))
    {
        return Ok(format!(
            "Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking account."
        ));
    }
    let total = delivery_fee + design_fee + excess;
    if total > 0.0 && holdings < total {
        return Ok(format!(
            "Error: Insufficient funds for fees. Total fees: ${}. Current balance: ${}",
            f2(total),
            f2(holdings)
        ));
    }
    let expected = match delivery.as_str() {
        "STANDARD" => "7-10 business days",
        "EXPEDITED" => "3-5 business days",
        _ => "1-2 business days",
    };
    let order_id = ids::debit_card_order(&account_id, &user, &delivery);
    let order = record(vec![
        ("order_id", Value::String(order_id.clone())),
        ("account_id", a.v("account_id").clone()),
        ("user_id", a.v("user_id").clone()),
        ("delivery_option", Value::String(delivery.clone())),
        ("card_design", Value::String(design.clone())),
        ("shipping_address", a.v("shipping_address").clone()),
        ("delivery_fee", float_value(delivery_fee)),
        ("design_fee", float_value(design_fee)),
        ("excess_replacement_fee", excess_value),
        ("total_fee", float_value(total)),
        ("order_date", Value::from(TODAY)),
        ("expected_delivery", Value::from(expected)),
        ("status", Value::from("PENDING")),
    ]);
    if !db.add("debit_card_orders", &order_id, order) {
        return Ok("Error: Failed to create debit card order. Order may already exist.".into());
    }
    let fee_parts = |sep: &str| {
        let mut parts = Vec::new();
        if delivery_fee > 0.0 {
            parts.push(format!(
                "Delivery{sep} ${}",
                pyjson::float_repr(delivery_fee)
            ));
        }
        if design_fee > 0.0 {
            parts.push(format!("Design{sep} ${}", pyjson::float_repr(design_fee)));
        }
        if excess > 0.0 {
            parts.push(format!("Excess Replacement{sep} ${:.0}", excess));
        }
        parts.join(", ")
    };
    if total > 0.0 {
        db.update(
            "accounts",
            &account_id,
            &[("current_holdings", Value::String(f2(holdings - total)))],
        );
        let fee_id = format!(
            "btxn_dcfee_{}",
            &order_id[order_id.len().saturating_sub(8)..]
        );
        let txn = record(vec![
            ("transaction_id", Value::String(fee_id.clone())),
            ("account_id", a.v("account_id").clone()),
            ("date", Value::from(TODAY)),
            (
                "description",
                Value::String(format!("DEBIT CARD ORDER FEE - {}", fee_parts(""))),
            ),
            ("amount", float_value(-total)),
            ("type", Value::from("debit_card_fee")),
            ("status", Value::from("posted")),
        ]);
        db.add("bank_account_transaction_history", &fee_id, txn);
    }
    let card_id = ids::debit_card(&account_id, &user, TODAY);
    let (last4, cvv) = card_secrets(&card_id);
    let holder = match key(a.v("user_id"))
        .ok()
        .and_then(|u| db.get("users", &u).cloned())
    {
        Some(u) => match u.get("name") {
            Some(Value::String(n)) => n.to_uppercase(),
            Some(other) => return Err(crate::py::no_attribute(pyjson::type_name(other), "upper")),
            None => "CARDHOLDER".into(),
        },
        None => "CARDHOLDER".into(),
    };
    let existing: Vec<&serde_json::Map<String, Value>> = db
        .records("debit_cards")
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| of_account(c))
        .collect();
    let issue_reason = match existing.iter().find(|c| field_is(c, "status", "CLOSED")) {
        Some(closed) => {
            let why = closed
                .get("closure_reason")
                .map_or_else(|| "first_card".to_string(), pyjson::py_str);
            match why.as_str() {
                "fraud_suspected" => "fraud".to_string(),
                "lost" | "stolen" | "fraud" => why,
                _ => "first_card".into(),
            }
        }
        None if !existing.is_empty() => "first_card".into(),
        None => "new_account".into(),
    };
    let card = record(vec![
        ("card_id", Value::String(card_id.clone())),
        ("account_id", a.v("account_id").clone()),
        ("user_id", a.v("user_id").clone()),
        ("cardholder_name", Value::String(holder)),
        ("last_4_digits", Value::String(last4)),
        ("cvv", Value::String(cvv)),
        ("status", Value::from("PENDING")),
        ("issue_date", Value::from(TODAY)),
        ("expiration_date", Value::from("11/30/2029")),
        ("card_design", Value::String(design.clone())),
        ("issue_reason", Value::String(issue_reason)),
    ]);
    db.add("debit_cards", &card_id, card);
    let mut parts = vec![
        "Debit Card Order Confirmed".to_string(),
        format!("Order ID: {order_id}"),
        format!("Card ID: {card_id}"),
        format!("Linked Account: {account_id}"),
        format!("Delivery Option: {delivery}"),
        format!("Card Design: {design}"),
        format!("Shipping Address: {}", a.s("shipping_address")),
        format!("Expected Delivery: {expected}"),
        String::new(),
        "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.".into(),
    ];
    if total > 0.0 {
        parts.push(format!(
            "Total Fees: ${} ({}) - CHARGED to account {account_id}",
            f2(total),
            fee_parts(":")
        ));
        parts.push(format!("New Account Balance: ${}", f2(holdings - total)));
    } else {
        parts.push("Total Fees: $0 (No additional charges)".into());
    }
    Ok(parts.join("\n"))
}

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

pub fn limit_increase(db: &mut Db, a: Args) -> Result<String, ToolError> {
    if !a.truthy("card_id") {
        return Ok("Error: Missing required parameter: card_id.".into());
    }
    if !a.truthy("limit_type") {
        return Ok("Error: Missing required parameter: limit_type.".into());
    }
    let limit_type = a.v("limit_type");
    if !super::args::one_of(limit_type, &["atm", "purchase"]) {
        return Ok(format!(
            "Error: Invalid limit_type '{}'. Must be 'atm' or 'purchase'.",
            a.s("limit_type")
        ));
    }
    if a.is_none("new_limit") {
        return Ok("Error: Missing required parameter: new_limit.".into());
    }
    let new_limit = match to_float(a.v("new_limit")) {
        Some(x) if x.fract() == 0.0 && x.is_finite() => x as i64,
        Some(x) => {
            return Ok(format!(
                "Error: new_limit must be an integer, got '{}'.",
                pyjson::float_repr(x)
            ));
        }
        None => {
            return Ok(format!(
                "Error: new_limit must be an integer, got '{}'.",
                a.s("new_limit")
            ));
        }
    };
    if new_limit <= 0 {
        return Ok("Error: new_limit must be a positive amount.".into());
    }
    let card_id = key(a.v("card_id"))?;
    let Some(card) = db.get("debit_cards", &card_id) else {
        return Ok(format!("Error: Debit card '{}' not found.", a.s("card_id")));
    };
    if !field_is(card, "status", "ACTIVE") {
        return Ok(format!(
            "Error: Debit card '{card_id}' is not active. Current status: {}. Only ACTIVE cards can have limit increases.",
            field(card, "status")
        ));
    }
    let account_id = field_str(card, "account_id").to_string();
    let Some(account) = db
        .get("accounts", &account_id)
        .filter(|_| !account_id.is_empty())
    else {
        return Ok(format!(
            "Error: Could not find linked account for debit card '{card_id}'."
        ));
    };
    if !field_is(account, "status", "OPEN") {
        return Ok(format!(
            "Error: The linked account '{account_id}' is not in good standing. Account status: {}.",
            field(account, "status")
        ));
    }
    if let Some(age) = account
        .get("date_opened")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .and_then(age_days)
        && age < 60
    {
        return Ok(format!(
            "Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} days."
        ));
    }
    let is_atm = limit_type == "atm";
    let (field_name, limit_name) = if is_atm {
        ("daily_atm_limit", "Daily ATM Withdrawal Limit")
    } else {
        ("daily_purchase_limit", "Daily Purchase Limit")
    };
    let mut current = card
        .get(field_name)
        .filter(|v| !v.is_null())
        .and_then(Limit::of);
    if is_atm && current.is_none() {
        let level = field_str(account, "level").to_lowercase();
        if level.contains("light green") {
            return Ok("Error: Light Green Account (teen checking) cards have policy-based limits that cannot be modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety reasons. The customer may request the parent/guardian to withdraw cash from their own account if needed.".into());
        }
        let default = match level.as_str() {
            "blue account" => Some(500),
            "green account" => Some(600),
            "light blue account" => Some(400),
            "green fee-free account" => Some(500),
            "evergreen account" => Some(750),
            "bluest account" => Some(1500),
            "dark green account" => Some(300),
            "gold years account" => Some(600),
            "purple account" => Some(1000),
            _ => None,
        };
        let Some(default) = default else {
            return Ok(format!(
                "Error: Could not determine the default ATM limit for account type '{}'. Please verify the account type.",
                field(account, "level")
            ));
        };
        current = Some(Limit::Int(default));
    }
    let Some(current) = current else {
        return Ok(format!(
            "Error: The card does not have a {} configured. This may be a restricted account type where limits are set by account policy and cannot be modified.",
            limit_name.to_lowercase()
        ));
    };
    let max_allowed = (current.f() * 1.5).trunc() as i64;
    if new_limit > max_allowed {
        return Ok(format!(
            "Error: Requested limit ${new_limit} exceeds the maximum allowed temporary increase. Maximum temporary limit is ${max_allowed} (150% of current ${} limit).",
            current.show()
        ));
    }
    if (new_limit as f64) <= current.f() {
        return Ok(format!(
            "Error: Requested limit ${new_limit} is not higher than the current limit of ${}.",
            current.show()
        ));
    }
    let kind = a.s("limit_type");
    if let Some(card) = db.get_mut("debit_cards", &card_id) {
        card.insert(field_name.into(), Value::from(new_limit));
        card.insert(
            format!("temporary_{kind}_limit_increase"),
            Value::Bool(true),
        );
        card.insert(format!("original_{kind}_limit"), current.value());
        card.insert(
            format!("temporary_{kind}_limit_expires"),
            Value::from(TODAY),
        );
    }
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
    Ok(parts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_count_days_as_strptime_dates_do() {
        assert_eq!(age_days("11/14/2025"), Some(0));
        assert_eq!(age_days("10/15/2025"), Some(30));
        assert_eq!(age_days("11/14/2024"), Some(365));
        assert_eq!(age_days("2/29/2023"), None);
        assert_eq!(age_days("2025-11-14"), None);
    }
}
