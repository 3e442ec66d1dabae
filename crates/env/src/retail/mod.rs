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

use crate::data::{LoadError, ParseCache, read_json};
use crate::environment::{Changes, DomainBase, Environment, ToolResult, same_domain};
use crate::initial_state::{MergeError, revalidate};
use crate::registry::DomainFacts;
use crate::table::Table;
use crate::tooling::bind_filled;
use model::RetailDb;
use serde_json::{Map, Value};
use std::path::Path;
use tauguard_core::Requestor;

/// The upstream toolkit class, named in Python `TypeError` texts.
const OWNER: &str = "RetailTools";

/// The retail domain's registry entry.
#[derive(Debug)]
pub struct Retail;
pub static RETAIL: Retail = Retail;

static FACTS: DomainFacts = DomainFacts {
    name: "retail",
    agent_tools: defs::TOOLS,
    collections: RetailDb::COLLECTIONS,
    identity_reads: &["find_user_id_by_email", "find_user_id_by_name_zip"],
    ..DomainFacts::DEFAULT
};

impl crate::registry::Domain for Retail {
    fn facts(&self) -> &'static DomainFacts {
        &FACTS
    }
    fn load_base(&self, dir: &Path) -> Result<std::sync::Arc<dyn DomainBase>, LoadError> {
        Ok(std::sync::Arc::new(RetailBase::load(dir)?))
    }
}

/// The immutable base state of the retail domain.
#[derive(Debug)]
pub struct RetailBase {
    db: RetailDb,
}

/// Parsed databases by file identity, so repeated loads in one process parse once.
static PARSED: ParseCache<RetailDb> = ParseCache::new();

impl RetailBase {
    /// Loads `<dir>/db.json`.
    pub fn load(dir: &Path) -> Result<RetailBase, LoadError> {
        let path = dir.join("db.json");
        let db = PARSED.get_or_parse(&[&path], || read_json(&path))?;
        Ok(RetailBase { db })
    }

    /// The base database.
    pub fn db(&self) -> &RetailDb {
        &self.db
    }
}

impl DomainBase for RetailBase {
    fn domain(&self) -> &'static str {
        "retail"
    }

    fn fresh(&self) -> Box<dyn Environment> {
        Box::new(RetailEnv {
            db: self.db.clone(),
        })
    }
}

/// A live retail environment.
#[derive(Debug, Clone)]
pub struct RetailEnv {
    db: RetailDb,
}

impl RetailEnv {
    pub fn db(&self) -> &RetailDb {
        &self.db
    }
}

/// Replaces the records of `mine` that differ from `merged`, keeping shared ones shared.
fn adopt<T: Clone + PartialEq>(mine: &mut Table<T>, merged: Table<T>) {
    for (key, record) in merged.iter() {
        if mine.get(key) != Some(record) {
            mine.insert(key.clone(), record.clone());
        }
    }
}

impl Environment for RetailEnv {
    fn domain(&self) -> &'static str {
        "retail"
    }

    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        if side == Requestor::User {
            return Err(crate::py::no_attribute("NoneType", name));
        }
        let values = bind_filled(OWNER, defs::TOOLS, name, args)?;
        tools::run(&mut self.db, name, &values)
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), MergeError> {
        if user.is_some_and(|u| !u.is_null()) {
            return Err(MergeError::Rejected(
                "'NoneType' object has no attribute 'update_db'".into(),
            ));
        }
        let Some(patch) = agent.filter(|a| !a.is_null()) else {
            return Ok(());
        };
        let merged: RetailDb = revalidate(self.agent_db(), patch, "RetailDB")?;
        adopt(&mut self.db.products, merged.products);
        adopt(&mut self.db.users, merged.users);
        adopt(&mut self.db.orders, merged.orders);
        Ok(())
    }

    fn agent_db(&self) -> Value {
        serde_json::to_value(&self.db).unwrap_or(Value::Null)
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        Changes {
            agent: self.db.changes(&same_domain(self, earlier).db),
            user: None,
        }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other
            .downcast_ref::<RetailEnv>()
            .is_some_and(|o| self.db.same(&o.db))
    }
}
