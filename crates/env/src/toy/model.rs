//! The records of the toy library: members and books, plain serde structs (the database is a
//! few records, so environments copy it whole instead of sharing it copy-on-write).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// The whole database, as `db.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibraryDb {
    pub members: IndexMap<String, Member>,
    pub books: IndexMap<String, Book>,
}

crate::collection::table_db!(LibraryDb { members, books });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub member_id: String,
    pub name: String,
    /// `standard` or `premium`; the policy ties the loan limit to it.
    pub tier: String,
    pub max_loans: u32,
    /// Ids of the books on loan, oldest first.
    pub loans: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Book {
    pub book_id: String,
    pub title: String,
    pub author: String,
    pub copies: u32,
    /// Ids of the members holding a copy, one entry per copy lent.
    pub on_loan_to: Vec<String>,
}

impl Book {
    /// Copies on the shelf.
    pub fn available(&self) -> usize {
        (self.copies as usize).saturating_sub(self.on_loan_to.len())
    }
}
