//! The environment seam: what the orchestrator, the evaluator and gold replay need from a
//! domain, independent of which domain it is.

use crate::tooling::{ToolDef, ToolError};
use serde_json::{Map, Value};
use std::any::Any;
use tauguard_core::pyjson;
use tauguard_core::{Requestor, ToolKind};

/// A tool's successful return value, before upstream's `to_json_str` serialisation.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolValue {
    /// A Python `str` return: used verbatim.
    Text(String),
    /// Any other return, already converted to plain data the way upstream converts it
    /// (models dumped in field order; bare scalars inside plain containers stringified by the
    /// domain code). Rendered with Python `json.dumps` defaults.
    Json(Value),
    /// A model return already rendered with Python `json.dumps` defaults (see
    /// [`ToolValue::model`]): the common case, kept as text to skip the `Value` tree.
    Dumped(String),
}

impl ToolValue {
    /// A model's dump as a tool result, rendered once, straight from its fields.
    pub fn model<T: serde::Serialize + ?Sized>(model: &T) -> ToolValue {
        match pyjson::dumps_model(model) {
            Some(text) => ToolValue::Dumped(text),
            None => ToolValue::Json(Value::Null),
        }
    }

    /// A rendering cached with its record (see [`crate::table::Table::dump`]).
    pub fn cached(text: Option<std::sync::Arc<str>>) -> ToolValue {
        match text {
            Some(text) => ToolValue::Dumped(text.to_string()),
            None => ToolValue::Json(Value::Null),
        }
    }

    /// The content of the resulting tool message.
    pub fn content(&self) -> String {
        match self {
            ToolValue::Text(s) | ToolValue::Dumped(s) => s.clone(),
            ToolValue::Json(v) => pyjson::dumps(v),
        }
    }

    /// [`ToolValue::content`], consuming the value so text is moved, not copied.
    pub fn into_content(self) -> String {
        match self {
            ToolValue::Text(s) | ToolValue::Dumped(s) => s,
            ToolValue::Json(v) => pyjson::dumps(&v),
        }
    }

    /// The returned data as JSON: the value itself, or the text parsed (a dump, or text that
    /// tools build as JSON by hand), else the text as a JSON string.
    pub fn into_json(self) -> Value {
        match self {
            ToolValue::Json(v) => v,
            ToolValue::Dumped(t) | ToolValue::Text(t) => {
                serde_json::from_str(&t).unwrap_or(Value::String(t))
            }
        }
    }
}

/// What a tool call ends with: its return value, or the exception upstream raises.
pub type ToolResult = Result<ToolValue, ToolError>;

/// Records changed between two states of one environment, keyed `collection/key` for map
/// collections, `collection/` for list collections (the whole list) and `model/field` for
/// single-model databases (telecom's user device). A removed record maps to `null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub agent: Map<String, Value>,
    /// `None` for domains without a user database.
    pub user: Option<Map<String, Value>>,
}

/// What every environment type provides the same way, implemented once for every `Clone`
/// environment so that no domain writes it: its copy as a trait object and its concrete type
/// for the downcasts of [`Environment::changes_since`] and [`Environment::same_state`].
pub trait EnvironmentObject {
    /// A copy of the environment. Cheap: records are shared with the source and copied on
    /// first write.
    fn snapshot(&self) -> Box<dyn Environment>;

    fn as_any(&self) -> &dyn Any;
}

impl<E: Environment + Clone> EnvironmentObject for E {
    fn snapshot(&self) -> Box<dyn Environment> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl std::fmt::Debug for dyn Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Environment({})", self.domain())
    }
}

impl std::fmt::Debug for dyn DomainBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DomainBase({})", self.domain())
    }
}

impl dyn Environment {
    /// This environment as domain type `E`, or `None` if it belongs to another domain.
    pub fn downcast_ref<E: Environment>(&self) -> Option<&E> {
        self.as_any().downcast_ref()
    }
}

/// `earlier`, the state [`Environment::changes_since`] compares `this` with, as `this`'s own
/// type: a state of another domain is a programming error.
pub(crate) fn same_domain<'e, E: Environment>(this: &E, earlier: &'e dyn Environment) -> &'e E {
    earlier.downcast_ref().unwrap_or_else(|| {
        panic!(
            "changes_since: `{}` is not a {} environment",
            earlier.domain(),
            this.domain()
        )
    })
}

/// One live environment: the domain databases plus the toolkits that act on them.
///
/// Copying one ([`EnvironmentObject::snapshot`]) is cheap: records are shared with the source
/// and copied on first write.
pub trait Environment: EnvironmentObject + Send + Sync + Any {
    fn domain(&self) -> &'static str;

    /// The toolkit of one side (tools and helper methods), in upstream registration order:
    /// the registered domain's (see [`crate::Domain::toolkit`]) unless the environment offers
    /// its own (banking_knowledge's retrieval variant).
    fn toolkit(&self, side: Requestor) -> &'static [ToolDef] {
        crate::registry::get(self.domain()).map_or(&[], |d| d.toolkit(side))
    }

    /// Calls a method of one side's toolkit with raw JSON keyword arguments. Helper methods
    /// (not tools) are reachable too, as upstream's `getattr` reaches them; the orchestrator
    /// only routes model tool calls whose names are tools (see [`Environment::tool_kind`]).
    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult;

    /// Reconciles the agent and user databases (telecom); a no-op elsewhere.
    fn sync_tools(&mut self) -> Result<(), ToolError> {
        Ok(())
    }

    /// Recursively merges `initialization_data` into the databases and re-validates them.
    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), crate::initial_state::MergeError>;

    /// Plain-data dump of the agent database, every field present (the hash input).
    fn agent_db(&self) -> Value;

    /// Plain-data dump of the user database, if the domain has one.
    fn user_db(&self) -> Option<Value> {
        None
    }

    /// Records that differ between `earlier` (a state of the same domain) and `self`.
    /// Panics if `earlier` belongs to another domain: that is a programming error.
    fn changes_since(&self, earlier: &dyn Environment) -> Changes;

    /// Whether both environments hash equal (agent and user databases), computed without
    /// serialising the records they still share.
    fn same_state(&self, other: &dyn Environment) -> bool;

    /// Kind of a *tool* of one side; `None` for unknown names and helper methods.
    fn tool_kind(&self, side: Requestor, name: &str) -> Option<ToolKind> {
        self.toolkit(side)
            .iter()
            .find(|t| t.is_tool && t.name == name)
            .map(|t| t.kind)
    }

    /// Upstream's `make_tool_call`: route by side, refuse names that are not tools of that
    /// side, call. No `sync_tools` (gold replay uses this raw path).
    fn dispatch(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        if side == Requestor::User && self.toolkit(Requestor::User).is_empty() {
            return Err(ToolError::value("User tools not available"));
        }
        if self.tool_kind(side, name).is_none() {
            return Err(ToolError::value(format!("Tool '{name}' not found.")));
        }
        self.call(side, name, args)
    }

    /// Upstream's `get_response` path: dispatch, then `sync_tools` on success; any failure
    /// becomes an `Error: ...` tool message flagged as an error. Returns (content, error).
    fn execute(
        &mut self,
        side: Requestor,
        name: &str,
        args: &Map<String, Value>,
    ) -> (String, bool) {
        match self
            .dispatch(side, name, args)
            .and_then(|v| self.sync_tools().map(|()| v))
        {
            Ok(v) => (v.into_content(), false),
            Err(e) => (e.content(), true),
        }
    }
}

/// A loaded, immutable domain database from which environments are made.
pub trait DomainBase: Send + Sync {
    fn domain(&self) -> &'static str;
    /// A fresh environment in the base state (no task initial state applied).
    fn fresh(&self) -> Box<dyn Environment>;

    /// A fresh environment set up for `task`, before its initial state: what upstream's
    /// `get_environment(task=...)` derives from the task definition (banking_knowledge's
    /// read-log allow-list from the gold actions). The live run, both evaluation
    /// environments and gold replay take their environment from here.
    fn fresh_for(&self, task: &tauguard_core::Task) -> Box<dyn Environment> {
        let _ = task;
        self.fresh()
    }

    /// The dense retrieval index whose vectors the caller embeds (see [`crate::dense`]);
    /// `None` for a domain (or option) that searches without embeddings.
    fn dense(&self) -> Option<&dyn crate::dense::DenseIndex> {
        None
    }

    /// The policy the agent reads on `task` when it is not the domain's one policy
    /// (banking_knowledge's `golden_retrieval` inlines each task's required documents);
    /// `None` for the domain policy.
    fn task_policy(&self, task: &tauguard_core::Task) -> Option<String> {
        let _ = task;
        None
    }
}
