//! Offline behaviours that exercise recovery: how the sim user answers a confirmation request
//! (it may decline, hesitate, or correct a detail before saying yes) and the labels of every
//! such event in a finished conversation. Draws are keyed by (task, trial, seed, request
//! index), so a run is reproducible; with every probability at zero nothing is drawn
//! differently and the user always confirms, as before these behaviours existed.

use crate::phrases;
use crate::rng::{ProbabilityError, SimRng, check_probabilities};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tauguard_core::dialogue::asks_for_confirmation;
use tauguard_core::message::Message;
use tauguard_core::record::InjectedFault;

/// `[models.user.behaviour]`: per confirmation request, the probabilities that the sim user
/// declines, else hesitates, else corrects a detail (drawn in that order). All zero = it
/// always confirms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserBehaviour {
    /// Turns the action down ("No, I don't want to go ahead with that.").
    #[serde(default)]
    pub decline: f64,
    /// Hesitates first ("let me think…"), says yes when asked again.
    #[serde(default)]
    pub hesitate: f64,
    /// Corrects a detail of the summary first, says yes when asked again.
    #[serde(default)]
    pub correct: f64,
}

impl UserBehaviour {
    /// Checks every probability is within [0, 1]; names the offending field.
    pub fn validate(&self) -> Result<(), ProbabilityError> {
        check_probabilities("behaviour", self)
    }
}

/// Event kinds, as labelled in records (`behaviour_events`).
pub const USER_DECLINED: &str = "user_declined";
pub const USER_HESITATED: &str = "user_hesitated";
pub const USER_CORRECTED: &str = "user_corrected";
pub const RETRY_UNCHANGED: &str = "retry_unchanged";
pub const ABANDON_AFTER_BLOCK: &str = "abandon_after_block";

/// How the user answers one confirmation request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    Decline,
    Hesitate,
    Correct,
}

impl UserBehaviour {
    /// The answer to confirmation request `index` (0-based, re-asks not counted).
    pub fn answer(&self, task: &str, trial: u32, seed: u64, index: usize) -> Answer {
        let mut rng = SimRng::keyed(&format!("user-behaviour:{task}:{index}"), trial, seed);
        if rng.chance(self.decline) {
            Answer::Decline
        } else if rng.chance(self.hesitate) {
            Answer::Hesitate
        } else if rng.chance(self.correct) {
            Answer::Correct
        } else {
            Answer::Yes
        }
    }
}

/// The JSON arguments of a sim-agent summary ("`tool` with {...}."), if it has them.
pub(crate) fn summary_call(text: &str) -> Option<(String, Map<String, Value>)> {
    let start = text.find('`')? + 1;
    let end = start + text[start..].find('`')?;
    let tool = text[start..end].to_string();
    let rest = &text[end..];
    let brace = rest.find('{')?;
    let mut de =
        serde_json::Deserializer::from_str(&rest[brace..]).into_iter::<Map<String, Value>>();
    let args = de.next()?.ok()?;
    Some((tool, args))
}

/// The user's correction of the summary `text`: it restates the first argument's value.
pub(crate) fn correction(text: &str) -> String {
    match summary_call(text).and_then(|(_, a)| a.into_iter().next()) {
        Some((k, v)) => format!("{} `{k}` should be {v}.", phrases::CORRECTION_PREFIX),
        None => format!(
            "{} please double-check the details I gave you.",
            phrases::CORRECTION_PREFIX
        ),
    }
}

/// The sim user's behaviour events in a conversation (agent-side view: the user's messages
/// are `user`): one per decline, hesitation and correction, naming the tool summarised.
pub fn user_events(messages: &[Message]) -> Vec<InjectedFault> {
    let mut out = Vec::new();
    let mut last_summary: Option<String> = None;
    for m in messages {
        match m {
            Message::Assistant(a) => {
                if let Some(t) = a.content.as_deref().filter(|t| asks_for_confirmation(t)) {
                    last_summary = Some(t.to_string());
                }
            }
            Message::User(u) => {
                let Some(text) = u.content.as_deref() else {
                    continue;
                };
                let kind = if text == phrases::DECLINE_ANSWER {
                    USER_DECLINED
                } else if text == phrases::HESITATE_ANSWER {
                    USER_HESITATED
                } else if text.starts_with(phrases::CORRECTION_PREFIX) {
                    USER_CORRECTED
                } else {
                    continue;
                };
                out.push(InjectedFault {
                    kind: kind.into(),
                    call_id: None,
                    tool: last_summary
                        .as_deref()
                        .and_then(summary_call)
                        .map(|(t, _)| t),
                    detail: text.to_string(),
                    at_message: None,
                });
            }
            _ => {}
        }
    }
    out
}
