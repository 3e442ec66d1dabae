//! What each party sees of the shared trajectory (§6.3, §6.6): the agent never sees the user's
//! device calls; the user sees the agent's text only, with roles flipped. The per-message
//! mappings are used both to keep live views up to date and to rebuild a view afterwards.

use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::message::{Message, ParticipantMessage};

/// Whether the agent sees a trajectory message: user text, its own messages, results of its
/// own calls. It sees them unchanged.
pub fn agent_sees(m: &Message) -> bool {
    match m {
        Message::User(u) => !u.is_tool_call(),
        Message::Assistant(_) => true,
        Message::Tool(t) => t.requestor == Requestor::Assistant,
        Message::System { .. } => false,
    }
}

/// How one trajectory message appears to the agent, if at all (see [`agent_sees`]).
pub fn for_agent(m: &Message) -> Option<Message> {
    agent_sees(m).then(|| m.clone())
}

/// How one trajectory message appears to the user simulator, if at all: its own messages as
/// `assistant`, the agent's text messages as `user`, results of its own device calls as `tool`.
pub fn for_user(m: &Message) -> Option<Message> {
    match m {
        Message::User(u) => Some(Message::Assistant(u.clone())),
        Message::Assistant(a) if !a.is_tool_call() => Some(Message::User(ParticipantMessage {
            content: a.content.clone(),
            ..Default::default()
        })),
        Message::Tool(t) if t.requestor == Requestor::User => Some(m.clone()),
        _ => None,
    }
}

fn view(
    system: Arc<str>,
    trajectory: &[Message],
    map: fn(&Message) -> Option<Message>,
) -> Vec<Message> {
    std::iter::once(Message::System {
        content: Some(system),
    })
    .chain(trajectory.iter().filter_map(map))
    .collect()
}

/// The agent's history behind its system prompt.
pub fn agent_view(system: impl Into<Arc<str>>, trajectory: &[Message]) -> Vec<Message> {
    view(system.into(), trajectory, for_agent)
}

/// The user simulator's history behind its system prompt.
pub fn user_view(system: impl Into<Arc<str>>, trajectory: &[Message]) -> Vec<Message> {
    view(system.into(), trajectory, for_user)
}
