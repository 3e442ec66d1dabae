//! Conformance through the production path: `ModelFactory::build(spec)` → model →
//! `ChatRequest::new("", …)` (what every role sends) → the body as the wiremock server
//! received it. Each body is checked by hand against the provider's documented constraints and,
//! when `.ci/venv` exists (`.ci/run` creates it), by the official SDKs' own request types
//! (`tests/sdk/validate_bodies.py`); without the venv that part is skipped with a printed line.

use crate::common::{self, ok_server};
use crate::openai::text_reply;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tauguard_core::message::ParticipantMessage;
use tauguard_core::{Message, ToolCall, ToolSpec};
use tauguard_llm::{CapabilityOverride, ChatRequest, ModelSpec, ProviderKind, TokenLimit};

pub(crate) fn repo_root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

/// Validates `body` with the official SDK types of `kind`; prints a visible line (bypassing
/// the test harness's capture) and returns when the venv is missing.
pub(crate) fn sdk_check(kind: &str, body: &Value) {
    let python = std::env::var_os("TAUGUARD_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".ci/venv/bin/python"));
    if !python.exists() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED official-SDK validation of the {kind} body: no {} (run .ci/run, or `python3 -m venv .ci/venv && .ci/venv/bin/pip install openai anthropic google-genai`)",
            python.display()
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/validate_bodies.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(kind)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the venv's python starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.to_string().as_bytes())
        .expect("body written");
    let out = child.wait_with_output().expect("validator finished");
    assert!(
        out.status.success(),
        "{}\nbody: {body}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("an object")
}

/// A judge-shaped request: system + user, a seed, nothing else (the judge no longer forces a
/// temperature; its spec decides).
fn judge_request() -> ChatRequest {
    ChatRequest::new(
        "",
        vec![
            Message::System {
                content: Some("You judge whether a conversation met its outcomes.".into()),
            },
            Message::User(ParticipantMessage {
                content: Some("conversation:\nuser: hi".into()),
                ..Default::default()
            }),
        ],
    )
    .with_seed(7)
    .with_json_mode(true)
}

#[tokio::test]
async fn openai_spec_sampling_and_extra_reach_every_request() {
    let server = ok_server(text_reply("{\"results\": []}")).await;
    let factory = common::factory(common::provider(ProviderKind::OpenAi, &server), None);
    let mut spec = ModelSpec::new("mock", "gpt-4.1-2025-04-14");
    spec.temperature = Some(0.3);
    spec.top_p = Some(0.9);
    spec.max_tokens = Some(256);
    spec.extra = map(json!({"user": "tauguard-run", "metadata": {"role": "judge"}}));
    let model = factory.build(&spec).expect("model");
    model.complete(&judge_request()).await.expect("reply");
    // A request's own setting wins over the spec's; its extra merges over the spec's.
    let mut own = judge_request().with_temperature(0.0);
    own.extra = map(json!({"metadata": {"call": "second"}}));
    model.complete(&own).await.expect("reply");

    let bodies = common::bodies(&server).await;
    let body = &bodies[0];
    assert_eq!(body["model"], json!("gpt-4.1-2025-04-14"));
    assert_eq!(body["temperature"], json!(0.3));
    assert_eq!(body["top_p"], json!(0.9));
    assert_eq!(
        body["max_tokens"],
        json!(256),
        "compatible server: max_tokens"
    );
    assert_eq!(body["user"], json!("tauguard-run"));
    assert_eq!(body["metadata"], json!({"role": "judge"}));
    assert_eq!(body["seed"], json!(7));
    assert_eq!(bodies[1]["temperature"], json!(0.0));
    assert_eq!(
        bodies[1]["metadata"],
        json!({"role": "judge", "call": "second"})
    );
    sdk_check("openai", body);

    // A spec without sampling sends none: the provider's defaults apply.
    let bare = factory
        .build(&ModelSpec::new("mock", "gpt-4.1-2025-04-14"))
        .expect("model");
    bare.complete(&judge_request()).await.expect("reply");
    let body = &common::bodies(&server).await[2];
    for key in [
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
    ] {
        assert!(body.get(key).is_none(), "{key} sent unset: {body}");
    }
}

#[tokio::test]
async fn openai_reasoning_model_gets_max_completion_tokens_and_no_sampling() {
    let server = ok_server(text_reply("{\"results\": []}")).await;
    let factory = common::factory(common::provider(ProviderKind::OpenAi, &server), None);
    let mut spec = ModelSpec::new("mock", "gpt-5.2");
    spec.temperature = Some(0.0);
    spec.top_p = Some(1.0);
    spec.max_tokens = Some(4000);
    spec.extra = map(json!({"reasoning_effort": "low"}));
    let caps = factory.capabilities(&spec).expect("caps");
    assert_eq!(caps.token_limit, TokenLimit::MaxCompletionTokens);
    let model = factory.build(&spec).expect("model");
    // Callers that still force temperature 0.0 (the guards' verifier today) get it dropped.
    model
        .complete(&judge_request().with_temperature(0.0))
        .await
        .expect("reply");
    let body = &common::bodies(&server).await[0];
    for key in ["temperature", "top_p", "max_tokens"] {
        assert!(
            body.get(key).is_none(),
            "{key} sent to a reasoning model: {body}"
        );
    }
    assert_eq!(body["max_completion_tokens"], json!(4000));
    assert_eq!(body["reasoning_effort"], json!("low"));
    sdk_check("openai", body);

    // o-series too, and a config override can turn sampling back on for a model.
    let factory = common::factory_with(common::provider(ProviderKind::OpenAi, &server), |c| {
        c.capabilities.insert(
            "o4-mini".into(),
            CapabilityOverride {
                seed: Some(false),
                ..Default::default()
            },
        );
        c.capabilities.insert(
            "my-gpt-5-finetune*".into(),
            CapabilityOverride {
                temperature: Some(true),
                token_limit: Some(TokenLimit::MaxTokens),
                ..Default::default()
            },
        );
    });
    for (model, temperature) in [("o4-mini", 0.0), ("my-gpt-5-finetune-v2", 0.2)] {
        let mut spec = ModelSpec::new("mock", model);
        spec.temperature = Some(temperature);
        spec.max_tokens = Some(100);
        factory
            .build(&spec)
            .expect("model")
            .complete(&judge_request())
            .await
            .expect("reply");
    }
    let bodies = common::bodies(&server).await;
    assert!(bodies[1].get("temperature").is_none() && bodies[1].get("seed").is_none());
    assert_eq!(bodies[1]["max_completion_tokens"], json!(100));
    assert_eq!(bodies[2]["temperature"], json!(0.2));
    assert_eq!(bodies[2]["max_tokens"], json!(100));
}

fn history_with_call(id: &str, name: &str, args: Value) -> Vec<Message> {
    let mut history = common::conversation();
    history.push(Message::Assistant(ParticipantMessage {
        tool_calls: Some(vec![ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: map(args),
            requestor: Default::default(),
        }]),
        ..Default::default()
    }));
    history.push(common::tool_result(id, r#"{"status": "ok"}"#));
    history
}

#[tokio::test]
async fn openai_tool_call_content_null_or_empty_string() {
    let server = ok_server(text_reply("Done.")).await;
    let history = history_with_call(
        "call_1",
        "get_reservation_details",
        json!({"reservation_id": "EHGLP3"}),
    );
    let req = ChatRequest::new("", history)
        .with_tools(common::tools())
        .with_seed(1);
    let factory = common::factory(common::provider(ProviderKind::OpenAi, &server), None);
    factory
        .build(&common::spec("gpt-4.1-2025-04-14"))
        .expect("model")
        .complete(&req)
        .await
        .expect("reply");
    let mut cfg = common::provider(ProviderKind::OpenAi, &server);
    cfg.empty_tool_call_content = true;
    let llama = common::factory(cfg, None);
    llama
        .build(&common::spec("qwen3-8b"))
        .expect("model")
        .complete(&req)
        .await
        .expect("reply");
    let bodies = common::bodies(&server).await;
    assert_eq!(bodies[0]["messages"][3]["content"], Value::Null);
    assert_eq!(bodies[1]["messages"][3]["content"], json!(""));
    assert_eq!(
        bodies[1]["messages"][3]["tool_calls"][0]["id"],
        json!("call_1")
    );
    sdk_check("openai", &bodies[0]);
    sdk_check("openai", &bodies[1]);
}

fn anthropic_thinking_reply() -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "The user wants the reservation.", "signature": "EqQBCgIYAhIMx"},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_reservation_details",
             "input": {"reservation_id": "EHGLP3"}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 50}
    })
}

#[tokio::test]
async fn anthropic_spec_extra_thinking_blocks_and_cached_system_prefix() {
    let server = ok_server(anthropic_thinking_reply()).await;
    let factory = common::factory(common::provider(ProviderKind::Anthropic, &server), None);
    let mut spec = ModelSpec::new("mock", "claude-sonnet-4-5");
    spec.temperature = Some(0.0);
    spec.max_tokens = Some(8000);
    spec.extra = map(json!({
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "metadata": {"user_id": "tauguard"}
    }));
    let model = factory.build(&spec).expect("model");
    let first = common::ask(model.as_ref()).await.expect("reply");
    let call = first.tool_calls[0].clone();
    assert_eq!(call.name, "get_reservation_details");

    // The next turn sends the tool result: the thinking block must precede the tool_use.
    let mut history = common::conversation();
    history.push(Message::Assistant(ParticipantMessage {
        tool_calls: Some(vec![call.clone()]),
        ..Default::default()
    }));
    history.push(common::tool_result(&call.id, r#"{"status": "ok"}"#));
    let next = ChatRequest::new("", history)
        .with_tools(common::tools())
        .with_seed(1);
    model.complete(&next).await.expect("reply");

    let bodies = common::bodies(&server).await;
    for body in &bodies {
        assert!(
            body.get("temperature").is_none(),
            "temperature with thinking: {body}"
        );
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(body["metadata"], json!({"user_id": "tauguard"}));
        assert_eq!(body["max_tokens"], json!(8000));
        assert_eq!(
            body["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(body.get("seed").is_none());
        sdk_check("anthropic", body);
    }
    let assistant = &bodies[1]["messages"][3];
    assert_eq!(assistant["role"], json!("assistant"));
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The user wants the reservation.", "signature": "EqQBCgIYAhIMx"})
    );
    assert_eq!(assistant["content"][1]["id"], json!("toolu_01A"));
    assert_eq!(
        bodies[1]["messages"][4]["content"][0]["tool_use_id"],
        json!("toolu_01A")
    );
}

/// The telecom user tool `set_apn_settings` (τ²-bench tools.json), and every telecom tool when
/// the τ²-bench data directory is present.
fn telecom_tools() -> Vec<ToolSpec> {
    let fixture: Value = serde_json::from_str(include_str!("fixtures/set_apn_settings.json"))
        .expect("fixture parses");
    let mut tools = vec![ToolSpec::from_openai(&fixture).expect("tool")];
    let dir = tauguard_testkit::tau2_candidate();
    if let Ok(text) = std::fs::read_to_string(dir.join("telecom/tools.json")) {
        let all: Value = serde_json::from_str(&text).expect("tools.json parses");
        for side in ["assistant_tools", "user_tools"] {
            for t in all[side].as_array().into_iter().flatten() {
                let spec = ToolSpec::from_openai(t).expect("tool");
                if spec.name != "set_apn_settings" {
                    tools.push(spec);
                }
            }
        }
    }
    tools
}

#[tokio::test]
async fn gemini_echoes_issued_ids_and_sends_schemas_the_api_accepts() {
    let server = ok_server(json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc-7Hq2", "name": "set_apn_settings",
                "args": {"apn_settings": {"apn_name": "internet"}}},
             "thoughtSignature": "c2lnbmF0dXJl"}
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}
    }))
    .await;
    let factory = common::factory(common::provider(ProviderKind::Gemini, &server), None);
    let mut spec = ModelSpec::new("mock", "gemini-2.5-flash");
    spec.temperature = Some(0.0);
    spec.extra = map(json!({"generationConfig": {"topK": 1}}));
    let model = factory.build(&spec).expect("model");
    let tools = telecom_tools();
    let first = model
        .complete(
            &ChatRequest::new("", common::conversation())
                .with_tools(tools.clone())
                .with_seed(3),
        )
        .await
        .expect("reply");
    let call = first.tool_calls[0].clone();
    let mut history = common::conversation();
    history.push(Message::Assistant(ParticipantMessage {
        tool_calls: Some(vec![call.clone()]),
        ..Default::default()
    }));
    history.push(common::tool_result(&call.id, "APN settings updated."));
    model
        .complete(&ChatRequest::new("", history).with_tools(tools).with_seed(3))
        .await
        .expect("reply");

    let bodies = common::bodies(&server).await;
    let body = &bodies[1];
    let model_part = &body["contents"][3]["parts"][0];
    assert_eq!(model_part["functionCall"]["id"], json!("fc-7Hq2"));
    assert_eq!(model_part["thoughtSignature"], json!("c2lnbmF0dXJl"));
    let response = &body["contents"][4]["parts"][0]["functionResponse"];
    assert_eq!(response["id"], json!("fc-7Hq2"));
    assert_eq!(response["name"], json!("set_apn_settings"));
    assert_eq!(body["generationConfig"]["topK"], json!(1));
    assert_eq!(body["generationConfig"]["temperature"], json!(0.0));

    let decls = body["tools"][0]["functionDeclarations"]
        .as_array()
        .expect("declarations");
    let apn = decls
        .iter()
        .find(|d| d["name"] == json!("set_apn_settings"))
        .expect("set_apn_settings declared");
    let settings = &apn["parameters"]["properties"]["apn_settings"];
    assert_eq!(settings["type"], json!("object"));
    assert!(settings["properties"]["apn_name"].is_object(), "{settings}");
    assert!(
        !apn.to_string().contains(r#"{"type":"object"}"#),
        "property-less object left: {apn}"
    );
    for b in &bodies {
        sdk_check("gemini", b);
    }
}
