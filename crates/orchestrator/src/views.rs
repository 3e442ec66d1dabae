//! What each party sees of the shared trajectory (§6.3, §6.6): the agent never sees the user's
//! device calls; the user sees the agent's text only, with roles flipped. The per-message
//! mappings are used both to keep live views up to date and to rebuild a view afterwards.
//!
//! A guard-blocked call is where the views part from the trajectory (PolicyGuard: on BLOCK the
//! orchestrator pops the call and hands the agent the remediation in place of its result, so
//! the call "never happened" in the trajectory and is never replayed). [`Conversation`] keeps
//! the blocked call and the remediation in the agent's view only — the agent reads what it
//! tried and why it was refused — while the trajectory, and the user's view derived from it,
//! hold executed calls only. The attempt itself (call, arguments, verdict, remediation) is
//! recorded in the guard events.

use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::dialogue::GUIDANCE_PREFIX;
use tauguard_core::message::{Message, ParticipantMessage, ToolMessage};

/// Whether the agent sees a trajectory message: user text, its own messages, results of its
/// own calls. It sees them unchanged.
pub(crate) fn agent_sees(m: &Message) -> bool {
    match m {
        Message::User(u) => !u.is_tool_call(),
        Message::Assistant(_) => true,
        Message::Tool(t) => t.requestor == Requestor::Assistant,
        Message::System { .. } => false,
    }
}

/// How one trajectory message appears to the agent, if at all (see [`agent_sees`]).
pub(crate) fn for_agent(m: &Message) -> Option<Message> {
    agent_sees(m).then(|| m.clone())
}

/// How one trajectory message appears to the user simulator, if at all: its own messages as
/// `assistant`, the agent's text messages as `user`, results of its own device calls as `tool`.
/// Participant messages keep what a model is sent of them, text and tool calls; timestamps,
/// usage and costs stay in the trajectory.
pub(crate) fn for_user(m: &Message) -> Option<Message> {
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
pub(crate) fn agent_view(system: impl Into<Arc<str>>, trajectory: &[Message]) -> Vec<Message> {
    view(system.into(), trajectory, for_agent)
}

/// The user simulator's history behind its system prompt.
pub(crate) fn user_view(system: impl Into<Arc<str>>, trajectory: &[Message]) -> Vec<Message> {
    view(system.into(), trajectory, for_user)
}

/// Where a trajectory message lives while the simulation runs.
enum Entry {
    /// At this index of the agent's view: the agent sees it unchanged, so it is kept once.
    Agent(usize),
    /// Only here: the user's device calls and their results, and an agent message whose
    /// blocked calls were cut out (the agent's view keeps it whole). Boxed, so the common
    /// entry stays a word or two and appending one moves little.
    Own(Box<Message>),
}

/// The trajectory and both parties' live views of it. Views are shared with in-flight
/// requests and appended to in place, so no call re-copies the conversation; a message the
/// agent sees unchanged is stored in its view only and moved out into the trajectory at the
/// end.
pub(crate) struct Conversation {
    entries: Vec<Entry>,
    pub(crate) agent: Arc<Vec<Message>>,
    pub(crate) user: Arc<Vec<Message>>,
    /// Whether a guard blocked a call or a guide spoke: the agent's view then holds
    /// exchanges the trajectory does not, and is kept beside it.
    blocked: bool,
}

impl Conversation {
    pub(crate) fn new(
        agent_system: &Arc<str>,
        user_system: &Arc<str>,
        history: Vec<Message>,
    ) -> Conversation {
        // Room for a typical conversation, so appending rarely moves the views.
        let room = history.len() + 32;
        let with_room = |mut view: Vec<Message>| {
            view.reserve(room);
            Arc::new(view)
        };
        let mut conv = Conversation {
            entries: Vec::with_capacity(room),
            agent: with_room(agent_view(agent_system.clone(), &[])),
            user: with_room(user_view(user_system.clone(), &[])),
            blocked: false,
        };
        for m in history {
            conv.push(m);
        }
        conv
    }

    /// Appends a message to the trajectory and to the views that see it.
    pub(crate) fn push(&mut self, m: Message) {
        if let Some(v) = for_user(&m) {
            Arc::make_mut(&mut self.user).push(v);
        }
        if agent_sees(&m) {
            let agent = Arc::make_mut(&mut self.agent);
            agent.push(m);
            self.entries.push(Entry::Agent(agent.len() - 1));
        } else {
            self.entries.push(Entry::Own(Box::new(m)));
        }
    }

    /// Position of the last trajectory message (the one whose calls are being executed).
    pub(crate) fn last_idx(&self) -> Option<usize> {
        self.entries.len().checked_sub(1)
    }

    /// The trajectory message at `idx` (see [`Conversation::last_idx`]).
    pub(crate) fn at(&self, idx: usize) -> &Message {
        match &self.entries[idx] {
            Entry::Agent(i) => &self.agent[*i],
            Entry::Own(m) => m,
        }
    }

    pub(crate) fn last(&self) -> Option<&Message> {
        self.last_idx().map(|i| self.at(i))
    }

    /// The remediation a guard returned for a blocked agent call: the agent reads it as that
    /// call's result; the trajectory and the user never see it.
    pub(crate) fn push_remediation(&mut self, m: ToolMessage) {
        Arc::make_mut(&mut self.agent).push(Message::Tool(m));
        self.blocked = true;
    }

    /// A guide's guidance before the agent's next output: a user-role message of the
    /// agent's view only (marked with [`GUIDANCE_PREFIX`]); the trajectory and the user never
    /// see it, and the agent's view is kept beside the trajectory.
    pub(crate) fn push_guidance(&mut self, text: &str) {
        Arc::make_mut(&mut self.agent).push(Message::User(ParticipantMessage {
            content: Some(format!("{GUIDANCE_PREFIX}{text}")),
            ..Default::default()
        }));
        self.blocked = true;
    }

    /// Trajectory messages so far.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Cuts the calls in `blocked` out of the agent message at trajectory position `idx`,
    /// once all its calls are settled. Its executed calls and its text stay; a message left
    /// with neither leaves the trajectory altogether (returns `true`). A message left with
    /// text only is the agent's text turn in the trajectory, so the user sees it. The agent's
    /// view keeps the message whole.
    pub(crate) fn cut_blocked_calls(&mut self, idx: usize, blocked: &[&str]) -> bool {
        if blocked.is_empty() {
            return false;
        }
        let Message::Assistant(a) = self.at(idx) else {
            return false;
        };
        let kept: Vec<_> = a
            .tool_calls
            .iter()
            .flatten()
            .filter(|c| !blocked.contains(&c.id.as_str()))
            .cloned()
            .collect();
        if kept.is_empty() && !a.has_text() {
            self.entries.remove(idx);
            return true;
        }
        let executed = Message::Assistant(ParticipantMessage {
            tool_calls: (!kept.is_empty()).then_some(kept),
            ..a.clone()
        });
        if let Some(v) = for_user(&executed) {
            Arc::make_mut(&mut self.user).push(v);
        }
        self.entries[idx] = Entry::Own(Box::new(executed));
        false
    }

    /// The trajectory in order, and — when a guard blocked a call — the agent's view beside
    /// it (system prompt excluded). Without a block, messages move out of the agent's view.
    pub(crate) fn into_trajectory(self) -> (Vec<Message>, Option<Vec<Message>>) {
        let mut agent = Arc::try_unwrap(self.agent).unwrap_or_else(|shared| (*shared).clone());
        if self.blocked {
            let messages = self
                .entries
                .into_iter()
                .map(|e| match e {
                    Entry::Agent(i) => agent[i].clone(),
                    Entry::Own(m) => *m,
                })
                .collect();
            agent.remove(0);
            return (messages, Some(agent));
        }
        // When the agent saw every message (no user device calls), the trajectory is its
        // view behind the system prompt: no second vector.
        let all_seen = self.entries.len() + 1 == agent.len()
            && self
                .entries
                .iter()
                .enumerate()
                .all(|(k, e)| matches!(e, Entry::Agent(i) if *i == k + 1));
        if all_seen {
            agent.remove(0);
            return (agent, None);
        }
        let messages = self
            .entries
            .into_iter()
            .map(|e| match e {
                Entry::Agent(i) => {
                    std::mem::replace(&mut agent[i], Message::System { content: None })
                }
                Entry::Own(m) => *m,
            })
            .collect();
        (messages, None)
    }
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

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: serde_json::json!({"reservation_id": id})
                .as_object()
                .unwrap()
                .clone(),
            requestor: Requestor::Assistant,
        }
    }

    fn result(id: &str, content: &str, blocked: bool) -> ToolMessage {
        ToolMessage {
            id: id.into(),
            content: content.into(),
            requestor: Requestor::Assistant,
            error: blocked,
            turn_idx: None,
            timestamp: None,
            guard_blocked: blocked,
        }
    }

    fn text(m: &Message) -> Option<&str> {
        m.content()
    }

    /// Runs one agent message through the conversation as the simulation loop does: each
    /// call settled in order (blocked ones answered by their remediation), then the blocked
    /// calls cut. Returns whether the message left the trajectory.
    fn settle(conv: &mut Conversation, msg: ParticipantMessage, blocked: &[&str]) -> bool {
        conv.push(Message::Assistant(msg));
        let idx = conv.last_idx().unwrap();
        let calls = conv.at(idx).tool_calls().to_vec();
        for c in &calls {
            if blocked.contains(&c.id.as_str()) {
                conv.push_remediation(result(&c.id, &format!("fix {}", c.id), true));
            } else {
                conv.push(Message::Tool(result(&c.id, "ok", false)));
            }
        }
        conv.cut_blocked_calls(idx, blocked)
    }

    #[test]
    fn a_blocked_call_stays_in_the_agents_view_only() {
        let mut conv = Conversation::new(&Arc::from("sys-a"), &Arc::from("sys-u"), Vec::new());
        conv.push(Message::User(ParticipantMessage {
            content: Some("cancel both".into()),
            ..Default::default()
        }));
        // Two calls, the second blocked, with text beside them: the text and the executed
        // call stay, the blocked call goes.
        let dropped = settle(
            &mut conv,
            ParticipantMessage {
                content: Some("Cancelling now.".into()),
                tool_calls: Some(vec![
                    call("c1", "cancel_reservation"),
                    call("c2", "cancel_reservation"),
                ]),
                ..Default::default()
            },
            &["c2"],
        );
        assert!(!dropped);
        // A call-only message whose every call is blocked leaves the trajectory.
        let dropped = settle(
            &mut conv,
            ParticipantMessage {
                tool_calls: Some(vec![call("c3", "book_reservation")]),
                ..Default::default()
            },
            &["c3"],
        );
        assert!(dropped);
        // Text beside a call that is blocked alone: the message stays as a text turn, which
        // the user now sees.
        let dropped = settle(
            &mut conv,
            ParticipantMessage {
                content: Some("Booking it.".into()),
                tool_calls: Some(vec![call("c4", "book_reservation")]),
                ..Default::default()
            },
            &["c4"],
        );
        assert!(!dropped);
        let agent_sent = conv.agent.clone();
        let user_sent = conv.user.clone();
        let (trajectory, agent) = conv.into_trajectory();

        // The trajectory: executed calls and their results only.
        let ids: Vec<&str> = trajectory
            .iter()
            .flat_map(|m| m.tool_calls())
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(ids, ["c1"]);
        assert_eq!(trajectory.len(), 4, "{trajectory:?}");
        assert_eq!(text(&trajectory[1]), Some("Cancelling now."));
        assert!(matches!(&trajectory[2], Message::Tool(t) if t.id == "c1" && !t.guard_blocked));
        let Message::Assistant(last) = &trajectory[3] else {
            panic!("the text turn stays: {trajectory:?}");
        };
        assert_eq!(last.content.as_deref(), Some("Booking it."));
        assert!(last.tool_calls.is_none());
        assert!(
            !trajectory
                .iter()
                .any(|m| matches!(m, Message::Tool(t) if t.guard_blocked))
        );

        // The agent's view: every call it made, each blocked one answered by its remediation.
        let agent = agent.expect("a block keeps the agent's view");
        assert_eq!(agent.as_slice(), &agent_sent[1..]);
        let seen: Vec<(&str, &str)> = agent
            .iter()
            .filter_map(|m| match m {
                Message::Tool(t) => Some((t.id.as_str(), t.content.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("c1", "ok"),
                ("c2", "fix c2"),
                ("c3", "fix c3"),
                ("c4", "fix c4")
            ]
        );
        let attempted: Vec<&str> = agent
            .iter()
            .flat_map(|m| m.tool_calls())
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(attempted, ["c1", "c2", "c3", "c4"]);

        // The user: its own text and the agent's text turns, never a call or a remediation.
        let user_texts: Vec<Option<&str>> = user_sent[1..].iter().map(text).collect();
        assert_eq!(user_texts, [Some("cancel both"), Some("Booking it.")]);
        assert_eq!(user_view("sys-u", &trajectory)[1..], user_sent[1..]);
    }

    #[test]
    fn without_a_block_the_trajectory_is_the_agents_view() {
        let mut conv = Conversation::new(&Arc::from("sys-a"), &Arc::from("sys-u"), Vec::new());
        let dropped = settle(
            &mut conv,
            ParticipantMessage {
                tool_calls: Some(vec![call("c1", "cancel_reservation")]),
                ..Default::default()
            },
            &[],
        );
        assert!(!dropped);
        let agent_sent = conv.agent.clone();
        let (trajectory, agent) = conv.into_trajectory();
        assert!(agent.is_none());
        assert_eq!(trajectory.as_slice(), &agent_sent[1..]);
    }
}
