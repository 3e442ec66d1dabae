//! What a model accepts: which sampling parameters, which name its output-token limit goes
//! under, and whether it thinks. Providers answer HTTP 400 to a parameter their model does not
//! take (OpenAI reasoning models reject `temperature`, `top_p` and `max_tokens`; Anthropic
//! rejects `temperature` with extended thinking), so a parameter the capabilities rule out is
//! dropped from the body instead of being sent.
//!
//! Resolution, per model: the family default ([`Capabilities::family_default`], from the
//! provider kind, whether the endpoint is OpenAI's own API, and the model name), then every
//! matching `[llm.capabilities."<pattern>"]` entry of the config, the least specific first (a
//! pattern is an exact model name, or a prefix ending in `*`; the exact name beats every prefix
//! and a longer prefix beats a shorter one), field by field. For Anthropic, thinking is also on
//! when the model's `extra` enables it (`extra.thinking.type = "enabled"` or `"adaptive"`).
//!
//! ```toml
//! [llm.capabilities."gpt-5*"]        # any field may be left out
//! temperature = false                # send `temperature`?
//! top_p = false                      # send `top_p`?
//! seed = true                        # send `seed`? (Anthropic never: the API has none)
//! token_limit = "max_completion_tokens"  # or "max_tokens" (OpenAI-compatible servers)
//! default_max_tokens = 4096          # sent when neither the request nor the spec sets one
//! thinking = true                    # reasoning / extended thinking on
//! thinking_budget_tokens = 1024      # Anthropic `thinking.budget_tokens` when thinking is on
//! context_tokens = 8192              # the model's context window (prompt and reply), in tokens
//! ```
//!
//! `context_tokens` shapes no request: the dry run compares each role's largest prompt with
//! it, and `run --check` reports it beside the server's answer. Unset means unknown (no family
//! default guesses one); a local server's window is whatever it was started with (llama.cpp
//! `--ctx-size`, vLLM `--max-model-len`), so say it here. It is never serialised — not into a
//! cache key, not into the config hash — because a context window cannot change what a model
//! answers to a request that fits it.

use crate::config::ProviderKind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The body field an OpenAI-protocol model's output-token limit goes under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenLimit {
    /// `max_tokens`: vLLM, Ollama, llama.cpp and other compatible servers; Anthropic.
    MaxTokens,
    /// `max_completion_tokens`: OpenAI's own API (required by reasoning models, which reject
    /// `max_tokens`).
    MaxCompletionTokens,
}

/// One `[llm.capabilities."<pattern>"]` entry: every field optional, overriding the family
/// default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_limit: Option<TokenLimit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget_tokens: Option<u32>,
    /// Not serialised (see the module comment): the config hash stays what it was without it.
    #[serde(default, skip_serializing)]
    pub context_tokens: Option<u32>,
}

/// The resolved capabilities of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Capabilities {
    pub temperature: bool,
    pub top_p: bool,
    pub seed: bool,
    pub token_limit: TokenLimit,
    /// Sent when neither request nor spec sets a limit (Anthropic requires one).
    pub default_max_tokens: Option<u32>,
    pub thinking: bool,
    /// Anthropic only: `thinking.budget_tokens` sent when thinking is on and `extra` does not
    /// configure `thinking` itself (1024 is the API's minimum).
    pub thinking_budget_tokens: u32,
    /// The context window in tokens, when the config or the catalog says it; skipped when
    /// serialised, so the cache key does not depend on it.
    #[serde(skip)]
    pub context_tokens: Option<u32>,
}

/// Anthropic's `max_tokens` when nothing sets one (the API requires the field).
pub(crate) const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// Anthropic's minimum thinking budget.
pub(crate) const ANTHROPIC_MIN_THINKING_BUDGET: u32 = 1024;

/// Whether `base_url` is OpenAI's own API (not a compatible server).
pub(crate) fn is_openai_api(base_url: &str) -> bool {
    let rest = base_url
        .strip_prefix("https://")
        .or_else(|| base_url.strip_prefix("http://"))
        .unwrap_or(base_url);
    let host = rest.split(['/', ':']).next().unwrap_or_default();
    host.eq_ignore_ascii_case("api.openai.com")
}

/// OpenAI reasoning families: the o-series and gpt-5.x (but not the `-chat` variants, which
/// are chat models and take sampling parameters). A routing prefix (`openai/o3`) is ignored.
pub(crate) fn is_openai_reasoning(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    let gpt5 = name.starts_with("gpt-5") && !name.contains("-chat");
    o_series || gpt5
}

impl Capabilities {
    /// The default for a model family (see the module comment for the rules).
    pub fn family_default(kind: ProviderKind, base_url: &str, model: &str) -> Capabilities {
        match kind {
            ProviderKind::OpenAi => {
                let reasoning = is_openai_reasoning(model);
                // OpenAI's own API takes `max_completion_tokens` for every current model
                // (`max_tokens` is deprecated there and rejected by reasoning models); other
                // servers only know `max_tokens`, unless they serve an OpenAI reasoning model.
                let token_limit = if reasoning || is_openai_api(base_url) {
                    TokenLimit::MaxCompletionTokens
                } else {
                    TokenLimit::MaxTokens
                };
                Capabilities {
                    temperature: !reasoning,
                    top_p: !reasoning,
                    seed: true,
                    token_limit,
                    default_max_tokens: None,
                    thinking: reasoning,
                    thinking_budget_tokens: ANTHROPIC_MIN_THINKING_BUDGET,
                    context_tokens: None,
                }
            }
            ProviderKind::Anthropic => Capabilities {
                temperature: true,
                top_p: true,
                seed: false,
                token_limit: TokenLimit::MaxTokens,
                default_max_tokens: Some(ANTHROPIC_DEFAULT_MAX_TOKENS),
                thinking: false,
                thinking_budget_tokens: ANTHROPIC_MIN_THINKING_BUDGET,
                context_tokens: None,
            },
            ProviderKind::Gemini => {
                let name = model.strip_prefix("models/").unwrap_or(model);
                Capabilities {
                    temperature: true,
                    top_p: true,
                    seed: true,
                    token_limit: TokenLimit::MaxTokens,
                    default_max_tokens: None,
                    // 2.5 and 3 think by default; their thought signatures are carried along.
                    thinking: name.starts_with("gemini-2.5") || name.starts_with("gemini-3"),
                    thinking_budget_tokens: ANTHROPIC_MIN_THINKING_BUDGET,
                    context_tokens: None,
                }
            }
        }
    }

    fn apply(&mut self, o: &CapabilityOverride) {
        let CapabilityOverride {
            temperature,
            top_p,
            seed,
            token_limit,
            default_max_tokens,
            thinking,
            thinking_budget_tokens,
            context_tokens,
        } = o;
        self.temperature = temperature.unwrap_or(self.temperature);
        self.top_p = top_p.unwrap_or(self.top_p);
        self.seed = seed.unwrap_or(self.seed);
        self.token_limit = token_limit.unwrap_or(self.token_limit);
        if default_max_tokens.is_some() {
            self.default_max_tokens = *default_max_tokens;
        }
        self.thinking = thinking.unwrap_or(self.thinking);
        self.thinking_budget_tokens = thinking_budget_tokens.unwrap_or(self.thinking_budget_tokens);
        if context_tokens.is_some() {
            self.context_tokens = *context_tokens;
        }
    }

    /// Family default, then the matching config entries (least specific first), then the
    /// Anthropic `extra.thinking` switch.
    pub fn resolve(
        kind: ProviderKind,
        base_url: &str,
        model: &str,
        overrides: &BTreeMap<String, CapabilityOverride>,
        extra: &Map<String, Value>,
    ) -> Capabilities {
        let mut caps = Capabilities::family_default(kind, base_url, model);
        let mut matching: Vec<(usize, bool, &CapabilityOverride)> = overrides
            .iter()
            .filter_map(|(pattern, o)| match pattern.strip_suffix('*') {
                Some(prefix) => model
                    .starts_with(prefix)
                    .then_some((prefix.len(), false, o)),
                None => (pattern == model).then_some((pattern.len(), true, o)),
            })
            .collect();
        matching.sort_by_key(|(len, exact, _)| (*exact, *len));
        for (_, _, o) in matching {
            caps.apply(o);
        }
        if kind == ProviderKind::Anthropic
            && matches!(
                extra
                    .get("thinking")
                    .and_then(|t| t.get("type"))
                    .and_then(Value::as_str),
                Some("enabled" | "adaptive")
            )
        {
            caps.thinking = true;
        }
        if kind == ProviderKind::Anthropic && caps.thinking {
            // Extended thinking is incompatible with temperature and top_p changes.
            caps.temperature = false;
            caps.top_p = false;
        }
        caps
    }
}

/// Checks the entries of `[llm.capabilities]`.
pub(crate) fn validate(overrides: &BTreeMap<String, CapabilityOverride>) -> Result<(), String> {
    for (pattern, o) in overrides {
        if pattern.trim().is_empty() || pattern == "*" {
            return Err(format!(
                "capabilities.`{pattern}`: the pattern must name a model or a model prefix ending in `*`"
            ));
        }
        if pattern[..pattern.len().saturating_sub(1)].contains('*') {
            return Err(format!(
                "capabilities.`{pattern}`: `*` is only allowed at the end of the pattern"
            ));
        }
        if o.default_max_tokens == Some(0) {
            return Err(format!(
                "capabilities.`{pattern}`: `default_max_tokens` must be at least 1"
            ));
        }
        if o.context_tokens == Some(0) {
            return Err(format!(
                "capabilities.`{pattern}`: `context_tokens` must be at least 1"
            ));
        }
        if o.thinking_budget_tokens
            .is_some_and(|b| b < ANTHROPIC_MIN_THINKING_BUDGET)
        {
            return Err(format!(
                "capabilities.`{pattern}`: `thinking_budget_tokens` must be at least {ANTHROPIC_MIN_THINKING_BUDGET}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let openai = "https://api.openai.com/v1";
        let local = "http://localhost:8000/v1";
        for m in [
            "gpt-5.2",
            "gpt-5-mini",
            "o3",
            "o4-mini",
            "o1-2024-12-17",
            "openai/o3",
        ] {
            let c = Capabilities::family_default(ProviderKind::OpenAi, local, m);
            assert!(!c.temperature && !c.top_p && c.thinking, "{m}");
            assert_eq!(c.token_limit, TokenLimit::MaxCompletionTokens, "{m}");
        }
        for m in ["gpt-4.1-2025-04-14", "gpt-5-chat-latest", "omni-x", "o10"] {
            let c = Capabilities::family_default(ProviderKind::OpenAi, openai, m);
            assert!(c.temperature && !c.thinking, "{m}");
            assert_eq!(c.token_limit, TokenLimit::MaxCompletionTokens, "{m}");
        }
        let vllm = Capabilities::family_default(ProviderKind::OpenAi, local, "Qwen/Qwen3-8B");
        assert_eq!(vllm.token_limit, TokenLimit::MaxTokens);
        assert!(vllm.temperature);
        let claude = Capabilities::family_default(ProviderKind::Anthropic, "", "claude-x");
        assert_eq!(
            claude.default_max_tokens,
            Some(ANTHROPIC_DEFAULT_MAX_TOKENS)
        );
        assert!(!claude.seed);
        assert!(!is_openai_api("https://api.openai.com.evil.example/v1"));
        assert!(is_openai_api("https://API.openai.com:443/v1"));
    }

    #[test]
    fn overrides_apply_least_specific_first_and_thinking_drops_sampling() {
        let mut o = BTreeMap::new();
        o.insert(
            "qwen*".to_string(),
            CapabilityOverride {
                temperature: Some(false),
                token_limit: Some(TokenLimit::MaxCompletionTokens),
                ..Default::default()
            },
        );
        o.insert(
            "qwen3*".to_string(),
            CapabilityOverride {
                temperature: Some(true),
                ..Default::default()
            },
        );
        o.insert(
            "qwen3-8b".to_string(),
            CapabilityOverride {
                top_p: Some(false),
                ..Default::default()
            },
        );
        let c = Capabilities::resolve(
            ProviderKind::OpenAi,
            "http://h",
            "qwen3-8b",
            &o,
            &Map::new(),
        );
        assert!(c.temperature && !c.top_p);
        assert_eq!(c.token_limit, TokenLimit::MaxCompletionTokens);
        let c = Capabilities::resolve(ProviderKind::OpenAi, "http://h", "qwen2", &o, &Map::new());
        assert!(!c.temperature && c.top_p);

        let extra: Map<String, Value> = serde_json::from_value(
            serde_json::json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        )
        .expect("map");
        let c = Capabilities::resolve(ProviderKind::Anthropic, "", "claude-x", &o, &extra);
        assert!(c.thinking && !c.temperature && !c.top_p);
        assert!(validate(&o).is_ok());
        let mut bad = BTreeMap::new();
        bad.insert("g*pt".to_string(), CapabilityOverride::default());
        assert!(validate(&bad).expect_err("bad pattern").contains("g*pt"));
    }

    #[test]
    fn context_tokens_resolve_by_pattern_and_stay_out_of_keys_and_hashes() {
        let o: BTreeMap<String, CapabilityOverride> = toml::from_str(
            "[\"qwen*\"]\ncontext_tokens = 32768\n[\"qwen3-8b\"]\ncontext_tokens = 8192\n",
        )
        .expect("valid overrides");
        let resolve =
            |m: &str| Capabilities::resolve(ProviderKind::OpenAi, "http://h", m, &o, &Map::new());
        assert_eq!(resolve("qwen3-8b").context_tokens, Some(8192));
        assert_eq!(resolve("qwen2").context_tokens, Some(32768));
        assert_eq!(resolve("llama").context_tokens, None);
        // The cache key serialises the capabilities: a context window must not change it.
        assert_eq!(
            serde_json::to_value(resolve("qwen3-8b")).unwrap(),
            serde_json::to_value(resolve("llama")).unwrap()
        );
        // Nor the config hash, which serialises the overrides.
        assert_eq!(
            serde_json::to_value(&o["qwen3-8b"]).unwrap(),
            serde_json::json!({})
        );
        let mut zero = BTreeMap::new();
        zero.insert(
            "m".to_string(),
            CapabilityOverride {
                context_tokens: Some(0),
                ..Default::default()
            },
        );
        assert!(
            validate(&zero)
                .expect_err("zero context")
                .contains("`context_tokens`")
        );
    }
}
