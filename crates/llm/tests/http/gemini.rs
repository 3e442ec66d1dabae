//! Gemini generateContent: URL and key header, contents/parts, sanitised schemas, usage.

use crate::common::{self, KEY};
use serde_json::json;
use tauguard_llm::{ErrorClass, LlmError, ProviderKind};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MODEL: &str = "gemini-2.5-flash";

fn call_reply(args: serde_json::Value) -> serde_json::Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "I'll cancel it now."},
                {"functionCall": {"name": "cancel_reservation",
                    "args": args}}
            ]},
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {
            "promptTokenCount": 1200,
            "candidatesTokenCount": 30,
            "totalTokenCount": 1250,
            "cachedContentTokenCount": 800,
            "thoughtsTokenCount": 20,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 1200}]
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "abc123"
    })
}

#[tokio::test]
async fn function_call_round_trip() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/models/{MODEL}:generateContent")))
        .and(header("x-goog-api-key", KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(call_reply(
            json!({"reservation_id": "EHGLP3", "reason": "change_of_plan"}),
        )))
        .expect(2)
        .mount(&server)
        .await;
    let model = common::model_of(ProviderKind::Gemini, &server, MODEL);
    let resp = common::ask(model.as_ref()).await.expect("reply");

    assert_eq!(resp.content.as_deref(), Some("I'll cancel it now."));
    let call = &resp.tool_calls[0];
    assert_eq!(call.name, "cancel_reservation");
    assert!(call.id.starts_with("tg_call_"), "{}", call.id);
    assert_eq!(call.arguments.get("reason"), Some(&json!("change_of_plan")));
    assert_eq!(resp.usage.prompt_tokens, 1200);
    assert_eq!(resp.usage.completion_tokens, 50);
    assert_eq!(resp.usage.cached_prompt_tokens, 800);
    assert_eq!(resp.cost, None);

    // Same reply again: same synthesised id (deterministic).
    let again = common::ask(model.as_ref()).await.expect("reply");
    assert_eq!(again.tool_calls[0].id, call.id);

    let requests = server.received_requests().await.unwrap_or_default();
    assert!(
        !requests[0].url.as_str().contains(KEY),
        "key must not be in the URL"
    );
    let body = &common::bodies(&server).await[0];
    assert!(
        body["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|s| s.contains("customer service agent"))
    );
    assert_eq!(body["contents"][0]["role"], json!("user"));
    assert_eq!(body["contents"][1]["role"], json!("model"));
    assert_eq!(body["generationConfig"]["seed"], json!(626729));
    assert_eq!(body["generationConfig"]["temperature"], json!(0.0));
    assert_eq!(
        body["toolConfig"]["functionCallingConfig"]["mode"],
        json!("AUTO")
    );
    let decls = &body["tools"][0]["functionDeclarations"];
    let text = decls.to_string();
    for banned in ["title", "$defs", "$ref", "additionalProperties", "default"] {
        assert!(!text.contains(banned), "{banned} in {text}");
    }
    assert_eq!(
        decls[1]["parameters"]["properties"]["reason"]["enum"][0],
        json!("change_of_plan")
    );
    assert_eq!(
        decls[1]["parameters"]["properties"]["note"]["nullable"],
        json!(true)
    );
}

#[tokio::test]
async fn blocked_or_partless_reply_is_empty() {
    let server = common::failing_once(
        ResponseTemplate::new(200).set_body_json(json!({
            "promptFeedback": {"blockReason": "SAFETY"},
            "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}
        })),
        ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS"}],
            "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}
        })),
    )
    .await;
    let model = common::model_of(ProviderKind::Gemini, &server, MODEL);
    let err = common::ask(model.as_ref()).await.expect_err("blocked");
    assert!(
        matches!(&err, LlmError::EmptyResponse { finish_reason: Some(r), .. } if r == "blocked: SAFETY"),
        "{err:?}"
    );
    let err = common::ask(model.as_ref()).await.expect_err("no parts");
    assert_eq!(err.class(), ErrorClass::ModelOutput);
}

#[tokio::test]
async fn non_object_args_are_malformed() {
    let server = common::ok_server(call_reply(json!(["EHGLP3"]))).await;
    let model = common::model_of(ProviderKind::Gemini, &server, MODEL);
    let err = common::ask(model.as_ref()).await.expect_err("malformed");
    assert!(
        matches!(&err, LlmError::MalformedToolArguments(m) if m.tool == "cancel_reservation"),
        "{err:?}"
    );
}
