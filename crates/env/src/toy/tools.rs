//! Dispatch of the toy library toolkit: finds a declared tool, binds its keyword arguments
//! Python-style and runs its body.

use super::defs::{OWNER, TOOLS};
use super::model::LibraryDb;
use super::{loans, queries};
use crate::environment::{ToolResult, ToolValue};
use crate::tooling::bind_filled;
use serde_json::{Map, Value};

/// Calls a toolkit method by name with raw keyword arguments.
pub fn call(db: &mut LibraryDb, name: &str, args: &Map<String, Value>) -> ToolResult {
    let a = bind_filled(OWNER, TOOLS, name, args)?;
    match name {
        "get_member_details" => queries::get_member_details(db, a[0]),
        "get_book_details" => queries::get_book_details(db, a[0]),
        "borrow_book" => loans::borrow_book(db, a[0], a[1]),
        "return_book" => loans::return_book(db, a[0], a[1]),
        "transfer_to_human_agents" => Ok(ToolValue::Text("Transfer successful".into())),
        other => unreachable!("tool `{other}` is declared but not dispatched"),
    }
}
