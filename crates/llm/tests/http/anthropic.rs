//! Anthropic Messages: headers, system/tool_use/tool_result shapes, usage with cache reads.

use crate::common::{self, KEY};
use serde_json::json;
use tauguard_core::Message;
use tauguard_core::message::ParticipantMessage;
use tauguard_llm::{ErrorClass, LlmError, ProviderKind};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MODEL: &str = "claude-sonnet-4-5";

fn tool_use_reply(input: serde_json::Value) -> serde_json::Value {
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "Let me look up that reservation."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_reservation_details", "input": input}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {
            "input_tokens": 400,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1600,
            "output_tokens": 60,
            "service_tier": "standard"
        }
    })
}

#[tokio::test]
async fn tool_use_round_trip() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(tool_use_reply(json!({"reservation_id": "EHGLP3"}))),
        )
        .expect(1)
        .mount(&server)
        .await;
    let model = common::model_of(ProviderKind::Anthropic, &server, MODEL);

    // History with a previous tool round, to check tool_use / tool_result conversion.
    let mut req = common::request(MODEL);
    let earlier = tauguard_core::ToolCall {
        id: "toolu_prev".into(),
        name: "get_user_details".into(),
        arguments: json!({"user_id": "emma_kim_9957"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        requestor: Default::default(),
    };
    std::sync::Arc::make_mut(&mut req.messages).push(Message::Assistant(ParticipantMessage {
        tool_calls: Some(vec![earlier]),
        ..Default::default()
    }));
    std::sync::Arc::make_mut(&mut req.messages).push(crate::common::tool_result(
        "toolu_prev",
        r#"{"user_id": "emma_kim_9957"}"#,
    ));

    let resp = model.complete(&req).await.expect("reply");
    assert_eq!(
        resp.content.as_deref(),
        Some("Let me look up that reservation.")
    );
    assert_eq!(resp.tool_calls[0].id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(
        resp.tool_calls[0].arguments.get("reservation_id"),
        Some(&json!("EHGLP3"))
    );
    assert_eq!(resp.usage.prompt_tokens, 2000);
    assert_eq!(resp.usage.cached_prompt_tokens, 1600);
    assert_eq!(resp.usage.completion_tokens, 60);
    let expected = (400.0 * 3.0 + 1600.0 * 0.3 + 60.0 * 15.0) / 1e6;
    assert!((resp.cost.expect("priced") - expected).abs() < 1e-12);
    assert_eq!(resp.finish_reason.as_deref(), Some("tool_use"));

    let body = &common::bodies(&server).await[0];
    assert!(
        body["system"][0]["text"]
            .as_str()
            .is_some_and(|s| s.starts_with("<instructions>"))
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(body.get("seed").is_none(), "Anthropic has no seed");
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["reservation_id"])
    );
    let msgs = body["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["role"], json!("user"));
    assert_eq!(msgs[1]["role"], json!("assistant"));
    assert_eq!(msgs[2]["role"], json!("user"));
    assert_eq!(msgs[3]["content"][0]["type"], json!("tool_use"));
    assert_eq!(
        msgs[3]["content"][0]["input"]["user_id"],
        json!("emma_kim_9957")
    );
    assert_eq!(msgs[4]["content"][0]["type"], json!("tool_result"));
    assert_eq!(msgs[4]["content"][0]["tool_use_id"], json!("toolu_prev"));
}

#[tokio::test]
async fn non_object_input_is_malformed() {
    let server = common::ok_server(tool_use_reply(json!("EHGLP3"))).await;
    let model = common::model_of(ProviderKind::Anthropic, &server, MODEL);
    let err = common::ask(model.as_ref()).await.expect_err("malformed");
    match err {
        LlmError::MalformedToolArguments(m) => {
            assert_eq!(m.tool, "get_reservation_details");
            assert_eq!(m.raw, "\"EHGLP3\"");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn empty_content_is_an_empty_response() {
    let server = common::ok_server(json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 0}
    }))
    .await;
    let model = common::model_of(ProviderKind::Anthropic, &server, MODEL);
    let err = common::ask(model.as_ref()).await.expect_err("empty");
    assert_eq!(err.class(), ErrorClass::ModelOutput);
    assert!(matches!(err, LlmError::EmptyResponse { .. }));
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = common::failing_once(
        ResponseTemplate::new(529).set_body_json(json!({
            "type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}
        })),
        ResponseTemplate::new(200)
            .set_body_json(tool_use_reply(json!({"reservation_id": "EHGLP3"}))),
    )
    .await;
    let model = common::model_of(ProviderKind::Anthropic, &server, MODEL);
    let resp = common::ask(model.as_ref()).await.expect("reply");
    assert_eq!(resp.attempts, 2);
}
