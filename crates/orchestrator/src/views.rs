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
/// Participant messages keep what a model is sent of them, text and tool calls; timestamps,
/// usage and costs stay in the trajectory.
pub fn for_user(m: &Message) -> Option<Message> {
    match m {
        Message::User(u) => Some(Message::Assistant(ParticipantMessage {
            content: u.content.clone(),
            tool_calls: u.tool_calls.clone(),
            ..Default::default()
        })),
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

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::message::{ToolCall, Usage};

    #[test]
    fn the_user_sees_its_own_messages_as_sent_and_the_agents_text_only() {
        let call = ToolCall {
            id: "c1".into(),
            name: "toggle_airplane_mode".into(),
            arguments: Default::default(),
            requestor: Requestor::User,
        };
        let own = Message::User(ParticipantMessage {
            content: Some("hi".into()),
            tool_calls: Some(vec![call.clone()]),
            timestamp: Some("1.000000".into()),
            usage: Some(Usage::default()),
            cost: Some(0.5),
            ..Default::default()
        });
        let Some(Message::Assistant(seen)) = for_user(&own) else {
            panic!("the user's own message is its assistant turn");
        };
        assert_eq!(seen.content.as_deref(), Some("hi"));
        assert_eq!(seen.tool_calls, Some(vec![call.clone()]));
        assert_eq!((seen.timestamp, seen.usage, seen.cost), (None, None, None));
        let agent_call = Message::Assistant(ParticipantMessage {
            tool_calls: Some(vec![ToolCall {
                requestor: Requestor::Assistant,
                ..call.clone()
            }]),
            ..Default::default()
        });
        assert!(for_user(&agent_call).is_none());
        let agent_text = Message::Assistant(ParticipantMessage {
            content: Some("How can I help?".into()),
            timestamp: Some("2.000000".into()),
            ..Default::default()
        });
        let Some(Message::User(seen)) = for_user(&agent_text) else {
            panic!("the agent's text is the user's input");
        };
        assert_eq!(seen.content.as_deref(), Some("How can I help?"));
        assert_eq!(seen.timestamp, None);
    }
}
