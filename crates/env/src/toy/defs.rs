//! Declarations of the toy library toolkit, in registration order.

use crate::tooling::{Param, ToolDef, param as p, tool};
use tauguard_core::ToolKind;

/// The toolkit's class name, as Python-style `TypeError` and `AttributeError` texts show it.
pub const OWNER: &str = "LibraryTools";

const STR: &str = r#"{"type": "string"}"#;

const MEMBER_ID: Param = p(
    "member_id",
    STR,
    "Library card id of the member, e.g. 'm_ada'.",
);
const BOOK_ID: Param = p("book_id", STR, "Catalogue id of the book, e.g. 'b_dune'.");

/// The toolkit: two reads, two writes and the hand-over every domain has.
pub static TOOLS: &[ToolDef] = &[
    tool(
        "get_member_details",
        ToolKind::Read,
        "Look up a member: name, tier, loan limit and the books currently on loan.",
        &[MEMBER_ID],
    ),
    tool(
        "get_book_details",
        ToolKind::Read,
        "Look up a book: title, author, number of copies and who has them on loan.",
        &[BOOK_ID],
    ),
    tool(
        "borrow_book",
        ToolKind::Write,
        "Lend one copy of a book to a member.",
        &[MEMBER_ID, BOOK_ID],
    ),
    tool(
        "return_book",
        ToolKind::Write,
        "Take back a book a member has on loan.",
        &[MEMBER_ID, BOOK_ID],
    ),
    tool(
        "transfer_to_human_agents",
        ToolKind::Generic,
        "Hand the conversation over to a librarian along with a short summary.",
        &[p("summary", STR, "Short summary of the member's issue.")],
    ),
];
