//! Gemini `generateContent` wire format.
//!
//! Request: `POST {base_url}/models/{model}:generateContent` with the key in `x-goog-api-key`
//! (never in the URL). System messages become `systemInstruction`; history becomes `contents`
//! with roles `user` / `model` and `parts` (`text`, `functionCall {name, args}`,
//! `functionResponse {name, response: {"content": <tool output>}}`; the function name of a
//! result is looked up from the call with the same id). Consecutive messages of one role are
//! merged and a history opening with the model gets a `"."` user turn. Tools go in
//! `tools[0].functionDeclarations` with schemas rewritten by `gemini_schema.rs`, with
//! `toolConfig.functionCallingConfig.mode = AUTO`; sampling in `generationConfig`
//! (`temperature`, `topP`, `maxOutputTokens`, `seed` (reduced modulo 2³¹: Gemini's seed is an
//! int32), `responseMimeType` for JSON mode), each only when set and allowed by the model's
//! capabilities (also when it comes through `extra`).
//!
//! Reply: `candidates[0].content.parts`; thought parts are skipped. Call ids Gemini returns are
//! echoed back in `functionCall.id` and in the matching `functionResponse.id` (the API pairs
//! calls and results by them). Gemini may omit call ids: one is then derived from the request
//! length, the call's position, name and arguments (deterministic and unique within a
//! conversation) and marked by [`SYNTHETIC_ID_PREFIX`], so it is never sent back as if Gemini
//! had issued it. A part's `thoughtSignature` (which Gemini 3 requires back on later turns) is
//! carried inside the id after [`THOUGHT_SIGNATURE_SEP`], restored when the history is sent
//! again, and stripped from the echoed id. Usage from
//! `usageMetadata`: prompt = `promptTokenCount + toolUsePromptTokenCount`, completion =
//! `candidatesTokenCount + thoughtsTokenCount`, cached = `cachedContentTokenCount`.

use crate::gemini_schema;
use crate::model::{
    DecodeError, Decoded, Prepared, alternating_turns, arguments_object, deep_merge, string_at,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use tauguard_core::message::Usage;
use tauguard_core::{Message, ToolCall};

/// Separates a call id from the thought signature carried along with it.
pub(crate) const THOUGHT_SIGNATURE_SEP: &str = "#ts=";

/// Prefix of ids tauguard made up for calls Gemini returned without one.
pub(crate) const SYNTHETIC_ID_PREFIX: &str = "tg_call_";

/// The id Gemini issued for a call, if it issued one: `id` without a carried signature, or
/// `None` for a synthesised id.
fn issued_id(id: &str) -> Option<&str> {
    let id = id
        .split_once(THOUGHT_SIGNATURE_SEP)
        .map_or(id, |(id, _)| id);
    (!id.is_empty() && !id.starts_with(SYNTHETIC_ID_PREFIX)).then_some(id)
}

pub(crate) fn url(base_url: &str, model: &str) -> String {
    let model = model.strip_prefix("models/").unwrap_or(model);
    format!("{base_url}/models/{model}:generateContent")
}

pub(crate) fn build_body(req: &Prepared<'_>) -> Value {
    let names: HashMap<&str, &str> = req
        .messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let (system, contents) = alternating_turns(req.messages, "model", json!({"text": "."}), |m| {
        match m {
            Message::Assistant(p) => {
                let mut parts = text_part(p.content.as_deref());
                parts.extend(m.tool_calls().iter().map(call_part));
                ("model", parts)
            }
            Message::Tool(t) => {
                let name = names.get(t.id.as_str()).copied().unwrap_or("unknown_tool");
                let mut response = Map::new();
                if let Some(id) = issued_id(&t.id) {
                    response.insert("id".into(), json!(id));
                }
                response.insert("name".into(), json!(name));
                response.insert("response".into(), json!({"content": t.content}));
                ("user", vec![json!({"functionResponse": response})])
            }
            // System messages are taken apart before a turn is made.
            Message::User(_) | Message::System { .. } => ("user", text_part(m.content())),
        }
    });

    let mut body = Map::new();
    let contents: Vec<Value> = contents
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect();
    body.insert("contents".into(), Value::Array(contents));
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    if !req.tools.is_empty() {
        let decls: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                d.insert("description".into(), json!(t.description));
                let params = gemini_schema::sanitize(&t.parameters);
                if !gemini_schema::is_empty_object(&params) {
                    d.insert("parameters".into(), params);
                }
                Value::Object(d)
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": {"mode": "AUTO"}}),
        );
    }
    let caps = &req.caps;
    let mut generation = Map::new();
    if let Some(t) = req.temperature.filter(|_| caps.temperature) {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p.filter(|_| caps.top_p) {
        generation.insert("topP".into(), json!(p));
    }
    if let Some(n) = req.max_tokens.or(caps.default_max_tokens) {
        generation.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(seed) = req.seed.filter(|_| caps.seed) {
        generation.insert("seed".into(), json!(seed % (1 << 31)));
    }
    if req.json_mode {
        generation.insert("responseMimeType".into(), json!("application/json"));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    deep_merge(&mut body, &req.extra);
    if let Some(Value::Object(generation)) = body.get_mut("generationConfig") {
        for (key, ok) in [
            ("temperature", caps.temperature),
            ("topP", caps.top_p),
            ("seed", caps.seed),
        ] {
            if !ok {
                generation.remove(key);
            }
        }
    }
    Value::Object(body)
}

fn text_part(content: Option<&str>) -> Vec<Value> {
    match content {
        Some(c) if !c.trim().is_empty() => vec![json!({"text": c})],
        _ => Vec::new(),
    }
}

fn call_part(c: &ToolCall) -> Value {
    let mut call = Map::new();
    if let Some(id) = issued_id(&c.id) {
        call.insert("id".into(), json!(id));
    }
    call.insert("name".into(), json!(c.name));
    call.insert("args".into(), Value::Object(c.arguments.clone()));
    let mut part = Map::new();
    part.insert("functionCall".into(), Value::Object(call));
    if let Some((_, sig)) = c.id.split_once(THOUGHT_SIGNATURE_SEP) {
        part.insert("thoughtSignature".into(), json!(sig));
    }
    Value::Object(part)
}

/// The stop reason Gemini gives a reply cut at its token limit.
pub(crate) const TOKEN_LIMIT_STOP: &str = "MAX_TOKENS";

/// Decodes a reply; `salt` (the request's message count) makes synthesised ids unique.
pub(crate) fn decode(body: &Value, salt: usize) -> Result<Decoded, DecodeError> {
    let provider_model = string_at(body, "modelVersion");
    let Some(candidate) = body
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        // No candidate: the prompt was blocked, or the server sent nothing usable.
        let reason = body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
            .map(|r| format!("blocked: {r}"));
        if reason.is_none() && body.get("candidates").is_some_and(|c| !c.is_array()) {
            return Err(DecodeError::Invalid("`candidates` is not an array".into()));
        }
        return Ok(Decoded {
            finish_reason: reason,
            provider_model,
            ..Decoded::default()
        });
    };
    let parts = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(t) = part.get("text").and_then(Value::as_str) {
            text.push_str(t);
        }
        if let Some(call) = part.get("functionCall") {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| DecodeError::Invalid("a `functionCall` has no `name`".into()))?;
            let args = call.get("args").cloned().unwrap_or(Value::Null);
            let mut id = match call.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => synthetic_id(salt, index, name, &args),
            };
            let arguments = arguments_object(name, &id, args)?;
            if let Some(sig) = part.get("thoughtSignature").and_then(Value::as_str) {
                id = format!("{id}{THOUGHT_SIGNATURE_SEP}{sig}");
            }
            tool_calls.push(ToolCall {
                id,
                name: name.to_string(),
                arguments,
                requestor: Default::default(),
            });
        }
    }
    Ok(Decoded {
        content: Some(text).filter(|t| !t.is_empty()),
        tool_calls,
        finish_reason: string_at(candidate, "finishReason"),
        provider_model,
    })
}

fn synthetic_id(salt: usize, index: usize, name: &str, args: &Value) -> String {
    let mut h = blake3::Hasher::new();
    h.update(format!("{salt}\0{index}\0{name}\0{args}").as_bytes());
    let hex = h.finalize().to_hex();
    format!("{SYNTHETIC_ID_PREFIX}{}", &hex.as_str()[..16])
}

/// The reply's (or an error body's) `usageMetadata`, zero when absent.
pub(crate) fn usage(body: &Value) -> Usage {
    body.get("usageMetadata")
        .map(decode_usage)
        .unwrap_or_default()
}

fn decode_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        prompt_tokens: n("promptTokenCount") + n("toolUsePromptTokenCount"),
        completion_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
        cached_prompt_tokens: n("cachedContentTokenCount"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::Capabilities;
    use crate::config::ProviderKind;
    use crate::model::ChatRequest;
    use crate::model::test_support::{assistant, tool_result, user};

    #[test]
    fn signatures_round_trip_through_ids_and_results_find_their_names() {
        let reply = json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"text": "thinking...", "thought": true},
                {"functionCall": {"name": "get_user_details", "args": {"user_id": "u1"}},
                 "thoughtSignature": "c2lnbmF0dXJl"}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 3, "thoughtsTokenCount": 2}
        });
        let d = decode(&reply, 4).expect("decodes");
        assert_eq!(d.content, None);
        assert_eq!(usage(&reply).completion_tokens, 5);
        let call = d.tool_calls[0].clone();
        assert!(call.id.starts_with(SYNTHETIC_ID_PREFIX) && call.id.ends_with("#ts=c2lnbmF0dXJl"));
        let req = ChatRequest::new(
            "gemini-x",
            vec![
                user("hi"),
                assistant(None, vec![call.clone()]),
                tool_result(&call.id, "{\"name\": \"Mia\"}"),
            ],
        );
        let caps = Capabilities::family_default(ProviderKind::Gemini, "", "gemini-x");
        let body = build_body(&Prepared::plain(&req, "gemini-x", caps));
        let model_part = &body["contents"][1]["parts"][0];
        assert_eq!(model_part["thoughtSignature"], json!("c2lnbmF0dXJl"));
        // A synthesised id is never echoed as if Gemini had issued it.
        assert!(model_part["functionCall"].get("id").is_none());
        assert!(
            body["contents"][2]["parts"][0]["functionResponse"]
                .get("id")
                .is_none()
        );
        assert_eq!(model_part["functionCall"]["args"]["user_id"], json!("u1"));
        let response = &body["contents"][2]["parts"][0]["functionResponse"];
        assert_eq!(response["name"], json!("get_user_details"));
        assert_eq!(body["contents"][2]["role"], json!("user"));
    }
}
