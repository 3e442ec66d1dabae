//! Where a guard's verdict or a guide's guidance came from: the model's judgement, or the
//! configured fail mode standing in for a judgement the model never gave, and why.
//!
//! Kept as typed fields of `GuardEvent` and `GuideEvent` (not only in their free-form `info`)
//! because a fail-mode verdict looks exactly like a judged one: with every verifier reply
//! unparseable, a fail-closed guard blocks every call and PolicyGuard Table 7 shows Block%
//! 100% as if the verifier had judged. Metrics count them per cell from these fields.

use serde::{Deserialize, Serialize};

/// Whether a verdict (or a guide's guidance and updates) is the guard's own judgement or its
/// fail mode's. Rule-based guards always judge: `model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictSource {
    /// The model's (or a rule-based guard's) own judgement.
    #[default]
    Model,
    /// The configured fail mode (`open` passes, `closed` blocks): the model gave no usable
    /// judgement.
    FailMode,
}

impl VerdictSource {
    /// For `skip_serializing_if`: records leave the field out when the model judged.
    pub fn is_model(&self) -> bool {
        *self == VerdictSource::Model
    }
}

/// Why the fail mode decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailReason {
    /// No reply (first or repair) could be parsed into a verdict.
    ParseFailure,
    /// An unparseable reply had been cut at its token limit (the provider's stop reason):
    /// raising the limit, not the prompt, is the likely fix.
    Truncated,
    /// The model call failed with an HTTP status (after its retries).
    HttpError,
    /// The model call timed out (after its retries); an external guard gave no reply in time.
    Timeout,
    /// An HTTP 400 whose message says the request exceeds the model's context window.
    ContextOverflow,
    /// No HTTP exchange: the connection failed (after its retries); an external guard's
    /// process ended, or was past its restart cap.
    Connection,
    /// A 2xx reply that is not the provider's documented shape; an external guard's reply that
    /// is not JSON, not in the protocol's schema, or for another request's id.
    InvalidResponse,
    /// Any other model error (a configuration error of the request).
    ModelError,
}

impl FailReason {
    pub const ALL: [FailReason; 8] = [
        FailReason::ParseFailure,
        FailReason::Truncated,
        FailReason::HttpError,
        FailReason::Timeout,
        FailReason::ContextOverflow,
        FailReason::Connection,
        FailReason::InvalidResponse,
        FailReason::ModelError,
    ];

    /// The name records use.
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::ParseFailure => "parse_failure",
            FailReason::Truncated => "truncated",
            FailReason::HttpError => "http_error",
            FailReason::Timeout => "timeout",
            FailReason::ContextOverflow => "context_overflow",
            FailReason::Connection => "connection",
            FailReason::InvalidResponse => "invalid_response",
            FailReason::ModelError => "model_error",
        }
    }

    pub fn from_name(name: &str) -> Option<FailReason> {
        FailReason::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

/// Why a decision came from the fail mode: the reason and, for `http_error` and
/// `context_overflow`, the HTTP status of the failed exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailCause {
    pub reason: FailReason,
    pub http_status: Option<u16>,
}

impl FailCause {
    /// An event's `verdict_source`, `fail_reason` and `fail_http_status` for a decision that
    /// failed for `cause`, or (`None`) was judged.
    pub fn event_fields(
        cause: Option<FailCause>,
    ) -> (VerdictSource, Option<FailReason>, Option<u16>) {
        match cause {
            Some(c) => (VerdictSource::FailMode, Some(c.reason), c.http_status),
            None => (VerdictSource::Model, None, None),
        }
    }

    /// The cause an event records (`None` when its verdict was judged).
    pub fn of_event(
        source: VerdictSource,
        reason: Option<FailReason>,
        status: Option<u16>,
    ) -> Option<FailCause> {
        match source {
            VerdictSource::Model => None,
            VerdictSource::FailMode => Some(FailCause {
                reason: reason.unwrap_or(FailReason::ModelError),
                http_status: status,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_name() {
        for r in FailReason::ALL {
            let json = serde_json::to_value(r).unwrap();
            assert_eq!(json, serde_json::json!(r.as_str()));
            assert_eq!(FailReason::from_name(r.as_str()), Some(r));
        }
        assert_eq!(FailReason::from_name("nope"), None);
        assert_eq!(
            serde_json::to_value(VerdictSource::FailMode).unwrap(),
            serde_json::json!("fail_mode")
        );
    }
}
