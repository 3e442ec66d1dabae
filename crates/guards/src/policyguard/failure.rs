//! What a model-backed guard (the PolicyGuard verifier, the LLM guide) keeps when a reply
//! gives it no judgement and its fail mode decides instead: why ([`FailCause`]: the typed
//! fields of the record's event) and, in `info.failed_attempts`, each failed attempt — the
//! raw reply (its first [`RAW_LIMIT`] bytes) and the provider's stop reason, or the model
//! error. Without them a fail-mode verdict is indistinguishable from a judged one and its
//! cause cannot be told from the record (a cut reply, a context overflow, an outage).

use crate::GuardError;
use serde_json::{Map, Value, json};
use tauguard_core::record::{FailCause, FailReason, RoleUsage};
use tauguard_llm::LlmError;
use tauguard_llm::cut_at_token_limit;

/// The most bytes of a failed reply kept in a record: enough to see why it did not parse,
/// bounded so a runaway reply does not bloat every event.
pub(crate) const RAW_LIMIT: usize = 8 * 1024;

/// Phrases of an HTTP 400 body saying the request exceeds the model's context window, in
/// lower case: llama.cpp (`exceed_context_size_error`, "exceeds the available context size"),
/// OpenAI (`context_length_exceeded`), vLLM ("maximum context length"), Anthropic ("prompt is
/// too long"), Gemini ("exceeds the maximum number of tokens").
const CONTEXT_OVERFLOW: &[&str] = &[
    "exceed_context_size",
    "exceeds the available context size",
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "prompt is too long",
    "maximum number of tokens",
];

/// Whether an HTTP status and body say the request did not fit the context window.
pub(crate) fn is_context_overflow(status: u16, body: &str) -> bool {
    let body = body.to_lowercase();
    status == 400 && CONTEXT_OVERFLOW.iter().any(|p| body.contains(p))
}

/// Why a failed model call left the decision to the fail mode.
pub(crate) fn cause_of(e: &LlmError) -> FailCause {
    let (reason, http_status) = match e {
        LlmError::Timeout { .. } => (FailReason::Timeout, None),
        LlmError::Connection { .. } => (FailReason::Connection, None),
        LlmError::Rejected { status, body, .. } if is_context_overflow(*status, body) => {
            (FailReason::ContextOverflow, Some(*status))
        }
        LlmError::RateLimited { .. } | LlmError::Server { .. } | LlmError::Rejected { .. } => {
            (FailReason::HttpError, e.status())
        }
        LlmError::InvalidResponse { .. } => (FailReason::InvalidResponse, None),
        LlmError::EmptyResponse { .. } | LlmError::MalformedToolArguments(_) => {
            (parse_reason(e.truncated()), None)
        }
        LlmError::MissingApiKey { .. } | LlmError::Config(_) | LlmError::Identity { .. } => {
            (FailReason::ModelError, None)
        }
    };
    FailCause {
        reason,
        http_status,
    }
}

fn parse_reason(cut: bool) -> FailReason {
    if cut {
        FailReason::Truncated
    } else {
        FailReason::ParseFailure
    }
}

/// `text` cut to at most [`RAW_LIMIT`] bytes on a character boundary, and whether it was cut.
pub(crate) fn bounded(text: &str) -> (&str, bool) {
    if text.len() <= RAW_LIMIT {
        return (text, false);
    }
    let mut end = RAW_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// The failed attempts of one decision, in order.
#[derive(Debug, Default)]
pub(crate) struct FailedAttempts {
    entries: Vec<Value>,
    /// An unparseable reply had been cut at its token limit.
    cut: bool,
}

impl FailedAttempts {
    /// A reply that did not parse: its text (bounded), its stop reason and the parse error.
    pub(crate) fn unparseable(
        &mut self,
        attempt: u32,
        raw: &str,
        finish_reason: Option<&str>,
        error: &str,
    ) {
        let cut = finish_reason.is_some_and(cut_at_token_limit);
        self.cut |= cut;
        let (kept, shortened) = bounded(raw);
        let mut e = Map::new();
        e.insert("attempt".into(), json!(attempt));
        e.insert("raw".into(), json!(kept));
        if shortened {
            e.insert("raw_cut".into(), json!(true));
            e.insert("raw_bytes".into(), json!(raw.len()));
        }
        e.insert("finish_reason".into(), json!(finish_reason));
        e.insert("parse_error".into(), json!(error));
        self.entries.push(Value::Object(e));
    }

    /// Why the fail mode decided after every reply was unparseable: `truncated` when one had
    /// been cut at its token limit, else `parse_failure`.
    pub(crate) fn parse_cause(&self) -> FailCause {
        FailCause {
            reason: parse_reason(self.cut),
            http_status: None,
        }
    }

    /// Writes the attempts into `info.failed_attempts` (nothing when none failed).
    pub(crate) fn write(self, info: &mut Map<String, Value>) {
        if !self.entries.is_empty() {
            info.insert("failed_attempts".into(), Value::Array(self.entries));
        }
    }
}

/// A verifier model that failed after its retries, as the PolicyGuard verifier and the LLM
/// guide record it: a fatal error (credentials, unknown model) is returned, since it ends the
/// run; otherwise what the failed call spent joins `usage`, the attempts, the error and the
/// failed attempts go into `info`, and the cause is returned for the caller's fail mode.
pub(crate) fn note_model_failure(
    e: LlmError,
    attempt: u32,
    usage: &mut RoleUsage,
    info: &mut Map<String, Value>,
    mut failed: FailedAttempts,
) -> Result<FailCause, GuardError> {
    if e.is_fatal() {
        return Err(GuardError::Model(e));
    }
    if let Some(spent) = e.spent() {
        usage.add(&RoleUsage {
            usage: spent.usage,
            cost: spent.cost,
            truncated: u64::from(e.truncated()),
            ..Default::default()
        });
    }
    let cause = cause_of(&e);
    let message = e.to_string();
    let mut entry = Map::new();
    entry.insert("attempt".into(), json!(attempt));
    entry.insert("model_error".into(), json!(message));
    if let Some(status) = e.status() {
        entry.insert("http_status".into(), json!(status));
    }
    let finish_reason = match &e {
        LlmError::EmptyResponse { finish_reason, .. } => finish_reason.clone(),
        LlmError::MalformedToolArguments(m) => m.finish_reason.clone(),
        _ => None,
    };
    if let Some(f) = finish_reason {
        entry.insert("finish_reason".into(), json!(f));
    }
    if let LlmError::MalformedToolArguments(m) = &e {
        let (kept, shortened) = bounded(&m.raw);
        entry.insert("raw".into(), json!(kept));
        if shortened {
            entry.insert("raw_cut".into(), json!(true));
            entry.insert("raw_bytes".into(), json!(m.raw.len()));
        }
    }
    failed.entries.push(Value::Object(entry));
    info.insert("attempts".into(), json!(attempt));
    info.insert("model_error".into(), json!(message));
    failed.write(info);
    Ok(cause)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(status: u16, body: &str) -> LlmError {
        LlmError::Rejected {
            provider: "p".into(),
            model: "m".into(),
            status,
            body: body.into(),
            should_retry: None,
        }
    }

    #[test]
    fn context_overflow_is_a_400_that_says_so() {
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#;
        let openai = r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}"#;
        for body in [
            llama,
            openai,
            "prompt is too long: 210000 tokens > 200000 maximum",
        ] {
            let c = cause_of(&rejected(400, body));
            assert_eq!(
                (c.reason, c.http_status),
                (FailReason::ContextOverflow, Some(400))
            );
        }
        let other = cause_of(&rejected(400, "bad tools"));
        assert_eq!(
            (other.reason, other.http_status),
            (FailReason::HttpError, Some(400))
        );
        // Another status saying the same is no context overflow.
        let c = cause_of(&rejected(422, llama));
        assert_eq!(c.reason, FailReason::HttpError);
    }

    #[test]
    fn timeouts_outages_and_cut_replies_are_told_apart() {
        let timeout = LlmError::Timeout {
            provider: "p".into(),
            model: "m".into(),
            timeout: std::time::Duration::from_secs(1),
        };
        assert_eq!(cause_of(&timeout).reason, FailReason::Timeout);
        let server = LlmError::Server {
            provider: "p".into(),
            model: "m".into(),
            status: 503,
            retry_after: None,
            body: "down".into(),
            should_retry: None,
        };
        let c = cause_of(&server);
        assert_eq!(
            (c.reason, c.http_status),
            (FailReason::HttpError, Some(503))
        );
        let empty = |finish: &str| LlmError::EmptyResponse {
            provider: "p".into(),
            model: "m".into(),
            finish_reason: Some(finish.into()),
            spent: Box::default(),
        };
        assert_eq!(cause_of(&empty("length")).reason, FailReason::Truncated);
        assert_eq!(cause_of(&empty("stop")).reason, FailReason::ParseFailure);
        let mut failed = FailedAttempts::default();
        failed.unparseable(1, "{", Some("end_turn"), "no JSON");
        assert_eq!(failed.parse_cause().reason, FailReason::ParseFailure);
        failed.unparseable(2, "{", Some("max_tokens"), "no JSON");
        assert_eq!(
            failed.parse_cause().reason,
            FailReason::Truncated,
            "one cut reply is enough"
        );
    }

    #[test]
    fn a_long_reply_is_cut_on_a_character_boundary_and_says_so() {
        let long = "é".repeat(RAW_LIMIT);
        let (kept, cut) = bounded(&long);
        assert!(cut);
        assert!(kept.len() <= RAW_LIMIT && kept.len() > RAW_LIMIT - 2);
        assert!(long.starts_with(kept));
        let mut failed = FailedAttempts::default();
        failed.unparseable(1, &long, Some("length"), "no JSON");
        assert_eq!(failed.parse_cause().reason, FailReason::Truncated);
        let mut info = Map::new();
        failed.write(&mut info);
        let a = &info["failed_attempts"][0];
        assert_eq!(a["raw_cut"], json!(true));
        assert_eq!(a["raw_bytes"], json!(long.len()));
        assert_eq!(a["finish_reason"], json!("length"));
        assert_eq!(bounded("short"), ("short", false));
    }
}
