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

use crate::data::LoadError;
use crate::environment::{Changes, DomainBase, Environment, ToolValue};
use crate::initial_state::deep_merge;
use crate::table::Table;
use crate::tooling::{ToolDef, ToolError, bind};
use model::RetailDb;
use serde_json::{Map, Value};
use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;
use tauguard_core::Requestor;

/// The upstream toolkit class, named in Python `TypeError` texts.
const OWNER: &str = "RetailTools";

/// The retail domain's registry entry.
pub struct Retail;
pub static RETAIL: Retail = Retail;

impl crate::registry::Domain for Retail {
    fn name(&self) -> &'static str {
        "retail"
    }
    fn load_base(&self, dir: &Path) -> Result<std::sync::Arc<dyn DomainBase>, LoadError> {
        Ok(std::sync::Arc::new(RetailBase::load(dir)?))
    }
    fn toolkit(&self, side: Requestor) -> &'static [ToolDef] {
        match side {
            Requestor::Assistant => defs::TOOLS,
            Requestor::User => &[],
        }
    }
    fn collections(&self) -> &'static [&'static str] {
        &["products", "users", "orders"]
    }
    fn clock(&self) -> Option<&'static str> {
        None
    }
    fn identity_reads(&self) -> &'static [&'static str] {
        &["find_user_id_by_email", "find_user_id_by_name_zip"]
    }
}

/// The immutable base state of the retail domain.
pub struct RetailBase {
    db: RetailDb,
}

type CacheKey = (PathBuf, Option<SystemTime>, u64);

/// Parsed databases by file identity, so repeated loads in one process parse once.
fn cache() -> &'static Mutex<Vec<(CacheKey, RetailDb)>> {
    static CACHE: OnceLock<Mutex<Vec<(CacheKey, RetailDb)>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

impl RetailBase {
    /// Loads `<dir>/db.json`.
    pub fn load(dir: &Path) -> Result<RetailBase, LoadError> {
        let path = dir.join("db.json");
        let meta = std::fs::metadata(&path).map_err(|cause| LoadError::Io {
            path: path.clone(),
            cause,
        })?;
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        let key = (canonical, meta.modified().ok(), meta.len());
        if let Some((_, db)) = cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(k, _)| *k == key)
        {
            return Ok(RetailBase { db: db.clone() });
        }
        let db: RetailDb = crate::data::read_json(&path)?;
        cache()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, db.clone()));
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

    fn toolkit(&self, side: Requestor) -> &'static [ToolDef] {
        crate::registry::Domain::toolkit(&RETAIL, side)
    }

    fn call(
        &mut self,
        side: Requestor,
        name: &str,
        args: &Map<String, Value>,
    ) -> Result<ToolValue, ToolError> {
        if side == Requestor::User {
            return Err(crate::py::no_attribute("NoneType", name));
        }
        let def = defs::TOOLS
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| crate::py::no_attribute(OWNER, name))?;
        let bound = bind(OWNER, def, args)?;
        let values: Vec<&Value> = bound.iter().map(|v| v.unwrap_or(&Value::Null)).collect();
        tools::run(&mut self.db, def.name, &values)
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), String> {
        if user.is_some_and(|u| !u.is_null()) {
            return Err("'NoneType' object has no attribute 'update_db'".into());
        }
        let Some(patch) = agent.filter(|a| !a.is_null()) else {
            return Ok(());
        };
        let mut dump = self.agent_db();
        deep_merge(&mut dump, patch);
        let merged: RetailDb = serde_path_to_error::deserialize(dump).map_err(|e| {
            format!(
                "validation error for RetailDB at `{}`: {}",
                e.path(),
                e.inner()
            )
        })?;
        adopt(&mut self.db.products, merged.products);
        adopt(&mut self.db.users, merged.users);
        adopt(&mut self.db.orders, merged.orders);
        Ok(())
    }

    fn agent_db(&self) -> Value {
        serde_json::to_value(&self.db).unwrap_or(Value::Null)
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        let earlier = earlier
            .as_any()
            .downcast_ref::<RetailEnv>()
            .unwrap_or_else(|| {
                panic!(
                    "changes_since: `{}` is not a retail environment",
                    earlier.domain()
                )
            });
        let mut agent = Map::new();
        self.db
            .products
            .record_changes(&earlier.db.products, "products", &mut agent);
        self.db
            .users
            .record_changes(&earlier.db.users, "users", &mut agent);
        self.db
            .orders
            .record_changes(&earlier.db.orders, "orders", &mut agent);
        Changes { agent, user: None }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other.as_any().downcast_ref::<RetailEnv>().is_some_and(|o| {
            self.db.products.same_records(&o.db.products)
                && self.db.users.same_records(&o.db.users)
                && self.db.orders.same_records(&o.db.orders)
        })
    }

    fn snapshot(&self) -> Box<dyn Environment> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
