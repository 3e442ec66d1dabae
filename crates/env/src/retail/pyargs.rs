//! Python semantics of raw tool arguments.
//!
//! Upstream passes the JSON arguments to the tool methods unvalidated, so a wrong type
//! fails (or succeeds) exactly where Python's operations on it would: dict lookups of
//! unhashable values, iteration and `len()` of non-sequences, `.lower()` of non-strings,
//! pydantic construction of an address. These helpers reproduce those outcomes.

use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson::{py_repr, py_str};

pub(super) use tauguard_core::pyjson::type_name;

/// `v in d` for a dict `d` with string keys: the key to look up, `None` for a hashable
/// non-string (never found), `TypeError` for an unhashable value.
pub(super) fn dict_key(v: &Value) -> Result<Option<&str>, ToolError> {
    match v {
        Value::String(s) => Ok(Some(s)),
        Value::Array(_) | Value::Object(_) => Err(crate::tooling::unhashable(v)),
        _ => Ok(None),
    }
}

/// `v.lower()`.
pub(super) fn lower(v: &Value) -> Result<String, ToolError> {
    match v {
        Value::String(s) => Ok(s.to_lowercase()),
        other => Err(ToolError::attribute(format!(
            "'{}' object has no attribute 'lower'",
            type_name(other)
        ))),
    }
}

pub(super) use crate::tooling::iterate;

/// `len(v)`.
pub(super) fn len(v: &Value) -> Result<usize, ToolError> {
    match v {
        Value::Array(items) => Ok(items.len()),
        Value::String(s) => Ok(s.chars().count()),
        Value::Object(map) => Ok(map.len()),
        other => Err(ToolError::type_error(format!(
            "object of type '{}' has no len()",
            type_name(other)
        ))),
    }
}

/// Upstream's multiplicity check:
/// `for x in ids: if ids.count(x) > order_ids.count(x): raise ValueError(message(x))`.
/// On success every element is a string; they are returned in argument order.
pub(super) fn check_multiplicity(
    ids: &Value,
    order_ids: &[&str],
    message: impl Fn(&Value) -> String,
) -> Result<Vec<String>, ToolError> {
    let items = iterate(ids)?;
    if matches!(ids, Value::Object(_)) && !items.is_empty() {
        return Err(ToolError::attribute(
            "'dict' object has no attribute 'count'",
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items.iter() {
        let Value::String(s) = item else {
            // A non-string occurs at least once in the argument and never in the order.
            return Err(ToolError::value(message(item)));
        };
        let wanted = items.iter().filter(|x| x.as_str() == Some(s)).count();
        let present = order_ids.iter().filter(|x| **x == s).count();
        if wanted > present {
            return Err(ToolError::value(message(item)));
        }
        out.push(s.clone());
    }
    Ok(out)
}

/// `str(v)` for messages.
pub(super) fn text(v: &Value) -> String {
    py_str(v)
}

/// Constructs a model of string fields the way pydantic validates it: every non-string is a
/// `string_type` error, all reported at once in field order.
pub(super) fn validate_strings(
    model: &str,
    fields: &[(&str, &Value)],
) -> Result<Vec<String>, ToolError> {
    let mut errors = Vec::new();
    let mut out = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        match value {
            Value::String(s) => out.push(s.clone()),
            other => errors.push(format!(
                "{name}\n  Input should be a valid string [type=string_type, input_value={}, input_type={}]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type",
                truncate_repr(&py_repr(other)),
                type_name(other)
            )),
        }
    }
    if errors.is_empty() {
        return Ok(out);
    }
    let noun = if errors.len() == 1 { "error" } else { "errors" };
    Err(ToolError::validation(format!(
        "{} validation {noun} for {model}\n{}",
        errors.len(),
        errors.join("\n")
    )))
}

/// pydantic shortens long input reprs to their first 25 and last 24 bytes.
fn truncate_repr(s: &str) -> String {
    if s.len() <= 50 {
        return s.to_string();
    }
    let mut head = 25;
    while !s.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = s.len() - 24;
    while !s.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}...{}", &s[..head], &s[tail..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_like_argument_handling() {
        assert_eq!(dict_key(&json!(5)).unwrap(), None);
        assert_eq!(
            dict_key(&json!([1])).unwrap_err().message,
            "unhashable type: 'list'"
        );
        assert_eq!(
            lower(&json!(null)).unwrap_err().message,
            "'NoneType' object has no attribute 'lower'"
        );
        assert_eq!(iterate(&json!("ab")).unwrap(), vec![json!("a"), json!("b")]);
        assert_eq!(
            len(&json!(1.5)).unwrap_err().message,
            "object of type 'float' has no len()"
        );
        let msg = |v: &Value| format!("{} not found", text(v));
        assert_eq!(
            check_multiplicity(&json!(["a", "a"]), &["a", "b"], msg)
                .unwrap_err()
                .message,
            "a not found"
        );
        assert_eq!(
            check_multiplicity(&json!(["a", 2]), &["a"], msg)
                .unwrap_err()
                .message,
            "2 not found"
        );
        assert_eq!(
            check_multiplicity(&json!(["b", "a"]), &["a", "b"], msg).unwrap(),
            vec!["b", "a"]
        );
        assert_eq!(
            check_multiplicity(&json!({"a": 1}), &["a"], msg)
                .unwrap_err()
                .qualified(),
            "AttributeError: 'dict' object has no attribute 'count'"
        );
        assert!(
            check_multiplicity(&json!({}), &["a"], msg)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn pydantic_string_errors() {
        let err = validate_strings(
            "UserAddress",
            &[
                ("address1", &json!(1)),
                ("city", &json!("x")),
                ("zip", &json!([1, 2])),
            ],
        )
        .unwrap_err();
        assert_eq!(err.class, "ValidationError");
        assert!(err.message.starts_with("2 validation errors for UserAddress\naddress1\n  Input should be a valid string [type=string_type, input_value=1, input_type=int]\n"));
        assert!(err.message.contains("\nzip\n  Input should be a valid string [type=string_type, input_value=[1, 2], input_type=list]"));
        assert_eq!(
            truncate_repr(&"x".repeat(60)),
            format!("{}...{}", "x".repeat(25), "x".repeat(24))
        );
    }
}
