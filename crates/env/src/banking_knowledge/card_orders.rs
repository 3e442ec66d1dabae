//! Ordering a debit card (fees, the new card's secrets and issue reason), plus the
//! `MM/DD/YYYY` date arithmetic the account-age checks need (`debit_limits`, `accounts`).

use super::args::{Args, field_is, field_str, key, record, require_field, text, to_float};
use super::cards::card_secrets;
use super::db::Db;
use super::pyfmt::{f2, float_value};
use super::{TODAY, ids};
use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson;

/// Days from 1970-01-01 of a `datetime.strptime(s, "%m/%d/%Y")` date, `None` where
/// strptime raises.
pub(super) fn day_number(s: &str) -> Option<i64> {
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
pub(super) fn age_days(date_opened: &str) -> Option<i64> {
    Some(day_number(TODAY)? - day_number(date_opened)?)
}

/// The fees of a debit card order, as upstream's `float()` parses them.
struct OrderFees {
    delivery: f64,
    design: f64,
    excess: f64,
    /// `float(excess)`, or the int 0 it falls back to, as the order records it.
    excess_value: Value,
}

impl OrderFees {
    fn total(&self) -> f64 {
        self.delivery + self.design + self.excess
    }

    /// The charged fees, as the fee transaction (`sep` "") and the reply (`sep` ":") name them.
    fn parts(&self, sep: &str) -> String {
        let mut parts = Vec::new();
        if self.delivery > 0.0 {
            parts.push(format!(
                "Delivery{sep} ${}",
                pyjson::float_repr(self.delivery)
            ));
        }
        if self.design > 0.0 {
            parts.push(format!("Design{sep} ${}", pyjson::float_repr(self.design)));
        }
        if self.excess > 0.0 {
            parts.push(format!("Excess Replacement{sep} ${:.0}", self.excess));
        }
        parts.join(", ")
    }
}

/// An order that passed every check: what its records and reply are built from.
struct CardOrder {
    order_id: String,
    account_id: String,
    user: String,
    delivery: String,
    design: String,
    expected: &'static str,
    fees: OrderFees,
    holdings: f64,
}

pub(super) fn order(db: &mut Db, a: Args) -> Result<String, ToolError> {
    let fees = match order_fees(a) {
        Ok(fees) => fees,
        Err(message) => return Ok(message),
    };
    let (delivery, design) = match order_options(a)? {
        Ok(options) => options,
        Err(message) => return Ok(message),
    };
    let account_id = key(a.v("account_id"))?;
    let holdings = match account_balance_for_order(db, a, &account_id, &fees) {
        Ok(holdings) => holdings,
        Err(message) => return Ok(message),
    };
    let expected = match delivery.as_str() {
        "STANDARD" => "7-10 business days",
        "EXPEDITED" => "3-5 business days",
        _ => "1-2 business days",
    };
    let user = a.s("user_id");
    let order = CardOrder {
        order_id: ids::debit_card_order(&account_id, &user, &delivery),
        account_id,
        user,
        delivery,
        design,
        expected,
        fees,
        holdings,
    };
    if !db.add(
        "debit_card_orders",
        &order.order_id,
        order_record(a, &order),
    ) {
        return Ok("Error: Failed to create debit card order. Order may already exist.".into());
    }
    charge_order_fees(db, a, &order);
    let card_id = issue_pending_card(db, a, &order)?;
    Ok(order_confirmation(a, &order, &card_id))
}

/// The three fees, or the error text for a fee that is not a number or a required
/// parameter that is missing.
fn order_fees(a: Args) -> Result<OrderFees, String> {
    let excess_arg = if a.truthy("excess_replacement_fee") {
        a.v("excess_replacement_fee").clone()
    } else {
        Value::from(0)
    };
    let delivery_fee = match a.v("delivery_fee") {
        Value::Null => None,
        v => match to_float(v) {
            Some(x) => Some(x),
            None => return Err("Error: delivery_fee must be a number.".into()),
        },
    };
    let design_fee = match a.v("design_fee") {
        Value::Null => None,
        v => match to_float(v) {
            Some(x) => Some(x),
            None => return Err("Error: design_fee must be a number.".into()),
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
    let (Some(delivery), Some(design)) = (delivery_fee.filter(|_| present), design_fee) else {
        return Err("Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, card_design, design_fee, shipping_address.".into());
    };
    Ok(OrderFees {
        delivery,
        design,
        excess,
        excess_value,
    })
}

/// The upper-cased delivery option and card design, or the error text for one not offered.
fn order_options(a: Args) -> Result<Result<(String, String), String>, ToolError> {
    let delivery = text(a.v("delivery_option"), "upper")?.to_uppercase();
    if !["STANDARD", "EXPEDITED", "RUSH"].contains(&delivery.as_str()) {
        return Ok(Err(super::tools::invalid(
            "delivery_option",
            &["STANDARD", "EXPEDITED", "RUSH"],
        )));
    }
    let design = text(a.v("card_design"), "upper")?.to_uppercase();
    if !["CLASSIC", "PREMIUM", "CUSTOM"].contains(&design.as_str()) {
        return Ok(Err(super::tools::invalid(
            "card_design",
            &["CLASSIC", "PREMIUM", "CUSTOM"],
        )));
    }
    Ok(Ok((delivery, design)))
}

/// The account's balance, or the error text for an account that may not order a card
/// (kind, status, owner, minimum balance, an order or card already there, the fees).
fn account_balance_for_order(
    db: &Db,
    a: Args,
    account_id: &str,
    fees: &OrderFees,
) -> Result<f64, String> {
    let Some(account) = db.get("accounts", account_id) else {
        return Err(format!("Error: Account '{}' not found.", a.s("account_id")));
    };
    require_field(account, "class", "checking", |class| {
        format!(
            "Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a {class} account."
        )
    })?;
    require_field(account, "status", "OPEN", |status| {
        format!("Error: Account must be OPEN. Account '{account_id}' has status: {status}")
    })?;
    if account.get("user_id") != Some(a.v("user_id")) {
        return Err(format!(
            "Error: Account '{account_id}' does not belong to user '{}'.",
            a.s("user_id")
        ));
    }
    let holdings_text = account
        .get("current_holdings")
        .map_or_else(|| "0".to_string(), pyjson::py_str)
        .replace(',', "");
    let holdings = super::args::parse_float_text(&holdings_text).unwrap_or(0.0);
    if holdings < 25.0 {
        return Err(format!(
            "Error: Account must have a minimum balance of $25. Current balance: ${}",
            f2(holdings)
        ));
    }
    // Whether a record of `table` for this account has `status`.
    let has_with_status = |table: &str, status: &str| {
        db.records(table)
            .iter()
            .any(|(_, r)| field_str(r, "account_id") == account_id && field_is(r, "status", status))
    };
    if has_with_status("debit_card_orders", "PENDING") {
        return Err(format!(
            "Error: There is already a pending debit card order for account '{account_id}'."
        ));
    }
    if has_with_status("debit_cards", "ACTIVE") {
        return Err(format!(
            "Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking account."
        ));
    }
    let total = fees.total();
    if total > 0.0 && holdings < total {
        return Err(format!(
            "Error: Insufficient funds for fees. Total fees: ${}. Current balance: ${}",
            f2(total),
            f2(holdings)
        ));
    }
    Ok(holdings)
}

/// The `debit_card_orders` record, its keys in upstream's order.
fn order_record(a: Args, order: &CardOrder) -> serde_json::Map<String, Value> {
    record(vec![
        ("order_id", Value::String(order.order_id.clone())),
        ("account_id", a.v("account_id").clone()),
        ("user_id", a.v("user_id").clone()),
        ("delivery_option", Value::String(order.delivery.clone())),
        ("card_design", Value::String(order.design.clone())),
        ("shipping_address", a.v("shipping_address").clone()),
        ("delivery_fee", float_value(order.fees.delivery)),
        ("design_fee", float_value(order.fees.design)),
        ("excess_replacement_fee", order.fees.excess_value.clone()),
        ("total_fee", float_value(order.fees.total())),
        ("order_date", Value::from(TODAY)),
        ("expected_delivery", Value::from(order.expected)),
        ("status", Value::from("PENDING")),
    ])
}

/// Debits any fees from the account and posts them as one fee transaction.
fn charge_order_fees(db: &mut Db, a: Args, order: &CardOrder) {
    let total = order.fees.total();
    if total > 0.0 {
        post_order_fee(db, a, order, total);
    }
}

fn post_order_fee(db: &mut Db, a: Args, order: &CardOrder, total: f64) {
    db.update(
        "accounts",
        &order.account_id,
        &[(
            "current_holdings",
            Value::String(f2(order.holdings - total)),
        )],
    );
    let order_id = &order.order_id;
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
            Value::String(format!("DEBIT CARD ORDER FEE - {}", order.fees.parts(""))),
        ),
        ("amount", float_value(-total)),
        ("type", Value::from("debit_card_fee")),
        ("status", Value::from("posted")),
    ]);
    db.add("bank_account_transaction_history", &fee_id, txn);
}

/// Adds the ordered card, PENDING until activated; its id.
fn issue_pending_card(db: &mut Db, a: Args, order: &CardOrder) -> Result<String, ToolError> {
    let card_id = ids::debit_card(&order.account_id, &order.user, TODAY);
    let (last4, cvv) = card_secrets(&card_id);
    let holder = cardholder_name(db, a)?;
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
        ("card_design", Value::String(order.design.clone())),
        (
            "issue_reason",
            Value::String(issue_reason(db, &order.account_id)),
        ),
    ]);
    db.add("debit_cards", &card_id, card);
    Ok(card_id)
}

/// The user's name upper-cased, `CARDHOLDER` for an unknown user or one without a name.
fn cardholder_name(db: &Db, a: Args) -> Result<String, ToolError> {
    match key(a.v("user_id"))
        .ok()
        .and_then(|u| db.get("users", &u).cloned())
    {
        Some(u) => match u.get("name") {
            Some(Value::String(n)) => Ok(n.to_uppercase()),
            Some(other) => Err(crate::py::no_attribute(pyjson::type_name(other), "upper")),
            None => Ok("CARDHOLDER".into()),
        },
        None => Ok("CARDHOLDER".into()),
    }
}

/// Why the account gets a card: the closure reason of its closed card, else first or new.
fn issue_reason(db: &Db, account_id: &str) -> String {
    let existing: Vec<&serde_json::Map<String, Value>> = db
        .records("debit_cards")
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| field_str(c, "account_id") == account_id)
        .collect();
    match existing.iter().find(|c| field_is(c, "status", "CLOSED")) {
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
    }
}

/// The reply to a placed order: its ids and options, then the fees charged.
fn order_confirmation(a: Args, order: &CardOrder, card_id: &str) -> String {
    let CardOrder {
        order_id,
        account_id,
        delivery,
        design,
        expected,
        ..
    } = order;
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
    let total = order.fees.total();
    if total > 0.0 {
        parts.push(format!(
            "Total Fees: ${} ({}) - CHARGED to account {account_id}",
            f2(total),
            order.fees.parts(":")
        ));
        parts.push(format!(
            "New Account Balance: ${}",
            f2(order.holdings - total)
        ));
    } else {
        parts.push("Total Fees: $0 (No additional charges)".into());
    }
    parts.join("\n")
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
