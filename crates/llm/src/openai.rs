//! OpenAI chat-completions wire format (also vLLM, Ollama and other compatible servers).
//!
//! Request: `POST {base_url}/chat/completions` with `Authorization: Bearer <key>`. History is
//! converted as τ²-bench does (semantics §6.5): assistant tool calls become
//! `{"id", "type": "function", "function": {"name", "arguments": json.dumps(arguments)}}`
//! (Python separators, via `tauguard_core::pyjson`), tool results `{"role": "tool", "content",
//! "tool_call_id"}`; tools are sent with `tool_choice: "auto"`. An assistant message with tool
//! calls and no text has `"content": null` (the documented form), or `""` when the provider
//! sets `empty_tool_call_content` (llama-cpp-python rejects null).
//!
//! Sampling: `temperature`, `top_p` and `seed` only when set and accepted by the model's
//! capabilities; the output-token limit under `max_completion_tokens` (OpenAI's own API,
//! reasoning models) or `max_tokens` (compatible servers). `extra` is merged last, and a
//! parameter the capabilities rule out is removed from it too (a `max_tokens` in `extra` is
//! renamed when the model takes `max_completion_tokens`).
//!
//! Reply: `choices[0].message.{content, tool_calls}`; `function.arguments` is a JSON *string*
//! parsed into an object (an object is also accepted, as some compatible servers send one;
//! an empty string means `{}`). A call without an id gets `call_<request length>_<position>`,
//! deterministic and unique within a conversation. A `refusal` with no content becomes the
//! reply text, so the refusal shows in the conversation instead of an empty reply. Usage from
//! `usage.{prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens}`.

use crate::capabilities::TokenLimit;
use crate::model::{DecodeError, Decoded, Prepared, arguments_object, deep_merge, string_at};
use serde_json::{Map, Value, json};
use tauguard_core::message::Usage;
use tauguard_core::pyjson;
use tauguard_core::{Message, ToolCall};

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/chat/completions")
}

pub(crate) fn build_body(req: &Prepared<'_>) -> Value {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| message_json(m, req.empty_tool_call_content))
        .collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req.tools.iter().map(|t| t.to_openai()).collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!("auto"));
    }
    let caps = &req.caps;
    if let Some(t) = req.temperature.filter(|_| caps.temperature) {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p.filter(|_| caps.top_p) {
        body.insert("top_p".into(), json!(p));
    }
    let (limit_key, other_key) = match caps.token_limit {
        TokenLimit::MaxTokens => ("max_tokens", "max_completion_tokens"),
        TokenLimit::MaxCompletionTokens => ("max_completion_tokens", "max_tokens"),
    };
    if let Some(n) = req.max_tokens.or(caps.default_max_tokens) {
        body.insert(limit_key.into(), json!(n));
    }
    if let Some(seed) = req.seed.filter(|_| caps.seed) {
        body.insert("seed".into(), json!(seed));
    }
    if req.json_mode {
        body.insert("response_format".into(), json!({"type": "json_object"}));
    }
    deep_merge(&mut body, &req.extra);
    // `extra` may name what the model does not take: drop or rename it too.
    for (key, ok) in [
        ("temperature", caps.temperature),
        ("top_p", caps.top_p),
        ("seed", caps.seed),
    ] {
        if !ok {
            body.remove(key);
        }
    }
    if let Some(n) = body.remove(other_key) {
        body.entry(limit_key).or_insert(n);
    }
    Value::Object(body)
}

fn message_json(m: &Message, empty_tool_call_content: bool) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User(p) => json!({"role": "user", "content": p.content}),
        Message::Assistant(p) => {
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            let calls = m.tool_calls();
            let content = match &p.content {
                None if empty_tool_call_content && !calls.is_empty() => json!(""),
                c => json!(c),
            };
            out.insert("content".into(), content);
            if !calls.is_empty() {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.name,
                                "arguments": pyjson::dumps(&Value::Object(c.arguments.clone())),
                            },
                        })
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
        Message::Tool(t) => json!({"role": "tool", "content": t.content, "tool_call_id": t.id}),
    }
}

/// The stop reason the OpenAI protocol gives a reply cut at its token limit (vLLM, Ollama and
/// llama.cpp servers give the same).
pub(crate) const TOKEN_LIMIT_STOP: &str = "length";

/// Decodes a reply; `salt` (the request's message count) makes synthesised ids unique.
pub(crate) fn decode(body: &Value, salt: usize) -> Result<Decoded, DecodeError> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| DecodeError::Invalid("no `choices[0]` in the reply".into()))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| DecodeError::Invalid("no `choices[0].message` object".into()))?;
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.is_empty()),
        Some(other) => {
            return Err(DecodeError::Invalid(format!(
                "`message.content` is {}, expected a string",
                crate::model::json_type(other)
            )));
        }
    };
    let refusal = message
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty());
    let content = content.or_else(|| refusal.map(str::to_string));
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| DecodeError::Invalid("`message.tool_calls` is not an array".into()))?;
        for (index, call) in calls.iter().enumerate() {
            tool_calls.push(decode_call(call, salt, index)?);
        }
    }
    Ok(Decoded {
        content,
        tool_calls,
        finish_reason: string_at(choice, "finish_reason"),
        provider_model: string_at(body, "model"),
    })
}

fn decode_call(call: &Value, salt: usize, index: usize) -> Result<ToolCall, DecodeError> {
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => id.to_string(),
        _ => format!("call_{salt}_{index}"),
    };
    let id = id.as_str();
    let function = call
        .get("function")
        .ok_or_else(|| DecodeError::Invalid("a tool call has no `function`".into()))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| DecodeError::Invalid("a tool call has no `function.name`".into()))?;
    let arguments = match function.get("arguments") {
        Some(Value::String(raw)) => parse_arguments(name, id, raw)?,
        Some(other) => arguments_object(name, id, other.clone())?,
        None => Map::new(),
    };
    Ok(ToolCall {
        id: id.to_string(),
        name: name.to_string(),
        arguments,
        requestor: Default::default(),
    })
}

/// τ²-bench's `json.loads(arguments)`, which must yield an object. Whitespace-only text is
/// read as `{}` (some compatible servers send `""` for argument-less calls).
fn parse_arguments(
    tool: &str,
    call_id: &str,
    raw: &str,
) -> Result<Map<String, Value>, DecodeError> {
    if raw.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(DecodeError::MalformedArguments {
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            raw: raw.to_string(),
            reason: format!(
                "expected a JSON object, got {}",
                crate::model::json_type(&other)
            ),
        }),
        Err(e) => Err(DecodeError::MalformedArguments {
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            raw: raw.to_string(),
            reason: format!("invalid JSON: {e}"),
        }),
    }
}

/// The reply's (or an error body's) `usage`, zero when absent.
pub(crate) fn usage(body: &Value) -> Usage {
    body.get("usage").map(decode_usage).unwrap_or_default()
}

fn decode_usage(u: &Value) -> Usage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    Usage {
        prompt_tokens: n(u.get("prompt_tokens")),
        completion_tokens: n(u.get("completion_tokens")),
        cached_prompt_tokens: n(u.pointer("/prompt_tokens_details/cached_tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::Capabilities;
    use crate::config::ProviderKind;
    use crate::model::ChatRequest;
    use crate::model::test_support::{assistant, system, tool_result, user};

    fn caps(model: &str) -> Capabilities {
        Capabilities::family_default(ProviderKind::OpenAi, "http://localhost/v1", model)
    }

    #[test]
    fn history_is_converted_like_upstream() {
        let mut args = Map::new();
        args.insert("user_id".into(), json!("mia_li_3668"));
        args.insert("n".into(), json!(2));
        let req = ChatRequest::new(
            "gpt-x",
            vec![
                system("policy"),
                user("hi"),
                assistant(
                    None,
                    vec![ToolCall {
                        id: "call_1".into(),
                        name: "get_user_details".into(),
                        arguments: args,
                        requestor: Default::default(),
                    }],
                ),
                tool_result("call_1", "{}"),
            ],
        )
        .with_temperature(0.0)
        .with_seed(7);
        let body = build_body(&Prepared::plain(&req, "gpt-x", caps("gpt-x")));
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": "hi"})
        );
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            json!(r#"{"user_id": "mia_li_3668", "n": 2}"#)
        );
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "content": "{}", "tool_call_id": "call_1"})
        );
        assert_eq!(body["seed"], json!(7));
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());

        let mut prepared = Prepared::plain(&req, "gpt-x", caps("gpt-x"));
        prepared.empty_tool_call_content = true;
        let body = build_body(&prepared);
        assert_eq!(body["messages"][2]["content"], json!(""));
        assert_eq!(body["messages"][1]["content"], json!("hi"));
    }

    #[test]
    fn missing_ids_are_synthesised_and_refusals_surface() {
        let reply = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"type": "function", "function": {"name": "a", "arguments": "{}"}},
                {"id": "", "type": "function", "function": {"name": "b", "arguments": "{}"}}
            ]}, "finish_reason": "tool_calls"}]});
        let d = decode(&reply, 5).expect("decodes");
        assert_eq!(d.tool_calls[0].id, "call_5_0");
        assert_eq!(d.tool_calls[1].id, "call_5_1");
        let refusal = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "refusal": "I can't help with that."}, "finish_reason": "stop"}]});
        let d = decode(&refusal, 1).expect("decodes");
        assert_eq!(d.content.as_deref(), Some("I can't help with that."));
    }
}
