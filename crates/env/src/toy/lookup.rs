//! Record lookups with the domain's error texts, through the shared Python semantics (a
//! list or dict as an id is `unhashable`, a number is never found).

use super::model::{Book, LibraryDb, Member};
use crate::py::{arg_str, dict_key};
use crate::tooling::ToolError;
use serde_json::Value;

/// The key of member `member_id`, or `Member <id> not found`.
pub(super) fn member<'a>(db: &LibraryDb, member_id: &'a Value) -> Result<&'a str, ToolError> {
    dict_key(member_id)?
        .filter(|k| db.members.contains_key(*k))
        .ok_or_else(|| ToolError::value(format!("Member {} not found", arg_str(member_id))))
}

/// The key of book `book_id`, or `Book <id> not found`.
pub(super) fn book<'a>(db: &LibraryDb, book_id: &'a Value) -> Result<&'a str, ToolError> {
    dict_key(book_id)?
        .filter(|k| db.books.contains_key(*k))
        .ok_or_else(|| ToolError::value(format!("Book {} not found", arg_str(book_id))))
}

/// The member record of a key [`member`] returned.
pub(super) fn member_record<'d>(db: &'d LibraryDb, key: &str) -> &'d Member {
    &db.members[key]
}

/// The book record of a key [`book`] returned.
pub(super) fn book_record<'d>(db: &'d LibraryDb, key: &str) -> &'d Book {
    &db.books[key]
}
