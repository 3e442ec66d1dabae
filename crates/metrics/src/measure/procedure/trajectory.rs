//! The executed trajectory as the process evaluator reads it: calls with their results
//! (a call a guard blocked is dropped), and the argument values a message mentions.

use serde_json::{Map, Value};
use tauguard_core::dialogue::is_guidance;
use tauguard_core::message::{Message, ToolCall, ToolMessage};

/// One executed call with its result.
pub(super) struct Call<'a> {
    pub msg: usize,
    pub call: &'a ToolCall,
    pub result: Option<&'a ToolMessage>,
}

impl Call<'_> {
    pub(super) fn ok(&self) -> bool {
        self.result.is_some_and(|r| !r.error)
    }
}

pub(super) struct Trajectory<'a> {
    pub messages: &'a [Message],
    pub calls: Vec<Call<'a>>,
}

impl<'a> Trajectory<'a> {
    pub(super) fn new(messages: &'a [Message]) -> Trajectory<'a> {
        let blocked = tauguard_core::message::blocked_call_ids(messages);
        let mut calls = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            for c in m.tool_calls() {
                if blocked.contains(&c.id.as_str()) {
                    continue;
                }
                let result = messages[i + 1..].iter().find_map(|n| match n {
                    Message::Tool(t) if t.id == c.id => Some(t),
                    _ => None,
                });
                calls.push(Call {
                    msg: i,
                    call: c,
                    result,
                });
            }
        }
        Trajectory { messages, calls }
    }

    pub(super) fn of<'s>(&'s self, tools: &'s [&str]) -> impl Iterator<Item = &'s Call<'a>> + 's {
        self.calls
            .iter()
            .filter(move |c| tools.contains(&c.call.name.as_str()))
    }

    /// Text of the user's messages (guidance excluded) and successful tool results before `at`.
    pub(super) fn given_before(&self, at: usize) -> String {
        let mut out = String::new();
        for m in &self.messages[..at] {
            let text = match m {
                Message::User(u) => u.content.as_deref().filter(|t| !is_guidance(t)),
                Message::Tool(t) if !t.error && !t.guard_blocked => Some(t.content.as_str()),
                _ => None,
            };
            if let Some(t) = text {
                out.push_str(&t.to_lowercase());
                out.push('\n');
            }
        }
        out
    }
}

/// The leaves of an argument a reader can find in text: strings and numbers.
fn leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.to_lowercase()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        _ => {}
    }
}

/// Whether `needle` occurs in `hay` as a whole token (not inside a longer word or number).
pub(super) fn mentions(hay: &str, needle: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The leaves of the named arguments (`a` or `a[].b`; none named = every argument).
pub(super) fn named_leaves(args: &Map<String, Value>, names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if names.is_empty() {
        args.values().for_each(|v| leaves(v, &mut out));
    }
    for n in names {
        if n.contains("[].") {
            list_at(args, n).iter().for_each(|v| leaves(v, &mut out));
        } else if let Some(v) = args.get(n) {
            leaves(v, &mut out);
        }
    }
    out
}

/// The values `summary` does not mention.
pub(super) fn unnamed(summary: &str, values: Vec<String>) -> Vec<String> {
    values
        .into_iter()
        .filter(|v| !mentions(summary, v))
        .collect()
}

pub(super) fn field<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Elements of the list at `a` or `a[].b` in `args`.
pub(super) fn list_at(args: &Map<String, Value>, path: &str) -> Vec<Value> {
    let (head, tail) = match path.split_once("[].") {
        Some((h, t)) => (h, Some(t)),
        None => (path, None),
    };
    let Some(Value::Array(items)) = args.get(head) else {
        return Vec::new();
    };
    match tail {
        None => items.clone(),
        Some(t) => items.iter().filter_map(|x| field(x, t).cloned()).collect(),
    }
}
