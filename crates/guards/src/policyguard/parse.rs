//! Tolerant parsing of verifier replies.
//!
//! The contract asks for one JSON object
//! `{"requirements": [{"name", "status", "reason"}], "verdict", "agent_message"}`. Real replies
//! drift: code fences, prose before or after the object, `block` / `Block`, `NOT_MET` /
//! `not met`, `Agent_Message`, a missing `agent_message` or `requirements`, trailing commas,
//! or no JSON at all but `Verdict: BLOCK` lines. Everything that still states a verdict
//! unambiguously is accepted and each tolerance is noted; a reply without a readable verdict
//! (or with an unreadable requirement status) is an error, which triggers the repair retry.

use serde_json::{Map, Value};
use tauguard_core::record::{RequirementResult, Verdict};

/// A parsed verifier reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerifierReply {
    pub requirements: Vec<RequirementResult>,
    pub verdict: Verdict,
    /// `None` when the reply had none (or an empty one).
    pub agent_message: Option<String>,
    /// Tolerances applied while parsing (`code_fence`, `prose_around_json`, `verdict_casing`,
    /// `status_spelling`, `missing_requirements`, `missing_agent_message`, `trailing_commas`,
    /// `text_format`, `key_spelling`).
    pub notes: Vec<String>,
}

/// Why a reply could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ParseError(pub String);

/// Parses a verifier reply.
pub(crate) fn parse_reply(reply: &str) -> Result<VerifierReply, ParseError> {
    let text = reply.trim();
    if text.is_empty() {
        return Err(ParseError("the reply was empty".into()));
    }
    let mut first_err: Option<ParseError> = None;
    for (obj, mut notes) in json_candidates(text) {
        if find_key(&obj, VERDICT_KEYS).is_none() {
            if first_err.is_none() && find_key(&obj, REQUIREMENTS_KEYS).is_some() {
                first_err = Some(ParseError("the JSON object has no `verdict` field".into()));
            }
            continue;
        }
        match from_object(&obj, &mut notes) {
            Ok((requirements, verdict, agent_message)) => {
                let mut seen = std::collections::HashSet::new();
                notes.retain(|n| seen.insert(n.clone()));
                return Ok(VerifierReply {
                    requirements,
                    verdict,
                    agent_message,
                    notes,
                });
            }
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    match from_text_lines(text) {
        Some(r) => Ok(r),
        None => Err(ParseError(if text.contains('{') {
            "no valid JSON object with a `verdict` field was found".into()
        } else {
            "the reply contains no JSON object".into()
        })),
    }
}

const VERDICT_KEYS: &[&str] = &["verdict", "decision", "finalverdict"];
const REQUIREMENTS_KEYS: &[&str] = &["requirements", "checks", "results", "items", "checklist"];
const MESSAGE_KEYS: &[&str] = &[
    "agentmessage",
    "remediation",
    "messagetoagent",
    "message",
    "feedback",
];
const NAME_KEYS: &[&str] = &["name", "requirement", "id", "item", "rule", "check"];
const STATUS_KEYS: &[&str] = &["status", "result", "met", "outcome", "state"];
const REASON_KEYS: &[&str] = &[
    "reason",
    "reasoning",
    "rationale",
    "explanation",
    "evidence",
    "justification",
];

/// Lowercase, alphanumerics only: `Agent_Message`, `agent-message` and `agentMessage` agree.
pub(crate) fn norm_key(k: &str) -> String {
    k.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The first key of `obj` (by the order of `wanted`) whose normalised form is wanted.
pub(crate) fn find_key<'a>(
    obj: &'a Map<String, Value>,
    wanted: &[&str],
) -> Option<(&'a str, &'a Value)> {
    wanted.iter().find_map(|w| {
        obj.iter()
            .find(|(k, _)| norm_key(k) == *w)
            .map(|(k, v)| (k.as_str(), v))
    })
}

/// JSON objects found in the reply, best candidates first, each with the tolerances used.
pub(crate) fn json_candidates(text: &str) -> Vec<(Map<String, Value>, Vec<String>)> {
    let mut out = Vec::new();
    // The whole reply.
    let mut notes = Vec::new();
    if let Some(obj) = parse_object(text, &mut notes) {
        out.push((obj, notes));
        return out;
    }
    // Fenced blocks.
    for block in fenced_blocks(text) {
        let whole = text.trim().starts_with("```") && text.trim().ends_with("```");
        let mut notes = vec!["code_fence".to_string()];
        if !whole {
            notes.push("prose_around_json".into());
        }
        if let Some(obj) = parse_object(block, &mut notes) {
            out.push((obj, notes));
        }
    }
    // Any object embedded in prose: try every `{` as a start.
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let mut notes = vec!["prose_around_json".to_string()];
            if let Some((obj, used)) = parse_prefix_object(&text[i..], &mut notes) {
                out.push((obj, notes));
                i += used.max(1);
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Parses `text` as exactly one JSON object (after a trailing-comma repair if needed).
fn parse_object(text: &str, notes: &mut Vec<String>) -> Option<Map<String, Value>> {
    let t = text.trim();
    if !t.starts_with('{') {
        return None;
    }
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) {
        return Some(o);
    }
    let fixed = remove_trailing_commas(t);
    if fixed != t
        && let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&fixed)
    {
        notes.push("trailing_commas".into());
        return Some(o);
    }
    None
}

/// Parses the JSON object at the start of `text`, ignoring what follows; returns it with the
/// number of bytes it spans.
fn parse_prefix_object(text: &str, notes: &mut Vec<String>) -> Option<(Map<String, Value>, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    if let Some(Ok(Value::Object(o))) = stream.next() {
        return Some((o, stream.byte_offset()));
    }
    // Trailing commas: repair the balanced span and retry.
    let end = balanced_end(text)?;
    let fixed = remove_trailing_commas(&text[..end]);
    match serde_json::from_str::<Value>(&fixed) {
        Ok(Value::Object(o)) => {
            notes.push("trailing_commas".into());
            Some((o, end))
        }
        _ => None,
    }
}

/// Byte index just past the brace that closes the object opening at `text[0]`.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, ch) in text.char_indices() {
        if in_str {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Removes commas directly before `}` or `]` outside strings.
fn remove_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    for (i, &ch) in chars.iter().enumerate() {
        if in_str {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            out.push(ch);
            continue;
        }
        if ch == '"' {
            in_str = true;
        }
        if ch == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(ch);
    }
    out
}

/// Contents of ``` fenced blocks (any info string).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(end) => {
                out.push(body[..end].trim());
                rest = &body[end + 3..];
            }
            None => {
                out.push(body.trim());
                break;
            }
        }
    }
    out
}

type Parsed = (Vec<RequirementResult>, Verdict, Option<String>);

fn from_object(obj: &Map<String, Value>, notes: &mut Vec<String>) -> Result<Parsed, ParseError> {
    let (vkey, vval) =
        find_key(obj, VERDICT_KEYS).ok_or_else(|| ParseError("no `verdict` field".into()))?;
    if vkey != "verdict" {
        notes.push("key_spelling".into());
    }
    let raw_verdict = vval.as_str().ok_or_else(|| {
        ParseError(format!(
            "`verdict` must be the string \"PASS\" or \"BLOCK\", got {vval}"
        ))
    })?;
    let verdict = parse_verdict(raw_verdict, notes)?;

    let requirements = match find_key(obj, REQUIREMENTS_KEYS) {
        None | Some((_, Value::Null)) => {
            notes.push("missing_requirements".into());
            Vec::new()
        }
        Some((k, v)) => {
            if k != "requirements" {
                notes.push("key_spelling".into());
            }
            parse_requirements(v, notes)?
        }
    };

    let agent_message = match find_key(obj, MESSAGE_KEYS) {
        Some((k, v)) => {
            if k != "agent_message" {
                notes.push("key_spelling".into());
            }
            match v {
                Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Value::String(_) | Value::Null => None,
                other => Some(other.to_string()),
            }
        }
        None => {
            notes.push("missing_agent_message".into());
            None
        }
    };
    Ok((requirements, verdict, agent_message))
}

fn parse_verdict(raw: &str, notes: &mut Vec<String>) -> Result<Verdict, ParseError> {
    let cleaned: String = raw
        .trim()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    let up = cleaned.to_ascii_uppercase();
    let v = match up.as_str() {
        "PASS" | "PASSED" | "ALLOW" | "ALLOWED" | "APPROVE" | "APPROVED" => Verdict::Pass,
        "BLOCK" | "BLOCKED" | "DENY" | "DENIED" | "REJECT" | "REJECTED" => Verdict::Block,
        _ => {
            return Err(ParseError(format!(
                "`verdict` must be \"PASS\" or \"BLOCK\", got {raw:?}"
            )));
        }
    };
    if raw != "PASS" && raw != "BLOCK" {
        notes.push("verdict_casing".into());
    }
    Ok(v)
}

/// `Some(true)` = MET, `Some(false)` = NOT MET; the bool says whether the requirement does not
/// apply (N/A, counted as MET).
fn parse_status(v: &Value) -> Option<(bool, bool)> {
    match v {
        Value::Bool(b) => Some((*b, false)),
        Value::String(s) => {
            let words: Vec<String> = s
                .split(|c: char| c == '_' || c == '-' || c.is_whitespace())
                .filter(|w| !w.is_empty())
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/')
                        .to_ascii_uppercase()
                })
                .filter(|w| !w.is_empty())
                .collect();
            match words.join(" ").as_str() {
                "MET" | "SATISFIED" | "PASS" | "PASSED" | "YES" | "TRUE" | "OK" | "DONE" => {
                    Some((true, false))
                }
                "NOT MET" | "NOTMET" | "UNMET" | "NOT SATISFIED" | "UNSATISFIED" | "FAIL"
                | "FAILED" | "NO" | "FALSE" | "VIOLATED" | "MISSING" => Some((false, false)),
                "N/A" | "NA" | "NOT APPLICABLE" | "NOT RELEVANT" | "NONE" => Some((true, true)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn parse_requirements(
    v: &Value,
    notes: &mut Vec<String>,
) -> Result<Vec<RequirementResult>, ParseError> {
    let mut out = Vec::new();
    let mut odd_status = false;
    let mut push =
        |name: String, status: &Value, reason: String, out: &mut Vec<RequirementResult>| {
            let Some((met, na)) = parse_status(status) else {
                return Err(ParseError(format!(
                    "requirement `{name}` has status {status}; use \"MET\" or \"NOT MET\""
                )));
            };
            if !matches!(status.as_str(), Some("MET") | Some("NOT MET")) {
                odd_status = true;
            }
            let reason = if na && !reason.to_ascii_lowercase().contains("appl") {
                format!("not applicable: {reason}")
                    .trim_end_matches([':', ' '])
                    .to_string()
            } else {
                reason
            };
            out.push(RequirementResult { name, met, reason });
            Ok(())
        };
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let Value::Object(o) = item else {
                    return Err(ParseError(format!("requirement {i} is not an object")));
                };
                let name = find_key(o, NAME_KEYS)
                    .map(|(_, v)| value_text(v))
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| format!("requirement_{}", i + 1));
                let status = find_key(o, STATUS_KEYS)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| ParseError(format!("requirement `{name}` has no `status`")))?;
                let reason = find_key(o, REASON_KEYS)
                    .map(|(_, v)| value_text(v))
                    .unwrap_or_default();
                push(name, &status, reason, &mut out)?;
            }
        }
        // `{"name": "MET"}` or `{"name": {"status": ..., "reason": ...}}`.
        Value::Object(map) => {
            notes.push("requirements_as_object".into());
            for (name, item) in map {
                match item {
                    Value::Object(o) => {
                        let status = find_key(o, STATUS_KEYS)
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| {
                                ParseError(format!("requirement `{name}` has no `status`"))
                            })?;
                        let reason = find_key(o, REASON_KEYS)
                            .map(|(_, v)| value_text(v))
                            .unwrap_or_default();
                        push(name.clone(), &status, reason, &mut out)?;
                    }
                    other => push(name.clone(), other, String::new(), &mut out)?,
                }
            }
        }
        other => {
            return Err(ParseError(format!(
                "`requirements` must be a list, got {other}"
            )));
        }
    }
    if odd_status {
        notes.push("status_spelling".into());
    }
    Ok(out)
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The line format some models fall back to:
/// `Verdict: BLOCK`, `Agent_Message: ...`, `- name: NOT MET - reason`.
fn from_text_lines(text: &str) -> Option<VerifierReply> {
    let mut verdict = None;
    let mut agent_message = None;
    let mut requirements = Vec::new();
    let mut notes = vec!["text_format".to_string()];
    for line in text.lines() {
        let l = line
            .trim()
            .trim_start_matches(['-', '*', '#', '>', ' ', '\t'])
            .trim();
        let Some((head, rest)) = l.split_once(':') else {
            continue;
        };
        let key = norm_key(head);
        let rest = rest.trim().trim_matches(['*', '`', '"', ' ']).trim();
        if key == "verdict" || key == "finalverdict" {
            let word = rest
                .split(|c: char| !c.is_ascii_alphabetic())
                .find(|w| !w.is_empty())
                .unwrap_or("");
            verdict = parse_verdict(word, &mut notes).ok();
        } else if key == "agentmessage" || key == "remediation" {
            if !rest.is_empty() {
                agent_message = Some(rest.to_string());
            }
        } else if !key.is_empty() && key.len() <= 80 {
            // `name: NOT MET - reason` / `name: MET (reason)`.
            let upper = rest.to_ascii_uppercase().replace('_', " ");
            let (met, skip) = if upper.starts_with("NOT MET") {
                (false, 7)
            } else if upper.starts_with("NOTMET") {
                (false, 6)
            } else if upper.starts_with("MET")
                && !upper[3..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                (true, 3)
            } else {
                continue;
            };
            let reason = rest[skip..]
                .trim_start_matches(|c: char| " -–—:().,".contains(c))
                .trim_end_matches(')');
            let name = head.trim().trim_matches(['*', '`', '"', ' ']).to_string();
            requirements.push(RequirementResult {
                name,
                met,
                reason: reason.trim().to_string(),
            });
        }
    }
    let verdict = verdict?;
    if requirements.is_empty() {
        notes.push("missing_requirements".into());
    }
    if agent_message.is_none() {
        notes.push("missing_agent_message".into());
    }
    Some(VerifierReply {
        requirements,
        verdict,
        agent_message,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json() {
        let r = parse_reply(r#"{"requirements":[{"name":"a","status":"MET","reason":"x"}],"verdict":"PASS","agent_message":""}"#)
            .unwrap();
        assert_eq!(r.verdict, Verdict::Pass);
        assert_eq!(r.requirements.len(), 1);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        assert_eq!(r.agent_message, None);
    }

    #[test]
    fn trailing_commas_and_casing() {
        let r = parse_reply("{\"requirements\": [{\"name\": \"a\", \"status\": \"not_met\", \"reason\": \"r\",},], \"verdict\": \"Block\",}")
            .unwrap();
        assert_eq!(r.verdict, Verdict::Block);
        assert!(!r.requirements[0].met);
        assert!(r.notes.contains(&"trailing_commas".to_string()));
        assert!(r.notes.contains(&"verdict_casing".to_string()));
        assert!(r.notes.contains(&"status_spelling".to_string()));
    }

    #[test]
    fn text_lines() {
        let r = parse_reply("- identity: MET - looked up\n- user_confirmation: NOT MET - no yes\nVerdict: **BLOCK**\nAgent_Message: Ask for a yes.")
            .unwrap();
        assert_eq!(r.verdict, Verdict::Block);
        assert_eq!(r.requirements.len(), 2);
        assert!(r.requirements[0].met && !r.requirements[1].met);
        assert_eq!(r.agent_message.as_deref(), Some("Ask for a yes."));
    }

    #[test]
    fn unreadable() {
        assert!(parse_reply("I think this is fine.").is_err());
        assert!(parse_reply("{\"verdict\": \"MAYBE\"}").is_err());
        assert!(parse_reply("{\"requirements\": []}").is_err());
    }
}
