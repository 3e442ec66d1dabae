//! The retail read tools that search rather than dump one record.

use super::model::RetailDb;
use crate::environment::{ToolResult, ToolValue};
use crate::py;
use crate::tooling::ToolError;
use serde_json::Value;

/// `find_user_id_by_name_zip`: names compare case-insensitively, the zip exactly.
pub(super) fn find_user_id_by_name_zip(
    db: &RetailDb,
    first: &Value,
    last: &Value,
    zip: &Value,
) -> ToolResult {
    for (user_id, user) in db.users.iter() {
        if user.name.first_name.to_lowercase() != py::lower(first)? {
            continue;
        }
        if user.name.last_name.to_lowercase() != py::lower(last)? {
            continue;
        }
        if zip.as_str() == Some(user.address.zip.as_str()) {
            return Ok(ToolValue::Text(user_id.clone()));
        }
    }
    Err(ToolError::value("User not found"))
}

/// `find_user_id_by_email`: case-insensitive.
pub(super) fn find_user_id_by_email(db: &RetailDb, email: &Value) -> ToolResult {
    for (user_id, user) in db.users.iter() {
        if user.email.to_lowercase() == py::lower(email)? {
            return Ok(ToolValue::Text(user_id.clone()));
        }
    }
    Err(ToolError::value("User not found"))
}

/// `get_item_details`: the first product holding the variant id.
pub(super) fn get_item_details(db: &RetailDb, item_id: &Value) -> ToolResult {
    for product in db.products.values() {
        if let Some(variant) = py::dict_key(item_id)?.and_then(|k| product.variants.get(k)) {
            return Ok(ToolValue::model(variant));
        }
    }
    Err(ToolError::value("Item not found"))
}
