//! What each party sees of the shared trajectory (§6.3, §6.6): the agent never sees the user's
//! device calls; the user sees the agent's text only, with roles flipped.

use tauguard_core::message::{Message, ParticipantMessage};
use tauguard_core::Requestor;

/// The agent's history: user text, its own messages, results of its own calls.
pub fn agent_view(system: &str, trajectory: &[Message]) -> Vec<Message> {
    let mut out = vec![Message::System { content: Some(system.to_string()) }];
    for m in trajectory {
        match m {
            Message::User(u) if !u.is_tool_call() => out.push(m.clone()),
            Message::Assistant(_) => out.push(m.clone()),
            Message::Tool(t) if t.requestor == Requestor::Assistant => out.push(m.clone()),
            _ => {}
        }
    }
    out
}

/// The user simulator's history: its own messages as `assistant`, the agent's text messages
/// as `user`, results of its own device calls as `tool`.
pub fn user_view(system: &str, trajectory: &[Message]) -> Vec<Message> {
    let mut out = vec![Message::System { content: Some(system.to_string()) }];
    for m in trajectory {
        match m {
            Message::User(u) => out.push(Message::Assistant(u.clone())),
            Message::Assistant(a) if !a.is_tool_call() => out.push(Message::User(ParticipantMessage {
                content: a.content.clone(),
                ..Default::default()
            })),
            Message::Tool(t) if t.requestor == Requestor::User => out.push(m.clone()),
            _ => {}
        }
    }
    out
}
