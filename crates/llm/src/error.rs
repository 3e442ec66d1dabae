//! Typed errors of model calls.
//!
//! Four families, distinguished by [`LlmError::class`]:
//! - **transient** (429, 408/409, 5xx, time-out, connection): retried with backoff by
//!   `retry.rs`, and returned only once the attempts are spent;
//! - **permanent** (400, 422 and other 4xx, a 5xx whose body says the request itself is
//!   invalid, unparsable provider payloads, configuration): returned at once, since the same
//!   request would fail the same way;
//! - **fatal** (401, 403, 404, a missing key): credentials, permissions, the model name or the
//!   endpoint are wrong, so every later call of the run fails too; the orchestrator can stop
//!   the run on these instead of burning its simulations;
//! - **model output** (tool arguments that are not a JSON object, a reply with neither text nor
//!   tool calls): the HTTP exchange succeeded but the reply is unusable. τ²-bench raises an
//!   exception here and restarts the whole simulation (semantics §6.5, §6.8), so the
//!   orchestrator should do the same; these are never retried here and never cached. They
//!   carry the usage and cost of the reply ([`LlmError::spent`]): the tokens were billed.
//!
//! A server's `x-should-retry: true|false` header (sent by OpenAI and Anthropic) overrides the
//! status-based choice between transient and permanent, as the vendors' SDKs do.
//!
//! Every message names the provider (its config name), the model and, where there is one, the
//! HTTP status. Response bodies quoted in messages pass through the redaction in `http.rs`, so
//! an API key echoed by a server never reaches a message; keys are never formatted here.

use std::time::Duration;
use tauguard_core::message::Usage;

/// Whether an error is worth retrying, and at which level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Retry the HTTP request (done here, with backoff).
    Transient,
    /// Do not retry: the same request would fail again.
    Permanent,
    /// Do not retry and stop the run: no later request can succeed either (401, 403, 404,
    /// missing key).
    Fatal,
    /// The model replied with unusable output; upstream restarts the simulation.
    ModelOutput,
}

/// An error from a model call or from building a model.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{provider} `{model}`: rate limited (HTTP 429){}: {body}", after_hint(*retry_after))]
    RateLimited {
        provider: String,
        model: String,
        retry_after: Option<Duration>,
        body: String,
        /// The server's `x-should-retry`, when it sent one.
        should_retry: Option<bool>,
    },

    #[error("{provider} `{model}`: server error (HTTP {status}){}: {body}", after_hint(*retry_after))]
    Server {
        provider: String,
        model: String,
        status: u16,
        retry_after: Option<Duration>,
        body: String,
        /// The server's `x-should-retry`, when it sent one.
        should_retry: Option<bool>,
    },

    #[error("{provider} `{model}`: request timed out after {:.3}s", timeout.as_secs_f64())]
    Timeout {
        provider: String,
        model: String,
        timeout: Duration,
    },

    #[error("{provider} `{model}`: connection failed: {message}")]
    Connection {
        provider: String,
        model: String,
        message: String,
    },

    /// A 4xx other than 408/409/429 (bad request, authentication, unknown model, ...), or a
    /// 5xx whose body says the request is invalid.
    #[error("{provider} `{model}`: request rejected (HTTP {status}): {body}")]
    Rejected {
        provider: String,
        model: String,
        status: u16,
        body: String,
        /// The server's `x-should-retry`, when it sent one.
        should_retry: Option<bool>,
    },

    /// A 2xx reply that is not the JSON shape the provider documents.
    #[error("{provider} `{model}`: unparsable response: {reason}")]
    InvalidResponse {
        provider: String,
        model: String,
        reason: String,
    },

    /// The model called a tool with arguments that are not a JSON object (τ²-bench's
    /// `json.loads` failure). Boxed: it is the largest variant and rare.
    #[error("{0}")]
    MalformedToolArguments(Box<MalformedArguments>),

    /// The model produced neither text (non-whitespace) nor tool calls.
    #[error("{provider} `{model}`: empty reply (no text and no tool calls; finish reason {})",
        finish_reason.as_deref().unwrap_or("unknown"))]
    EmptyResponse {
        provider: String,
        model: String,
        finish_reason: Option<String>,
        /// What the reply was billed for (reasoning tokens included). Boxed so the error
        /// stays small: callers embed `LlmError` in their own error types.
        spent: Box<Spend>,
    },

    #[error(
        "provider `{provider}`: API key variable `{var}` is not set\nhint: export `{var}`, or point `api_key_env` at the variable that holds the key"
    )]
    MissingApiKey { provider: String, var: String },

    #[error("llm config: {0}")]
    Config(String),

    /// The server of a provider with `identify = true` did not say who it is (`identity.rs`).
    /// `what` names the model and the URL asked.
    #[error("provider `{provider}`: cannot identify {what}")]
    Identity { provider: String, what: String },
}

/// Tokens a failed call was billed for, and their price.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spend {
    pub usage: Usage,
    /// `None` when the model has no price.
    pub cost: Option<f64>,
}

/// Details of [`LlmError::MalformedToolArguments`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{provider} `{model}`: arguments of tool call `{tool}` (id `{call_id}`) are not a JSON object: {reason}"
)]
pub struct MalformedArguments {
    pub provider: String,
    pub model: String,
    pub tool: String,
    pub call_id: String,
    /// The argument text exactly as the provider sent it.
    pub raw: String,
    pub reason: String,
    /// Tokens the reply was billed for.
    pub usage: Usage,
    /// Their price; `None` when the model has no price.
    pub cost: Option<f64>,
    /// The provider's stop reason of the reply (`length` often explains cut-off arguments).
    pub finish_reason: Option<String>,
}

fn after_hint(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(", retry after {:.3}s", d.as_secs_f64()),
        None => String::new(),
    }
}

impl LlmError {
    /// Which family the error belongs to (see the module comment).
    pub fn class(&self) -> ErrorClass {
        match self {
            LlmError::RateLimited { should_retry, .. } | LlmError::Server { should_retry, .. } => {
                if *should_retry == Some(false) {
                    ErrorClass::Permanent
                } else {
                    ErrorClass::Transient
                }
            }
            LlmError::Timeout { .. } | LlmError::Connection { .. } => ErrorClass::Transient,
            LlmError::MalformedToolArguments(_) | LlmError::EmptyResponse { .. } => {
                ErrorClass::ModelOutput
            }
            LlmError::Rejected {
                status,
                should_retry,
                ..
            } => match (should_retry, status) {
                (Some(true), _) => ErrorClass::Transient,
                (_, 401 | 403 | 404) => ErrorClass::Fatal,
                _ => ErrorClass::Permanent,
            },
            LlmError::MissingApiKey { .. } | LlmError::Identity { .. } => ErrorClass::Fatal,
            LlmError::InvalidResponse { .. } | LlmError::Config(_) => ErrorClass::Permanent,
        }
    }

    /// Whether no later call of the run can succeed (see [`ErrorClass::Fatal`]).
    pub fn is_fatal(&self) -> bool {
        self.class() == ErrorClass::Fatal
    }

    /// Usage and cost of a reply that was billed but is unusable (model-output errors), so the
    /// caller can count it although the call failed.
    pub fn spent(&self) -> Option<Spend> {
        match self {
            LlmError::EmptyResponse { spent, .. } => Some(**spent),
            LlmError::MalformedToolArguments(m) => Some(Spend {
                usage: m.usage,
                cost: m.cost,
            }),
            _ => None,
        }
    }

    /// Whether the unusable reply of a model-output error was cut at its token limit
    /// ([`crate::model::cut_at_token_limit`]): a cut reply counts as truncated whether or not
    /// it could be used.
    pub fn truncated(&self) -> bool {
        let reason = match self {
            LlmError::EmptyResponse { finish_reason, .. } => finish_reason.as_deref(),
            LlmError::MalformedToolArguments(m) => m.finish_reason.as_deref(),
            _ => None,
        };
        reason.is_some_and(crate::model::cut_at_token_limit)
    }

    /// Whether the HTTP request is worth repeating.
    pub fn is_transient(&self) -> bool {
        self.class() == ErrorClass::Transient
    }

    /// The server's `Retry-After` (or `retry-after-ms`) hint, when it gave one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } | LlmError::Server { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    /// HTTP status of the failed exchange, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::RateLimited { .. } => Some(429),
            LlmError::Server { status, .. } | LlmError::Rejected { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A short stable name of the variant, for records (`error_type`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::Server { .. } => "server_error",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Connection { .. } => "connection",
            LlmError::Rejected { .. } => "rejected",
            LlmError::InvalidResponse { .. } => "invalid_response",
            LlmError::MalformedToolArguments(_) => "malformed_tool_arguments",
            LlmError::EmptyResponse { .. } => "empty_response",
            LlmError::MissingApiKey { .. } => "missing_api_key",
            LlmError::Config(_) => "config",
            LlmError::Identity { .. } => "identity",
        }
    }
}
