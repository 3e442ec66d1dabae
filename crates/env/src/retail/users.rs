//! The retail tool that writes a user record.

use super::lookup::{address, user_key};
use super::model::RetailDb;
use crate::environment::{ToolResult, ToolValue};
use crate::tooling::ToolError;
use serde_json::Value;

/// `modify_user_address`: the address is validated before the user is written.
pub(super) fn modify_user_address(
    db: &mut RetailDb,
    user_id: &Value,
    fields: &[&Value; 6],
) -> ToolResult {
    let id = user_key(db, user_id)?.to_string();
    let address = address(fields)?;
    let user = db
        .users
        .get_mut(&id)
        .ok_or_else(|| ToolError::value("User not found"))?;
    user.address = address;
    Ok(ToolValue::model(user))
}
