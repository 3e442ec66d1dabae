//! The guide's prompt templates, `<prompts_dir>/guide/{system,request,repair}.md`, loaded and
//! rendered by the family's one template loader ([`crate::policyguard::templates`]).
//!
//! Layout of one guide generation:
//! 1. system message = the **static prefix** (`system.md`): role, the reconcile → traverse →
//!    decide rules, the enumerated authorization nodes with their tools, the output contract,
//!    the policy and — for the graph variant — the workflow rendering. It depends only on
//!    what the guide was built with, so it is rendered once and byte-identical for every
//!    call of one guide (prefix caching).
//! 2. user message = the **dynamic part** (`request.md`): the trigger (a user turn, or an
//!    interception with the stopped call), the conversation as the agent sees it (earlier
//!    guidance marked as such) and the current request cards as JSON.
//! 3. on a repair retry: the unusable reply as an assistant message, then `repair.md`.

use crate::policyguard::history::{HistoryEntry, compact_arguments, format_history_around};
use serde::Serialize;
use tauguard_core::dialogue::GUIDANCE_PREFIX;
use tauguard_core::{Message, ToolCall};

/// Template file names under `<prompts_dir>/guide/`.
pub(crate) const SYSTEM_TEMPLATE: &str = "system.md";
pub(crate) const REQUEST_TEMPLATE: &str = "request.md";
pub(crate) const REPAIR_TEMPLATE: &str = "repair.md";
/// The three, in the order [`crate::policyguard::guard_prompts::GuardPrompts::load`] takes them.
pub(crate) const TEMPLATES: [&str; 3] = [SYSTEM_TEMPLATE, REQUEST_TEMPLATE, REPAIR_TEMPLATE];

/// The agent's tools by class, as the prefix lists them (sorted).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ToolsView<'a> {
    pub mutating: Vec<&'a str>,
    pub read_only: Vec<&'a str>,
    pub other: Vec<&'a str>,
}

/// One enumerated authorization node and the tool it enables.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AuthorizationView<'a> {
    pub node: &'a str,
    pub tool: &'a str,
}

/// What the static prefix depends on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PrefixVars<'a> {
    pub domain: &'a str,
    /// The workflow graph is given (false for the raw-policy ablation).
    pub graph: bool,
    pub policy: &'a str,
    /// The graph rendering; `None` without a graph.
    pub workflow: Option<&'a str>,
    /// Where a new request starts.
    pub start: &'a str,
    /// Where a finished request ends (the raw-policy positions name it).
    pub done: &'a str,
    pub authorizations: Vec<AuthorizationView<'a>>,
    pub tools: ToolsView<'a>,
}

/// The call an interception stopped.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PendingView<'a> {
    pub tool: &'a str,
    /// Compact JSON of its arguments.
    pub arguments: String,
}

impl<'a> PendingView<'a> {
    pub(crate) fn new(call: &'a ToolCall) -> Self {
        PendingView {
            tool: &call.name,
            arguments: compact_arguments(&call.arguments),
        }
    }
}

/// What the dynamic part depends on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RequestVars<'a> {
    /// `user_turn` or `interception`.
    pub trigger: &'static str,
    pub graph: bool,
    pub pending: Option<PendingView<'a>>,
    pub history: &'a [HistoryEntry],
    /// The current request cards as pretty JSON; `None` when there are none.
    pub cards: Option<String>,
}

/// The conversation as the guide reads it: the agent's view formatted like the PolicyGuard
/// verifier's, the stopped call left out (it is shown apart), and guidance messages the agent
/// read marked `guidance` with their prefix removed, so the guide never takes its own words
/// for the user's.
pub(crate) fn guide_history(history: &[Message], pending: Option<&ToolCall>) -> Vec<HistoryEntry> {
    let mut entries = format_history_around(history, pending, true);
    for e in &mut entries {
        if e.kind == "user"
            && let Some(rest) = e
                .text
                .as_deref()
                .and_then(|t| t.strip_prefix(GUIDANCE_PREFIX))
        {
            e.text = Some(rest.trim().to_string());
            e.kind = "guidance";
        }
    }
    entries
}
