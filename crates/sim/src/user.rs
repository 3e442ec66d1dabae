//! The sim user: plays the task's scenario. It opens with the reason for the call, gives its
//! known information when asked to identify itself, confirms pending changes (or, with a
//! [`UserBehaviour`], declines, hesitates or corrects a detail first), performs the
//! device actions the agent asks for (telecom), and stops when the agent closes, refuses or
//! transfers. Its view is role-flipped as upstream's user simulator sees it: its own messages
//! are `assistant`, the agent's are `user`, its device results are `tool`.

use crate::SimTurn;
use crate::behaviour::{Answer, UserBehaviour, correction};
use crate::phrases::{self, CLOSING_CUES, IDENTITY_CUES, TRANSFER_CUES, contains_any};
use serde_json::{Map, Value};
use tauguard_core::Task;
use tauguard_core::dialogue::asks_for_confirmation;
use tauguard_core::message::Message;
use tauguard_core::task::Instructions;

/// The sim user gives up after this many of its own messages, so two scripted parties
/// that misunderstand each other still end before the step limit. The longest telecom gold,
/// with the troubleshooting workflow's check before and after each fix, needs about 30.
pub const MAX_USER_MESSAGES: usize = 45;

#[derive(Debug, Clone)]
pub struct SimUser {
    reason: String,
    known_info: Option<String>,
    /// Device tools the user can run (telecom), by name.
    device_tools: Vec<String>,
    task_id: String,
    trial: u32,
    seed: u64,
    behaviour: UserBehaviour,
}

impl SimUser {
    pub fn new(task: &Task, device_tools: Vec<String>) -> SimUser {
        let (reason, known_info) = match &task.user_scenario.instructions {
            Instructions::Structured(s) => (s.reason_for_call.clone(), s.known_info.clone()),
            Instructions::Plain(p) => (p.clone(), None),
        };
        SimUser {
            reason,
            known_info,
            device_tools,
            task_id: task.id.clone(),
            trial: 0,
            seed: 0,
            behaviour: UserBehaviour::default(),
        }
    }

    /// Answers confirmation requests with `behaviour`, drawn per (task, `trial`, `seed`,
    /// request index).
    pub fn with_behaviour(mut self, behaviour: UserBehaviour, trial: u32, seed: u64) -> SimUser {
        self.behaviour = behaviour;
        self.trial = trial;
        self.seed = seed;
        self
    }

    /// The user's next turn given its (role-flipped) view.
    pub fn respond(&self, view: &[Message]) -> SimTurn {
        // Its own text messages (device tool calls are actions, not conversation turns).
        let own = view
            .iter()
            .filter(|m| matches!(m, Message::Assistant(a) if !a.is_tool_call()))
            .count();
        let last = view
            .iter()
            .rev()
            .find(|m| !matches!(m, Message::System { .. }));
        if own == 0 {
            return SimTurn::Say(self.reason.trim().to_string());
        }
        if own >= MAX_USER_MESSAGES {
            return SimTurn::Say(format!("I have to go now. {}", phrases::STOP));
        }
        let text = match last {
            Some(Message::Tool(t)) => {
                return SimTurn::Say(format!("Done. My phone shows: {}", t.content));
            }
            Some(Message::User(m)) => m.content.clone().unwrap_or_default(),
            _ => String::new(),
        };
        if contains_any(&text, TRANSFER_CUES) {
            return SimTurn::Say(phrases::TRANSFER_TOKEN.into());
        }
        if let Some(turn) = self.device_action(&text) {
            return turn;
        }
        if asks_for_confirmation(&text) {
            return SimTurn::Say(self.confirm(view, &text));
        }
        if contains_any(&text, IDENTITY_CUES) {
            return SimTurn::Say(match &self.known_info {
                Some(k) => k.trim().to_string(),
                None => "I don't have that information.".into(),
            });
        }
        if contains_any(&text, CLOSING_CUES) {
            return SimTurn::Say(format!("No, that's all. Thank you! {}", phrases::STOP));
        }
        SimTurn::Say(format!(
            "Could you please help me with this? {}",
            self.reason.trim()
        ))
    }

    /// The answer to a confirmation request: a re-ask gets a yes; a first request gets the
    /// drawn answer of its index (the confirmation requests before it, re-asks not counted).
    fn confirm(&self, view: &[Message], text: &str) -> String {
        if text.starts_with(phrases::REASK_PREFIX) {
            return phrases::YES_AFTER_ALL.into();
        }
        let index = view
            .iter()
            .filter(|m| match m {
                Message::User(a) => a.content.as_deref().is_some_and(|t| {
                    asks_for_confirmation(t) && !t.starts_with(phrases::REASK_PREFIX)
                }),
                _ => false,
            })
            .count()
            .saturating_sub(1);
        match self
            .behaviour
            .answer(&self.task_id, self.trial, self.seed, index)
        {
            Answer::Yes => phrases::CONFIRM_ANSWER.into(),
            Answer::Decline => phrases::DECLINE_ANSWER.into(),
            Answer::Hesitate => phrases::HESITATE_ANSWER.into(),
            Answer::Correct => correction(text),
        }
    }

    /// A device action the agent asked for: a backticked tool name (the sim agent's form) or
    /// the tool's name in words ("toggle airplane mode").
    fn device_action(&self, text: &str) -> Option<SimTurn> {
        let lower = text.to_lowercase();
        let tool = self
            .device_tools
            .iter()
            .find(|t| text.contains(&format!("`{t}`")) || lower.contains(&t.replace('_', " ")))?;
        let arguments = text
            .find("with arguments ")
            .and_then(|i| {
                let rest = &text[i + "with arguments ".len()..];
                let mut de =
                    serde_json::Deserializer::from_str(rest).into_iter::<Map<String, Value>>();
                de.next().and_then(Result::ok)
            })
            .unwrap_or_default();
        Some(SimTurn::Call {
            name: tool.clone(),
            arguments,
        })
    }
}
