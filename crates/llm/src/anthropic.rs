//! Anthropic Messages wire format.
//!
//! Request: `POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`.
//! System messages become the top-level `system` string (joined by blank lines); assistant
//! tool calls become `tool_use` blocks with `input` objects; tool results become
//! `tool_result` blocks inside a `user` message. Consecutive messages of one role are merged
//! (the API requires alternation), whitespace-only text blocks are dropped (the API rejects
//! them), and a history that opens with the assistant (τ²-bench's greeting) gets a `"."` user
//! turn in front, as litellm does. `max_tokens` is required: 4096 when the request has none.
//! The API has no seed and no JSON switch: both are dropped (the seed stays in the cache key).
//!
//! Reply: `content[]` text blocks (concatenated) and `tool_use` blocks; usage
//! `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` as prompt tokens,
//! `cache_read_input_tokens` as cached prompt tokens.

use crate::model::{ChatRequest, DecodeError, Decoded, arguments_object, deep_merge};
use serde_json::{Map, Value, json};
use tauguard_core::message::Usage;
use tauguard_core::{Message, ToolCall};

/// `max_tokens` sent when the request does not set one.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Text of the user turn put before a history that starts with the assistant.
pub const LEADING_USER_PLACEHOLDER: &str = ".";

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/v1/messages")
}

pub(crate) fn build_body(req: &ChatRequest, model: &str) -> Value {
    let mut system = Vec::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in req.messages.iter() {
        let (role, blocks) = match m {
            Message::System { content } => {
                if let Some(c) = content.as_deref().filter(|c| !c.trim().is_empty()) {
                    system.push(c);
                }
                continue;
            }
            Message::User(p) => ("user", text_block(p.content.as_deref())),
            Message::Assistant(p) => {
                let mut blocks = text_block(p.content.as_deref());
                blocks.extend(m.tool_calls().iter().map(|c| {
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments})
                }));
                ("assistant", blocks)
            }
            Message::Tool(t) => (
                "user",
                vec![json!({"type": "tool_result", "tool_use_id": t.id, "content": t.content})],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((last_role, last)) if *last_role == role => last.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    if messages
        .first()
        .is_some_and(|(role, _)| *role == "assistant")
    {
        messages.insert(
            0,
            (
                "user",
                vec![json!({"type": "text", "text": LEADING_USER_PLACEHOLDER})],
            ),
        );
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        body.insert("tool_choice".into(), json!({"type": "auto"}));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    deep_merge(&mut body, &req.extra);
    Value::Object(body)
}

fn text_block(content: Option<&str>) -> Vec<Value> {
    match content {
        Some(c) if !c.trim().is_empty() => vec![json!({"type": "text", "text": c})],
        _ => Vec::new(),
    }
}

pub(crate) fn decode(body: &Value) -> Result<Decoded, DecodeError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(DecodeError::Invalid(format!(
            "error object in a 2xx reply: {body}"
        )));
    }
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| DecodeError::Invalid("no `content` array in the reply".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    text.push_str(t);
                }
            }
            Some("tool_use") => {
                let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                let name = block.get("name").and_then(Value::as_str).ok_or_else(|| {
                    DecodeError::Invalid("a `tool_use` block has no `name`".into())
                })?;
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                tool_calls.push(ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments: arguments_object(name, id, input)?,
                    requestor: Default::default(),
                });
            }
            // thinking, redacted_thinking, server tool blocks: not part of the reply text.
            _ => {}
        }
    }
    let usage = body.get("usage").map(decode_usage).unwrap_or_default();
    Ok(Decoded {
        content: Some(text).filter(|t| !t.is_empty()),
        tool_calls,
        usage,
        finish_reason: body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        provider_model: body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

fn decode_usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = n("cache_read_input_tokens");
    Usage {
        prompt_tokens: n("input_tokens") + cache_read + n("cache_creation_input_tokens"),
        completion_tokens: n("output_tokens"),
        cached_prompt_tokens: cache_read,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::message::ParticipantMessage;

    fn tool_msg(id: &str, content: &str) -> Message {
        crate::model::test_support::tool_result(id, content)
    }

    #[test]
    fn roles_alternate_and_greeting_gets_a_leading_user_turn() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "calc".into(),
            arguments: Map::new(),
            requestor: Default::default(),
        };
        let req = ChatRequest::new(
            "claude",
            vec![
                Message::System {
                    content: Some("sys".into()),
                },
                Message::Assistant(ParticipantMessage {
                    content: Some("Hi! How can I help you today?".into()),
                    ..Default::default()
                }),
                Message::User(ParticipantMessage {
                    content: Some("help".into()),
                    ..Default::default()
                }),
                Message::Assistant(ParticipantMessage {
                    content: Some("  ".into()),
                    tool_calls: Some(vec![call("a"), call("b")]),
                    ..Default::default()
                }),
                tool_msg("a", "1"),
                tool_msg("b", "2"),
            ],
        );
        let body = build_body(&req, "claude");
        assert_eq!(body["system"], json!("sys"));
        assert_eq!(body["max_tokens"], json!(DEFAULT_MAX_TOKENS));
        let msgs = body["messages"].as_array().expect("messages");
        let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(msgs[0]["content"][0]["text"], json!("."));
        assert_eq!(msgs[3]["content"].as_array().map(Vec::len), Some(2));
        assert_eq!(msgs[3]["content"][0]["type"], json!("tool_use"));
        assert_eq!(msgs[4]["content"][1]["tool_use_id"], json!("b"));
    }
}
