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

use crate::agent_only::{AgentOnlyBase, AgentOnlyDb, AgentOnlyDomain, AgentOnlyEnv};
use crate::data::{LoadError, read_json};
use crate::environment::ToolResult;
use crate::initial_state::{MergeError, deep_merge};
use crate::registry::DomainFacts;
use model::FlightDb;
use serde_json::{Map, Value};
use std::path::Path;

/// The airline domain's registry entry.
pub static AIRLINE: AgentOnlyDomain<FlightDb> = AgentOnlyDomain::ENTRY;

static FACTS: DomainFacts = DomainFacts {
    name: "airline",
    agent_tools: defs::TOOLS,
    collections: FlightDb::COLLECTIONS,
    clock: Some(lookup::NOW),
    identity_reads: &["get_user_details"],
    ..DomainFacts::DEFAULT
};

/// The loaded, immutable airline database.
pub type AirlineBase = AgentOnlyBase<FlightDb>;

/// One live airline environment.
pub type AirlineEnv = AgentOnlyEnv<FlightDb>;

impl AirlineBase {
    /// Validates an in-memory database (same rules as [`AirlineBase::load`]).
    pub fn from_json(value: &Value) -> Result<AirlineBase, String> {
        Ok(AgentOnlyBase {
            db: FlightDb::validate(value)?,
        })
    }
}

impl AgentOnlyDb for FlightDb {
    const FACTS: &'static DomainFacts = &FACTS;

    /// Loads and validates `<dir>/db.json`.
    fn load(dir: &Path) -> Result<FlightDb, LoadError> {
        let path = dir.join("db.json");
        let value: Value = read_json(&path)?;
        FlightDb::validate(&value).map_err(|message| LoadError::Parse { path, message })
    }

    fn call(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult {
        tools::call(self, name, args)
    }

    /// The agent patch is applied, then a user patch refused: there is no user database.
    fn merge(&mut self, agent: Option<&Value>, user: Option<&Value>) -> Result<(), MergeError> {
        if let Some(patch) = agent {
            let mut dump = self.dump();
            deep_merge(&mut dump, patch);
            *self = FlightDb::validate(&dump).map_err(MergeError::Rejected)?;
        }
        if user.is_some_and(|u| !u.is_null()) {
            return Err(MergeError::Rejected("the airline domain has no user database ('NoneType' object has no attribute 'update_db')".into()));
        }
        Ok(())
    }

    fn dump(&self) -> Value {
        model::dump(self)
    }
}
