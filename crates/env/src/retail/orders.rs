//! The order-changing retail tools (§4), step for step as upstream runs them: the same
//! check order and messages, float arithmetic and rounding only where upstream rounds, and
//! partial updates left in place when upstream fails halfway through a mutation.

use super::lookup::{address, order_key, payment_method, user_key, variant};
use super::model::{
    CancelReason, Float, Number, Order, OrderPayment, OrderStatus, RetailDb, TransactionType,
    Variant,
};
use crate::environment::{ToolResult, ToolValue};
use crate::py::{self, arg_str};
use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson::round2;

fn order<'d>(db: &'d RetailDb, key: &str) -> Result<&'d Order, ToolError> {
    db.orders
        .get(key)
        .ok_or_else(|| ToolError::value("Order not found"))
}

/// `_get_order` and the status check every order tool starts with: the order's key and
/// record, or `refusal` when its status is not one the tool acts on.
fn order_if<'d, 'a>(
    db: &'d RetailDb,
    order_id: &'a Value,
    acts_on: fn(OrderStatus) -> bool,
    refusal: &str,
) -> Result<(&'a str, &'d Order), ToolError> {
    let key = order_key(db, order_id)?;
    let current = order(db, key)?;
    if !acts_on(current.status) {
        return Err(ToolError::value(refusal));
    }
    Ok((key, current))
}

fn is_pending(status: OrderStatus) -> bool {
    status == OrderStatus::Pending
}

fn is_delivered(status: OrderStatus) -> bool {
    status == OrderStatus::Delivered
}

fn order_mut<'d>(db: &'d mut RetailDb, key: &str) -> Result<&'d mut Order, ToolError> {
    db.orders
        .get_mut(key)
        .ok_or_else(|| ToolError::value("Order not found"))
}

/// Adds `delta` to a gift card's balance and rounds it to cents, as upstream does after
/// every gift-card movement. Other payment methods are left alone.
fn move_gift_card_balance(db: &mut RetailDb, user_id: &str, method_id: &str, delta: f64) {
    let method = db
        .users
        .get_mut(user_id)
        .and_then(|u| u.payment_methods.get_mut(method_id));
    if let Some(balance) = method.and_then(|m| m.gift_card_balance_mut()) {
        *balance = round2(*balance + delta);
    }
}

fn order_item_ids(order: &Order) -> Vec<&str> {
    order.items.iter().map(|i| i.item_id.as_str()).collect()
}

pub(super) fn cancel_pending_order(
    db: &mut RetailDb,
    order_id: &Value,
    reason: &Value,
) -> ToolResult {
    let (key, current) = order_if(
        db,
        order_id,
        is_pending,
        "Non-pending order cannot be cancelled",
    )?;
    let reason = match py::dict_key(reason)? {
        Some("no longer needed") => CancelReason::NoLongerNeeded,
        Some("ordered by mistake") => CancelReason::OrderedByMistake,
        _ => return Err(ToolError::value("Invalid reason")),
    };
    let user_id = current.user_id.clone();
    let payments = current.payment_history.clone();
    let mut refunds = Vec::with_capacity(payments.len());
    for payment in payments {
        let method_id = Value::String(payment.payment_method_id.clone());
        refunds.push(OrderPayment {
            transaction_type: TransactionType::Refund,
            ..payment.clone()
        });
        let user = user_key(db, &Value::String(user_id.clone()))?.to_string();
        if payment_method(db, &user, &method_id)?
            .gift_card_balance()
            .is_some()
        {
            move_gift_card_balance(db, &user, &payment.payment_method_id, payment.amount.0);
        }
    }
    let order = order_mut(db, key)?;
    order.status = OrderStatus::Cancelled;
    order.cancel_reason = Some(reason);
    order.payment_history.extend(refunds);
    Ok(ToolValue::model(order))
}

/// How one of the two item-swapping tools (exchange of delivered items, modification of
/// pending ones) checks its order and words its refusals.
struct Swap {
    acts_on: fn(OrderStatus) -> bool,
    wrong_status: &'static str,
    missing: fn(&Value) -> String,
    length_message: &'static str,
}

const EXCHANGE: Swap = Swap {
    acts_on: is_delivered,
    wrong_status: "Non-delivered order cannot be exchanged",
    missing: |id| format!("Number of {} not found.", arg_str(id)),
    length_message: "The number of items to be exchanged should match.",
};

const MODIFY: Swap = Swap {
    acts_on: is_pending,
    wrong_status: "Non-pending order cannot be modified",
    missing: |id| format!("{} not found", arg_str(id)),
    length_message: "The number of items to be exchanged should match",
};

/// Each item to swap with its replacement: the old item id and the new one as given.
type ItemPairs = Vec<(String, Value)>;

/// The order a swap acts on, and `item_ids` paired with `new_item_ids` after upstream's
/// status, multiplicity and length checks.
fn swap_pairs<'d, 'a>(
    db: &'d RetailDb,
    order_id: &'a Value,
    item_ids: &Value,
    new_item_ids: &Value,
    swap: &Swap,
) -> Result<(&'a str, &'d Order, ItemPairs), ToolError> {
    let (key, current) = order_if(db, order_id, swap.acts_on, swap.wrong_status)?;
    let olds = py::check_multiplicity(item_ids, &order_item_ids(current), swap.missing)?;
    if py::len(item_ids)? != py::len(new_item_ids)? {
        return Err(ToolError::value(swap.length_message));
    }
    let pairs = olds
        .into_iter()
        .zip(py::iterate(new_item_ids)?.into_owned())
        .collect();
    Ok((key, current, pairs))
}

/// Validates one (old, new) pair: the old item's product must have the new id as an
/// available variant. Returns the variant and the old item's price.
fn checked_variant<'d>(
    db: &'d RetailDb,
    current: &Order,
    old: &str,
    new: &Value,
) -> Result<(&'d Variant, f64), ToolError> {
    let item = current
        .items
        .iter()
        .find(|i| i.item_id == old)
        .ok_or_else(|| ToolError::value(format!("Item {old} not found")))?;
    let variant = variant(db, &item.product_id, new)?;
    if !variant.available {
        return Err(ToolError::value(format!(
            "New item {} not found or available",
            arg_str(new)
        )));
    }
    Ok((variant, item.price.0))
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

pub(super) fn exchange_delivered_order_items(
    db: &mut RetailDb,
    order_id: &Value,
    item_ids: &Value,
    new_item_ids: &Value,
    payment_method_id: &Value,
) -> ToolResult {
    let (key, current, pairs) = swap_pairs(db, order_id, item_ids, new_item_ids, &EXCHANGE)?;
    let mut diff = 0.0;
    for (old, new) in &pairs {
        let (variant, old_price) = checked_variant(db, current, old, new)?;
        diff += variant.price.0 - old_price;
    }
    // Upstream starts from the integer 0: with no pairs, `round(0, 2)` stays an int.
    let diff = if pairs.is_empty() {
        Number::Int(0)
    } else {
        Number::Float(round2(diff))
    };
    let diff_value = match diff {
        Number::Int(i) => i as f64,
        Number::Float(x) => x,
    };
    let method = payment_method(db, &current.user_id, payment_method_id)?;
    if method.gift_card_balance().is_some_and(|b| b < diff_value) {
        return Err(ToolError::value(
            "Insufficient gift card balance to pay for the price difference",
        ));
    }
    let method_id = payment_method_id.as_str().unwrap_or_default().to_string();
    let (olds, news): (Vec<String>, Vec<String>) = pairs
        .into_iter()
        .map(|(o, n)| (o, n.as_str().unwrap_or_default().to_string()))
        .unzip();
    let order = order_mut(db, key)?;
    order.status = OrderStatus::ExchangeRequested;
    order.exchange_items = Some(sorted(olds));
    order.exchange_new_items = Some(sorted(news));
    order.exchange_payment_method_id = Some(method_id);
    order.exchange_price_difference = Some(diff);
    Ok(ToolValue::model(order))
}

pub(super) fn modify_pending_order_address(
    db: &mut RetailDb,
    order_id: &Value,
    fields: &[&Value; 6],
) -> ToolResult {
    let (key, _) = order_if(
        db,
        order_id,
        OrderStatus::contains_pending,
        "Non-pending order cannot be modified",
    )?;
    let address = address(fields)?;
    let order = order_mut(db, key)?;
    order.address = address;
    Ok(ToolValue::model(order))
}

pub(super) fn modify_pending_order_items(
    db: &mut RetailDb,
    order_id: &Value,
    item_ids: &Value,
    new_item_ids: &Value,
    payment_method_id: &Value,
) -> ToolResult {
    let (key, current, pairs) = swap_pairs(db, order_id, item_ids, new_item_ids, &MODIFY)?;
    let mut diff = 0.0;
    let mut last_variant: Option<Variant> = None;
    for (old, new) in &pairs {
        if new.as_str() == Some(old.as_str()) {
            return Err(ToolError::value(
                "The new item id should be different from the old item id",
            ));
        }
        let (variant, old_price) = checked_variant(db, current, old, new)?;
        diff += variant.price.0 - old_price;
        last_variant = Some(variant.clone());
    }
    let user_id = current.user_id.clone();
    let method = payment_method(db, &user_id, payment_method_id)?;
    let is_gift_card = method.gift_card_balance().is_some();
    if method.gift_card_balance().is_some_and(|b| b < diff) {
        return Err(ToolError::value(
            "Insufficient gift card balance to pay for the new item",
        ));
    }
    let method_id = payment_method_id.as_str().unwrap_or_default().to_string();
    let kind = if diff > 0.0 {
        TransactionType::Payment
    } else {
        TransactionType::Refund
    };
    order_mut(db, key)?.payment_history.push(OrderPayment {
        transaction_type: kind,
        amount: Float(diff.abs()),
        payment_method_id: method_id.clone(),
    });
    if is_gift_card {
        move_gift_card_balance(db, &user_id, &method_id, -diff);
    }
    let order = order_mut(db, key)?;
    for (old, new) in &pairs {
        // Every modified item takes the price and options of the last variant checked above
        // (upstream reuses its loop variable): a quirk kept for parity.
        let item = order
            .items
            .iter_mut()
            .find(|i| i.item_id == *old)
            .ok_or_else(|| ToolError::value(format!("Item {old} not found")))?;
        item.item_id = new.as_str().unwrap_or_default().to_string();
        if let Some(v) = &last_variant {
            item.price = v.price;
            item.options = v.options.clone();
        }
    }
    order.status = OrderStatus::PendingItemModified;
    Ok(ToolValue::model(order))
}

pub(super) fn modify_pending_order_payment(
    db: &mut RetailDb,
    order_id: &Value,
    payment_method_id: &Value,
) -> ToolResult {
    let (key, current) = order_if(
        db,
        order_id,
        OrderStatus::contains_pending,
        "Non-pending order cannot be modified",
    )?;
    let user_id = current.user_id.clone();
    let method = payment_method(db, &user_id, payment_method_id)?;
    let [first] = current.payment_history.as_slice() else {
        return Err(ToolError::value(
            "There should be exactly one payment for a pending order",
        ));
    };
    if first.transaction_type != TransactionType::Payment {
        return Err(ToolError::value(
            "There should be exactly one payment for a pending order",
        ));
    }
    let new_id = payment_method_id.as_str().unwrap_or_default().to_string();
    if first.payment_method_id == new_id {
        return Err(ToolError::value(
            "The new payment method should be different from the current one",
        ));
    }
    let amount = first.amount;
    let old_id = first.payment_method_id.clone();
    let new_is_gift_card = method.gift_card_balance().is_some();
    if method.gift_card_balance().is_some_and(|b| b < amount.0) {
        return Err(ToolError::value(
            "Insufficient gift card balance to pay for the order",
        ));
    }
    order_mut(db, key)?.payment_history.extend([
        OrderPayment {
            transaction_type: TransactionType::Payment,
            amount,
            payment_method_id: new_id.clone(),
        },
        OrderPayment {
            transaction_type: TransactionType::Refund,
            amount,
            payment_method_id: old_id.clone(),
        },
    ]);
    if new_is_gift_card {
        move_gift_card_balance(db, &user_id, &new_id, -amount.0);
    }
    if payment_method(db, &user_id, &Value::String(old_id.clone()))?
        .gift_card_balance()
        .is_some()
    {
        move_gift_card_balance(db, &user_id, &old_id, amount.0);
    }
    Ok(ToolValue::model(order(db, key)?))
}

pub(super) fn return_delivered_order_items(
    db: &mut RetailDb,
    order_id: &Value,
    item_ids: &Value,
    payment_method_id: &Value,
) -> ToolResult {
    let (key, current) = order_if(
        db,
        order_id,
        is_delivered,
        "Non-delivered order cannot be returned",
    )?;
    let user = user_key(db, &Value::String(current.user_id.clone()))?.to_string();
    let method = payment_method(db, &user, payment_method_id)?;
    let method_id = payment_method_id.as_str().unwrap_or_default().to_string();
    if method.gift_card_balance().is_none() {
        let original = current.payment_history.first().ok_or_else(|| ToolError {
            class: "IndexError",
            message: "list index out of range".into(),
        })?;
        if original.payment_method_id != method_id {
            return Err(ToolError::value(
                "Payment method should be the original payment method",
            ));
        }
    }
    let returned = py::check_multiplicity(item_ids, &order_item_ids(current), |_| {
        "Some item not found".into()
    })?;
    let order = order_mut(db, key)?;
    order.status = OrderStatus::ReturnRequested;
    order.return_items = Some(sorted(returned));
    order.return_payment_method_id = Some(method_id);
    Ok(ToolValue::model(order))
}
