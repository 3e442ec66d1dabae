//! The scripted `ChatModel` the verifier and guide tests talk to: replies from a queue in
//! order, every request kept, two marker replies standing for a rejected key and a refused
//! connection, and each model's fixed usage, cost and latency per reply.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tauguard_core::message::Usage;
use tauguard_llm::LlmError;
use tauguard_llm::{BoxFuture, ChatModel, ChatRequest, ChatResponse};

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
}

pub(crate) struct ScriptedModel {
    profile: Profile,
    replies: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    fn new(profile: Profile, replies: &[&str]) -> Arc<ScriptedModel> {
        Arc::new(ScriptedModel {
            profile,
            replies: Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// The LLM guide's verifier model (`mock/guide-1`).
    pub(crate) fn guide(replies: &[&str]) -> Arc<ScriptedModel> {
        let usage = [5000, 120, 4096];
        let profile = Profile::of("mock/guide-1", "guide-1", usage, 0.003, 250, false);
        ScriptedModel::new(profile, replies)
    }

    /// The PolicyGuard verifier's model (`mock/verifier-1`).
    pub(crate) fn verifier(replies: &[&str]) -> Arc<ScriptedModel> {
        let usage = [1000, 100, 800];
        let profile = Profile::of(
            "mock/verifier-1",
            "mock/verifier-1",
            usage,
            0.002,
            500,
            true,
        );
        ScriptedModel::new(profile, replies)
    }

    pub(crate) fn seen(&self) -> Vec<ChatRequest> {
        self.seen.lock().unwrap().clone()
    }

    pub(crate) fn left(&self) -> usize {
        self.replies.lock().unwrap().len()
    }

    fn connection(&self, message: &str) -> LlmError {
        LlmError::Connection {
            provider: "mock".into(),
            model: self.profile.error_model.into(),
            message: message.into(),
        }
    }

    /// The next scripted reply, or the error its marker stands for.
    fn next_reply(&self) -> Result<String, LlmError> {
        let next = self.replies.lock().unwrap().pop_front();
        let reply = match next {
            Some(reply) => reply,
            None if self.profile.exhausted_is_error => {
                return Err(self.connection("no scripted reply left"));
            }
            None => panic!("{}: no scripted reply left", self.profile.id),
        };
        match reply.as_str() {
            FATAL => Err(LlmError::Rejected {
                provider: "mock".into(),
                model: self.profile.error_model.into(),
                status: 401,
                body: "invalid api key".into(),
                should_retry: None,
            }),
            DOWN => Err(self.connection("connection refused")),
            _ => Ok(reply),
        }
    }
}

impl ChatModel for ScriptedModel {
    fn id(&self) -> &str {
        self.profile.id
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(req.clone());
            let reply = self.next_reply()?;
            Ok(ChatResponse {
                content: Some(reply),
                tool_calls: Vec::new(),
                usage: self.profile.usage,
                cost: Some(self.profile.cost),
                latency: self.profile.latency,
                original_latency_seconds: None,
                cache_hit: false,
                attempts: 1,
                finish_reason: Some("stop".into()),
                provider_model: None,
            })
        })
    }
}
