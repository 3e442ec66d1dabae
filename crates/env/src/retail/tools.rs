//! Dispatch of the retail tools, the read-only tools, and upstream's lookup helpers
//! (`_get_order`, `_get_user`, ...) with their error texts.

use super::model::{PaymentMethod, RetailDb, UserAddress, Variant};
use super::{orders, pyargs};
use crate::environment::ToolValue;
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use tauguard_core::pyjson;

/// Runs tool `name` with its bound arguments (one per declared parameter, all present).
pub(super) fn run(db: &mut RetailDb, name: &str, args: &[&Value]) -> Result<ToolValue, ToolError> {
    let a = |i: usize| args.get(i).copied().unwrap_or(&Value::Null);
    match name {
        "calculate" => crate::calculate::calculate_arg(a(0)).map(ToolValue::Text),
        "cancel_pending_order" => orders::cancel_pending_order(db, a(0), a(1)),
        "exchange_delivered_order_items" => {
            orders::exchange_delivered_order_items(db, a(0), a(1), a(2), a(3))
        }
        "find_user_id_by_name_zip" => find_user_id_by_name_zip(db, a(0), a(1), a(2)),
        "find_user_id_by_email" => find_user_id_by_email(db, a(0)),
        "get_order_details" => {
            let id = order_key(db, a(0))?;
            Ok(ToolValue::cached(db.orders.dump(id)))
        }
        "get_product_details" => {
            let id = product_key(db, a(0))?;
            Ok(ToolValue::cached(db.products.dump(id)))
        }
        "get_item_details" => get_item_details(db, a(0)),
        "get_user_details" => {
            let id = user_key(db, a(0))?;
            Ok(ToolValue::cached(db.users.dump(id)))
        }
        "list_all_product_types" => {
            let mut names = Map::new();
            for product in db.products.values() {
                names.insert(
                    product.name.clone(),
                    Value::String(product.product_id.clone()),
                );
            }
            Ok(ToolValue::Text(pyjson::dumps_sorted(&Value::Object(names))))
        }
        "modify_pending_order_address" => {
            orders::modify_pending_order_address(db, a(0), &[a(1), a(2), a(3), a(4), a(5), a(6)])
        }
        "modify_pending_order_items" => {
            orders::modify_pending_order_items(db, a(0), a(1), a(2), a(3))
        }
        "modify_pending_order_payment" => orders::modify_pending_order_payment(db, a(0), a(1)),
        "modify_user_address" => {
            modify_user_address(db, a(0), &[a(1), a(2), a(3), a(4), a(5), a(6)])
        }
        "return_delivered_order_items" => {
            orders::return_delivered_order_items(db, a(0), a(1), a(2))
        }
        "transfer_to_human_agents" => Ok(ToolValue::Text("Transfer successful".into())),
        other => Err(ToolError::attribute(format!(
            "'RetailTools' object has no attribute '{other}'"
        ))),
    }
}

/// `_get_order`: the order's key, or `Order not found`.
pub(super) fn order_key<'a>(db: &RetailDb, order_id: &'a Value) -> Result<&'a str, ToolError> {
    match pyargs::dict_key(order_id)? {
        Some(k) if db.orders.contains_key(k) => Ok(k),
        _ => Err(ToolError::value("Order not found")),
    }
}

/// `_get_user`.
pub(super) fn user_key<'a>(db: &RetailDb, user_id: &'a Value) -> Result<&'a str, ToolError> {
    match pyargs::dict_key(user_id)? {
        Some(k) if db.users.contains_key(k) => Ok(k),
        _ => Err(ToolError::value("User not found")),
    }
}

fn product_key<'a>(db: &RetailDb, product_id: &'a Value) -> Result<&'a str, ToolError> {
    match pyargs::dict_key(product_id)? {
        Some(k) if db.products.contains_key(k) => Ok(k),
        _ => Err(ToolError::value("Product not found")),
    }
}

/// `_get_payment_method(user_id, payment_method_id)`: the user must exist, then the method.
pub(super) fn payment_method<'d>(
    db: &'d RetailDb,
    user_id: &str,
    payment_method_id: &Value,
) -> Result<&'d PaymentMethod, ToolError> {
    let user = db
        .users
        .get(user_id)
        .ok_or_else(|| ToolError::value("User not found"))?;
    pyargs::dict_key(payment_method_id)?
        .and_then(|k| user.payment_methods.get(k))
        .ok_or_else(|| ToolError::value("Payment method not found"))
}

/// `_get_variant(product_id, variant_id)`.
pub(super) fn variant<'d>(
    db: &'d RetailDb,
    product_id: &str,
    variant_id: &Value,
) -> Result<&'d Variant, ToolError> {
    let product = db
        .products
        .get(product_id)
        .ok_or_else(|| ToolError::value("Product not found"))?;
    pyargs::dict_key(variant_id)?
        .and_then(|k| product.variants.get(k))
        .ok_or_else(|| ToolError::value("Variant not found"))
}

fn find_user_id_by_name_zip(
    db: &RetailDb,
    first: &Value,
    last: &Value,
    zip: &Value,
) -> Result<ToolValue, ToolError> {
    for (user_id, user) in db.users.iter() {
        if user.name.first_name.to_lowercase() != pyargs::lower(first)? {
            continue;
        }
        if user.name.last_name.to_lowercase() != pyargs::lower(last)? {
            continue;
        }
        if zip.as_str() == Some(user.address.zip.as_str()) {
            return Ok(ToolValue::Text(user_id.clone()));
        }
    }
    Err(ToolError::value("User not found"))
}

fn find_user_id_by_email(db: &RetailDb, email: &Value) -> Result<ToolValue, ToolError> {
    for (user_id, user) in db.users.iter() {
        if user.email.to_lowercase() == pyargs::lower(email)? {
            return Ok(ToolValue::Text(user_id.clone()));
        }
    }
    Err(ToolError::value("User not found"))
}

fn get_item_details(db: &RetailDb, item_id: &Value) -> Result<ToolValue, ToolError> {
    for product in db.products.values() {
        if let Some(variant) = pyargs::dict_key(item_id)?.and_then(|k| product.variants.get(k)) {
            return Ok(ToolValue::model(variant));
        }
    }
    Err(ToolError::value("Item not found"))
}

/// A `UserAddress` built from the tool's keyword order (`address1, address2, city, state,
/// country, zip`), validated in the model's field order.
pub(super) fn address(fields: &[&Value; 6]) -> Result<UserAddress, ToolError> {
    let [address1, address2, city, state, country, zip] = *fields;
    let v = pyargs::validate_strings(
        "UserAddress",
        &[
            ("address1", address1),
            ("address2", address2),
            ("city", city),
            ("country", country),
            ("state", state),
            ("zip", zip),
        ],
    )?;
    let [address1, address2, city, country, state, zip]: [String; 6] = v
        .try_into()
        .map_err(|_| ToolError::value("address has six fields"))?;
    Ok(UserAddress {
        address1,
        address2,
        city,
        country,
        state,
        zip,
    })
}

fn modify_user_address(
    db: &mut RetailDb,
    user_id: &Value,
    fields: &[&Value; 6],
) -> Result<ToolValue, ToolError> {
    let id = user_key(db, user_id)?.to_string();
    let address = address(fields)?;
    let user = db
        .users
        .get_mut(&id)
        .ok_or_else(|| ToolError::value("User not found"))?;
    user.address = address;
    Ok(ToolValue::model(user))
}
