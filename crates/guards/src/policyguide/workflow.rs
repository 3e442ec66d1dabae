//! The workflow bundle: one domain's procedures as a main graph plus subflows, frozen as JSON.
//!
//! A guide traverses the bundle to say which step a request has reached, so every node names
//! who acts, what the expected action is and when the step counts as done; the validator
//! ([`super::validate`]) rejects a bundle a traversal could get stuck in or that lets a
//! mutating tool run without an authorization step.
//!
//! # Schema (version 1)
//!
//! ```json
//! {
//!   "schema": 1,
//!   "domain": "airline",
//!   "main":     { "id": "main", "title": "...", "nodes": [Node...], "edges": [Edge...] },
//!   "subflows": [ { "id": "cancel", "title": "...", "nodes": [...], "edges": [...] } ]
//! }
//! ```
//!
//! A **node** is `{id, kind, actor, action, condition}` plus `tool` on tool nodes and
//! `subflow` on subflow nodes; `source` may quote the policy sentence the node comes from.
//!
//! | kind | meaning | out-edges |
//! |---|---|---|
//! | `entry` | where a request starts (one per graph) | exactly 1 |
//! | `exit` | a request ends here (done, refused, transferred) | 0 |
//! | `agent_action` | the agent says or asks something | ≥ 1 |
//! | `user_input` | the user supplies a fact, a choice or consent | ≥ 1 |
//! | `tool_call` | the agent calls a non-mutating tool (`tool`) | ≥ 1 |
//! | `tool_authorization` | the guide may authorize a mutating tool (`tool`) | ≥ 1 |
//! | `decision` | the path forks on the `condition` | ≥ 2, labelled, labels distinct |
//! | `subflow` | run subflow `subflow`, then continue | ≥ 1 |
//!
//! `actor` is `agent`, `user` or `system`. An **edge** is `{from, to, label}`; `label` names the
//! branch (required on a decision's out-edges, optional elsewhere). Node ids are unique within
//! their graph; edges only join nodes of the same graph. Unknown fields are errors everywhere,
//! so a misspelt key cannot silently drop a step.
//!
//! A `tool_call` node may name a read-only tool or one that is neither read-only nor mutating
//! (`transfer_to_human_agents`, `calculate`): guards intercept only mutating calls, so those
//! never need authorizing, but the policy's steps still name them.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The schema version this code reads; a bundle declaring another is rejected by the validator.
pub const SCHEMA_VERSION: u32 = 1;

/// One domain's frozen workflow: a main graph and the subflows it composes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    pub schema: u32,
    pub domain: String,
    pub main: Graph,
    #[serde(default)]
    pub subflows: Vec<Graph>,
}

/// A graph: the main graph or one subflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub id: String,
    #[serde(default)]
    pub title: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

/// One step of a procedure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    pub actor: Actor,
    /// What the actor is expected to do here.
    pub action: String,
    /// When this step counts as satisfied (what a traversal judges before moving on).
    pub condition: String,
    /// The tool of a `tool_call` or `tool_authorization` node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The subflow id a `subflow` node runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflow: Option<String>,
    /// The policy text the node was authored from (a short quotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The eight node kinds (see the module docs for their edge rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Entry,
    Exit,
    AgentAction,
    UserInput,
    ToolCall,
    ToolAuthorization,
    Decision,
    Subflow,
}

impl NodeKind {
    /// The kind as the JSON spells it, for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Entry => "entry",
            NodeKind::Exit => "exit",
            NodeKind::AgentAction => "agent_action",
            NodeKind::UserInput => "user_input",
            NodeKind::ToolCall => "tool_call",
            NodeKind::ToolAuthorization => "tool_authorization",
            NodeKind::Decision => "decision",
            NodeKind::Subflow => "subflow",
        }
    }
}

/// Who performs a node's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Agent,
    User,
    System,
}

/// A directed edge between two nodes of one graph; `label` names the branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Why a bundle file could not be read as a bundle (before any validation rule runs).
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    #[error("cannot read workflow bundle {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("workflow bundle {}: at `{at}`", path.display())]
    Parse {
        path: PathBuf,
        at: String,
        #[source]
        cause: serde_json::Error,
    },
}

impl Bundle {
    /// Reads and parses a bundle file; a parse error names the JSON path of the bad field
    /// (e.g. `main.nodes[3].kind` for an unknown node kind).
    pub fn load(path: &Path) -> Result<Bundle, WorkflowError> {
        let text = std::fs::read_to_string(path).map_err(|cause| WorkflowError::Read {
            path: path.to_path_buf(),
            cause,
        })?;
        Bundle::parse(&text).map_err(|(at, cause)| WorkflowError::Parse {
            path: path.to_path_buf(),
            at,
            cause,
        })
    }

    /// Parses bundle JSON; the error is (JSON path, serde's error).
    pub fn parse(text: &str) -> Result<Bundle, (String, serde_json::Error)> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            (at, e.into_inner())
        })
    }

    /// The main graph, then the subflows in file order.
    pub fn graphs(&self) -> impl Iterator<Item = &Graph> {
        std::iter::once(&self.main).chain(&self.subflows)
    }
}
