//! OpenAI chat completions: request shape, tool-call decoding, usage, cost, errors.

use crate::common::{self, KEY, KEY_VAR};
use serde_json::json;
use tauguard_llm::{ErrorClass, LlmConfig, LlmError, ModelFactory, ProviderKind};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use common::GPT as MODEL;

pub(crate) fn tool_call_reply(arguments: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-BkQ2cXyZ9t1",
        "object": "chat.completion",
        "created": 1750000000,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_Xk2mPq81",
                    "type": "function",
                    "function": {"name": "get_reservation_details", "arguments": arguments}
                }],
                "refusal": null,
                "annotations": []
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {
            "prompt_tokens": 2000,
            "completion_tokens": 20,
            "total_tokens": 2020,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}
        },
        "service_tier": "default",
        "system_fingerprint": "fp_b3f1157249"
    })
}

pub(crate) fn text_reply(content: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-BkQ2dAbC",
        "object": "chat.completion",
        "model": "gpt-4.1-2025-04-14",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
}

#[tokio::test]
async fn tool_call_round_trip() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(json!({
            "model": MODEL,
            "tool_choice": "auto",
            "temperature": 0.0,
            "seed": 626729,
            "messages": [
                {"role": "system"},
                {"role": "assistant", "content": "Hi! How can I help you today?"},
                {"role": "user"}
            ]
        })))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(tool_call_reply(r#"{"reservation_id": "EHGLP3"}"#)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let model = common::gpt(&server);
    assert_eq!(model.id(), "mock/gpt-4.1-2025-04-14");
    let resp = common::ask(model.as_ref()).await.expect("reply");

    assert_eq!(resp.content, None);
    assert_eq!(resp.tool_calls.len(), 1);
    let call = &resp.tool_calls[0];
    assert_eq!(call.id, "call_Xk2mPq81");
    assert_eq!(call.name, "get_reservation_details");
    assert_eq!(call.arguments.get("reservation_id"), Some(&json!("EHGLP3")));
    assert_eq!(resp.usage.prompt_tokens, 2000);
    assert_eq!(resp.usage.completion_tokens, 20);
    assert_eq!(resp.usage.cached_prompt_tokens, 1024);
    let expected = (976.0 * 2.0 + 1024.0 * 0.5 + 20.0 * 8.0) / 1e6;
    assert!((resp.cost.expect("priced") - expected).abs() < 1e-12);
    assert_eq!(resp.attempts, 1);
    assert!(!resp.cache_hit);
    assert_eq!(resp.finish_reason.as_deref(), Some("tool_calls"));

    let body = &common::bodies(&server).await[0];
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(body["tools"][0]["type"], json!("function"));
    assert!(!body.to_string().contains(KEY));
}

#[tokio::test]
async fn text_reply_and_unknown_price() {
    let server = common::ok_server(text_reply("Sure, one moment.")).await;
    let model = common::model_of(ProviderKind::OpenAi, &server, "local-llama");
    let resp = common::ask(model.as_ref()).await.expect("reply");
    assert_eq!(resp.content.as_deref(), Some("Sure, one moment."));
    assert!(resp.tool_calls.is_empty());
    assert_eq!(resp.cost, None, "unknown model must cost None, not 0");
}

#[tokio::test]
async fn malformed_arguments_surface_raw_text_and_are_not_retried() {
    let server = MockServer::start().await;
    let raw = r#"{"reservation_id": "EHGLP3""#;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_json(tool_call_reply(raw)),
        Some(1),
    )
    .await;
    let model = common::gpt(&server);
    let err = common::ask(model.as_ref()).await.expect_err("malformed");
    assert_eq!(err.class(), ErrorClass::ModelOutput);
    match &err {
        LlmError::MalformedToolArguments(m) => {
            assert_eq!(m.tool, "get_reservation_details");
            assert_eq!(m.call_id, "call_Xk2mPq81");
            assert_eq!(m.raw, raw);
        }
        other => panic!("unexpected {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("mock") && text.contains(MODEL), "{text}");

    // A JSON value that is not an object is malformed too.
    server.reset().await;
    common::answer_posts(
        &server,
        ResponseTemplate::new(200).set_body_json(tool_call_reply("[1, 2]")),
        None,
    )
    .await;
    let err = common::ask(model.as_ref()).await.expect_err("array");
    assert!(matches!(err, LlmError::MalformedToolArguments(_)), "{err}");
}

#[tokio::test]
async fn empty_reply_is_a_distinct_error() {
    let server = common::ok_server(text_reply("")).await;
    let model = common::gpt(&server);
    let err = common::ask(model.as_ref()).await.expect_err("empty");
    assert!(
        matches!(&err, LlmError::EmptyResponse { finish_reason: Some(r), .. } if r == "stop"),
        "{err:?}"
    );
    assert_eq!(err.class(), ErrorClass::ModelOutput);
}

#[tokio::test]
async fn auth_failure_is_fatal_and_never_quotes_the_key() {
    let server = MockServer::start().await;
    common::answer_posts(&server, ResponseTemplate::new(401).set_body_json(json!({
            "error": {
                "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"
            }
        })), Some(1)).await;
    let factory = common::factory(common::provider(ProviderKind::OpenAi, &server), None);
    let model = factory.build(&common::spec(MODEL)).expect("model");
    let err = common::ask(model.as_ref()).await.expect_err("401");
    assert_eq!(err.class(), ErrorClass::Fatal);
    assert!(err.is_fatal());
    assert_eq!(err.status(), Some(401));
    let text = err.to_string();
    assert!(
        text.contains("HTTP 401") && text.contains("mock") && text.contains(MODEL),
        "{text}"
    );
    assert!(!text.contains(KEY), "key leaked: {text}");
    assert!(!format!("{err:?}").contains(KEY));
    assert!(!format!("{factory:?}").contains(KEY));
}

#[tokio::test]
async fn missing_key_names_the_variable() {
    let mut config = LlmConfig::default();
    let mut cfg = tauguard_llm::ProviderConfig::builtin(ProviderKind::OpenAi);
    cfg.api_key_env = Some(KEY_VAR.into());
    config.providers.insert("mock".into(), cfg);
    let factory = ModelFactory::new(config)
        .expect("config")
        .with_env(|_| None);
    let err = factory
        .build(&common::spec(MODEL))
        .err()
        .expect("missing key");
    assert!(matches!(err, LlmError::MissingApiKey { .. }));
    assert!(err.to_string().contains(KEY_VAR), "{err}");
}

#[tokio::test]
async fn no_key_configured_sends_no_authorization() {
    let server = common::ok_server(text_reply("ok")).await;
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.api_key_env = None;
    let factory = common::factory(cfg, None);
    let model = factory.build(&common::spec("qwen3")).expect("model");
    common::ask(model.as_ref()).await.expect("reply");
    let requests = server.received_requests().await.unwrap_or_default();
    assert!(requests[0].headers.get("authorization").is_none());
}
