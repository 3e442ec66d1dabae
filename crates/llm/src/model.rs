//! The provider-neutral model interface: [`ChatModel`], [`ChatRequest`], [`ChatResponse`].
//!
//! Every role (agent, user simulator, verifiers, judge, compilers) talks to a model through
//! this trait, so any role can use any provider. Wire formats live in `openai.rs`,
//! `anthropic.rs` and `gemini.rs`; the HTTP plumbing in `http.rs`; caching in `cache.rs`.

use crate::capabilities::Capabilities;
use crate::error::{LlmError, MalformedArguments};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tauguard_core::message::{ParticipantMessage, Usage};
use tauguard_core::{Message, ToolCall, ToolSpec};

/// A boxed, sendable future: keeps [`ChatModel`] object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A chat model with tool calling. Object-safe: use it as `Arc<dyn ChatModel>` from tasks.
pub trait ChatModel: Send + Sync {
    /// A stable, human-readable identity such as `openai/gpt-4.1-2025-04-14`.
    fn id(&self) -> &str;

    /// What, besides the request, determines the answer: for HTTP models the protocol, base
    /// URL and bound model. Part of the cache key; never contains credentials.
    fn cache_scope(&self) -> String {
        self.id().to_string()
    }

    /// The model name `req` is answered by: `req.model`, or, when that is empty, the model
    /// this [`ChatModel`] was built for. Prices are looked up by it.
    fn resolved_model<'a>(&'a self, req: &'a ChatRequest) -> &'a str {
        &req.model
    }

    /// One completion. Transient failures are retried inside; see [`LlmError::class`].
    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;
}

impl<M: ChatModel + ?Sized> ChatModel for Arc<M> {
    fn id(&self) -> &str {
        (**self).id()
    }

    fn cache_scope(&self) -> String {
        (**self).cache_scope()
    }

    fn resolved_model<'a>(&'a self, req: &'a ChatRequest) -> &'a str {
        (**self).resolved_model(req)
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        (**self).complete(req)
    }
}

/// One completion request, provider-neutral. Sampling fields left `None` take the model
/// spec's value (baked into the model by the factory), and are not sent at all when the spec
/// has none either; a field the model's capabilities rule out is never sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name exactly as sent; empty = the model the [`ChatModel`] was built for.
    pub model: String,
    /// System, user, assistant (with tool calls) and tool messages, in prompt order. Only
    /// role, content, tool calls (id, name, arguments) and tool-result ids are sent.
    ///
    /// Shared: a caller keeps its history in an `Arc` and appends to it between calls
    /// (`Arc::make_mut` copies nothing once the request is dropped), so long conversations
    /// are never re-copied per call.
    pub messages: Arc<Vec<Message>>,
    /// Tools offered with `tool_choice: auto`; empty = no tools. Shared, because the same
    /// schemas go out with every call of a simulation.
    #[serde(default)]
    pub tools: Arc<[ToolSpec]>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sent where the provider supports it (OpenAI, Gemini); always part of the cache key.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Trial index: cache identity only, never sent.
    #[serde(default)]
    pub trial: u32,
    /// Ask for a JSON object reply (OpenAI `response_format`, Gemini `responseMimeType`;
    /// Anthropic has no switch and ignores it).
    #[serde(default)]
    pub json_mode: bool,
    /// Extra body parameters, deep-merged into the provider payload last (over the spec's).
    #[serde(default)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: impl Into<Arc<Vec<Message>>>) -> ChatRequest {
        ChatRequest {
            model: model.into(),
            messages: messages.into(),
            tools: Arc::from(Vec::new()),
            temperature: None,
            top_p: None,
            max_tokens: None,
            seed: None,
            trial: 0,
            json_mode: false,
            extra: Map::new(),
        }
    }

    pub fn with_tools(mut self, tools: impl Into<Arc<[ToolSpec]>>) -> Self {
        self.tools = tools.into();
        self
    }

    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub fn with_trial(mut self, trial: u32) -> Self {
        self.trial = trial;
        self
    }

    pub fn with_json_mode(mut self, on: bool) -> Self {
        self.json_mode = on;
        self
    }
}

/// One completion result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Text, if the model wrote any (an empty string is normalised to `None`).
    pub content: Option<String>,
    /// Tool calls with the provider's ids (synthesised when the provider gives none) and
    /// arguments parsed into JSON objects. `requestor` is `assistant`; the user simulator
    /// re-tags its own calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Prompt tokens include cached ones; `cached_prompt_tokens` is that subset. Includes the
    /// usage that failed attempts of this call reported before a retry succeeded (they were
    /// billed). On a cache hit: the usage recorded when the entry was written.
    #[serde(default)]
    pub usage: Usage,
    /// US dollars spent by this call, from the price table (discarded attempts included);
    /// `None` when the model has no price. A cache hit spends nothing: `Some(0.0)`, and what
    /// it would have cost is added to [`crate::CacheStats::saved_cost`].
    #[serde(default)]
    pub cost: Option<f64>,
    /// Wall time of the call, retries and waits included. On a cache hit: the replay's own
    /// time (reading the entry); the time recorded when the entry was written is in
    /// `original_latency_seconds`.
    #[serde(with = "secs_f64")]
    pub latency: Duration,
    /// On a cache hit: the latency recorded when the entry was written. `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_latency_seconds: Option<f64>,
    /// Answered from the on-disk response cache.
    #[serde(default)]
    pub cache_hit: bool,
    /// HTTP attempts made (1 = no retry; 0 = served without a request).
    #[serde(default)]
    pub attempts: u32,
    /// The provider's stop reason as the provider wrote it (`stop`, `tool_calls`, `end_turn`,
    /// `STOP`, ...); [`ChatResponse::truncated`] reads it.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Model name as reported by the provider, when it reports one.
    #[serde(default)]
    pub provider_model: Option<String>,
}

impl ChatResponse {
    /// τ²-bench's "has text content": not null and not whitespace-only.
    pub fn has_text(&self) -> bool {
        self.content
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty())
    }

    /// Whether the reply was cut at its token limit (see [`cut_at_token_limit`]).
    pub fn truncated(&self) -> bool {
        self.finish_reason
            .as_deref()
            .is_some_and(cut_at_token_limit)
    }

    /// The reply as a trajectory message body (content, tool calls or `None` when there are
    /// none, cost, usage, generation time, stop reason); the caller wraps it as assistant or
    /// user. Text and calls are moved, not copied.
    pub fn into_participant_message(self) -> ParticipantMessage {
        ParticipantMessage {
            generation_time_seconds: Some(self.latency.as_secs_f64()),
            original_generation_time_seconds: self.original_latency_seconds,
            usage: Some(self.usage),
            cost: self.cost,
            content: self.content,
            tool_calls: (!self.tool_calls.is_empty()).then_some(self.tool_calls),
            turn_idx: None,
            timestamp: None,
            finish_reason: self.finish_reason,
            token_limit_retry: None,
        }
    }
}

/// Whether a provider's stop reason says the reply ended at its token limit rather than
/// where the model chose to stop. Each wire format names it in its own word — OpenAI and
/// OpenAI-compatible servers `length`, Anthropic `max_tokens`, Gemini `MAX_TOKENS` — and
/// none of these words means anything else in another format, so the raw reason kept in
/// records and cache entries is enough to tell, old entries included.
pub fn cut_at_token_limit(finish_reason: &str) -> bool {
    [
        crate::openai::TOKEN_LIMIT_STOP,
        crate::anthropic::TOKEN_LIMIT_STOP,
        crate::gemini::TOKEN_LIMIT_STOP,
    ]
    .contains(&finish_reason)
}

/// A provider reply after wire decoding, before the emptiness check and pricing (usage is
/// read separately, so that a reply that fails to decode is still accounted for).
#[derive(Debug, Clone, Default)]
pub(crate) struct Decoded {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub provider_model: Option<String>,
}

/// Why a 2xx payload could not be decoded; mapped to [`LlmError`] with provider and model.
#[derive(Debug)]
pub(crate) enum DecodeError {
    Invalid(String),
    MalformedArguments {
        tool: String,
        call_id: String,
        raw: String,
        reason: String,
    },
}

/// A request with the model's defaults applied and the parameters its capabilities rule out
/// removed: what the wire formats turn into a body.
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    pub model: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
    pub json_mode: bool,
    /// The spec's `extra` with the request's merged over it.
    pub extra: Map<String, Value>,
    pub caps: Capabilities,
    /// OpenAI protocol: `""` instead of `null` as content of tool-call-only messages.
    pub empty_tool_call_content: bool,
}

impl<'a> Prepared<'a> {
    /// `req` as sent to a model with no defaults and `caps` (unit tests of the wire formats).
    #[cfg(test)]
    pub(crate) fn plain(req: &'a ChatRequest, model: &'a str, caps: Capabilities) -> Self {
        Prepared {
            model,
            messages: &req.messages,
            tools: &req.tools,
            temperature: req.temperature,
            top_p: req.top_p,
            max_tokens: req.max_tokens,
            seed: req.seed,
            json_mode: req.json_mode,
            extra: req.extra.clone(),
            caps,
            empty_tool_call_content: false,
        }
    }
}

impl DecodeError {
    pub(crate) fn into_llm(
        self,
        provider: &str,
        model: &str,
        usage: Usage,
        cost: Option<f64>,
    ) -> LlmError {
        match self {
            DecodeError::Invalid(reason) => LlmError::InvalidResponse {
                provider: provider.to_string(),
                model: model.to_string(),
                reason,
            },
            DecodeError::MalformedArguments {
                tool,
                call_id,
                raw,
                reason,
            } => LlmError::MalformedToolArguments(Box::new(MalformedArguments {
                provider: provider.to_string(),
                model: model.to_string(),
                tool,
                call_id,
                raw,
                reason,
                usage,
                cost,
                finish_reason: None,
            })),
        }
    }
}

/// Takes `value` as a tool-argument object, or explains why it is not one.
pub(crate) fn arguments_object(
    tool: &str,
    call_id: &str,
    value: Value,
) -> Result<Map<String, Value>, DecodeError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(DecodeError::MalformedArguments {
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            raw: other.to_string(),
            reason: format!("expected a JSON object, got {}", json_type(&other)),
        }),
    }
}

/// The string at `key` of a reply object, when it is one: a stop reason, a model name.
pub(crate) fn string_at(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Merges `extra` into `body`: objects merge key by key, anything else replaces.
pub(crate) fn deep_merge(body: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (k, v) in extra {
        match (body.get_mut(k), v) {
            (Some(Value::Object(dst)), Value::Object(src)) => deep_merge(dst, src),
            _ => {
                body.insert(k.clone(), v.clone());
            }
        }
    }
}

/// One turn of an alternating-turn API (Anthropic, Gemini): its role and content blocks.
pub(crate) type Turn = (&'static str, Vec<Value>);

/// A history as the alternating-turn APIs take it: the system texts apart (whitespace-only
/// ones dropped), every other message the turn `turn` makes of it, a turn with no blocks
/// dropped, consecutive turns of one role merged (the APIs require alternation), and a
/// history opening with `assistant_role` given the user turn `lead` in front (τ²-bench opens
/// with the agent's greeting; litellm puts a `"."` user turn first, and so does tauguard).
pub(crate) fn alternating_turns<'a>(
    messages: &'a [Message],
    assistant_role: &str,
    lead: Value,
    mut turn: impl FnMut(&'a Message) -> Turn,
) -> (Vec<&'a str>, Vec<Turn>) {
    let mut system = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for m in messages {
        if let Message::System { content } = m {
            system.extend(content.as_deref().filter(|c| !c.trim().is_empty()));
            continue;
        }
        let (role, blocks) = turn(m);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last)) if *last_role == role => last.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if turns
        .first()
        .is_some_and(|(role, _)| *role == assistant_role)
    {
        turns.insert(0, ("user", vec![lead]));
    }
    (system, turns)
}

/// Serde adapter: a `Duration` as fractional seconds.
mod secs_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

/// Test helpers shared by the unit tests of the wire formats.
#[cfg(test)]
pub(crate) mod test_support {
    use tauguard_core::message::ParticipantMessage;
    use tauguard_core::{Message, ToolCall};

    pub(crate) fn system(text: &str) -> Message {
        Message::System {
            content: Some(text.into()),
        }
    }

    pub(crate) fn user(text: &str) -> Message {
        Message::User(ParticipantMessage {
            content: Some(text.into()),
            ..Default::default()
        })
    }

    /// An assistant turn: its text (if any) and its tool calls (if any).
    pub(crate) fn assistant(text: Option<&str>, calls: Vec<ToolCall>) -> Message {
        Message::Assistant(ParticipantMessage {
            content: text.map(str::to_string),
            tool_calls: (!calls.is_empty()).then_some(calls),
            ..Default::default()
        })
    }

    /// A tool result built through serde, so new optional fields in core need no edits here.
    pub(crate) fn tool_result(id: &str, content: &str) -> Message {
        serde_json::from_value(serde_json::json!({"role": "tool", "id": id, "content": content}))
            .expect("a tool message")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(finish_reason: Option<&str>) -> ChatResponse {
        ChatResponse {
            content: Some("{\"verdict\": \"PA".into()),
            tool_calls: Vec::new(),
            usage: Usage::default(),
            cost: None,
            latency: Duration::from_millis(3),
            original_latency_seconds: Some(2.5),
            cache_hit: true,
            attempts: 0,
            finish_reason: finish_reason.map(str::to_string),
            provider_model: None,
        }
    }

    #[test]
    fn each_wire_formats_token_limit_word_is_a_cut_and_nothing_else_is() {
        for cut in ["length", "max_tokens", "MAX_TOKENS"] {
            assert!(reply(Some(cut)).truncated(), "{cut}");
        }
        for whole in [
            "stop",
            "tool_calls",
            "end_turn",
            "tool_use",
            "STOP",
            "SAFETY",
        ] {
            assert!(!reply(Some(whole)).truncated(), "{whole}");
        }
        assert!(!reply(None).truncated());
    }

    #[test]
    fn the_message_keeps_the_stop_reason_and_both_timings() {
        let m = reply(Some("length")).into_participant_message();
        assert_eq!(m.finish_reason.as_deref(), Some("length"));
        assert_eq!(m.generation_time_seconds, Some(0.003));
        assert_eq!(m.original_generation_time_seconds, Some(2.5));
        assert_eq!(m.token_limit_retry, None);
    }
}
