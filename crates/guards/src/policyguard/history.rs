//! The structured view of a conversation both verifier families read: the formatted history
//! of the LLM prompt and the tool-call records of the offline sim verifier come from here, so
//! `pg-raw-traj` strips dialogue the same way for both.

use serde::Serialize;
use serde_json::{Map, Value};
use tauguard_core::{Message, Requestor, ToolCall};

/// One line of the formatted history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct HistoryEntry {
    /// Index of the message in the history.
    pub turn: usize,
    /// `user`, `agent`, `agent_call`, `user_call` or `tool_result` (and `guidance` in a guide's
    /// prompt: an earlier guidance message the agent read).
    pub kind: &'static str,
    /// Message text or tool result content.
    pub text: Option<String>,
    pub tool: Option<String>,
    /// Compact JSON of the call arguments.
    pub arguments: Option<String>,
    pub error: bool,
    /// The result is a guard's remediation: the call never executed.
    pub blocked: bool,
}

impl HistoryEntry {
    /// Whether this line is user–agent dialogue (removed by `pg-raw-traj`).
    pub(crate) fn is_dialogue(&self) -> bool {
        matches!(self.kind, "user" | "agent")
    }
}

/// Where the pending call sits in the history: the message index and the call's position in
/// that message. `None` when the history does not contain it.
pub(crate) fn locate_pending(history: &[Message], call: &ToolCall) -> Option<(usize, usize)> {
    history.iter().enumerate().rev().find_map(|(i, m)| match m {
        Message::Assistant(_) | Message::User(_) => m
            .tool_calls()
            .iter()
            .position(|c| c == call)
            .map(|k| (i, k)),
        _ => None,
    })
}

/// Formats the history for the verifier prompt, leaving out system messages and the pending
/// call itself (it is shown separately). With `dialogue = false` only tool calls and their
/// results remain.
pub(crate) fn format_history(
    history: &[Message],
    call: &ToolCall,
    dialogue: bool,
) -> Vec<HistoryEntry> {
    format_history_around(history, Some(call), dialogue)
}

/// [`format_history`] with the pending call optional: a guide running at a user-turn boundary
/// has none, so every call in the history is shown.
pub(crate) fn format_history_around(
    history: &[Message],
    call: Option<&ToolCall>,
    dialogue: bool,
) -> Vec<HistoryEntry> {
    let pending = call.and_then(|c| locate_pending(history, c));
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, m) in history.iter().enumerate() {
        match m {
            Message::System { .. } => {}
            Message::User(p) | Message::Assistant(p) => {
                let user = matches!(m, Message::User(_));
                if let Some(text) = p.content.as_deref().filter(|t| !t.trim().is_empty()) {
                    out.push(HistoryEntry {
                        turn: i,
                        kind: if user { "user" } else { "agent" },
                        text: Some(text.trim().to_string()),
                        tool: None,
                        arguments: None,
                        error: false,
                        blocked: false,
                    });
                }
                for (k, c) in m.tool_calls().iter().enumerate() {
                    names.insert(c.id.as_str(), c.name.as_str());
                    if pending == Some((i, k)) {
                        continue;
                    }
                    let side = if user || c.requestor == Requestor::User {
                        "user_call"
                    } else {
                        "agent_call"
                    };
                    out.push(HistoryEntry {
                        turn: i,
                        kind: side,
                        text: None,
                        tool: Some(c.name.clone()),
                        arguments: Some(compact_arguments(&c.arguments)),
                        error: false,
                        blocked: false,
                    });
                }
            }
            Message::Tool(t) => out.push(HistoryEntry {
                turn: i,
                kind: "tool_result",
                text: Some(t.content.clone()),
                tool: Some(
                    names
                        .get(t.id.as_str())
                        .map_or_else(|| format!("call {}", t.id), |n| (*n).to_string()),
                ),
                arguments: None,
                error: t.error,
                blocked: t.guard_blocked,
            }),
        }
    }
    if !dialogue {
        out.retain(|e| !e.is_dialogue());
    }
    out
}

/// The history without user–agent dialogue: text is dropped from user and assistant messages,
/// and messages left with neither text nor tool calls disappear. Tool calls and results stay.
pub(crate) fn strip_dialogue(history: &[Message]) -> Vec<Message> {
    history
        .iter()
        .filter_map(|m| match m {
            Message::System { .. } => None,
            Message::User(p) | Message::Assistant(p) => {
                if !p.is_tool_call() {
                    return None;
                }
                let mut p = p.clone();
                p.content = None;
                Some(if matches!(m, Message::User(_)) {
                    Message::User(p)
                } else {
                    Message::Assistant(p)
                })
            }
            Message::Tool(_) => Some(m.clone()),
        })
        .collect()
}

/// Arguments as compact JSON, in the order the model produced them.
pub(crate) fn compact_arguments(arguments: &Map<String, Value>) -> String {
    serde_json::to_string(arguments).unwrap_or_else(|_| "{}".to_string())
}
