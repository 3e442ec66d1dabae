//! Raw keyword arguments as the banking tool bodies use them: Python values that arrive
//! without schema validation, so `reason.lower()` on a number is an `AttributeError`,
//! `amount <= 0` on a string a `TypeError`, and `f"{x:.2f}"` on a string a `ValueError`,
//! each with Python's text.

use super::pyfmt::{self, truthy};
use crate::py;
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use tauguard_core::pyjson;

static NONE: Value = Value::Null;

/// Bound keyword arguments (already checked against the signature).
#[derive(Clone, Copy)]
pub(super) struct Args<'a>(pub &'a Map<String, Value>);

impl<'a> Args<'a> {
    /// The argument, or `None` (Python's `None` default) when not given.
    pub(super) fn v(&self, name: &str) -> &'a Value {
        self.0.get(name).unwrap_or(&NONE)
    }

    /// `str(arg)`, as an f-string interpolates it.
    pub(super) fn s(&self, name: &str) -> String {
        pyjson::py_str(self.v(name))
    }

    pub(super) fn truthy(&self, name: &str) -> bool {
        truthy(self.v(name))
    }

    pub(super) fn is_none(&self, name: &str) -> bool {
        self.v(name).is_null()
    }

    /// Upstream's `if not all([...])` guard: whether one of `names` is falsy.
    pub(super) fn missing(&self, names: &[&str]) -> bool {
        names.iter().any(|k| !self.truthy(k))
    }

    /// [`Args::missing`] for a guard whose text lists the parameters: that text.
    pub(super) fn missing_listed(&self, names: &[&str]) -> Option<String> {
        self.missing(names)
            .then(|| format!("Error: Missing required parameters ({}).", names.join(", ")))
    }

    /// Upstream's `if arg not in OPTIONS` guard: its `Error: Invalid ...` text when the
    /// argument is not one of `options`.
    pub(super) fn not_one_of(&self, name: &str, options: &[&str]) -> Option<String> {
        (!one_of(self.v(name), options)).then(|| super::tools::invalid(name, options))
    }
}

/// A record id argument used as a dict key: the string, a key never found for other
/// hashable values (upstream's lookup misses them), `unhashable type` for lists and dicts.
pub(super) fn key(v: &Value) -> Result<String, ToolError> {
    Ok(py::dict_key(v)?.unwrap_or("\u{0}").to_string())
}

/// The string an argument must be for a `str` method called on it.
pub(super) fn text<'v>(v: &'v Value, method: &str) -> Result<&'v str, ToolError> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(py::no_attribute(pyjson::type_name(other), method)),
    }
}

/// A Python number (bools included) as `f64`, or `None` for other types.
pub(super) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// `v <op> 0` (or another number): a `TypeError` for non-numbers, as Python raises it.
pub(super) fn cmp_num(v: &Value, op: &str, rhs: f64) -> Result<bool, ToolError> {
    let x = number(v).ok_or_else(|| {
        py::unorderable(
            op,
            pyjson::type_name(v),
            if rhs.fract() == 0.0 { "int" } else { "float" },
        )
    })?;
    Ok(match op {
        "<=" => x <= rhs,
        "<" => x < rhs,
        ">" => x > rhs,
        ">=" => x >= rhs,
        _ => x == rhs,
    })
}

/// `f"{v:.2f}"`: a `ValueError` for non-numbers.
pub(super) fn fmt2(v: &Value) -> Result<String, ToolError> {
    match number(v) {
        Some(x) => Ok(pyfmt::f2(x)),
        None => Err(ToolError::value(format!(
            "Unknown format code 'f' for object of type '{}'",
            pyjson::type_name(v)
        ))),
    }
}

/// Python `float(v)`: numbers, bools and numeric strings; `None` where Python raises.
pub(super) fn to_float(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => parse_float_text(s),
        other => number(other),
    }
}

/// `float(str)`: surrounding whitespace allowed, `inf`/`nan` spelled any case, digit
/// group underscores between digits.
pub(super) fn parse_float_text(s: &str) -> Option<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return lower
            .parse::<f64>()
            .ok()
            .or(Some(if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else if unsigned == "nan" {
                f64::NAN
            } else {
                f64::INFINITY
            }));
    }
    let bytes = t.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let ok = i > 0
                && i + 1 < bytes.len()
                && bytes[i - 1].is_ascii_digit()
                && bytes[i + 1].is_ascii_digit();
            if !ok {
                return None;
            }
        }
    }
    let clean: String = t.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() || clean.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
    {
        return None;
    }
    clean.parse::<f64>().ok()
}

/// `_parse_balance`: numbers as they are, `"$2,850.00"` without `$` and `,`, anything else 0.
/// A string that still is no number raises `ValueError`, as `float()` does.
pub(super) fn parse_balance(v: &Value) -> Result<f64, ToolError> {
    match v {
        Value::String(s) => {
            let clean = s.replace(['$', ','], "");
            parse_float_text(&clean).ok_or_else(|| {
                ToolError::value(format!(
                    "could not convert string to float: {}",
                    pyjson::str_repr(&clean)
                ))
            })
        }
        other => Ok(number(other).unwrap_or(0.0)),
    }
}

/// `_get_account_balance`: `current_holdings`, else `balance`, else 0.
pub(super) fn account_balance(account: &Map<String, Value>) -> Result<f64, ToolError> {
    let v = account
        .get("current_holdings")
        .or_else(|| account.get("balance"))
        .cloned()
        .unwrap_or(Value::from(0));
    parse_balance(&v)
}

/// `record.get(field)` as `str()` prints it (`None` when missing).
pub(super) fn field(record: &Map<String, Value>, name: &str) -> String {
    pyjson::py_str(record.get(name).unwrap_or(&NONE))
}

/// `record.get(field) == "text"`.
pub(super) fn field_is(record: &Map<String, Value>, name: &str, want: &str) -> bool {
    record.get(name).and_then(Value::as_str) == Some(want)
}

/// Upstream's `if record.get(field) != "text"` refusal: `refusal` of the value as `str()`
/// prints it, for a record whose field is not `want`.
pub(super) fn require_field(
    record: &Map<String, Value>,
    name: &str,
    want: &str,
    refusal: impl FnOnce(String) -> String,
) -> Result<(), String> {
    if field_is(record, name, want) {
        Ok(())
    } else {
        Err(refusal(field(record, name)))
    }
}

/// `record.get(field, "")` as a string (`""` when missing or not a string, where upstream's
/// follow-up string method would raise on the non-string: tables hold strings there).
pub(super) fn field_str<'r>(record: &'r Map<String, Value>, name: &str) -> &'r str {
    record.get(name).and_then(Value::as_str).unwrap_or("")
}

/// `value in [..strings..]`.
pub(super) fn one_of(v: &Value, options: &[&str]) -> bool {
    v.as_str().is_some_and(|s| options.contains(&s))
}

/// Python `repr(list_of_str)`: `['a', 'b']`.
pub(super) fn list_repr(options: &[&str]) -> String {
    let items: Vec<Value> = options.iter().map(|s| Value::String((*s).into())).collect();
    pyjson::py_repr(&Value::Array(items))
}

/// A record from field/value pairs, in order.
pub(super) fn record(fields: Vec<(&str, Value)>) -> Map<String, Value> {
    fields
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}
