//! The scripted models the verifier and guide tests talk to (testkit's `ScriptedModel`): two
//! marker replies standing for a rejected key and a refused connection, and each model's fixed
//! usage, cost and latency per reply.

use std::sync::Arc;
use std::time::Duration;
use tauguard_core::message::Usage;
use tauguard_llm::{ChatResponse, LlmError};
pub(crate) use tauguard_testkit::scripted::ScriptedModel;
use tauguard_testkit::scripted::text_reply;

/// A scripted reply that makes the model fail with HTTP 401 (fatal).
pub(crate) const FATAL: &str = "<401>";
/// A scripted reply that makes the model fail with a connection error (not fatal).
pub(crate) const DOWN: &str = "<down>";

/// What a scripted model is: its id, the model name its errors carry, what each reply costs,
/// and whether running out of replies is a connection error (a verifier test that scripts
/// too few) or a broken test (a guide test scripts every call).
struct Profile {
    id: &'static str,
    error_model: &'static str,
    usage: Usage,
    cost: f64,
    latency: Duration,
    exhausted_is_error: bool,
}

impl Profile {
    /// `usage` is prompt, completion and cached prompt tokens; `latency_ms` in milliseconds.
    fn of(
        id: &'static str,
        error_model: &'static str,
        usage: [u64; 3],
        cost: f64,
        latency_ms: u64,
        exhausted_is_error: bool,
    ) -> Profile {
        let [prompt_tokens, completion_tokens, cached_prompt_tokens] = usage;
        Profile {
            id,
            error_model,
            usage: Usage {
                prompt_tokens,
                completion_tokens,
                cached_prompt_tokens,
            },
            cost,
            latency: Duration::from_millis(latency_ms),
            exhausted_is_error,
        }
    }

    fn connection(&self, message: &str) -> LlmError {
        LlmError::Connection {
            provider: "mock".into(),
            model: self.error_model.into(),
            message: message.into(),
        }
    }

    /// The answer to the next scripted reply: the reply, or the error its marker stands for.
    fn answer(&self, next: Option<String>) -> Result<ChatResponse, LlmError> {
        let reply = match next {
            Some(reply) => reply,
            None if self.exhausted_is_error => {
                return Err(self.connection("no scripted reply left"));
            }
            None => panic!("{}: no scripted reply left", self.id),
        };
        match reply.as_str() {
            FATAL => Err(LlmError::Rejected {
                provider: "mock".into(),
                model: self.error_model.into(),
                status: 401,
                body: "invalid api key".into(),
                should_retry: None,
            }),
            DOWN => Err(self.connection("connection refused")),
            _ => Ok(text_reply(reply, self.usage, Some(self.cost), self.latency)),
        }
    }

    fn model(self, replies: &[&str]) -> Arc<ScriptedModel> {
        ScriptedModel::new(self.id, replies, move |next, _| self.answer(next))
    }
}

/// The LLM guide's verifier model (`mock/guide-1`).
pub(crate) fn guide_model(replies: &[&str]) -> Arc<ScriptedModel> {
    let usage = [5000, 120, 4096];
    Profile::of("mock/guide-1", "guide-1", usage, 0.003, 250, false).model(replies)
}

/// The PolicyGuard verifier's model (`mock/verifier-1`).
pub(crate) fn verifier_model(replies: &[&str]) -> Arc<ScriptedModel> {
    let usage = [1000, 100, 800];
    Profile::of(
        "mock/verifier-1",
        "mock/verifier-1",
        usage,
        0.002,
        500,
        true,
    )
    .model(replies)
}
