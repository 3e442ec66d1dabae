//! Shared fixtures: a τ²-bench airline conversation, a provider config pointing at a wiremock
//! server with millisecond backoffs, and a factory whose environment holds a fake key.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::{Message, ToolSpec};
use tauguard_llm::{
    CacheConfig, ChatRequest, LlmConfig, LlmError, ModelFactory, ModelPrice, ModelSpec, PriceTable,
    ProviderConfig, ProviderKind, RetryConfig,
};
use tauguard_llm::{ChatModel, ChatResponse};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The fake key; tests assert it never shows up where it must not.
pub(crate) const KEY: &str = "sk-test-SECRET-0123456789abcdef";
pub(crate) const KEY_VAR: &str = "TAUGUARD_TEST_KEY";

pub(crate) fn provider(kind: ProviderKind, server: &MockServer) -> ProviderConfig {
    let mut cfg = ProviderConfig::builtin(kind);
    cfg.base_url = Some(server.uri());
    cfg.api_key_env = Some(KEY_VAR.into());
    cfg.timeout_secs = 2.0;
    cfg.retry = RetryConfig {
        max_attempts: 3,
        initial_backoff_secs: 0.001,
        max_backoff_secs: 0.005,
        max_retry_after_secs: 5.0,
        jitter: true,
    };
    cfg
}

pub(crate) fn prices() -> PriceTable {
    let mut p = PriceTable::default();
    p.insert(
        "gpt-4.1-2025-04-14",
        ModelPrice {
            input_per_mtok: 2.0,
            output_per_mtok: 8.0,
            cached_input_per_mtok: Some(0.5),
        },
    );
    p.insert(
        "claude-sonnet-4-5",
        ModelPrice {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cached_input_per_mtok: Some(0.3),
        },
    );
    p
}

pub(crate) fn factory(cfg: ProviderConfig, cache: Option<CacheConfig>) -> ModelFactory {
    factory_with(cfg, |c| c.cache = cache)
}

/// A factory of provider `mock` (`cfg`) with [`prices`], the rest of its config as `llm`
/// leaves it; its environment holds the fake key.
pub(crate) fn factory_with(cfg: ProviderConfig, llm: impl FnOnce(&mut LlmConfig)) -> ModelFactory {
    let mut config = LlmConfig {
        prices: prices(),
        ..LlmConfig::default()
    };
    config.providers.insert("mock".into(), cfg);
    llm(&mut config);
    ModelFactory::new(config)
        .expect("valid config")
        .with_env(|var| (var == KEY_VAR).then(|| KEY.to_string()))
}

pub(crate) fn spec(model: &str) -> ModelSpec {
    let mut s = ModelSpec::new("mock", model);
    s.temperature = Some(0.0);
    s
}

/// The priced OpenAI model most tests ask.
pub(crate) const GPT: &str = "gpt-4.1-2025-04-14";

/// [`GPT`] at `server`, uncached.
pub(crate) fn gpt(server: &MockServer) -> Arc<dyn ChatModel> {
    model_of(ProviderKind::OpenAi, server, GPT)
}

/// `model` of a `kind` provider at `server`, uncached ([`provider`], [`factory`], [`spec`]).
pub(crate) fn model_of(kind: ProviderKind, server: &MockServer, model: &str) -> Arc<dyn ChatModel> {
    factory(provider(kind, server), None)
        .build(&spec(model))
        .expect("model")
}

/// Answers every POST to `server` with `response`; with `times`, the server checks on drop
/// that exactly that many arrived.
pub(crate) async fn answer_posts(
    server: &MockServer,
    response: ResponseTemplate,
    times: Option<u64>,
) {
    let mock = Mock::given(method("POST")).respond_with(response);
    match times {
        Some(n) => mock.expect(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

/// A server answering every POST with `reply` (HTTP 200).
pub(crate) async fn ok_server(reply: Value) -> MockServer {
    let server = MockServer::start().await;
    answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_json(reply),
        None,
    )
    .await;
    server
}

/// A server answering the first POST with `first` and every later one with `then`: one
/// failed attempt before the reply.
pub(crate) async fn failing_once(first: ResponseTemplate, then: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    answer_first(&server, first).await;
    answer_posts(&server, then, None).await;
    server
}

/// Answers the next POST to `server` with `response`, ahead of the mocks mounted after it.
pub(crate) async fn answer_first(server: &MockServer, response: ResponseTemplate) {
    Mock::given(method("POST"))
        .respond_with(response)
        .up_to_n_times(1)
        .mount(server)
        .await;
}

/// Answers every POST to `server` with `body` (HTTP 200) after `delay`.
pub(crate) async fn answer_posts_late(server: &MockServer, body: Value, delay: Duration) {
    let reply = ResponseTemplate::new(200)
        .set_body_json(body)
        .set_delay(delay);
    answer_posts(server, reply, None).await;
}

/// One call as production makes it ([`request`]).
pub(crate) async fn ask(model: &dyn ChatModel) -> Result<ChatResponse, LlmError> {
    model.complete(&request("")).await
}

fn participant(text: &str) -> ParticipantMessage {
    ParticipantMessage {
        content: Some(text.into()),
        ..Default::default()
    }
}

/// System prompt, the fixed greeting, and the user's first message.
pub(crate) fn conversation() -> Vec<Message> {
    vec![
        Message::System {
            content: Some(
                "<instructions>\nYou are a customer service agent.\n</instructions>\n<policy>\nBe nice.\n</policy>"
                    .into(),
            ),
        },
        Message::Assistant(participant("Hi! How can I help you today?")),
        Message::User(participant(
            "Hi, I'd like to cancel reservation EHGLP3. My user id is emma_kim_9957.",
        )),
    ]
}

/// Two airline tools with pydantic-style schemas (titles, `$defs`, `$ref`, nullable).
pub(crate) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_reservation_details".into(),
            description: "Get the details of a reservation.".into(),
            parameters: json!({
                "type": "object",
                "title": "get_reservation_details",
                "properties": {
                    "reservation_id": {"type": "string", "title": "Reservation Id",
                        "description": "The reservation ID, such as '8JX2WO'."}
                },
                "required": ["reservation_id"],
                "additionalProperties": false
            }),
        },
        ToolSpec {
            name: "cancel_reservation".into(),
            description: "Cancel the whole reservation.".into(),
            parameters: json!({
                "type": "object",
                "$defs": {"Reason": {"enum": ["change_of_plan", "airline_cancelled", "other"],
                    "title": "Reason", "type": "string"}},
                "properties": {
                    "reservation_id": {"type": "string", "title": "Reservation Id"},
                    "reason": {"$ref": "#/$defs/Reason"},
                    "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
                },
                "required": ["reservation_id"]
            }),
        },
    ]
}

/// The request every production caller builds: no model name (the model's own), no sampling
/// (the spec's, baked into the model), the trial's seed.
pub(crate) fn request(_model: &str) -> ChatRequest {
    ChatRequest::new("", conversation())
        .with_tools(tools())
        .with_seed(626729)
}

/// JSON bodies of every request the server received.
pub(crate) async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}

/// A tool result built through serde, so new optional fields in core need no edits here.
pub(crate) fn tool_result(id: &str, content: &str) -> Message {
    serde_json::from_value(json!({"role": "tool", "id": id, "content": content}))
        .expect("a tool message")
}
