//! A scripted `ChatModel` for the tests of the crates that call models (compile, guards,
//! orchestrator): each request is answered by the test's own function, from the next of the
//! replies it was given (or from the request itself), and every request is kept for the test to
//! read. The one model means the trait is implemented once, and each test says only how it
//! answers.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tauguard_core::message::Usage;
use tauguard_llm::{BoxFuture, ChatModel, ChatRequest, ChatResponse, LlmError};

/// How a scripted model answers: given the next scripted reply (`None` once the script is
/// used up) and the request.
pub type Answer =
    dyn Fn(Option<String>, &ChatRequest) -> Result<ChatResponse, LlmError> + Send + Sync;

/// A model answering from a script through the test's [`Answer`], keeping every request.
pub struct ScriptedModel {
    id: String,
    replies: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<ChatRequest>>,
    answer: Box<Answer>,
}

/// Opaque but for its id and how far the script has got: the answer is the test's code.
impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("id", &self.id)
            .field("left", &self.left())
            .field("seen", &self.seen.lock().unwrap().len())
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    pub fn new(
        id: impl Into<String>,
        replies: &[&str],
        answer: impl Fn(Option<String>, &ChatRequest) -> Result<ChatResponse, LlmError>
        + Send
        + Sync
        + 'static,
    ) -> Arc<ScriptedModel> {
        Arc::new(ScriptedModel {
            id: id.into(),
            replies: Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
            seen: Mutex::new(Vec::new()),
            answer: Box::new(answer),
        })
    }

    /// Every request sent so far, in order.
    pub fn seen(&self) -> Vec<ChatRequest> {
        self.seen.lock().unwrap().clone()
    }

    /// How many scripted replies are left.
    pub fn left(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

impl ChatModel for ScriptedModel {
    fn id(&self) -> &str {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(req.clone());
            let reply = self.replies.lock().unwrap().pop_front();
            (self.answer)(reply, req)
        })
    }
}

/// A one-attempt, uncached reply of `content` that stopped by itself, with its usage, cost
/// and latency.
pub fn text_reply(
    content: String,
    usage: Usage,
    cost: Option<f64>,
    latency: Duration,
) -> ChatResponse {
    ChatResponse {
        content: Some(content),
        tool_calls: Vec::new(),
        usage,
        cost,
        latency,
        original_latency_seconds: None,
        cache_hit: false,
        attempts: 1,
        finish_reason: Some("stop".into()),
        provider_model: None,
    }
}
