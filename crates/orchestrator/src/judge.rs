//! The NL-assertion judge (§7.5): one model call that rules on every expected outcome of a
//! task given the conversation. The prompt texts are ours; the layout (conversation as
//! `<role>: <content>` lines, outcomes as a Python list literal, a JSON object reply) is
//! upstream's. An unparseable reply is an error: upstream restarts the simulation on it.
//!
//! The request sets no sampling parameters: the judge's model spec (`[models.judge]`) decides
//! them, and they reach the request through the built model. Forcing `temperature 0.0` here
//! made reasoning models (gpt-5.x, o-series) and Claude with thinking answer HTTP 400.

use crate::evaluate::{NlCheck, render_for_judge};
use serde_json::Value;
use tauguard_core::Message;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::pyjson::str_repr;
use tauguard_core::record::RoleUsage;
use tauguard_llm::{ChatModel, ChatRequest};

const SYSTEM: &str = "You judge whether a customer service conversation met a list of expected outcomes. \
You are given the expected outcomes and the conversation between an agent and a customer. Judge each \
expected outcome on its own, from what the conversation shows. Reply with a JSON object only: \
{\"results\": [{\"expectedOutcome\": \"...\", \"reasoning\": \"...\", \"metExpectation\": true or false}]}, \
one entry per expected outcome, in the given order.";

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("judge model")]
    Model(#[from] tauguard_llm::LlmError),
    /// The reply is not JSON at all.
    #[error("judge reply is not the expected JSON object")]
    Json(#[source] serde_json::Error),
    /// The reply is JSON of another shape.
    #[error("judge reply is not the expected JSON object: {0}")]
    Parse(String),
}

impl JudgeError {
    /// The reply could not be read (a fresh attempt may get a readable one).
    pub fn is_unreadable_reply(&self) -> bool {
        matches!(self, JudgeError::Json(_) | JudgeError::Parse(_))
    }
}

/// The stand-in judge's checks of `assertions` over `messages`: what a run with a `sim` judge
/// records, and what re-scoring such a run recomputes.
pub(crate) fn sim_checks(messages: &[Message], assertions: &[String]) -> Vec<NlCheck> {
    tauguard_sim::judge::sim_judge(messages, assertions)
        .into_iter()
        .zip(assertions)
        .map(|((met, justification), a)| NlCheck {
            nl_assertion: a.clone(),
            met,
            justification,
        })
        .collect()
}

/// Python list literal of the outcomes, as upstream prints them.
fn py_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| str_repr(s))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The judge's system and user messages for `assertions` over the conversation `messages`
/// (over none, the fixed part the dry run measures and `run --check` sends).
pub(crate) fn judge_messages(messages: &[Message], assertions: &[String]) -> Vec<Message> {
    let user = format!(
        "conversation:\n{}\n\nexpected outcomes:\n{}",
        render_for_judge(messages),
        py_list(assertions)
    );
    vec![
        Message::System {
            content: Some(SYSTEM.into()),
        },
        Message::User(ParticipantMessage {
            content: Some(user),
            ..Default::default()
        }),
    ]
}

/// Asks `model` to judge `assertions` against `messages`; returns the checks and usage.
pub async fn llm_judge(
    model: &dyn ChatModel,
    messages: &[Message],
    assertions: &[String],
    seed: u64,
    trial: u32,
) -> Result<(Vec<NlCheck>, RoleUsage), JudgeError> {
    let req = ChatRequest::new("", judge_messages(messages, assertions))
        .with_seed(seed)
        .with_trial(trial);
    let r = model.complete(&req).await?;
    let mut usage = RoleUsage::default();
    tauguard_llm::add_response(&mut usage, &r);
    let text = r.content.unwrap_or_default();
    Ok((parse_reply(&text)?, usage))
}

/// Parses `{"results": [...]}`; an empty list means every outcome is met (upstream).
pub(crate) fn parse_reply(text: &str) -> Result<Vec<NlCheck>, JudgeError> {
    let v: Value = serde_json::from_str(text.trim()).map_err(JudgeError::Json)?;
    let results = v
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| JudgeError::Parse("no `results` list".into()))?;
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let met = r
                .get("metExpectation")
                .and_then(Value::as_bool)
                .ok_or_else(|| {
                    JudgeError::Parse(format!("results[{i}].metExpectation is not a boolean"))
                })?;
            Ok(NlCheck {
                nl_assertion: r
                    .get("expectedOutcome")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                met,
                justification: r
                    .get("reasoning")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tauguard_llm::LlmError;
    use tauguard_llm::{BoxFuture, ChatResponse};

    /// Records the requests it gets; answers "every outcome met".
    struct Recorder(Mutex<Vec<ChatRequest>>);

    impl ChatModel for Recorder {
        fn id(&self) -> &str {
            "test/recorder"
        }

        fn complete<'a>(
            &'a self,
            req: &'a ChatRequest,
        ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
            if let Ok(mut seen) = self.0.lock() {
                seen.push(req.clone());
            }
            Box::pin(async {
                Ok(ChatResponse {
                    content: Some(r#"{"results": []}"#.into()),
                    tool_calls: Vec::new(),
                    usage: Default::default(),
                    cost: None,
                    latency: std::time::Duration::ZERO,
                    original_latency_seconds: None,
                    cache_hit: false,
                    attempts: 1,
                    finish_reason: None,
                    provider_model: None,
                })
            })
        }
    }

    #[tokio::test]
    async fn the_judge_leaves_sampling_to_its_spec() {
        let model = Recorder(Mutex::new(Vec::new()));
        llm_judge(&model, &[], &["refund issued".into()], 9, 2)
            .await
            .expect("judged");
        let seen = model.0.lock().expect("lock");
        assert_eq!(seen[0].temperature, None);
        assert_eq!(seen[0].max_tokens, None);
        assert_eq!((seen[0].seed, seen[0].trial), (Some(9), 2));
    }

    #[test]
    fn parses_upstream_shape_and_rejects_fences() {
        let ok = parse_reply(
            r#"{"results": [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": false}]}"#,
        )
        .unwrap();
        assert_eq!(ok.len(), 1);
        assert!(!ok[0].met);
        assert!(parse_reply("```json\n{\"results\": []}\n```").is_err());
        assert!(parse_reply(r#"{"results": [{"metExpectation": "yes"}]}"#).is_err());
        assert!(parse_reply(r#"{"results": []}"#).unwrap().is_empty());
        assert_eq!(py_list(&["it's".into(), "b".into()]), r#"["it's", 'b']"#);
    }
}
