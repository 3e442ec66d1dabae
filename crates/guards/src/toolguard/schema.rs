//! The rule-file schema: `tasks/<domain>/rules/<tool>.yaml`, one file per mutating tool.
//!
//! ```yaml
//! tool: cancel_reservation
//! description: optional free text
//! lookups:                      # evaluated in order; each result is bound under its name
//!   reservation:
//!     tool: get_reservation_details          # a read-only tool of the domain ...
//!     args: {reservation_id: "args.reservation_id"}   # ... with CEL argument expressions
//!   statuses:
//!     tool: get_flight_status
//!     for_each: "reservation.flights"        # one call per element, bound as a list;
//!     args: {flight_number: "item.flight_number", date: "item.date"}   # `item` = element
//!   new_flights:
//!     record: flights                        # or a record of the agent database (a
//!     for_each: "args.flights"               # top-level collection, optionally keyed)
//!     key: "item.flight_number"
//! rules:
//!   - name: not_flown
//!     when: "reservation != null"            # optional CEL guard; false = not applicable
//!     check: "statuses.all(s, !(s in ['flying', 'landed']))"   # must hold
//!     message: "Part of this reservation has already been flown; it cannot be cancelled."
//!     on_error: block                        # block (default, fail-closed) | pass
//!     policy: "quote of the policy text the rule encodes (optional)"
//! ```
//!
//! Variables: `args` (the call's arguments), `now` (the domain's fixed clock as an ISO
//! date-time string, `null` for domains without one), `today` (its date part) and the
//! lookups declared earlier (for a lookup) or all of them (for a rule).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// What a rule does when its `when` or `check` cannot be evaluated (a null access after a
/// failed lookup, a type error, ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail closed: the rule is NOT MET and the call is blocked.
    #[default]
    Block,
    /// Fail open: the rule is reported MET (with the error as reason).
    Pass,
}

impl OnError {
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Block => "block",
            OnError::Pass => "pass",
        }
    }
}

/// One rule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFile {
    pub tool: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub lookups: IndexMap<String, LookupSpec>,
    pub rules: Vec<RuleSpec>,
}

/// A named read-only lookup: a read tool call or an agent-database record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LookupSpec {
    /// A read-only tool of the domain (exclusive with `record`).
    #[serde(default)]
    pub tool: Option<String>,
    /// Tool arguments: parameter name → CEL expression.
    #[serde(default)]
    pub args: IndexMap<String, String>,
    /// A top-level collection of the agent database (exclusive with `tool`).
    #[serde(default)]
    pub record: Option<String>,
    /// CEL key into the record collection; the whole collection when absent.
    #[serde(default)]
    pub key: Option<String>,
    /// CEL list: one lookup per element (bound as `item`), results bound as a list.
    #[serde(default)]
    pub for_each: Option<String>,
    /// CEL guard: when false the lookup is not made and binds null.
    #[serde(default)]
    pub when: Option<String>,
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleSpec {
    pub name: String,
    #[serde(default)]
    pub when: Option<String>,
    pub check: String,
    /// Violation text for the agent (one sentence).
    pub message: String,
    #[serde(default)]
    pub on_error: OnError,
    /// The policy text the rule encodes.
    #[serde(default)]
    pub policy: Option<String>,
}
