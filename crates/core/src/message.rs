//! Conversation messages and tool calls, in τ²-bench's shape (§6.1 of the semantics notes).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Which side issued a tool call: the agent's toolkit or the user's device toolkit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requestor {
    #[default]
    Assistant,
    User,
}

impl Requestor {
    pub fn as_str(self) -> &'static str {
        match self {
            Requestor::Assistant => "assistant",
            Requestor::User => "user",
        }
    }
}

/// One tool call requested by the agent or the user simulator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    pub name: String,
    /// Raw JSON keyword arguments, in the order the model produced them.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    #[serde(default)]
    pub requestor: Requestor,
}

/// Token usage of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache, where reported.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_prompt_tokens: u64,
}

/// Token counts add field by field.
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A message written by the agent or the user simulator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ParticipantMessage {
    pub content: Option<String>,
    pub tool_calls: Option<Vec<ToolCall>>,
    pub turn_idx: Option<u32>,
    pub timestamp: Option<String>,
    pub cost: Option<f64>,
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_time_seconds: Option<f64>,
    /// A reply replayed from the response cache: the generation time recorded when it was
    /// first answered, while `generation_time_seconds` is the replay's own. Kept apart so
    /// timings of a cached rerun are never mistaken for the model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_generation_time_seconds: Option<f64>,
    /// The provider's stop reason for the reply this message holds, as the provider wrote it
    /// (`stop`, `tool_calls`, `length`; Anthropic `end_turn`, `max_tokens`; Gemini `STOP`,
    /// `MAX_TOKENS`). A tauguard field: upstream τ²-bench's message has none, so the
    /// `results.json` export leaves it out; omitted when unknown (the greeting, given
    /// history, `sim` replies written before it was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Set when the reply was cut at its token limit and asked again with a larger one
    /// (`[run] truncated_replies = "retry"`): this message is the retry's reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_limit_retry: Option<TokenLimitRetry>,
}

/// A reply cut at the token limit and asked once more with a larger limit: what the first
/// reply was sent with and said, and the limit of the retry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenLimitRetry {
    /// The token limit of the cut reply; `None` when the request set none and the server's
    /// own limit applied.
    pub max_tokens: Option<u32>,
    /// The cut reply's stop reason and completion tokens (what the limit allowed).
    pub finish_reason: String,
    pub completion_tokens: u64,
    /// The limit the retry was sent with.
    pub retry_max_tokens: u32,
}

impl ParticipantMessage {
    /// τ²-bench's "has text content": not null and not whitespace-only.
    pub fn has_text(&self) -> bool {
        self.content
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty())
    }

    /// τ²-bench's "is tool call": a non-empty tool-call list.
    pub fn is_tool_call(&self) -> bool {
        self.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMessage {
    /// Id of the tool call this answers.
    pub id: String,
    pub content: String,
    #[serde(default)]
    pub requestor: Requestor,
    #[serde(default)]
    pub error: bool,
    #[serde(default)]
    pub turn_idx: Option<u32>,
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Set when a guard blocked the call this answers: `content` is the guard's remediation,
    /// which the agent reads in place of a result, and the call never executed. Such a pair
    /// lives in the agent's view only: a trajectory holds executed calls only (the attempt is
    /// in the record's guard events). Records written before blocked exchanges left the
    /// trajectory still carry flagged pairs; [`executed_calls`], evaluation and replay skip
    /// them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub guard_blocked: bool,
}

/// Any message of a trajectory or prompt, discriminated by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Shared: a simulation's system prompt (policy included) is built once per task and
    /// referenced by every conversation that uses it.
    System {
        content: Option<Arc<str>>,
    },
    User(ParticipantMessage),
    Assistant(ParticipantMessage),
    Tool(ToolMessage),
}

impl Message {
    /// Tool calls carried by a user or assistant message.
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Message::User(m) | Message::Assistant(m) => m.tool_calls.as_deref().unwrap_or(&[]),
            _ => &[],
        }
    }

    pub fn role(&self) -> &'static str {
        match self {
            Message::System { .. } => "system",
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::Tool(_) => "tool",
        }
    }

    /// Text content, if any.
    pub fn content(&self) -> Option<&str> {
        match self {
            Message::System { content } => content.as_deref(),
            Message::User(m) | Message::Assistant(m) => m.content.as_deref(),
            Message::Tool(t) => Some(&t.content),
        }
    }
}

/// The tool calls of a trajectory that executed, in order: every call except one answered by
/// a guard-blocked result. A trajectory recorded now holds executed calls only, so this is
/// every call; records written before blocked exchanges left the trajectory still hold
/// blocked calls, answered by a result flagged [`ToolMessage::guard_blocked`].
pub fn executed_calls(messages: &[Message]) -> impl Iterator<Item = &ToolCall> {
    let blocked = blocked_call_ids(messages);
    messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .filter(move |c| !blocked.contains(&c.id.as_str()))
}

/// Ids of the calls a guard blocked in an older record's trajectory (answered by a result
/// flagged [`ToolMessage::guard_blocked`]); empty for records written now.
pub fn blocked_call_ids(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) if t.guard_blocked => Some(t.id.as_str()),
            _ => None,
        })
        .collect()
}
