//! The read tools: one record's dump each.

use super::lookup;
use super::model::LibraryDb;
use crate::environment::{ToolResult, ToolValue};
use serde_json::Value;

/// `get_member_details`.
pub(super) fn get_member_details(db: &LibraryDb, member_id: &Value) -> ToolResult {
    let key = lookup::member(db, member_id)?;
    Ok(ToolValue::model(lookup::member_record(db, key)))
}

/// `get_book_details`.
pub(super) fn get_book_details(db: &LibraryDb, book_id: &Value) -> ToolResult {
    let key = lookup::book(db, book_id)?;
    Ok(ToolValue::model(lookup::book_record(db, key)))
}
