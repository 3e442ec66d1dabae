//! Upstream's record lookups (`_get_order`, `_get_user`, `_get_product`, ...) and the
//! `UserAddress` construction the address tools share, with their exact error texts.

use super::model::{PaymentMethod, RetailDb, UserAddress, Variant};
use crate::py;
use crate::tooling::ToolError;
use serde_json::Value;

/// `_get_order`: the order's key, or `Order not found`.
pub(super) fn order_key<'a>(db: &RetailDb, order_id: &'a Value) -> Result<&'a str, ToolError> {
    match py::dict_key(order_id)? {
        Some(k) if db.orders.contains_key(k) => Ok(k),
        _ => Err(ToolError::value("Order not found")),
    }
}

/// `_get_user`.
pub(super) fn user_key<'a>(db: &RetailDb, user_id: &'a Value) -> Result<&'a str, ToolError> {
    match py::dict_key(user_id)? {
        Some(k) if db.users.contains_key(k) => Ok(k),
        _ => Err(ToolError::value("User not found")),
    }
}

/// `_get_product`.
pub(super) fn product_key<'a>(db: &RetailDb, product_id: &'a Value) -> Result<&'a str, ToolError> {
    match py::dict_key(product_id)? {
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
    py::dict_key(payment_method_id)?
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
    py::dict_key(variant_id)?
        .and_then(|k| product.variants.get(k))
        .ok_or_else(|| ToolError::value("Variant not found"))
}

/// A `UserAddress` built from the tool's keyword order (`address1, address2, city, state,
/// country, zip`), validated in the model's field order.
pub(super) fn address(fields: &[&Value; 6]) -> Result<UserAddress, ToolError> {
    let [address1, address2, city, state, country, zip] = *fields;
    let v = py::validate_strings(
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
