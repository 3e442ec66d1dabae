//! The HTTP side of a provider: one [`Endpoint`] per configured provider name, shared by every
//! model built on it (client, key, limits, retry policy, prices).
//!
//! [`Endpoint::post_json`] sends one JSON body with retries (`retry.rs`), a concurrency slot and
//! rate token per attempt (`limits.rs`) and a per-attempt time-out, and classifies failures
//! into [`LlmError`]. The key travels only in a sensitive header (never the URL); any text
//! quoted from the server or from the HTTP library is passed through [`Endpoint::redact`].

use crate::config::{ProviderConfig, ProviderKind};
use crate::cost::PriceTable;
use crate::error::LlmError;
use crate::limits::Limits;
use crate::retry::{RetryPolicy, parse_retry_after};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime};

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
}

/// A provider endpoint and everything its models share.
pub(crate) struct Endpoint {
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub prices: Arc<PriceTable>,
    key: Option<ApiKey>,
    headers: HeaderMap,
    client: reqwest::Client,
    timeout: Duration,
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
        Ok(Endpoint {
            name: name.to_string(),
            kind: cfg.kind,
            base_url: cfg.resolved_base_url(),
            prices,
            key,
            headers,
            client,
            timeout: cfg.timeout(),
            retry: RetryPolicy::from_config(&cfg.retry),
            limits: Limits::new(cfg),
        })
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

    /// POSTs `body` to `url` with retries; returns the parsed JSON reply.
    pub(crate) async fn post_json(
        &self,
        model: &str,
        url: &str,
        body: &Value,
    ) -> Result<Reply, LlmError> {
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let body = self
            .retry
            .run(|| async {
                attempts.fetch_add(1, Ordering::Relaxed);
                let _slot = self.limits.acquire().await?;
                self.attempt(model, url, body).await
            })
            .await?;
        Ok(Reply {
            body,
            attempts: attempts.load(Ordering::Relaxed),
            latency: started.elapsed(),
        })
    }

    async fn attempt(&self, model: &str, url: &str, body: &Value) -> Result<Value, LlmError> {
        let response = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .timeout(self.timeout)
            .json(body)
            .send()
            .await
            .map_err(|e| self.transport_error(model, &e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = response
            .text()
            .await
            .map_err(|e| self.transport_error(model, &e))?;
        if status.is_success() {
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
        Err(self.status_error(model, status, &headers, &text))
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
        match status.as_u16() {
            429 => LlmError::RateLimited {
                provider,
                model,
                retry_after,
                body,
            },
            // 408 request time-out, 409 conflict/lock time-out: retried like the vendors' SDKs.
            s @ (408 | 409 | 500..=599) => LlmError::Server {
                provider,
                model,
                status: s,
                retry_after,
                body,
            },
            s => LlmError::Rejected {
                provider,
                model,
                status: s,
                body,
            },
        }
    }

    fn transport_error(&self, model: &str, e: &reqwest::Error) -> LlmError {
        if e.is_timeout() {
            return LlmError::Timeout {
                provider: self.name.clone(),
                model: model.to_string(),
                timeout: self.timeout,
            };
        }
        if e.is_builder() {
            return LlmError::Config(format!(
                "provider `{}`: cannot build the request: {}",
                self.name,
                self.redact(&e.to_string())
            ));
        }
        let mut message = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        LlmError::Connection {
            provider: self.name.clone(),
            model: model.to_string(),
            message: self.redact(&message),
        }
    }
}
