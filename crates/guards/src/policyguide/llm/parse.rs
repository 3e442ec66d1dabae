//! Tolerant parsing of guide replies into per-request updates.
//!
//! The contract asks for one JSON object
//! `{"requests": [{"id", "intent", "node", "authorizations", "status", "merge_into"}],
//! "remediation"}`. Real replies drift the same ways verifier replies do — code fences, prose
//! around the object, trailing commas, key spellings (`Merge_Into`, `authorisations`) — and the
//! JSON extraction is the PolicyGuard parser's ([`crate::policyguard::parse`]). A reply
//! without a readable `requests` list is an error (it triggers the repair turn); a single
//! unreadable field of one request is refused on its own and reported, the rest of the reply
//! still applies. Whether a node or an authorization exists is not judged here: the state
//! code refuses what the workflow does not enumerate ([`crate::policyguide::state`]).

use crate::policyguard::ParseError;
use crate::policyguard::parse::{find_key, json_candidates};
use crate::policyguide::state::RequestUpdate;
use serde_json::{Map, Value};
use tauguard_core::record::RequestStatus;

/// A parsed guide reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct GuideOutput {
    pub updates: Vec<RequestUpdate>,
    /// `None` when the reply had none, or an empty one.
    pub remediation: Option<String>,
    /// Fields of single requests that could not be read, each with what happened instead.
    pub rejected: Vec<String>,
    /// Tolerances applied (`code_fence`, `prose_around_json`, `trailing_commas`,
    /// `missing_remediation`, `unknown_id_as_new`, `authorization_as_string`,
    /// `status_spelling`, `node_backticks`).
    pub notes: Vec<String>,
}

const REQUESTS_KEYS: &[&str] = &["requests", "requestupdates", "updates", "cards"];
const REMEDIATION_KEYS: &[&str] = &["remediation", "guidance", "agentmessage", "message"];
const ID_KEYS: &[&str] = &["id", "requestid"];
const INTENT_KEYS: &[&str] = &["intent", "request", "summary"];
const NODE_KEYS: &[&str] = &["node", "nodeid", "position", "currentnode"];
const AUTH_KEYS: &[&str] = &[
    "authorizations",
    "authorisations",
    "authorized",
    "authorised",
];
const STATUS_KEYS: &[&str] = &["status", "state"];
const MERGE_KEYS: &[&str] = &["mergeinto", "mergedinto", "duplicateof"];

/// Parses a guide reply. `known_ids` are the ids of the current request cards: a request
/// naming an id that is not one of them is taken as a new request (models number new
/// requests themselves despite the contract), noted as `unknown_id_as_new`.
pub(crate) fn parse_guide_reply(
    reply: &str,
    known_ids: &[&str],
) -> Result<GuideOutput, ParseError> {
    let text = reply.trim();
    if text.is_empty() {
        return Err(ParseError("the reply was empty".into()));
    }
    let mut first_err: Option<ParseError> = None;
    for (obj, notes) in json_candidates(text) {
        match from_object(&obj, notes, known_ids) {
            Ok(Some(out)) => return Ok(out),
            Ok(None) => {}
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    Err(first_err.unwrap_or_else(|| {
        ParseError(if text.contains('{') {
            "no valid JSON object with a `requests` list was found".into()
        } else {
            "the reply contains no JSON object".into()
        })
    }))
}

/// `Ok(None)`: the object is not a guide reply at all (no `requests` key).
fn from_object(
    obj: &Map<String, Value>,
    mut notes: Vec<String>,
    known_ids: &[&str],
) -> Result<Option<GuideOutput>, ParseError> {
    let Some((key, requests)) = find_key(obj, REQUESTS_KEYS) else {
        return Ok(None);
    };
    let Value::Array(items) = requests else {
        return Err(ParseError(format!(
            "`{key}` is {}, not a list of requests",
            kind_of(requests)
        )));
    };
    let remediation = match find_key(obj, REMEDIATION_KEYS) {
        None => {
            notes.push("missing_remediation".into());
            None
        }
        Some((_, Value::Null)) => None,
        Some((_, Value::String(s))) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Some((k, other)) => {
            return Err(ParseError(format!(
                "`{k}` is {}, not a string",
                kind_of(other)
            )));
        }
    };
    let mut out = GuideOutput {
        remediation,
        ..Default::default()
    };
    for (i, item) in items.iter().enumerate() {
        let Value::Object(r) = item else {
            out.rejected.push(format!(
                "requests[{i}] is {}, not an object: ignored",
                kind_of(item)
            ));
            continue;
        };
        out.updates
            .push(update(i, r, known_ids, &mut out.rejected, &mut notes));
    }
    let mut seen = std::collections::HashSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    out.notes = notes;
    Ok(Some(out))
}

fn update(
    i: usize,
    r: &Map<String, Value>,
    known_ids: &[&str],
    rejected: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> RequestUpdate {
    let mut refuse = |field: &str, what: &str| {
        rejected.push(format!("requests[{i}].{field}: {what}"));
    };
    let mut u = RequestUpdate::default();
    match find_key(r, ID_KEYS).map(|(_, v)| v) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.trim().is_empty() => {}
        Some(Value::String(s)) => {
            let id = s.trim();
            if known_ids.contains(&id) {
                u.id = Some(id.to_string());
            } else {
                notes.push("unknown_id_as_new".into());
            }
        }
        Some(other) => refuse(
            "id",
            &format!("{} is not an id; taken as a new request", kind_of(other)),
        ),
    }
    match find_key(r, INTENT_KEYS).map(|(_, v)| v) {
        Some(Value::String(s)) if !s.trim().is_empty() => u.intent = Some(s.trim().to_string()),
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(other) => refuse(
            "intent",
            &format!("{} is not text; intent unchanged", kind_of(other)),
        ),
    }
    match find_key(r, NODE_KEYS).map(|(_, v)| v) {
        Some(Value::String(s)) if !s.trim().is_empty() => u.node = Some(node_id(s, notes)),
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(other) => refuse(
            "node",
            &format!("{} is not a node id; node unchanged", kind_of(other)),
        ),
    }
    match find_key(r, AUTH_KEYS).map(|(_, v)| v) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            notes.push("authorization_as_string".into());
            u.authorizations = Some(if s.trim().is_empty() {
                Vec::new()
            } else {
                vec![node_id(s, notes)]
            });
        }
        Some(Value::Array(list)) => {
            let mut kept = Vec::new();
            for (k, a) in list.iter().enumerate() {
                match a {
                    Value::String(s) if !s.trim().is_empty() => kept.push(node_id(s, notes)),
                    other => refuse(
                        &format!("authorizations[{k}]"),
                        &format!("{} is not a node id; dropped", kind_of(other)),
                    ),
                }
            }
            u.authorizations = Some(kept);
        }
        Some(other) => refuse(
            "authorizations",
            &format!(
                "{} is not a list of node ids; authorizations unchanged",
                kind_of(other)
            ),
        ),
    }
    match find_key(r, STATUS_KEYS).map(|(_, v)| v) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => match status(s, notes) {
            Some(st) => u.status = Some(st),
            None => refuse("status", &format!("unknown status `{s}`; status unchanged")),
        },
        Some(other) => refuse(
            "status",
            &format!("{} is not a status; status unchanged", kind_of(other)),
        ),
    }
    match find_key(r, MERGE_KEYS).map(|(_, v)| v) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.trim().is_empty() => {}
        Some(Value::String(s)) => u.merge_into = Some(s.trim().to_string()),
        Some(other) => refuse(
            "merge_into",
            &format!("{} is not a request id; not merged", kind_of(other)),
        ),
    }
    u
}

/// A node reference as written, with surrounding whitespace and backticks removed (the
/// prompt's rendering quotes node ids in backticks, and models copy them).
fn node_id(raw: &str, notes: &mut Vec<String>) -> String {
    let t = raw.trim();
    let stripped = t.trim_matches('`').trim();
    if stripped.len() != t.len() {
        notes.push("node_backticks".into());
    }
    stripped.to_string()
}

fn status(raw: &str, notes: &mut Vec<String>) -> Option<RequestStatus> {
    let norm: String = raw
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let st = match norm.as_str() {
        "active" | "pending" | "inprogress" | "open" => RequestStatus::Active,
        "completed" | "complete" | "done" | "finished" => RequestStatus::Completed,
        "abandoned" | "dropped" | "cancelled" | "canceled" | "withdrawn" => {
            RequestStatus::Abandoned
        }
        _ => return None,
    };
    if !matches!(raw, "active" | "completed" | "abandoned") {
        notes.push("status_spelling".into());
    }
    Some(st)
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_reply_with_prose_parses_with_its_notes() {
        let reply = "Here is my analysis.\n```json\n{\"requests\": [{\"id\": null, \"intent\": \"cancel\", \
                     \"node\": \"`cancel/ask`\", \"authorizations\": [], \"status\": \"Active\", \
                     \"merge_into\": null},], \"remediation\": \"Ask for the id.\"}\n```\nDone.";
        let out = parse_guide_reply(reply, &[]).unwrap();
        assert_eq!(
            out.updates,
            [RequestUpdate {
                id: None,
                intent: Some("cancel".into()),
                node: Some("cancel/ask".into()),
                authorizations: Some(Vec::new()),
                status: Some(RequestStatus::Active),
                merge_into: None,
            }]
        );
        assert_eq!(out.remediation.as_deref(), Some("Ask for the id."));
        for n in [
            "code_fence",
            "prose_around_json",
            "trailing_commas",
            "node_backticks",
            "status_spelling",
        ] {
            assert!(out.notes.contains(&n.to_string()), "{n}: {:?}", out.notes);
        }
        assert!(out.rejected.is_empty());
    }

    #[test]
    fn known_ids_stay_and_unknown_ids_open_new_requests() {
        let reply = r#"{"requests": [{"id": "r1", "node": "a/b"}, {"id": "r7", "intent": "x"}], "remediation": ""}"#;
        let out = parse_guide_reply(reply, &["r1"]).unwrap();
        assert_eq!(out.updates[0].id.as_deref(), Some("r1"));
        assert_eq!(out.updates[0].authorizations, None, "missing = unchanged");
        assert_eq!(out.updates[1].id, None);
        assert_eq!(out.remediation, None, "an empty remediation says nothing");
        assert!(out.notes.contains(&"unknown_id_as_new".to_string()));
    }

    #[test]
    fn a_bad_field_is_refused_alone() {
        let reply = r#"{"requests": [{"id": null, "node": "a/b", "status": "paused", "authorizations": ["a/c", 3]}, "oops"], "remediation": null}"#;
        let out = parse_guide_reply(reply, &[]).unwrap();
        assert_eq!(out.updates.len(), 1);
        assert_eq!(out.updates[0].status, None);
        assert_eq!(out.updates[0].authorizations, Some(vec!["a/c".to_string()]));
        assert_eq!(
            out.rejected,
            [
                "requests[0].authorizations[1]: a number is not a node id; dropped",
                "requests[0].status: unknown status `paused`; status unchanged",
                "requests[1] is a string, not an object: ignored",
            ]
        );
    }

    #[test]
    fn replies_without_a_request_list_are_errors() {
        for (reply, want) in [
            ("", "the reply was empty"),
            (
                "I think the agent is fine.",
                "the reply contains no JSON object",
            ),
            (
                r#"{"verdict": "PASS"}"#,
                "no valid JSON object with a `requests` list was found",
            ),
            (
                r#"{"requests": "none", "remediation": ""}"#,
                "`requests` is a string, not a list of requests",
            ),
            (
                r#"{"requests": [], "remediation": ["a"]}"#,
                "`remediation` is a list, not a string",
            ),
        ] {
            assert_eq!(
                parse_guide_reply(reply, &[]).unwrap_err().0,
                want,
                "{reply}"
            );
        }
    }
}
