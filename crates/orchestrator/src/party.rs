//! A side of the conversation a model plays — the agent or the user simulator — and the
//! accounting of its calls. Kept apart from the loop in [`crate::simulation`], which drives
//! both parties. A reply cut at its token limit is counted in the party's usage and, for the
//! agent, handled as `[run] truncated_replies` says: recorded as it came, the end of the
//! simulation, or asked once more with a larger limit.

use crate::config::TruncatedReplies;
use crate::simulation::{Sampling, SimulationError, SimulationSpec, now_timestamp};
use std::sync::Arc;
use tauguard_core::message::{Message, ParticipantMessage, TokenLimitRetry};
use tauguard_core::record::RoleUsage;
use tauguard_llm::LlmError;
use tauguard_llm::{ChatModel, ChatRequest, ChatResponse};
use tauguard_llm::{add_response, add_unusable};

/// The most tokens a retry of a cut reply asks for: twice the cut reply's limit, but never
/// more than this, the output ceiling of most current models (GPT-4.1 32,768; several
/// OpenAI-compatible servers refuse larger requests outright), so the retry itself is not
/// rejected as invalid.
pub(crate) const RETRY_MAX_TOKENS: u32 = 32_768;

/// A reply cut at its token limit: what it said and what the limit was.
#[derive(Debug, Clone, PartialEq)]
pub struct CutReply {
    /// The provider's stop reason (`length`, `max_tokens`, `MAX_TOKENS`).
    pub finish_reason: String,
    pub completion_tokens: u64,
    /// The request's token limit; `None` when it set none and the server's own applied.
    pub max_tokens: Option<u32>,
    /// The reply's text, when it had any.
    pub content: Option<String>,
    /// The reply's first tool call and its arguments as text (raw when they did not parse).
    pub tool: Option<String>,
    pub arguments: Option<String>,
}

impl std::fmt::Display for CutReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "reply cut at its token limit (finish reason `{}`, {} completion tokens",
            self.finish_reason, self.completion_tokens
        )?;
        match self.max_tokens {
            Some(m) => write!(f, " of max_tokens {m})"),
            None => write!(f, "; no max_tokens was sent)"),
        }
    }
}

impl CutReply {
    /// The cut reply of a call's outcome, when the token limit cut it: a reply, or an
    /// unusable one (tool arguments cut mid-object, nothing but hidden reasoning).
    fn of(outcome: &Result<ChatResponse, LlmError>, max_tokens: Option<u32>) -> Option<CutReply> {
        match outcome {
            Ok(r) if r.truncated() => {
                let first = r.tool_calls.first();
                Some(CutReply {
                    finish_reason: r.finish_reason.clone().unwrap_or_default(),
                    completion_tokens: r.usage.completion_tokens,
                    max_tokens,
                    content: r.content.clone(),
                    tool: first.map(|c| c.name.clone()),
                    arguments: first
                        .map(|c| serde_json::Value::Object(c.arguments.clone()).to_string()),
                })
            }
            Err(e) if e.truncated() => {
                let (finish_reason, tool, arguments) = match e {
                    LlmError::MalformedToolArguments(m) => (
                        m.finish_reason.clone(),
                        Some(m.tool.clone()),
                        Some(m.raw.clone()),
                    ),
                    LlmError::EmptyResponse { finish_reason, .. } => {
                        (finish_reason.clone(), None, None)
                    }
                    _ => (None, None, None),
                };
                Some(CutReply {
                    finish_reason: finish_reason.unwrap_or_default(),
                    completion_tokens: e.spent().map_or(0, |s| s.usage.completion_tokens),
                    max_tokens,
                    content: None,
                    tool,
                    arguments,
                })
            }
            _ => None,
        }
    }

    /// The limit a retry asks for: twice the cut reply's (its completion tokens when the
    /// request set none), at most [`RETRY_MAX_TOKENS`]; `None` when that is no larger.
    fn retry_limit(&self) -> Option<u32> {
        let base = self.max_tokens.map_or(self.completion_tokens, u64::from);
        let next = (base * 2).min(u64::from(RETRY_MAX_TOKENS));
        (next > base).then_some(next as u32)
    }
}

/// A side of the conversation a model plays. Its request serves every call of the
/// simulation: a call points it at the party's current view, and afterwards it points at
/// `idle` again, so the view has one owner and appending to it copies nothing.
pub(crate) struct Party<'a> {
    role: &'static str,
    model: &'a dyn ChatModel,
    req: ChatRequest,
    idle: Arc<Vec<Message>>,
    truncated: TruncatedReplies,
}

impl<'a> Party<'a> {
    pub(crate) fn new(
        role: &'static str,
        model: &'a dyn ChatModel,
        sampling: &Sampling,
        tools: Arc<[tauguard_core::ToolSpec]>,
        spec: &SimulationSpec<'_>,
    ) -> Party<'a> {
        let idle = Arc::new(Vec::new());
        let req = ChatRequest {
            temperature: sampling.temperature,
            max_tokens: sampling.max_tokens,
            seed: Some(spec.seed),
            trial: spec.trial,
            ..ChatRequest::new("", Arc::clone(&idle)).with_tools(tools)
        };
        Party {
            role,
            model,
            req,
            idle,
            truncated: sampling.truncated,
        }
    }

    /// One call with the request as it stands, counted in `usage` (an unusable reply was
    /// billed: it counts too).
    async fn call(&self, usage: &mut RoleUsage) -> Result<ChatResponse, LlmError> {
        let r = self.model.complete(&self.req).await;
        match &r {
            Ok(r) => add_response(usage, r),
            Err(e) => add_unusable(usage, e),
        }
        r
    }

    /// The party's next message, time-stamped, given its view. A failed call and an empty
    /// message are errors (the caller retries the whole simulation), and so is a cut reply
    /// under `truncated_replies = "agent_error"`.
    pub(crate) async fn ask(
        &mut self,
        view: &Arc<Vec<Message>>,
        usage: &mut RoleUsage,
    ) -> Result<ParticipantMessage, SimulationError> {
        self.req.messages = Arc::clone(view);
        let mut r = self.call(usage).await;
        let mut retried = None;
        let cut = match self.truncated {
            TruncatedReplies::Record => None,
            _ => CutReply::of(&r, self.req.max_tokens),
        };
        if let Some(cut) = cut {
            match (self.truncated, cut.retry_limit()) {
                (TruncatedReplies::AgentError, _) => {
                    self.req.messages = Arc::clone(&self.idle);
                    return Err(SimulationError::TruncatedReply {
                        role: self.role,
                        reply: Box::new(cut),
                    });
                }
                (TruncatedReplies::Retry, Some(limit)) => {
                    let sent = self.req.max_tokens.replace(limit);
                    usage.truncation_retries += 1;
                    r = self.call(usage).await;
                    self.req.max_tokens = sent;
                    retried = Some(TokenLimitRetry {
                        max_tokens: cut.max_tokens,
                        finish_reason: cut.finish_reason,
                        completion_tokens: cut.completion_tokens,
                        retry_max_tokens: limit,
                    });
                }
                // Nothing larger to ask for: the cut reply stands.
                _ => {}
            }
        }
        self.req.messages = Arc::clone(&self.idle);
        let r = r.map_err(|cause| SimulationError::Model {
            role: self.role,
            cause,
        })?;
        if !r.has_text() && r.tool_calls.is_empty() {
            return Err(SimulationError::EmptyMessage(self.role));
        }
        let mut msg = r.into_participant_message();
        msg.token_limit_retry = retried;
        msg.timestamp = Some(now_timestamp());
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(max_tokens: Option<u32>, completion_tokens: u64) -> CutReply {
        CutReply {
            finish_reason: "length".into(),
            completion_tokens,
            max_tokens,
            content: None,
            tool: None,
            arguments: None,
        }
    }

    #[test]
    fn a_retry_asks_for_twice_the_limit_up_to_the_cap() {
        assert_eq!(cut(Some(160), 160).retry_limit(), Some(320));
        // No limit was sent: what the server's own limit allowed, doubled.
        assert_eq!(cut(None, 4096).retry_limit(), Some(8192));
        assert_eq!(
            cut(Some(20_000), 20_000).retry_limit(),
            Some(RETRY_MAX_TOKENS)
        );
        // Nothing larger to ask for.
        assert_eq!(cut(Some(RETRY_MAX_TOKENS), 100).retry_limit(), None);
        assert_eq!(cut(None, 0).retry_limit(), None);
    }

    #[test]
    fn the_error_text_names_the_stop_reason_and_the_limit() {
        assert_eq!(
            cut(None, 4096).to_string(),
            "reply cut at its token limit (finish reason `length`, 4096 completion tokens; no max_tokens was sent)"
        );
    }
}
