//! The evidence the sim verifier reads from a history: which tool calls succeeded before the
//! pending call, and whether the user explicitly confirmed after the agent's last summary.
//! Confirmation requests and explicit yeses are recognised with the workspace's one
//! confirmation vocabulary, [`tauguard_core::dialogue`], which the sim user answers with and
//! the sim agent asks in.

use tauguard_core::dialogue::{asks_for_confirmation, is_affirmative};
use tauguard_core::{Message, Requestor, ToolCall};

/// Outcome of an earlier tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    Error,
    Blocked,
    NoResult,
}

#[derive(Debug)]
pub(crate) struct CallRecord<'a> {
    pub msg: usize,
    pub agent: bool,
    pub call: &'a ToolCall,
    pub outcome: Outcome,
}

/// Every tool call of the history except the pending one, with its outcome.
pub(crate) fn call_records<'a>(
    history: &'a [Message],
    pending: Option<(usize, usize)>,
) -> Vec<CallRecord<'a>> {
    let mut out = Vec::new();
    for (i, m) in history.iter().enumerate() {
        let agent = matches!(m, Message::Assistant(_));
        for (k, c) in m.tool_calls().iter().enumerate() {
            if pending == Some((i, k)) {
                continue;
            }
            let outcome = history[i + 1..]
                .iter()
                .find_map(|n| match n {
                    Message::Tool(t) if t.id == c.id => Some(if t.guard_blocked {
                        Outcome::Blocked
                    } else if t.error {
                        Outcome::Error
                    } else {
                        Outcome::Ok
                    }),
                    _ => None,
                })
                .unwrap_or(Outcome::NoResult);
            out.push(CallRecord {
                msg: i,
                agent: agent && c.requestor == Requestor::Assistant,
                call: c,
                outcome,
            });
        }
    }
    out
}

/// The agent's successful calls of `tool`.
pub(crate) fn succeeded<'a>(
    records: &'a [CallRecord<'a>],
    tool: &'a str,
) -> impl Iterator<Item = &'a CallRecord<'a>> + 'a {
    records
        .iter()
        .filter(move |r| r.agent && r.outcome == Outcome::Ok && r.call.name == tool)
}

/// The remedy of a missing confirmation.
pub(crate) const CONFIRM_REMEDY: &str =
    "list the action details to the user and get an explicit yes before calling it";

/// Whether the user said yes after the agent's last summary before `pending`, with no
/// state-changing call executed since (reads are fine): `(met, reason)`.
pub(crate) fn confirmation(
    view: &[Message],
    records: &[CallRecord<'_>],
    pending: Option<(usize, usize)>,
    mutating: &dyn Fn(&str) -> bool,
) -> (bool, String) {
    let end = pending.map_or(view.len(), |(i, _)| i);
    let summary = view[..end].iter().rposition(|m| match m {
        Message::Assistant(p) => p.content.as_deref().is_some_and(asks_for_confirmation),
        _ => false,
    });
    let Some(s) = summary else {
        return (
            false,
            "the agent never summarised the action and asked the user to confirm".into(),
        );
    };
    let yes = view[s + 1..end].iter().position(|m| match m {
        Message::User(p) => p.content.as_deref().is_some_and(is_affirmative),
        _ => false,
    });
    let Some(y) = yes.map(|y| y + s + 1) else {
        return (
            false,
            format!("no explicit yes from the user after the agent's last summary (message {s})"),
        );
    };
    let intervening = records
        .iter()
        .find(|r| r.agent && r.msg > s && r.outcome == Outcome::Ok && mutating(&r.call.name));
    if let Some(r) = intervening {
        return (
            false,
            format!(
                "{} changed state after the user's confirmation (message {y}); the confirmation is used up",
                r.call.name
            ),
        );
    }
    (
        true,
        format!("the user said yes (message {y}) after the agent's summary (message {s})"),
    )
}
