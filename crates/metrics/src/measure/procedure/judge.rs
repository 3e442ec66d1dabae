//! Who decides a dialogue predicate the deterministic matchers cannot: an NL judge. The
//! default is the offline stand-in, which only looks for the requirement's cue phrases in the
//! agent's messages and says nothing (leaves the predicate unjudged) when the spec gives none.
//! A model-backed judge implements the same trait in a crate that may call models (the cli's
//! `--process-judge`).

use super::spec::Predicate;
use serde::Serialize;
use tauguard_core::message::Message;

/// Which judge decided a requirement on a trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeKind {
    /// A deterministic matcher over calls, results and the confirmation vocabulary.
    Deterministic,
    /// The offline stand-in ([`StandInJudge`]).
    StandIn,
    /// A language model (the cli's `--process-judge`).
    Model,
    /// No judge could decide it (the stand-in without cues).
    Unjudged,
}

/// A judge of dialogue predicates.
pub trait DialogueJudge: Sync {
    fn kind(&self) -> JudgeKind;
    /// Simulations whose predicates may be judged at once (a model's configured concurrency
    /// bound): callers evaluate that many simulations in parallel, keeping their order.
    fn concurrency(&self) -> usize {
        1
    }
    /// Whether `predicate` (phrased as `question`) holds over `transcript`; `None` = cannot say.
    fn judge(
        &self,
        predicate: Predicate,
        question: &str,
        cues: &[String],
        transcript: &[Message],
    ) -> Option<bool>;
}

/// The offline stand-in: met when some agent message of the transcript contains one of the
/// requirement's cues (lowercase substring match), not met when none does, unjudged without
/// cues. It is not an NL judge: a denial phrased without a cue reads as missing.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandInJudge;

impl DialogueJudge for StandInJudge {
    fn kind(&self) -> JudgeKind {
        JudgeKind::StandIn
    }

    fn judge(
        &self,
        _predicate: Predicate,
        _question: &str,
        cues: &[String],
        transcript: &[Message],
    ) -> Option<bool> {
        if cues.is_empty() {
            return None;
        }
        Some(transcript.iter().any(|m| match m {
            Message::Assistant(a) => a.content.as_deref().is_some_and(|t| {
                let t = t.to_lowercase();
                cues.iter().any(|c| t.contains(c.as_str()))
            }),
            _ => false,
        }))
    }
}
