//! The plumbing of a domain whose whole state is one agent database and whose user simulator
//! has no tools (airline, retail, the toy): its registry entry, its loaded base and its live
//! environment, written once over the database type ([`AgentOnlyDb`]). Each such domain
//! supplies only what is its own — loading, agent-side dispatch, merging initialization data
//! and the dump — so the three environments cannot drift apart in what they share.

use crate::collection::Database;
use crate::data::LoadError;
use crate::environment::{Changes, DomainBase, Environment, ToolResult, same_domain};
use crate::initial_state::MergeError;
use crate::registry::{Domain, DomainFacts};
use serde_json::{Map, Value};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;
use tauguard_core::Requestor;

/// What a domain without a user database contributes: its database and what only it knows.
pub trait AgentOnlyDb: Database + Clone + Debug + Send + Sync + Sized + 'static {
    /// The domain's fixed facts (its name among them).
    const FACTS: &'static DomainFacts;

    /// Parses and validates the database under `dir`.
    fn load(dir: &Path) -> Result<Self, LoadError>;

    /// Calls an agent-side method with raw JSON keyword arguments.
    fn call(&mut self, name: &str, args: &Map<String, Value>) -> ToolResult;

    /// [`Environment::merge_initialization_data`] for this database (each domain refuses a
    /// user patch with its own text, and re-validates in its own way).
    fn merge(&mut self, agent: Option<&Value>, user: Option<&Value>) -> Result<(), MergeError>;

    /// Plain-data dump, every field present (the hash input).
    fn dump(&self) -> Value;
}

/// The registry entry of an [`AgentOnlyDb`] domain.
pub struct AgentOnlyDomain<D>(PhantomData<fn() -> D>);

impl<D> AgentOnlyDomain<D> {
    /// The entry (a value for [`crate::registry::DOMAINS`]).
    pub const ENTRY: AgentOnlyDomain<D> = AgentOnlyDomain(PhantomData);
}

impl<D: AgentOnlyDb> Debug for AgentOnlyDomain<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Domain({})", D::FACTS.name)
    }
}

impl<D: AgentOnlyDb> Domain for AgentOnlyDomain<D> {
    fn facts(&self) -> &'static DomainFacts {
        D::FACTS
    }

    fn load_base(&self, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError> {
        Ok(Arc::new(AgentOnlyBase::<D>::load(dir)?))
    }
}

/// The loaded, immutable database; every environment starts as a cheap copy of it.
#[derive(Debug, Clone)]
pub struct AgentOnlyBase<D> {
    pub(crate) db: D,
}

impl<D: AgentOnlyDb> AgentOnlyBase<D> {
    /// Loads the database under `dir`.
    pub fn load(dir: &Path) -> Result<AgentOnlyBase<D>, LoadError> {
        Ok(AgentOnlyBase { db: D::load(dir)? })
    }

    /// The base database.
    pub fn db(&self) -> &D {
        &self.db
    }

    /// A fresh environment, typed.
    pub fn env(&self) -> AgentOnlyEnv<D> {
        AgentOnlyEnv {
            db: self.db.clone(),
        }
    }
}

impl<D: AgentOnlyDb> DomainBase for AgentOnlyBase<D> {
    fn domain(&self) -> &'static str {
        D::FACTS.name
    }

    fn fresh(&self) -> Box<dyn Environment> {
        Box::new(self.env())
    }
}

/// One live environment of an [`AgentOnlyDb`] domain.
#[derive(Debug, Clone)]
pub struct AgentOnlyEnv<D> {
    db: D,
}

impl<D> AgentOnlyEnv<D> {
    /// The current database.
    pub fn db(&self) -> &D {
        &self.db
    }
}

impl<D: AgentOnlyDb> Environment for AgentOnlyEnv<D> {
    fn domain(&self) -> &'static str {
        D::FACTS.name
    }

    /// The user has no toolkit object upstream (`None`), so any user call is an
    /// `AttributeError` on `NoneType`.
    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        match side {
            Requestor::Assistant => self.db.call(name, args),
            Requestor::User => Err(crate::py::no_attribute("NoneType", name)),
        }
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), MergeError> {
        self.db.merge(agent, user)
    }

    fn agent_db(&self) -> Value {
        self.db.dump()
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        Changes {
            agent: self.db.changes(&same_domain(self, earlier).db),
            user: None,
        }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other
            .downcast_ref::<AgentOnlyEnv<D>>()
            .is_some_and(|o| self.db.same(&o.db))
    }
}
