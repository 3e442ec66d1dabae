//! The external guard protocol, version 1, as tauguard writes and reads it: one JSON object a
//! line. `schemas/guard-protocol/v1.json` is its schema and `docs/guard-protocol.md` its prose;
//! the reply checks here are what makes a reply "out of schema", so a reply the schema refuses
//! is refused here with the field that broke it.

use serde_json::{Map, Value, json};
use tauguard_core::record::{RequirementResult, RoleUsage, Verdict};

/// The protocol's name and version, sent in `hello`.
pub(crate) const PROTOCOL: &str = "tauguard-guard";
pub(crate) const PROTOCOL_VERSION: u32 = 1;

/// Hook names a guard lists in its `hello` reply.
pub(crate) const HOOK_MUTATING_CALL: &str = "mutating_call";
pub(crate) const HOOK_BEFORE_TURN: &str = "before_turn";

/// What a guard says of itself in its `hello` reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hello {
    pub name: String,
    pub version: String,
    /// Hooks the guard implements; `mutating_call` when it lists none.
    pub hooks: Vec<String>,
}

impl Hello {
    pub(crate) fn has(&self, hook: &str) -> bool {
        self.hooks.iter().any(|h| h == hook)
    }
}

/// The request tauguard opens a process with.
pub(crate) fn hello_request(id: &str) -> Value {
    json!({"type": "hello", "id": id, "protocol": PROTOCOL, "version": PROTOCOL_VERSION})
}

/// A reply's `type` and `id`, checked against what was asked; the message names the field.
fn envelope<'a>(
    reply: &'a Value,
    want_type: &str,
    id: &str,
) -> Result<&'a Map<String, Value>, String> {
    let o = reply.as_object().ok_or("the reply is not a JSON object")?;
    match o.get("id") {
        Some(Value::String(s)) if s == id => {}
        Some(other) => return Err(format!("`id` is {other}, but the request's id is \"{id}\"")),
        None => return Err("`id` is missing".into()),
    }
    match o.get("type").and_then(Value::as_str) {
        Some("error") => Err(format!(
            "the guard answered `error`: {}",
            o.get("message")
                .and_then(Value::as_str)
                .unwrap_or("(no message)")
        )),
        Some(t) if t == want_type => Ok(o),
        Some(t) => Err(format!("`type` is \"{t}\", expected \"{want_type}\"")),
        None => Err("`type` is missing or not a string".into()),
    }
}

fn opt_str(o: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string or null, got {other}")),
    }
}

/// An optional array field, each item checked by `item` (given its index): `None` when the
/// field is absent or null, so the caller's default applies; an error naming the field when it
/// is not an array.
fn opt_array<T>(
    o: &Map<String, Value>,
    key: &str,
    mut item: impl FnMut(usize, &Value) -> Result<T, String>,
) -> Result<Option<Vec<T>>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| item(i, v))
            .collect::<Result<_, _>>()
            .map(Some),
        Some(other) => Err(format!("`{key}` must be an array, got {other}")),
    }
}

/// Parses a `hello` reply.
pub(crate) fn parse_hello(reply: &Value, id: &str) -> Result<Hello, String> {
    let o = envelope(reply, "hello", id)?;
    if let Some(p) = o.get("protocol")
        && p.as_u64() != Some(u64::from(PROTOCOL_VERSION))
    {
        return Err(format!(
            "`protocol` is {p}; this tauguard speaks version {PROTOCOL_VERSION}"
        ));
    }
    let name = opt_str(o, "name")?.ok_or("`name` is missing")?;
    let version = opt_str(o, "version")?.ok_or("`version` is missing")?;
    let hooks = opt_array(o, "hooks", |_, h| match h.as_str() {
        Some(s @ (HOOK_MUTATING_CALL | HOOK_BEFORE_TURN)) => Ok(s.to_string()),
        _ => Err(format!(
            "`hooks` lists {h}; known hooks: {HOOK_MUTATING_CALL}, {HOOK_BEFORE_TURN}"
        )),
    })?
    .unwrap_or_else(|| vec![HOOK_MUTATING_CALL.to_string()]);
    Ok(Hello {
        name,
        version,
        hooks,
    })
}

/// The guard's own model usage, as a reply may report it (`usage` object).
pub(crate) fn parse_usage(o: &Map<String, Value>) -> Result<RoleUsage, String> {
    let mut usage = RoleUsage::default();
    let Some(u) = o.get("usage").filter(|u| !u.is_null()) else {
        return Ok(usage);
    };
    let u = u.as_object().ok_or("`usage` must be an object")?;
    let count = |key: &str| -> Result<u64, String> {
        match u.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("`usage.{key}` must be a non-negative integer, got {v}")),
        }
    };
    usage.calls = count("calls")?;
    usage.usage.prompt_tokens = count("prompt_tokens")?;
    usage.usage.completion_tokens = count("completion_tokens")?;
    usage.cost = match u.get("cost") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|c| *c >= 0.0)
                .ok_or_else(|| format!("`usage.cost` must be a non-negative number, got {v}"))?,
        ),
    };
    if let Some(v) = u.get("latency_seconds").filter(|v| !v.is_null()) {
        usage.latency_seconds = v.as_f64().filter(|s| *s >= 0.0).ok_or_else(|| {
            format!("`usage.latency_seconds` must be a non-negative number, got {v}")
        })?;
    }
    Ok(usage)
}

/// A `decision` reply, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecisionReply {
    pub verdict: Verdict,
    pub remediation: Option<String>,
    pub requirements: Vec<RequirementResult>,
    pub usage: RoleUsage,
    pub info: Option<Value>,
}

/// Parses a `decision` reply to the `mutating_call` request `id`.
pub(crate) fn parse_decision(reply: &Value, id: &str) -> Result<DecisionReply, String> {
    let o = envelope(reply, "decision", id)?;
    let verdict = match o.get("verdict").and_then(Value::as_str) {
        Some("PASS") => Verdict::Pass,
        Some("BLOCK") => Verdict::Block,
        _ => {
            return Err(format!(
                "`verdict` must be \"PASS\" or \"BLOCK\", got {}",
                o.get("verdict").unwrap_or(&Value::Null)
            ));
        }
    };
    let remediation = opt_str(o, "remediation")?;
    if verdict == Verdict::Block && remediation.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err("a BLOCK needs a non-empty `remediation` for the agent".into());
    }
    let requirements = opt_array(o, "requirements", |i, r| {
        let name = r.get("name").and_then(Value::as_str);
        let met = r.get("met").and_then(Value::as_bool);
        match (name, met) {
            (Some(name), Some(met)) => Ok(RequirementResult {
                name: name.to_string(),
                met,
                reason: r
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            }),
            _ => Err(format!(
                "`requirements[{i}]` needs a string `name` and a boolean `met`"
            )),
        }
    })?
    .unwrap_or_default();
    Ok(DecisionReply {
        verdict,
        remediation,
        requirements,
        usage: parse_usage(o)?,
        info: o.get("info").filter(|v| !v.is_null()).cloned(),
    })
}

/// A `guidance` reply, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuidanceReply {
    pub guidance: Option<String>,
    pub enabled_tools: Vec<String>,
    pub usage: RoleUsage,
}

/// Parses a `guidance` reply to the `before_turn` request `id`.
pub(crate) fn parse_guidance(reply: &Value, id: &str) -> Result<GuidanceReply, String> {
    let o = envelope(reply, "guidance", id)?;
    let mut enabled_tools = opt_array(o, "enabled_tools", |_, t| {
        t.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("`enabled_tools` lists {t}, not a tool name"))
    })?
    .unwrap_or_default();
    enabled_tools.sort();
    Ok(GuidanceReply {
        guidance: opt_str(o, "guidance")?,
        enabled_tools,
        usage: parse_usage(o)?,
    })
}

/// A `lookup` the guard asks for while a request is open, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LookupAsk {
    pub id: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// Parses a guard's `lookup` message.
pub(crate) fn parse_lookup(msg: &Value) -> Result<LookupAsk, String> {
    let id = msg
        .get("id")
        .and_then(Value::as_str)
        .ok_or("a `lookup` needs a string `id`")?;
    let tool = msg
        .get("tool")
        .and_then(Value::as_str)
        .ok_or("a `lookup` needs a string `tool`")?;
    let arguments = match msg.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(other) => return Err(format!("`lookup.arguments` must be an object, got {other}")),
    };
    Ok(LookupAsk {
        id: id.to_string(),
        tool: tool.to_string(),
        arguments,
    })
}

/// tauguard's answer to a lookup: the tool's result, or its error text.
pub(crate) fn lookup_result(id: &str, result: Result<Value, String>) -> Value {
    match result {
        Ok(v) => json!({"type": "lookup_result", "id": id, "ok": true, "result": v}),
        Err(e) => json!({"type": "lookup_result", "id": id, "ok": false, "error": e}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_checked_field_by_field() {
        let ok = json!({"type": "decision", "id": "r1", "verdict": "BLOCK", "remediation": "Ask first.",
            "requirements": [{"name": "insured", "met": false, "reason": "no insurance"}],
            "usage": {"calls": 1, "prompt_tokens": 10, "completion_tokens": 2, "cost": 0.5}});
        let d = parse_decision(&ok, "r1").unwrap();
        assert_eq!(d.verdict, Verdict::Block);
        assert_eq!(d.requirements[0].name, "insured");
        assert_eq!((d.usage.calls, d.usage.cost), (1, Some(0.5)));
        for (bad, says) in [
            (
                json!({"type": "decision", "id": "r2", "verdict": "PASS"}),
                "request's id is \"r1\"",
            ),
            (
                json!({"type": "decision", "id": "r1", "verdict": "MAYBE"}),
                "`verdict`",
            ),
            (
                json!({"type": "decision", "id": "r1", "verdict": "BLOCK"}),
                "remediation",
            ),
            (
                json!({"type": "decision", "id": "r1", "verdict": "PASS", "requirements": [{}]}),
                "requirements[0]",
            ),
            (
                json!({"type": "decision", "id": "r1", "verdict": "PASS", "usage": {"cost": -1}}),
                "usage.cost",
            ),
            (json!({"type": "guidance", "id": "r1"}), "`type`"),
            (json!([1]), "not a JSON object"),
        ] {
            let err = parse_decision(&bad, "r1").unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    /// The schema kept in the repo and this module agree: its reply examples parse here, the
    /// messages built here carry every field it requires.
    #[test]
    fn the_schema_file_agrees_with_the_parsers() {
        let path = tauguard_testkit::workspace_root().join("schemas/guard-protocol/v1.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let defs = schema["$defs"].as_object().unwrap();
        let example = |name: &str| defs[name]["examples"][0].clone();
        let id = |v: &Value| v["id"].as_str().unwrap().to_string();
        let h = example("hello_reply");
        assert!(parse_hello(&h, &id(&h)).unwrap().has(HOOK_BEFORE_TURN));
        let d = example("decision");
        assert_eq!(parse_decision(&d, &id(&d)).unwrap().verdict, Verdict::Block);
        let g = example("guidance");
        assert!(parse_guidance(&g, &id(&g)).unwrap().guidance.is_some());
        assert_eq!(
            parse_lookup(&example("lookup")).unwrap().tool,
            "get_reservation_details"
        );
        let e = example("error");
        assert!(
            parse_decision(&e, &id(&e))
                .unwrap_err()
                .contains("model reply")
        );
        for (name, built) in [
            ("hello", hello_request("h")),
            ("lookup_result", lookup_result("L1", Ok(json!({})))),
            ("lookup_result", lookup_result("L1", Err("no".into()))),
        ] {
            for key in defs[name]["required"].as_array().unwrap() {
                assert!(built.get(key.as_str().unwrap()).is_some(), "{name}: {key}");
            }
            assert_eq!(built["type"], defs[name]["properties"]["type"]["const"]);
        }
    }

    #[test]
    fn hello_names_hooks_and_version() {
        let h = parse_hello(
            &json!({"type": "hello", "id": "h", "name": "g", "version": "1.2", "hooks": ["before_turn", "mutating_call"]}),
            "h",
        )
        .unwrap();
        assert!(h.has(HOOK_BEFORE_TURN) && h.version == "1.2");
        let err = parse_hello(&json!({"type": "hello", "id": "h", "name": "g"}), "h").unwrap_err();
        assert!(err.contains("`version`"), "{err}");
        let err = parse_hello(
            &json!({"type": "hello", "id": "h", "name": "g", "version": "1", "hooks": ["x"]}),
            "h",
        )
        .unwrap_err();
        assert!(err.contains("known hooks"), "{err}");
    }
}
