//! Anthropic Messages wire format.
//!
//! Request: `POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`.
//! System messages become the top-level `system`: one text block (joined by blank lines)
//! marked `cache_control: ephemeral`, since the system prompt (instructions and policy) is the
//! static prefix every call of a simulation repeats; assistant tool calls become `tool_use`
//! blocks with `input` objects; tool results become `tool_result` blocks inside a `user`
//! message. Consecutive messages of one role are merged (the API requires alternation),
//! whitespace-only text blocks are dropped (the API rejects them), and a history that opens
//! with the assistant (τ²-bench's greeting) gets a `"."` user turn in front, as litellm does.
//! `max_tokens` is required: the capabilities' default (4096) when nothing sets one. The API
//! has no seed and no JSON switch: both are dropped (the seed stays in the cache key).
//! `temperature` and `top_p` are sent only when the capabilities allow (never with thinking
//! on); when both are set only `temperature` goes, as current models reject the pair.
//!
//! Extended thinking: when the capabilities say thinking is on, `thinking = {type: enabled,
//! budget_tokens}` is sent unless `extra` configures it, and `max_tokens` is raised above the
//! budget when it is not. The API requires the thinking blocks (with their signatures) of the
//! assistant turn that called tools to come back unchanged with the tool results; tauguard's
//! messages have no place for them, so they ride in the first tool call's id after
//! [`THINKING_SEP`] (as compact JSON) and are restored, and the id cleaned, when the history is
//! sent again.
//!
//! Reply: `content[]` text blocks (concatenated) and `tool_use` blocks; usage
//! `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` as prompt tokens,
//! `cache_read_input_tokens` as cached prompt tokens.

use crate::capabilities::ANTHROPIC_DEFAULT_MAX_TOKENS;
use crate::model::{
    DecodeError, Decoded, Prepared, alternating_turns, arguments_object, deep_merge, string_at,
};
use serde_json::{Map, Value, json};
use tauguard_core::message::Usage;
use tauguard_core::{Message, ToolCall};

/// `max_tokens` sent when neither request, spec nor capabilities set one.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = ANTHROPIC_DEFAULT_MAX_TOKENS;

/// Separates a tool-use id from the thinking blocks carried along with it.
pub(crate) const THINKING_SEP: &str = "#thinking=";

/// The id as the API knows it (without carried thinking blocks).
fn wire_id(id: &str) -> &str {
    id.split_once(THINKING_SEP).map_or(id, |(id, _)| id)
}

/// The thinking blocks carried in `id`, if any.
fn carried_thinking(id: &str) -> Vec<Value> {
    id.split_once(THINKING_SEP)
        .and_then(|(_, blocks)| serde_json::from_str::<Vec<Value>>(blocks).ok())
        .unwrap_or_default()
}

/// Text of the user turn put before a history that starts with the assistant.
pub(crate) const LEADING_USER_PLACEHOLDER: &str = ".";

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/v1/messages")
}

pub(crate) fn build_body(req: &Prepared<'_>) -> Value {
    let caps = &req.caps;
    let (system, messages) = alternating_turns(
        req.messages,
        "assistant",
        json!({"type": "text", "text": LEADING_USER_PLACEHOLDER}),
        |m| match m {
            Message::Assistant(p) => {
                let calls = m.tool_calls();
                let mut blocks = if caps.thinking {
                    calls
                        .first()
                        .map(|c| carried_thinking(&c.id))
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                blocks.extend(text_block(p.content.as_deref()));
                blocks.extend(calls.iter().map(|c| {
                    json!({"type": "tool_use", "id": wire_id(&c.id), "name": c.name, "input": c.arguments})
                }));
                ("assistant", blocks)
            }
            Message::Tool(t) => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": wire_id(&t.id), "content": t.content}),
                ],
            ),
            // System messages are taken apart before a turn is made.
            Message::User(_) | Message::System { .. } => ("user", text_block(m.content())),
        },
    );

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let mut max_tokens = req
        .max_tokens
        .or(caps.default_max_tokens)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    if caps.thinking && !req.extra.contains_key("thinking") {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": caps.thinking_budget_tokens}),
        );
        if max_tokens <= caps.thinking_budget_tokens {
            // The API requires max_tokens > budget_tokens.
            max_tokens = caps.thinking_budget_tokens + DEFAULT_MAX_TOKENS;
        }
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system.join("\n\n"), "cache_control": {"type": "ephemeral"}}]),
        );
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
    let temperature = req.temperature.filter(|_| caps.temperature);
    if let Some(t) = temperature {
        body.insert("temperature".into(), json!(t));
    } else if let Some(p) = req.top_p.filter(|_| caps.top_p) {
        body.insert("top_p".into(), json!(p));
    }
    deep_merge(&mut body, &req.extra);
    for (key, ok) in [("temperature", caps.temperature), ("top_p", caps.top_p)] {
        if !ok {
            body.remove(key);
        }
    }
    Value::Object(body)
}

fn text_block(content: Option<&str>) -> Vec<Value> {
    match content {
        Some(c) if !c.trim().is_empty() => vec![json!({"type": "text", "text": c})],
        _ => Vec::new(),
    }
}

/// The stop reason Anthropic gives a reply cut at its token limit.
pub(crate) const TOKEN_LIMIT_STOP: &str = "max_tokens";

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
    let mut thinking = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("thinking" | "redacted_thinking") => thinking.push(block.clone()),
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
            // Server tool blocks: not part of the reply text.
            _ => {}
        }
    }
    if let Some(first) = tool_calls.first_mut()
        && !thinking.is_empty()
    {
        first.id = format!("{}{THINKING_SEP}{}", first.id, Value::Array(thinking));
    }
    Ok(Decoded {
        content: Some(text).filter(|t| !t.is_empty()),
        tool_calls,
        finish_reason: string_at(body, "stop_reason"),
        provider_model: string_at(body, "model"),
    })
}

/// The reply's (or an error body's) `usage`, zero when absent.
pub(crate) fn usage(body: &Value) -> Usage {
    body.get("usage").map(decode_usage).unwrap_or_default()
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
    use crate::capabilities::Capabilities;
    use crate::config::ProviderKind;
    use crate::model::ChatRequest;
    use crate::model::test_support::{assistant, system, user};

    fn caps(thinking: bool) -> Capabilities {
        let mut c = Capabilities::family_default(ProviderKind::Anthropic, "", "claude");
        if thinking {
            c.thinking = true;
            c.temperature = false;
            c.top_p = false;
        }
        c
    }

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
                system("sys"),
                assistant(Some("Hi! How can I help you today?"), Vec::new()),
                user("help"),
                assistant(Some("  "), vec![call("a"), call("b")]),
                tool_msg("a", "1"),
                tool_msg("b", "2"),
            ],
        );
        let body = build_body(&Prepared::plain(&req, "claude", caps(false)));
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["max_tokens"], json!(DEFAULT_MAX_TOKENS));
        let msgs = body["messages"].as_array().expect("messages");
        let roles: Vec<&str> = msgs.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(msgs[0]["content"][0]["text"], json!("."));
        assert_eq!(msgs[3]["content"].as_array().map(Vec::len), Some(2));
        assert_eq!(msgs[3]["content"][0]["type"], json!("tool_use"));
        assert_eq!(msgs[4]["content"][1]["tool_use_id"], json!("b"));
    }

    #[test]
    fn thinking_blocks_ride_in_the_call_id_and_come_back_first() {
        let reply = json!({"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBCgIYAhIM"},
            {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {"x": 1}}
        ], "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 7}});
        let d = decode(&reply).expect("decodes");
        let call = d.tool_calls[0].clone();
        assert!(call.id.starts_with("toolu_1#thinking="), "{}", call.id);
        let req = ChatRequest::new(
            "claude",
            vec![
                user("q"),
                assistant(None, vec![call.clone()]),
                tool_msg(&call.id, "2"),
            ],
        )
        .with_temperature(0.0);
        let body = build_body(&Prepared::plain(&req, "claude", caps(true)));
        let assistant = &body["messages"][1]["content"];
        assert_eq!(assistant[0]["type"], json!("thinking"));
        assert_eq!(assistant[0]["signature"], json!("EqQBCgIYAhIM"));
        assert_eq!(assistant[1]["id"], json!("toolu_1"));
        assert_eq!(
            body["messages"][2]["content"][0]["tool_use_id"],
            json!("toolu_1")
        );
        assert!(body.get("temperature").is_none());
        assert_eq!(body["thinking"]["budget_tokens"], json!(1024));
        assert!(body["max_tokens"].as_u64() > Some(1024));
        // Thinking off: blocks are not sent, ids still clean.
        let body = build_body(&Prepared::plain(&req, "claude", caps(false)));
        assert_eq!(body["messages"][1]["content"][0]["type"], json!("tool_use"));
        assert_eq!(body["messages"][1]["content"][0]["id"], json!("toolu_1"));
        assert_eq!(body["temperature"], json!(0.0));
    }
}
