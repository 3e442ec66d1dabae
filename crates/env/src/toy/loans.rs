//! The write tools: lending and taking back a copy. Every check runs before the first write,
//! so a refused call leaves the database untouched.
//!
//! The tools check only what the records make impossible (a second copy of a book the member
//! holds, a copy that is not on the shelf). The loan limit is a rule of the policy, not of the
//! tools — as in τ²-bench, where tools do not enforce policy — so an agent that ignores the
//! policy can break it, and a guard or the reward has something to catch.

use super::lookup;
use super::model::LibraryDb;
use crate::environment::{ToolResult, ToolValue};
use crate::tooling::ToolError;
use serde_json::Value;

/// `borrow_book`: the member must not already hold the book and a copy must be on the shelf.
/// Returns the member's updated record.
pub(super) fn borrow_book(db: &mut LibraryDb, member_id: &Value, book_id: &Value) -> ToolResult {
    let m = lookup::member(db, member_id)?.to_string();
    let b = lookup::book(db, book_id)?.to_string();
    let member = lookup::member_record(db, &m);
    if member.loans.contains(&b) {
        return Err(ToolError::value("Member already has this book on loan"));
    }
    if lookup::book_record(db, &b).available() == 0 {
        return Err(ToolError::value("No copy of this book is available"));
    }
    if let Some(book) = db.books.get_mut(&b) {
        book.on_loan_to.push(m.clone());
    }
    let member = db.members.get_mut(&m).expect("member key was just found");
    member.loans.push(b);
    Ok(ToolValue::model(&*member))
}

/// `return_book`: the member must hold the book. Returns the member's updated record.
pub(super) fn return_book(db: &mut LibraryDb, member_id: &Value, book_id: &Value) -> ToolResult {
    let m = lookup::member(db, member_id)?.to_string();
    let b = lookup::book(db, book_id)?.to_string();
    if !lookup::member_record(db, &m).loans.contains(&b) {
        return Err(ToolError::value("Member does not have this book on loan"));
    }
    if let Some(book) = db.books.get_mut(&b)
        && let Some(i) = book.on_loan_to.iter().position(|x| *x == m)
    {
        book.on_loan_to.remove(i);
    }
    let member = db.members.get_mut(&m).expect("member key was just found");
    member.loans.retain(|x| *x != b);
    Ok(ToolValue::model(&*member))
}
