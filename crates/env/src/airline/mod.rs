//! The airline domain: flights, users and reservations, with upstream τ²-bench's 14 agent
//! tools reproduced quirk for quirk (the database hash and replayed tool outputs must match
//! upstream bit for bit). The user simulator has no tools in this domain.
//!
//! The 7 MB database is parsed and validated once into an [`AirlineBase`]; each environment
//! shares its records and copies only those it writes.
//!
//! Layout (shared by every domain, see the crate docs): [`defs`] (declarations), [`tools`]
//! (dispatch), the tool bodies in `booking` (creation), `updates` (writes) and `queries`
//! (reads), upstream's lookup helpers in `lookup`, the route index in [`routes`], [`model`]
//! (records, validation, dump) and [`validate`] (pydantic-style coercion and errors).
//! `calculate` is the evaluator shared with retail ([`crate::calculate`]).

mod booking;
pub mod defs;
mod lookup;
pub mod model;
mod queries;
pub mod routes;
pub mod tools;
mod updates;
pub mod validate;

use crate::data::{LoadError, read_json};
use crate::environment::{Changes, DomainBase, Environment, ToolResult, same_domain};
use crate::initial_state::{MergeError, deep_merge};
use crate::registry::DomainFacts;
use model::FlightDb;
use serde_json::{Map, Value};
use std::path::Path;
use tauguard_core::Requestor;

/// The airline domain's registry entry.
#[derive(Debug)]
pub struct Airline;
pub static AIRLINE: Airline = Airline;

static FACTS: DomainFacts = DomainFacts {
    name: "airline",
    agent_tools: defs::TOOLS,
    collections: FlightDb::COLLECTIONS,
    clock: Some(lookup::NOW),
    identity_reads: &["get_user_details"],
    ..DomainFacts::DEFAULT
};

impl crate::registry::Domain for Airline {
    fn facts(&self) -> &'static DomainFacts {
        &FACTS
    }
    fn load_base(&self, dir: &Path) -> Result<std::sync::Arc<dyn DomainBase>, LoadError> {
        Ok(std::sync::Arc::new(AirlineBase::load(dir)?))
    }
}

/// The loaded, immutable airline database.
#[derive(Debug, Clone)]
pub struct AirlineBase {
    db: FlightDb,
}

impl AirlineBase {
    /// Loads and validates `<dir>/db.json`.
    pub fn load(dir: &Path) -> Result<AirlineBase, LoadError> {
        let path = dir.join("db.json");
        let value: Value = read_json(&path)?;
        let db =
            FlightDb::validate(&value).map_err(|message| LoadError::Parse { path, message })?;
        Ok(AirlineBase { db })
    }

    /// Validates an in-memory database (same rules as [`AirlineBase::load`]).
    pub fn from_json(value: &Value) -> Result<AirlineBase, String> {
        Ok(AirlineBase {
            db: FlightDb::validate(value)?,
        })
    }

    /// A fresh environment, typed.
    pub fn env(&self) -> AirlineEnv {
        AirlineEnv {
            db: self.db.clone(),
        }
    }
}

impl DomainBase for AirlineBase {
    fn domain(&self) -> &'static str {
        "airline"
    }

    fn fresh(&self) -> Box<dyn Environment> {
        Box::new(self.env())
    }
}

/// One live airline environment.
#[derive(Debug, Clone)]
pub struct AirlineEnv {
    db: FlightDb,
}

impl AirlineEnv {
    pub fn db(&self) -> &FlightDb {
        &self.db
    }
}

impl Environment for AirlineEnv {
    fn domain(&self) -> &'static str {
        "airline"
    }

    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        match side {
            Requestor::Assistant => tools::call(&mut self.db, name, args),
            Requestor::User => Err(crate::py::no_attribute("NoneType", name)),
        }
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), MergeError> {
        if let Some(patch) = agent {
            let mut dump = self.agent_db();
            deep_merge(&mut dump, patch);
            self.db = FlightDb::validate(&dump).map_err(MergeError::Rejected)?;
        }
        if user.is_some_and(|u| !u.is_null()) {
            return Err(MergeError::Rejected("the airline domain has no user database ('NoneType' object has no attribute 'update_db')".into()));
        }
        Ok(())
    }

    fn agent_db(&self) -> Value {
        model::dump(&self.db)
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        Changes {
            agent: self.db.changes(&same_domain(self, earlier).db),
            user: None,
        }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other
            .downcast_ref::<AirlineEnv>()
            .is_some_and(|o| self.db.same(&o.db))
    }
}
