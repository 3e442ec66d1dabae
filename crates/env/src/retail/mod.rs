//! The retail domain (§1.5, §4): an online store's products, users and orders, and the
//! agent toolkit `RetailTools` (no user tools; solo mode is refused upstream).
//!
//! [`RetailBase`] parses `db.json` once per process and path; every environment it makes
//! shares its records through copy-on-write [`Table`](crate::table::Table)s, so a fresh
//! environment costs three pointer copies and diffs skip untouched records by pointer.

mod defs;
mod lookup;
pub mod model;
mod orders;
mod queries;
mod tools;
mod users;

use crate::agent_only::{AgentOnlyBase, AgentOnlyDb, AgentOnlyDomain, AgentOnlyEnv};
use crate::data::{LoadError, ParseCache, read_json};
use crate::environment::ToolResult;
use crate::initial_state::{MergeError, revalidate};
use crate::registry::DomainFacts;
use crate::table::Table;
use crate::tooling::bind_filled;
use model::RetailDb;
use serde_json::{Map, Value};
use std::path::Path;

/// The upstream toolkit class, named in Python `TypeError` texts.
const OWNER: &str = "RetailTools";

/// The retail domain's registry entry.
pub static RETAIL: AgentOnlyDomain<RetailDb> = AgentOnlyDomain::ENTRY;

static FACTS: DomainFacts = DomainFacts {
    name: "retail",
    agent_tools: defs::TOOLS,
    collections: RetailDb::COLLECTIONS,
    identity_reads: &["find_user_id_by_email", "find_user_id_by_name_zip"],
    ..DomainFacts::DEFAULT
};

/// The immutable base state of the retail domain.
pub type RetailBase = AgentOnlyBase<RetailDb>;

/// A live retail environment.
pub type RetailEnv = AgentOnlyEnv<RetailDb>;

/// Parsed databases by file identity, so repeated loads in one process parse once.
static PARSED: ParseCache<RetailDb> = ParseCache::new();

/// Replaces the records of `mine` that differ from `merged`, keeping shared ones shared.
fn adopt<T: Clone + PartialEq>(mine: &mut Table<T>, merged: Table<T>) {
    for (key, record) in merged.iter() {
        if mine.get(key) != Some(record) {
            mine.insert(key.clone(), record.clone());
        }
    }
}

impl AgentOnlyDb for RetailDb {
    const FACTS: &'static DomainFacts = &FACTS;

    /// Loads `<dir>/db.json`.
    fn load(dir: &Path) -> Result<RetailDb, LoadError> {
        let path = dir.join("db.json");
        PARSED.get_or_parse(&[&path], || read_json(&path))
    }

    fn call(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        let values = bind_filled(OWNER, defs::TOOLS, name, args)?;
        tools::run(self, name, &values)
    }

    fn merge(&mut self, agent: Option<&Value>, user: Option<&Value>) -> Result<(), MergeError> {
        if user.is_some_and(|u| !u.is_null()) {
            return Err(MergeError::Rejected(
                "'NoneType' object has no attribute 'update_db'".into(),
            ));
        }
        let Some(patch) = agent.filter(|a| !a.is_null()) else {
            return Ok(());
        };
        let merged: RetailDb = revalidate(self.dump(), patch, "RetailDB")?;
        adopt(&mut self.products, merged.products);
        adopt(&mut self.users, merged.users);
        adopt(&mut self.orders, merged.orders);
        Ok(())
    }

    fn dump(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
