//! Typed errors of model calls.
//!
//! Three families, distinguished by [`LlmError::class`]:
//! - **transient** (429, 408/409, 5xx, time-out, connection): retried with backoff by
//!   `retry.rs`, and returned only once the attempts are spent;
//! - **permanent** (other 4xx such as auth or bad request, unparsable provider payloads,
//!   configuration): returned at once;
//! - **model output** (tool arguments that are not a JSON object, a reply with neither text nor
//!   tool calls): the HTTP exchange succeeded but the reply is unusable. τ²-bench raises an
//!   exception here and restarts the whole simulation (semantics §6.5, §6.8), so the
//!   orchestrator should do the same; these are never retried here and never cached.
//!
//! Every message names the provider (its config name), the model and, where there is one, the
//! HTTP status. Response bodies quoted in messages pass through the redaction in `http.rs`, so
//! an API key echoed by a server never reaches a message; keys are never formatted here.

use std::time::Duration;

/// Whether an error is worth retrying, and at which level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Retry the HTTP request (done here, with backoff).
    Transient,
    /// Do not retry: the same request would fail again.
    Permanent,
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
    },

    #[error("{provider} `{model}`: server error (HTTP {status}){}: {body}", after_hint(*retry_after))]
    Server {
        provider: String,
        model: String,
        status: u16,
        retry_after: Option<Duration>,
        body: String,
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

    /// A 4xx other than 408/409/429: bad request, authentication, unknown model, ...
    #[error("{provider} `{model}`: request rejected (HTTP {status}): {body}")]
    Rejected {
        provider: String,
        model: String,
        status: u16,
        body: String,
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
    },

    #[error(
        "provider `{provider}`: API key variable `{var}` is not set\nhint: export `{var}`, or point `api_key_env` at the variable that holds the key"
    )]
    MissingApiKey { provider: String, var: String },

    #[error("llm config: {0}")]
    Config(String),
}

/// Details of [`LlmError::MalformedToolArguments`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
            LlmError::RateLimited { .. }
            | LlmError::Server { .. }
            | LlmError::Timeout { .. }
            | LlmError::Connection { .. } => ErrorClass::Transient,
            LlmError::MalformedToolArguments(_) | LlmError::EmptyResponse { .. } => {
                ErrorClass::ModelOutput
            }
            LlmError::Rejected { .. }
            | LlmError::InvalidResponse { .. }
            | LlmError::MissingApiKey { .. }
            | LlmError::Config(_) => ErrorClass::Permanent,
        }
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
        }
    }
}
