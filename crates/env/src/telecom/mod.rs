//! The telecom domain (dual control): the agent's backend toolkit over `db.toml`, the user's
//! simulated phone over `user_db.toml`, and `sync_tools`, which keeps the phone's view of the
//! line (active, roaming allowed, data usage, payment request) in step with the backend.
//!
//! Upstream calls toolkit methods with raw JSON keyword arguments and no validation, and
//! several tools assign arguments straight into the model. The implementation follows the
//! upstream control flow statement by statement so that outputs, error texts and partial
//! mutations before an exception match; `crate::py` holds the Python behaviours this needs.
//!
//! Deliberate, documented departures from upstream:
//! * `refuel_data` with no Draft bill names the new bill `B` + 8 hex digits derived from a
//!   SHA-256 of the customer id and the number of bills (upstream: `uuid4`), so that replays
//!   are deterministic.
//! * Upstream's `connect_vpn` installs one class-level `VpnDetails` object shared by every
//!   toolkit of the Python process, and `break_vpn` degrades it in place, so upstream's later
//!   `connect_vpn` results depend on what ran earlier in the process. Here that shared
//!   profile is part of each environment (inherited by snapshots): exact within one task,
//!   independent across tasks.
//! * `initialization_data` is merged into each database separately. Upstream's `set_state`
//!   re-points the user toolkit at the agent database after merging `agent_data` (and the
//!   agent toolkit at the user database after `user_data`), which breaks every later tool
//!   call; no telecom task has `initialization_data`.
//! * Non-tool helpers (initialization actions, assertions) reject argument types their task
//!   files never use with a `TypeError` instead of storing them unvalidated.
//!
//! Layout (the crate's shared shape): `defs` (both toolkits' declarations), `tools` (the
//! agent's dispatch and bodies), `billing` and `lookup` (agent-side bodies and lookups),
//! `device_tools` and `apps` (the user's phone toolkit), `assertions` (env assertions),
//! `model` and `user_model` (agent and phone records), `device` and `sync` (phone state and
//! its reconciliation with the backend), `dates` and `validate` (upstream's value types),
//! `workflow` (the troubleshooting workflow's device checks around each fix).

mod apps;
mod assertions;
mod billing;
mod dates;
mod defs;
mod device;
mod device_tools;
mod lookup;
mod model;
mod sync;
mod tools;
mod user_model;
mod validate;
mod wifi_vpn_tools;
mod workflow;

pub use defs::{AGENT_OWNER, AGENT_TOOLKIT, USER_OWNER, USER_TOOLKIT};

use crate::collection::Database;
use crate::data::{LoadError, ParseCache, read_toml};
use crate::environment::{Changes, DomainBase, Environment, ToolResult, ToolValue, same_domain};
use crate::initial_state::{MergeError, revalidate};
use crate::registry::DomainFacts;
use crate::tooling::{ToolError, bind_method};
use model::TelecomDb;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;
use tauguard_core::Requestor;
use user_model::UserDb;

/// The telecom domain's registry entry.
#[derive(Debug)]
pub struct Telecom;
pub static TELECOM: Telecom = Telecom;

static FACTS: DomainFacts = DomainFacts {
    name: "telecom",
    agent_tools: AGENT_TOOLKIT,
    user_tools: USER_TOOLKIT,
    collections: TelecomDb::COLLECTIONS,
    // Upstream's fixed "today" ([`dates::TODAY`]) at the time of day its policy states.
    clock: Some("2025-02-25T12:08:00"),
    identity_reads: &[
        "get_customer_by_phone",
        "get_customer_by_id",
        "get_customer_by_name",
    ],
    // Telecom is graded on ordered procedures (PolicyGuide's trace compliance).
    ordered_gold_trace: true,
    device_workflow: workflow::WORKFLOW,
    ..DomainFacts::DEFAULT
};

impl crate::registry::Domain for Telecom {
    fn facts(&self) -> &'static DomainFacts {
        &FACTS
    }
    fn load_base(&self, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError> {
        Ok(Arc::new(TelecomBase::load(dir)?))
    }
    /// The main policy and the technical-support manual, joined the way upstream does.
    fn load_policy(&self, dir: &Path) -> Result<String, LoadError> {
        let main = crate::data::read_text(&dir.join("main_policy.md"))?;
        let manual = crate::data::read_text(&dir.join("tech_support_manual.md"))?;
        Ok(format!(
            "<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
        ))
    }
}

/// The loaded telecom databases; every environment starts as a cheap copy of them.
#[derive(Debug)]
pub struct TelecomBase {
    base: TelecomEnv,
}

/// Parsed databases keyed by both files' stamps, so that a process parses the TOML files
/// once however often the domain is loaded.
static PARSED: ParseCache<(TelecomDb, Arc<UserDb>)> = ParseCache::new();

/// Reads a TOML file and validates it as `T`, naming the failing key path.
fn load_toml<T: DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let value: Value = read_toml(path)?;
    serde_path_to_error::deserialize(value).map_err(|e| LoadError::json(path, e))
}

impl TelecomBase {
    /// Loads `db.toml` and `user_db.toml` from `dir`.
    pub fn load(dir: &Path) -> Result<TelecomBase, LoadError> {
        let (db_path, user_path) = (dir.join("db.toml"), dir.join("user_db.toml"));
        let (db, user) = PARSED.get_or_parse(&[&db_path, &user_path], || {
            Ok((load_toml(&db_path)?, Arc::new(load_toml(&user_path)?)))
        })?;
        let base = TelecomEnv {
            db,
            user,
            vpn_default: user_model::PerformanceLevel::Excellent,
            vpn_uses_default: false,
        };
        Ok(TelecomBase { base })
    }
}

impl DomainBase for TelecomBase {
    fn domain(&self) -> &'static str {
        "telecom"
    }

    fn fresh(&self) -> Box<dyn Environment> {
        Box::new(self.base.clone())
    }
}

/// One telecom environment: the agent database and the user's phone and surroundings.
#[derive(Debug, Clone)]
pub struct TelecomEnv {
    pub(crate) db: TelecomDb,
    pub(crate) user: Arc<UserDb>,
    /// Performance of upstream's class-level default VPN profile, which `connect_vpn`
    /// installs by reference and `break_vpn` degrades in place. Upstream shares it across a
    /// whole Python process; here it is scoped to one environment (and its snapshots).
    pub(crate) vpn_default: user_model::PerformanceLevel,
    /// Whether the phone's current `vpn_details` is that shared default object.
    pub(crate) vpn_uses_default: bool,
}

/// A tool's `str` return.
fn text(s: impl Into<String>) -> ToolValue {
    ToolValue::Text(s.into())
}

static NULL: Value = Value::Null;

/// Arguments bound to a method's parameters, in declaration order.
pub(crate) struct Args<'a>(Vec<Option<&'a Value>>);

impl<'a> Args<'a> {
    /// A required argument (binding guarantees presence).
    pub(crate) fn req(&self, i: usize) -> &'a Value {
        self.0.get(i).copied().flatten().unwrap_or(&NULL)
    }

    /// An optional argument; `None` when the default applies.
    pub(crate) fn opt(&self, i: usize) -> Option<&'a Value> {
        self.0.get(i).copied().flatten()
    }
}

impl TelecomEnv {
    pub(crate) fn phone(&self) -> &user_model::Phone {
        &self.user.device
    }

    pub(crate) fn phone_mut(&mut self) -> &mut user_model::Phone {
        &mut Arc::make_mut(&mut self.user).device
    }

    pub(crate) fn surroundings(&self) -> &user_model::Surroundings {
        &self.user.surroundings
    }

    pub(crate) fn surroundings_mut(&mut self) -> &mut user_model::Surroundings {
        &mut Arc::make_mut(&mut self.user).surroundings
    }
}

/// `model/field` entries for the fields of `now` that differ from `before`.
fn field_changes(prefix: &str, now: Value, before: Value, out: &mut Map<String, Value>) {
    let (Value::Object(now), Value::Object(before)) = (now, before) else {
        return;
    };
    for (k, v) in now {
        if before.get(&k) != Some(&v) {
            out.insert(format!("{prefix}/{k}"), v);
        }
    }
}

impl Environment for TelecomEnv {
    fn domain(&self) -> &'static str {
        "telecom"
    }

    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        let owner = match side {
            Requestor::Assistant => AGENT_OWNER,
            Requestor::User => USER_OWNER,
        };
        let bound = Args(bind_method(owner, self.toolkit(side), name, args)?.1);
        match side {
            Requestor::Assistant => self.call_agent(name, &bound),
            Requestor::User => self.call_user(name, &bound),
        }
    }

    fn sync_tools(&mut self) -> Result<(), ToolError> {
        self.sync()
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), MergeError> {
        if let Some(patch) = agent {
            self.db = revalidate(self.db.dump(), patch, "TelecomDB")?;
        }
        if let Some(patch) = user {
            self.user = Arc::new(revalidate(self.user.dump(), patch, "TelecomUserDB")?);
            self.vpn_uses_default = false;
        }
        Ok(())
    }

    fn agent_db(&self) -> Value {
        self.db.dump()
    }

    fn user_db(&self) -> Option<Value> {
        Some(self.user.dump())
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        let earlier = same_domain(self, earlier);
        let agent = self.db.changes(&earlier.db);
        let mut user = Map::new();
        if !Arc::ptr_eq(&self.user, &earlier.user) {
            let (now, before) = (self.user.dump(), earlier.user.dump());
            for part in ["device", "surroundings"] {
                field_changes(part, now[part].clone(), before[part].clone(), &mut user);
            }
        }
        Changes {
            agent,
            user: Some(user),
        }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other.downcast_ref::<TelecomEnv>().is_some_and(|other| {
            self.db.same(&other.db)
                && (Arc::ptr_eq(&self.user, &other.user) || self.user == other.user)
        })
    }
}
