//! A toy lending library, test-only (cargo feature `toy-domain`): members borrow and return
//! books. It exists to prove that a domain plugs into the harness through its folder and one
//! line in [`crate::registry::DOMAINS`], and to give end-to-end tests a domain small enough
//! to read whole. Its data is the project's own (`tasks/fixtures/toy/`); it has no upstream
//! counterpart, so there is nothing to be bit-exact with.
//!
//! Layout (the crate's shared shape): [`defs`] (declarations), [`tools`] (dispatch),
//! `queries` (reads) and `loans` (writes), `lookup` (record lookups), [`model`] (records).
//! The database is a handful of records, so an environment owns a plain copy of it rather
//! than sharing records copy-on-write as the τ²-bench domains do.

pub mod defs;
mod loans;
mod lookup;
pub mod model;
mod queries;
pub mod tools;

use crate::agent_only::{AgentOnlyBase, AgentOnlyDb, AgentOnlyDomain, AgentOnlyEnv};
use crate::data::{LoadError, read_json};
use crate::environment::ToolResult;
use crate::initial_state::{MergeError, revalidate};
use crate::registry::DomainFacts;
use model::LibraryDb;
use serde_json::{Map, Value};
use std::path::Path;

/// The toy domain's registry entry.
pub static TOY: AgentOnlyDomain<LibraryDb> = AgentOnlyDomain::ENTRY;

static FACTS: DomainFacts = DomainFacts {
    name: "toy",
    agent_tools: defs::TOOLS,
    collections: LibraryDb::COLLECTIONS,
    identity_reads: &["get_member_details"],
    ..DomainFacts::DEFAULT
};

/// The loaded library database.
pub type ToyBase = AgentOnlyBase<LibraryDb>;

/// One live library environment.
pub type ToyEnv = AgentOnlyEnv<LibraryDb>;

impl AgentOnlyDb for LibraryDb {
    const FACTS: &'static DomainFacts = &FACTS;

    /// Loads `<dir>/db.json`.
    fn load(dir: &Path) -> Result<LibraryDb, LoadError> {
        read_json(&dir.join("db.json"))
    }

    fn call(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        tools::call(self, name, args)
    }

    fn merge(&mut self, agent: Option<&Value>, user: Option<&Value>) -> Result<(), MergeError> {
        if user.is_some_and(|u| !u.is_null()) {
            return Err(MergeError::Rejected(
                "the toy domain has no user database".into(),
            ));
        }
        if let Some(patch) = agent.filter(|a| !a.is_null()) {
            *self = revalidate(self.dump(), patch, "LibraryDb")?;
        }
        Ok(())
    }

    fn dump(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Environment;
    use serde_json::json;
    use tauguard_core::Requestor;

    fn base() -> ToyBase {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/fixtures/toy");
        ToyBase::load(&dir).unwrap()
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn borrow_then_return_restores_the_state() {
        let fresh = base().env();
        let mut env = fresh.clone();
        let a = args(json!({"member_id": "m_ada", "book_id": "b_lhod"}));
        let (out, err) = env.execute(Requestor::Assistant, "borrow_book", &a);
        assert!(!err, "{out}");
        assert!(out.contains("\"b_lhod\""), "{out}");
        let changes = env.changes_since(&fresh);
        assert_eq!(
            changes.agent.keys().collect::<Vec<_>>(),
            ["members/m_ada", "books/b_lhod"]
        );
        assert!(!env.same_state(&fresh));
        let (out, err) = env.execute(Requestor::Assistant, "return_book", &a);
        assert!(!err, "{out}");
        assert!(env.same_state(&fresh));
        assert!(env.changes_since(&fresh).agent.is_empty());
    }

    #[test]
    fn refusals_leave_the_database_untouched() {
        let fresh = base().env();
        let mut env = fresh.clone();
        let cases = [
            (
                "borrow_book",
                json!({"member_id": "m_ada", "book_id": "b_dune"}),
                "Error: Member already has this book on loan",
            ),
            (
                "return_book",
                json!({"member_id": "m_ada", "book_id": "b_hobbit"}),
                "Error: Member does not have this book on loan",
            ),
            (
                "get_member_details",
                json!({"member_id": "m_zed"}),
                "Error: Member m_zed not found",
            ),
            (
                "get_book_details",
                json!({"book_id": ["b_dune"]}),
                "Error: unhashable type: 'list'",
            ),
            (
                "borrow_book",
                json!({"member_id": "m_ada"}),
                "Error: LibraryTools.borrow_book() missing 1 required positional argument: 'book_id'",
            ),
        ];
        for (tool, a, want) in cases {
            assert_eq!(
                env.execute(Requestor::Assistant, tool, &args(a)),
                (want.to_string(), true)
            );
        }
        assert!(env.same_state(&fresh));
        assert_eq!(
            env.execute(Requestor::User, "borrow_book", &Map::new()),
            ("Error: User tools not available".to_string(), true)
        );
    }

    #[test]
    fn the_loan_limit_is_left_to_the_policy() {
        let mut env = base().env();
        let a = args(json!({"member_id": "m_cy", "book_id": "b_hobbit"}));
        let (out, err) = env.execute(Requestor::Assistant, "borrow_book", &a);
        assert!(!err, "{out}");
        let m = &env.db().members["m_cy"];
        assert!(m.loans.len() > m.max_loans as usize);
    }

    #[test]
    fn no_copy_left_is_refused() {
        let mut env = base().env();
        env.merge_initialization_data(Some(&json!({"books": {"b_hobbit": {"copies": 0}}})), None)
            .unwrap();
        assert_eq!(env.db().books["b_hobbit"].available(), 0);
        let a = args(json!({"member_id": "m_ada", "book_id": "b_hobbit"}));
        assert_eq!(
            env.execute(Requestor::Assistant, "borrow_book", &a),
            ("Error: No copy of this book is available".to_string(), true)
        );
        assert!(
            env.merge_initialization_data(None, Some(&json!({"x": 1})))
                .is_err()
        );
    }
}
