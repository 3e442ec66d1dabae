//! Plain, serde-friendly configuration of model providers and model specs.
//!
//! This is the first stage of the two-stage config: the lead's TOML deserialises into these
//! structs, [`LlmConfig::validate`] checks them, and [`crate::factory::ModelFactory`] turns them
//! into runnable models (reading API keys from the environment at that point). Nothing here
//! ever holds a key: `api_key_env` is the *name* of an environment variable.
//!
//! TOML shape (every table optional):
//!
//! ```toml
//! [providers.openai]            # the names openai / anthropic / gemini / openrouter have built-in defaults
//! kind = "openai"               # openai | anthropic | gemini ("openai" = any compatible server)
//! base_url = "https://api.openai.com/v1"
//! api_key_env = "OPENAI_API_KEY"  # omit for servers without auth (vLLM, Ollama)
//! requests_per_minute = 500     # omit for no client-side rate limit
//! burst = 1
//! max_concurrency = 8
//! timeout_secs = 600.0          # per attempt; a model spec's `timeout_secs` overrides it
//! stall_secs = 300.0            # per attempt, until the response headers (counted as a time-out)
//! headers = { "OpenAI-Organization" = "org-..." }  # part of the cache scope (hashed)
//! empty_tool_call_content = false  # true: `"content": ""` instead of null (llama-cpp-python)
//! [providers.openai.retry]
//! max_attempts = 5              # total attempts, the first included
//! initial_backoff_secs = 1.0
//! max_backoff_secs = 60.0
//! max_retry_after_secs = 120.0
//! jitter = true
//!
//! [prices."gpt-4.1-2025-04-14"]
//! input_per_mtok = 2.0
//! output_per_mtok = 8.0
//! cached_input_per_mtok = 0.5
//!
//! [capabilities."gpt-5*"]      # see `capabilities.rs`
//! temperature = false
//!
//! [cache]
//! dir = "results/.llm-cache"
//! mode = "read_write"           # read_write | write_only | off (`--no-cache` → off)
//! ```
//!
//! Every table rejects unknown keys, naming them: a typo must not silently change a run.
//!
//! A model is chosen with a [`ModelSpec`]: `{ provider = "openai", model = "gpt-4.1-2025-04-14",
//! temperature = 0.0 }`. Its sampling settings and `extra` are baked into the built model and
//! apply to every request it serves, whatever role uses it.

use crate::cache::CacheMode;
use crate::capabilities::{self, CapabilityOverride};
use crate::cost::PriceTable;
use crate::error::LlmError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI chat completions; also vLLM, Ollama, and any compatible server.
    #[serde(alias = "openai_compatible", alias = "vllm", alias = "ollama")]
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
        }
    }

    /// The vendor's public endpoint.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }

    /// The conventional variable holding the vendor's key.
    pub fn default_api_key_env(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Gemini => "GEMINI_API_KEY",
        }
    }
}

/// Retry behaviour for transient failures (429, 408/409, 5xx, time-out, connection; a
/// server's `x-should-retry: true|false` overrides the status-based decision).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Total attempts, the first included (1 = never retry).
    pub max_attempts: u32,
    /// First backoff delay; doubles per retry.
    pub initial_backoff_secs: f64,
    /// Ceiling of the exponential backoff.
    pub max_backoff_secs: f64,
    /// Ceiling on a server's `Retry-After` (a server asking for longer is waited this long).
    pub max_retry_after_secs: f64,
    /// Add up to 100 % random jitter to each backoff delay.
    pub jitter: bool,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 5,
            initial_backoff_secs: 1.0,
            max_backoff_secs: 60.0,
            max_retry_after_secs: 120.0,
            jitter: true,
        }
    }
}

/// One provider endpoint: protocol, address, credentials variable and client-side limits.
/// All models built on the same provider name share its rate limiter and concurrency bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// Defaults to the vendor's endpoint for `kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key; `None` sends no credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Client-side rate limit; `None` = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Requests allowed back to back before the rate limit spaces them (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Requests in flight at once across every model of this provider.
    #[serde(default = "default_concurrency")]
    pub max_concurrency: usize,
    /// Per-attempt time-out, whole response included (default 600 s, the vendors' SDK
    /// default: reasoning models may think for minutes). A model spec's `timeout_secs`
    /// overrides it for that model.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: f64,
    /// Per-attempt limit on the wait for the response headers (default 300 s): a server that
    /// accepts a request and never answers is given up on then, and the attempt counts as a
    /// time-out, instead of holding its slot for the whole `timeout_secs`. A non-streaming
    /// server sends its headers when its reply is complete, so this is also the longest a
    /// reply may take to generate; the per-attempt time-out still caps it when shorter.
    #[serde(
        default = "default_stall_secs",
        skip_serializing_if = "is_default_stall_secs"
    )]
    pub stall_secs: f64,
    #[serde(default)]
    pub retry: RetryConfig,
    /// Extra request headers (never put a key here: use `api_key_env`). They may change the
    /// answer (API versions, beta flags), so a digest of them is part of the cache scope.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// OpenAI protocol: send `"content": ""` rather than `null` on assistant messages that
    /// only carry tool calls. `null` is what OpenAI documents, but llama-cpp-python rejects
    /// it; vLLM and Ollama accept both.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_tool_call_content: bool,
    /// Before a run, ask the server who it is (`GET {base_url}/models`, OpenAI protocol) and
    /// make its answer for the model part of the cell: for a remote agent, whose behaviour is
    /// the server's and not the config's (`identity.rs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identify: bool,
}

fn default_concurrency() -> usize {
    8
}

/// The vendors' SDKs wait 600 s per attempt.
pub(crate) const DEFAULT_TIMEOUT_SECS: f64 = 600.0;

fn default_timeout_secs() -> f64 {
    DEFAULT_TIMEOUT_SECS
}

/// Half the SDKs' time-out: longer than normal replies take, short enough that a silent
/// server is noticed (and, after `run.max_consecutive_timeouts`, stops the run) early.
pub(crate) const DEFAULT_STALL_SECS: f64 = 300.0;

fn default_stall_secs() -> f64 {
    DEFAULT_STALL_SECS
}

fn is_default_stall_secs(s: &f64) -> bool {
    *s == DEFAULT_STALL_SECS
}

impl ProviderConfig {
    /// The built-in settings for the vendor's public endpoint.
    pub fn builtin(kind: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: None,
            api_key_env: Some(kind.default_api_key_env().to_string()),
            requests_per_minute: None,
            burst: None,
            max_concurrency: default_concurrency(),
            timeout_secs: default_timeout_secs(),
            stall_secs: default_stall_secs(),
            retry: RetryConfig::default(),
            headers: BTreeMap::new(),
            empty_tool_call_content: false,
            identify: false,
        }
    }

    /// The built-in `openrouter` provider: OpenRouter's OpenAI-compatible endpoint with the
    /// key in `OPENROUTER_API_KEY`, as τ²-bench's `OpenRouterEmbedder` reaches it.
    pub fn openrouter() -> ProviderConfig {
        ProviderConfig {
            base_url: Some("https://openrouter.ai/api/v1".into()),
            api_key_env: Some("OPENROUTER_API_KEY".into()),
            ..ProviderConfig::builtin(ProviderKind::OpenAi)
        }
    }

    /// `base_url` or the vendor default, without a trailing slash.
    pub fn resolved_base_url(&self) -> String {
        self.base_url
            .as_deref()
            .unwrap_or(self.kind.default_base_url())
            .trim_end_matches('/')
            .to_string()
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs)
    }

    /// The wait for response headers after which an attempt counts as stalled.
    pub fn stall(&self) -> Duration {
        Duration::from_secs_f64(self.stall_secs)
    }

    /// Checks ranges; `name` is the provider's key in the config, for messages.
    pub fn validate(&self, name: &str) -> Result<(), LlmError> {
        let bad = |what: &str| Err(LlmError::Config(format!("provider `{name}`: {what}")));
        if !(self.timeout_secs.is_finite() && self.timeout_secs > 0.0) {
            return bad("`timeout_secs` must be a positive number");
        }
        if !(self.stall_secs.is_finite() && self.stall_secs > 0.0) {
            return bad("`stall_secs` must be a positive number");
        }
        if self.max_concurrency == 0 {
            return bad("`max_concurrency` must be at least 1");
        }
        if self.requests_per_minute == Some(0) {
            return bad("`requests_per_minute` must be at least 1 (omit it for no limit)");
        }
        if self.burst == Some(0) {
            return bad("`burst` must be at least 1");
        }
        if self.identify && self.kind != ProviderKind::OpenAi {
            return bad("`identify` needs `kind = \"openai\"` (it asks `GET /models`)");
        }
        if self
            .api_key_env
            .as_deref()
            .is_some_and(|v| v.trim().is_empty())
        {
            return bad("`api_key_env` is empty (omit it to send no credentials)");
        }
        let r = &self.retry;
        if r.max_attempts == 0 {
            return bad("`retry.max_attempts` must be at least 1");
        }
        for (key, v) in [
            ("initial_backoff_secs", r.initial_backoff_secs),
            ("max_backoff_secs", r.max_backoff_secs),
            ("max_retry_after_secs", r.max_retry_after_secs),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(&format!("`retry.{key}` must be a non-negative number"));
            }
        }
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return bad("`base_url` must start with http:// or https://");
        }
        Ok(())
    }
}

/// Where and whether responses are cached. Without a `[cache]` table nothing is cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub dir: PathBuf,
    #[serde(default)]
    pub mode: CacheMode,
}

/// Everything the model factory needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// Provider name → settings. The names `openai`, `anthropic`, `gemini` and `openrouter`
    /// work without an entry (built-in defaults); `sim`, the offline family, is built in and
    /// cannot be configured (see `provider.rs`).
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Model name (as sent) → price. Unknown models get `cost: None`.
    #[serde(default)]
    pub prices: PriceTable,
    /// No cache when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheConfig>,
    /// Model name or `prefix*` → capability overrides (see `capabilities.rs`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capabilities: BTreeMap<String, CapabilityOverride>,
}

impl LlmConfig {
    pub fn validate(&self) -> Result<(), LlmError> {
        self.check_reserved_names()?;
        for (name, p) in &self.providers {
            p.validate(name)?;
        }
        capabilities::validate(&self.capabilities).map_err(LlmError::Config)?;
        self.prices.validate()
    }
}

/// The built-in provider name of OpenRouter.
pub(crate) const OPENROUTER: &str = "openrouter";

/// Which model to call, and its sampling settings. The factory bakes them into the built
/// model: every request it serves gets them wherever the request leaves them unset (so the
/// judge, the verifier and the compiler honour a spec exactly like the agent does). Unset
/// sampling parameters are not sent at all: the provider's default applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Key into [`LlmConfig::providers`] (or a built-in name, see [`LlmConfig::resolve`]).
    pub provider: String,
    /// Model name exactly as sent to the provider.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Output-token limit; sent as `max_tokens`, `max_completion_tokens` or `maxOutputTokens`
    /// as the model's capabilities say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Per-attempt time-out of this model, overriding the provider's `timeout_secs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    /// Extra body parameters merged into every request (deep merge for objects; a request's
    /// own `extra` wins), e.g. `{ reasoning_effort = "low" }` or Gemini
    /// `{ generationConfig = { topK = 1 } }`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl ModelSpec {
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> ModelSpec {
        ModelSpec {
            provider: provider.into(),
            model: model.into(),
            temperature: None,
            top_p: None,
            max_tokens: None,
            timeout_secs: None,
            extra: Map::new(),
        }
    }

    /// `provider/model`: the id of models built from this spec.
    pub fn id(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }

    /// Checks ranges; errors name the model.
    pub fn validate(&self) -> Result<(), LlmError> {
        let bad = |what: &str| Err(LlmError::Config(format!("model `{}`: {what}", self.id())));
        if self.model.trim().is_empty() {
            return Err(LlmError::Config(format!(
                "model spec for provider `{}` has an empty `model`",
                self.provider
            )));
        }
        if self.temperature.is_some_and(|t| !t.is_finite() || t < 0.0) {
            return bad("`temperature` must be a non-negative number");
        }
        if self
            .top_p
            .is_some_and(|p| !p.is_finite() || p <= 0.0 || p > 1.0)
        {
            return bad("`top_p` must be in (0, 1]");
        }
        if self.max_tokens == Some(0) {
            return bad("`max_tokens` must be at least 1");
        }
        if self
            .timeout_secs
            .is_some_and(|t| !t.is_finite() || t <= 0.0)
        {
            return bad("`timeout_secs` must be a positive number");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_toml_shape_parses() {
        let cfg: LlmConfig = toml::from_str(
            r#"
            [providers.openai]
            kind = "openai"
            base_url = "https://api.openai.com/v1/"
            api_key_env = "OPENAI_API_KEY"
            requests_per_minute = 500
            max_concurrency = 8
            timeout_secs = 120.0
            headers = { "OpenAI-Organization" = "org-1" }
            [providers.openai.retry]
            max_attempts = 4
            [providers.local]
            kind = "vllm"
            base_url = "http://127.0.0.1:8000/v1"
            [prices."gpt-4.1-2025-04-14"]
            input_per_mtok = 2.0
            output_per_mtok = 8.0
            cached_input_per_mtok = 0.5
            [cache]
            dir = "results/.llm-cache"
            mode = "off"
            "#,
        )
        .expect("parses");
        cfg.validate().expect("valid");
        let openai = cfg.provider("openai").expect("configured");
        assert_eq!(openai.resolved_base_url(), "https://api.openai.com/v1");
        assert_eq!(openai.retry.max_attempts, 4);
        assert_eq!(openai.retry.initial_backoff_secs, 1.0);
        let local = cfg.provider("local").expect("configured");
        assert_eq!(local.kind, ProviderKind::OpenAi);
        assert_eq!(local.api_key_env, None);
        assert_eq!(local.max_concurrency, 8);
        assert_eq!(cfg.cache.as_ref().map(|c| c.mode), Some(CacheMode::Off));
        let gemini = cfg.provider("gemini").expect("built-in");
        assert_eq!(gemini.api_key_env.as_deref(), Some("GEMINI_API_KEY"));
        assert!(cfg.provider("nope").is_err());

        let spec: ModelSpec = toml::from_str(
            r#"
            provider = "openai"
            model = "gpt-4.1-2025-04-14"
            temperature = 0.0
            extra = { reasoning_effort = "low" }
            "#,
        )
        .expect("spec parses");
        spec.validate().expect("valid spec");
        assert_eq!(spec.temperature, Some(0.0));
        assert_eq!(
            spec.extra.get("reasoning_effort"),
            Some(&serde_json::json!("low"))
        );
        assert_eq!(
            ProviderConfig::builtin(ProviderKind::OpenAi).timeout_secs,
            DEFAULT_TIMEOUT_SECS
        );
    }

    #[test]
    fn unknown_keys_are_named_in_every_table() {
        for (toml_text, key) in [
            (
                "[providers.local]\nkind = \"openai\"\ntimout_secs = 5",
                "timout_secs",
            ),
            (
                "[providers.local]\nkind = \"openai\"\n[providers.local.retry]\nmax_attempt = 2",
                "max_attempt",
            ),
            (
                "[prices.m]\ninput_per_mtok = 1\noutput_per_mtok = 1\ncached_per_mtok = 1",
                "cached_per_mtok",
            ),
            ("[cache]\ndir = \"x\"\nmodes = \"off\"", "modes"),
            (
                "[capabilities.\"gpt-5*\"]\ntemprature = false",
                "temprature",
            ),
            ("[cahce]\ndir = \"x\"", "cahce"),
        ] {
            let err = toml::from_str::<LlmConfig>(toml_text).expect_err(key);
            assert!(err.to_string().contains(key), "{key}: {err}");
        }
        let err = toml::from_str::<ModelSpec>("provider = \"p\"\nmodel = \"m\"\ntop_k = 1")
            .expect_err("unknown spec key");
        assert!(err.to_string().contains("top_k"), "{err}");
    }

    #[test]
    fn bad_values_are_rejected_with_the_provider_name() {
        let mut p = ProviderConfig::builtin(ProviderKind::Anthropic);
        p.max_concurrency = 0;
        let err = p.validate("claude").expect_err("invalid");
        assert!(err.to_string().contains("`claude`"), "{err}");
    }
}
