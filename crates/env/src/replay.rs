//! Replaying a recorded trajectory's mutating tool calls on a fresh environment (§7.2.1):
//! how evaluation rebuilds the state an agent produced, and how initial message histories
//! are applied.

use crate::environment::Environment;
use serde_json::Value;
use tauguard_core::message::{Message, ToolCall, ToolMessage};
use tauguard_core::{Requestor, ToolKind};

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("tool message {0} does not follow a tool call")]
    OrphanToolMessage(String),
    #[error("tool call `{0}` has no tool message after it")]
    MissingToolMessage(String),
    #[error("tool call id mismatch: call `{call}` answered by `{message}`")]
    IdMismatch { call: String, message: String },
    #[error(
        "replayed `{name}` returned different content\n  replayed: {replayed}\n  recorded: {recorded}"
    )]
    OutputMismatch {
        name: String,
        replayed: String,
        recorded: String,
    },
    #[error("sync after replay failed: {0}")]
    Sync(String),
}

/// Pairs every tool call with the tool message that answers it, checking upstream's
/// adjacency rules.
pub(crate) fn pair_tool_calls(
    messages: &[Message],
) -> Result<Vec<(&ToolCall, &ToolMessage)>, ReplayError> {
    let mut pairs = Vec::new();
    let mut it = messages.iter();
    while let Some(msg) = it.next() {
        if let Message::Tool(t) = msg {
            return Err(ReplayError::OrphanToolMessage(t.id.clone()));
        }
        for call in msg.tool_calls() {
            match it.next() {
                Some(Message::Tool(t)) if t.id == call.id => pairs.push((call, t)),
                Some(Message::Tool(t)) => {
                    return Err(ReplayError::IdMismatch {
                        call: call.id.clone(),
                        message: t.id.clone(),
                    });
                }
                _ => return Err(ReplayError::MissingToolMessage(call.name.clone())),
            }
        }
    }
    Ok(pairs)
}

/// Whether `name` is a mutating tool of either toolkit (upstream looks names up in both).
pub(crate) fn is_mutating_tool(env: &dyn Environment, name: &str) -> Option<bool> {
    let kind = env
        .tool_kind(Requestor::Assistant, name)
        .or_else(|| env.tool_kind(Requestor::User, name))?;
    Some(kind == ToolKind::Write)
}

/// Outputs compare as JSON values (Python equality) when both parse, else as text.
pub fn outputs_equal(a: &str, b: &str) -> bool {
    // Identical text is equal under both rules; replays almost always reproduce it exactly.
    if a == b {
        return true;
    }
    match (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) {
        (Ok(x), Ok(y)) => tauguard_core::pyjson::py_eq(&x, &y),
        (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        (Err(_), Err(_)) => a == b,
    }
}

/// A replayed mutating call whose output differs from the recorded tool message: the tool's
/// code changed since the trajectory was recorded (upstream's lenient replay warns and goes
/// on), or the state did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub call_id: String,
    pub tool: String,
    pub recorded: String,
    pub replayed: String,
}

/// Re-executes the mutating calls of `messages` in order (unknown and read-only tools are
/// skipped), then syncs. With `strict`, a replayed output that differs from the recorded
/// one is an error (upstream's live evaluation); otherwise the mutation stands, the replay
/// goes on, and each such call is returned (upstream's `strict=False`, used by
/// `evaluate-trajs`).
pub fn replay_tool_calls(
    env: &mut dyn Environment,
    messages: &[Message],
    strict: bool,
) -> Result<Vec<Drift>, ReplayError> {
    let mut drifts = Vec::new();
    for (call, recorded) in pair_tool_calls(messages)? {
        // A guard-blocked call never executed: it is not part of the state the agent produced.
        if recorded.guard_blocked || is_mutating_tool(env, &call.name) != Some(true) {
            continue;
        }
        let (content, _error) = env.execute(call.requestor, &call.name, &call.arguments);
        if !outputs_equal(&content, &recorded.content) {
            if strict {
                return Err(ReplayError::OutputMismatch {
                    name: call.name.clone(),
                    replayed: content,
                    recorded: recorded.content.clone(),
                });
            }
            drifts.push(Drift {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                recorded: recorded.content.clone(),
                replayed: content,
            });
        }
    }
    env.sync_tools()
        .map_err(|e| ReplayError::Sync(e.qualified()))?;
    Ok(drifts)
}
