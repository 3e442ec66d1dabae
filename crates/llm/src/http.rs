//! The HTTP side of a provider: one [`Endpoint`] per configured provider name, shared by every
//! model built on it (client, key, limits, retry policy, prices).
//!
//! [`Endpoint::post_json`] sends one JSON body with retries (`retry.rs`), a concurrency slot and
//! rate token per attempt (`limits.rs`) and the model's per-attempt time-out, and classifies
//! failures into [`LlmError`]: `x-should-retry` overrides the status; a 5xx whose body says the
//! request is invalid is a rejection, not a server fault (resending it identically cannot
//! help). Usage reported in the body of a failed attempt is summed into [`Reply::usage`]
//! with the answer's, since those tokens were billed. Every request sent, failed exchange (by cause), call that
//! gave up (with what it was billed) and connection failure is reported to the caller's
//! [`crate::tally`], and so are the signs of an outage the run-wide watch counts: server
//! errors, time-outs, calls rate-limited beyond their retries, and the 2xx answers that reset
//! them. An attempt whose response headers have not arrived within the provider's
//! `stall_secs` is given up on as a time-out, so a server that accepts and never answers
//! costs that, not the whole per-attempt time-out. The key travels only in a sensitive header (never the URL);
//! any text quoted from the server or from the HTTP library is passed through
//! [`Endpoint::redact`].

use crate::config::{ProviderConfig, ProviderKind};
use crate::cost::PriceTable;
use crate::error::LlmError;
use crate::limits::Limits;
use crate::retry::{RetryPolicy, parse_retry_after};
use crate::tally::{self, Outage};
use crate::{anthropic, gemini, openai};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tauguard_core::message::Usage;

/// Markers of a server error body that blames the request (OpenAI/Anthropic error types,
/// Google's status, llama.cpp/litellm wordings). Matched case-insensitively.
const INVALID_REQUEST_MARKERS: &[&str] = &[
    "invalid_request_error",
    "invalid_argument",
    "invalid request",
    "badrequesterror",
    "bad request",
];

/// Longest stretch of a server's error body quoted in an error message.
const MAX_QUOTED_BODY: usize = 1000;

/// An API key. Its `Debug` never shows it; it is only ever written into a sensitive header.
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    pub(crate) fn new(key: String) -> ApiKey {
        ApiKey(key)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// A successful exchange.
pub(crate) struct Reply {
    pub body: Value,
    pub attempts: u32,
    pub latency: Duration,
    /// Usage billed for the call: the answer's, plus what failed attempts before it reported
    /// (billed, then retried).
    pub usage: Usage,
    /// Its price; `None` without one for the model.
    pub cost: Option<f64>,
}

fn add_usage(into: &mut Usage, u: &Usage) {
    into.prompt_tokens += u.prompt_tokens;
    into.completion_tokens += u.completion_tokens;
    into.cached_prompt_tokens += u.cached_prompt_tokens;
}

/// A provider endpoint and everything its models share.
pub(crate) struct Endpoint {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub prices: Arc<PriceTable>,
    /// Provider default of the per-attempt time-out (a model may override it).
    pub timeout: Duration,
    /// The wait for response headers after which an attempt is a stalled time-out.
    stall: Duration,
    /// Digest of the configured extra headers: they may change answers, so they belong to the
    /// cache scope, but their values must not appear in it.
    pub headers_digest: String,
    /// OpenAI protocol: `""` instead of `null` as content of tool-call-only messages.
    pub empty_tool_call_content: bool,
    key: Option<ApiKey>,
    headers: HeaderMap,
    client: reqwest::Client,
    retry: RetryPolicy,
    limits: Limits,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// `cfg` must have passed validation; `key` was read from `cfg.api_key_env`.
    pub(crate) fn new(
        name: &str,
        cfg: &ProviderConfig,
        key: Option<ApiKey>,
        prices: Arc<PriceTable>,
    ) -> Result<Endpoint, LlmError> {
        let config_err = |what: String| LlmError::Config(format!("provider `{name}`: {what}"));
        let mut headers = HeaderMap::new();
        if let Some(key) = &key {
            let (header, value) = match cfg.kind {
                ProviderKind::OpenAi => ("authorization", format!("Bearer {}", key.0)),
                ProviderKind::Anthropic => ("x-api-key", key.0.clone()),
                ProviderKind::Gemini => ("x-goog-api-key", key.0.clone()),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                config_err("the API key contains characters not allowed in a header".into())
            })?;
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static(header), value);
        }
        if cfg.kind == ProviderKind::Anthropic {
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static("2023-06-01"),
            );
        }
        for (k, v) in &cfg.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| config_err(format!("invalid header name `{k}`")))?;
            let value = HeaderValue::from_str(v)
                .map_err(|_| config_err(format!("invalid value for header `{k}`")))?;
            headers.insert(name, value);
        }
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| config_err(format!("cannot build the HTTP client: {e}")))?;
        let mut digest = blake3::Hasher::new();
        for (k, v) in &cfg.headers {
            digest.update(k.to_ascii_lowercase().as_bytes());
            digest.update(b"\0");
            digest.update(v.as_bytes());
            digest.update(b"\0");
        }
        Ok(Endpoint {
            name: name.to_string(),
            kind: cfg.kind,
            base_url: cfg.resolved_base_url(),
            prices,
            timeout: cfg.timeout(),
            stall: cfg.stall(),
            headers_digest: if cfg.headers.is_empty() {
                String::new()
            } else {
                digest.finalize().to_hex()[..16].to_string()
            },
            empty_tool_call_content: cfg.empty_tool_call_content,
            key,
            headers,
            client,
            retry: RetryPolicy::from_config(&cfg.retry),
            limits: Limits::new(cfg),
        })
    }

    /// The headers every request of this endpoint carries (credentials included), for a
    /// request sent outside the endpoint's own client (`identity.rs`).
    pub(crate) fn request_headers(&self) -> HeaderMap {
        self.headers.clone()
    }

    /// Replaces every occurrence of the key in `text`, and caps its length.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = match &self.key {
            Some(ApiKey(k)) if !k.is_empty() => text.replace(k.as_str(), "<redacted>"),
            _ => text.to_string(),
        };
        if out.len() > MAX_QUOTED_BODY {
            let mut cut = MAX_QUOTED_BODY;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push('…');
        }
        out
    }

    /// POSTs `body` to `url` with retries, each attempt limited to `timeout`; returns the
    /// parsed JSON reply.
    pub(crate) async fn post_json(
        &self,
        model: &str,
        url: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Reply, LlmError> {
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let discarded = Mutex::new(Usage::default());
        let body = self
            .retry
            .run(|| async {
                attempts.fetch_add(1, Ordering::Relaxed);
                let _slot = self.limits.acquire().await?;
                tally::request_sent();
                let result = self.attempt(model, url, body, timeout, &discarded).await;
                if let Err(e) = &result {
                    tally::exchange_failed(e.kind_name());
                }
                result
            })
            .await;
        let body = match body {
            Ok(body) => body,
            Err(e) => {
                if matches!(e, LlmError::RateLimited { .. }) {
                    tally::outage(Outage::RateLimited, || self.describe(model));
                }
                let spent = discarded.into_inner().unwrap_or_default();
                let cost = self.prices.cost(model, &spent);
                tally::call_billed(model, &spent, cost);
                tally::call_failed(&spent, cost);
                return Err(e);
            }
        };
        let mut usage = self.body_usage(&body);
        add_usage(&mut usage, &discarded.into_inner().unwrap_or_default());
        let cost = self.prices.cost(model, &usage);
        tally::call_billed(model, &usage, cost);
        Ok(Reply {
            body,
            attempts: attempts.load(Ordering::Relaxed),
            latency: started.elapsed(),
            usage,
            cost,
        })
    }

    /// `model \`m\` of provider \`p\` at <base URL>`, for the outage watch.
    fn describe(&self, model: &str) -> String {
        format!(
            "model `{model}` of provider `{}` at {}",
            self.name, self.base_url
        )
    }

    /// The usage a provider body reports, in this provider's format.
    fn body_usage(&self, body: &Value) -> Usage {
        match self.kind {
            ProviderKind::OpenAi => openai::usage(body),
            ProviderKind::Anthropic => anthropic::usage(body),
            ProviderKind::Gemini => gemini::usage(body),
        }
    }

    async fn attempt(
        &self,
        model: &str,
        url: &str,
        body: &Value,
        timeout: Duration,
        discarded: &Mutex<Usage>,
    ) -> Result<Value, LlmError> {
        let timeout_error = |e: &reqwest::Error| {
            if e.is_timeout() {
                tally::outage(Outage::Timeouts, || self.describe(model));
            }
            self.transport_error(model, e, timeout)
        };
        let send = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .timeout(timeout)
            .json(body)
            .send();
        let stall = self.stall.min(timeout);
        let response = match tokio::time::timeout(stall, send).await {
            Ok(sent) => sent.map_err(|e| {
                if e.is_connect() {
                    tally::connect_failed(|| {
                        format!("provider `{}` at {}", self.name, self.base_url)
                    });
                    return self.transport_error(model, &e, timeout);
                }
                tally::server_reached();
                timeout_error(&e)
            })?,
            Err(_) => {
                tally::outage(Outage::Timeouts, || self.describe(model));
                return Err(LlmError::Timeout {
                    provider: self.name.clone(),
                    model: model.to_string(),
                    timeout: stall,
                });
            }
        };
        tally::server_reached();
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.map_err(|e| timeout_error(&e))?;
        if status.is_success() {
            tally::answered();
            return serde_json::from_str(&text).map_err(|e| LlmError::InvalidResponse {
                provider: self.name.clone(),
                model: model.to_string(),
                reason: format!(
                    "HTTP {} body is not JSON ({e}): {}",
                    status.as_u16(),
                    self.redact(&text)
                ),
            });
        }
        if let Ok(error_body) = serde_json::from_str::<Value>(&text) {
            let spent = self.body_usage(&error_body);
            if spent != Usage::default()
                && let Ok(mut sum) = discarded.lock()
            {
                add_usage(&mut sum, &spent);
            }
        }
        let error = self.status_error(model, status, &headers, &text);
        if matches!(error, LlmError::Server { .. }) {
            tally::outage(Outage::ServerErrors, || self.describe(model));
        }
        Err(error)
    }

    fn status_error(
        &self,
        model: &str,
        status: StatusCode,
        headers: &HeaderMap,
        text: &str,
    ) -> LlmError {
        let provider = self.name.clone();
        let model = model.to_string();
        let body = self.redact(text.trim());
        let retry_after = parse_retry_after(headers, SystemTime::now());
        let should_retry = match headers
            .get("x-should-retry")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
        {
            Some(v) if v.eq_ignore_ascii_case("true") => Some(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        let blames_request = || {
            let lower = text.to_ascii_lowercase();
            INVALID_REQUEST_MARKERS.iter().any(|m| lower.contains(m))
        };
        match status.as_u16() {
            429 => LlmError::RateLimited {
                provider,
                model,
                retry_after,
                body,
                should_retry,
            },
            s @ 500..=599 if blames_request() => LlmError::Rejected {
                provider,
                model,
                status: s,
                body,
                should_retry,
            },
            // 408 request time-out, 409 conflict/lock time-out: retried like the vendors' SDKs.
            s @ (408 | 409 | 500..=599) => LlmError::Server {
                provider,
                model,
                status: s,
                retry_after,
                body,
                should_retry,
            },
            s => LlmError::Rejected {
                provider,
                model,
                status: s,
                body,
                should_retry,
            },
        }
    }

    fn transport_error(&self, model: &str, e: &reqwest::Error, timeout: Duration) -> LlmError {
        if e.is_timeout() {
            return LlmError::Timeout {
                provider: self.name.clone(),
                model: model.to_string(),
                timeout,
            };
        }
        if e.is_builder() {
            return LlmError::Config(format!(
                "provider `{}`: cannot build the request: {}",
                self.name,
                self.redact(&e.to_string())
            ));
        }
        let message = tauguard_core::chain_text(e);
        LlmError::Connection {
            provider: self.name.clone(),
            model: model.to_string(),
            message: self.redact(&message),
        }
    }
}
