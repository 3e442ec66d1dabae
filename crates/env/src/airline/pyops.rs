//! Python semantics of raw JSON arguments.
//!
//! Upstream passes the agent's JSON arguments to its tool methods untouched, so what a bad
//! argument does is whatever the Python expression using it does: `x in dict` with a list
//! raises `unhashable type`, `50 * "2"` repeats a string, `len("ab")` is 2. The tools use
//! these helpers wherever upstream's code applies such an operation to a raw argument.

use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde_json::{Number, Value};
use std::cmp::Ordering;

pub use tauguard_core::pyjson::type_name;

/// `key in mapping` for a dict with string keys: `Some(key)` when present, `None` when a
/// hashable key is absent, `unhashable type` for lists and dicts.
pub fn find_key<'a, K, T>(
    map: &IndexMap<K, T>,
    key: &'a Value,
) -> Result<Option<&'a str>, ToolError>
where
    K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
{
    match key {
        Value::String(s) => Ok(map.contains_key(s.as_str()).then_some(s.as_str())),
        Value::Array(_) | Value::Object(_) => Err(unhashable(key)),
        _ => Ok(None),
    }
}

pub use crate::tooling::{iterate, unhashable};

/// `mapping[key]` on a dict with string keys: a `KeyError` when absent.
pub fn index<'m, T>(map: &'m IndexMap<String, T>, key: &Value) -> Result<&'m T, ToolError> {
    match find_key(map, key)? {
        Some(k) => Ok(&map[k]),
        None => Err(ToolError::key(key)),
    }
}

/// `all(isinstance(x, dict) for x in v)`.
pub fn all_dicts(v: &Value) -> Result<bool, ToolError> {
    Ok(iterate(v)?.iter().all(Value::is_object))
}

/// `len(v)` for a value that passed [`iterate`].
pub fn len(v: &Value) -> usize {
    match v {
        Value::Array(items) => items.len(),
        Value::String(s) => s.chars().count(),
        Value::Object(map) => map.len(),
        _ => 0,
    }
}

/// `AttributeError` of `obj.attr` on a plain JSON object.
pub fn no_attribute(v: &Value, attr: &str) -> ToolError {
    ToolError::attribute(format!(
        "'{}' object has no attribute '{attr}'",
        type_name(v)
    ))
}

/// A Python `int` (bools count as ints) or `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// The number a JSON value is in Python, or `None` for non-numbers.
    pub fn of(v: &Value) -> Option<Num> {
        match v {
            Value::Bool(b) => Some(Num::Int(i128::from(*b))),
            Value::Number(n) => Some(if let Some(i) = n.as_i64() {
                Num::Int(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Num::Int(i128::from(u))
            } else {
                Num::Float(n.as_f64().unwrap_or(f64::NAN))
            }),
            _ => None,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    pub fn sub(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_sub(b)),
            (a, b) => Num::Float(a.as_f64() - b.as_f64()),
        }
    }

    pub fn add(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_add(b)),
            (a, b) => Num::Float(a.as_f64() + b.as_f64()),
        }
    }

    pub fn mul(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_mul(b)),
            (a, b) => Num::Float(a.as_f64() * b.as_f64()),
        }
    }

    /// Python's numeric comparison (exact between ints).
    pub fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// `max(self, other)`: the first argument wins ties, as Python's `max` does.
    pub fn max(self, other: Num) -> Num {
        if other.cmp(self) == Some(Ordering::Greater) {
            other
        } else {
            self
        }
    }

    /// Python `str()` of the number.
    pub fn py_str(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => tauguard_core::pyjson::float_repr(f),
        }
    }

    /// The JSON value of the number, when representable.
    pub fn to_value(self) -> Option<Value> {
        match self {
            Num::Int(i) => i64::try_from(i)
                .ok()
                .map(Value::from)
                .or_else(|| u64::try_from(i).ok().map(Value::from)),
            Num::Float(f) => Number::from_f64(f).map(Value::Number),
        }
    }
}

/// `a - b` on raw Python values (numbers and bools only; anything else is a `TypeError`).
pub fn sub(a: &Value, b: &Value) -> Result<Num, ToolError> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => Ok(x.sub(y)),
        _ => Err(ToolError::type_error(format!(
            "unsupported operand type(s) for -: '{}' and '{}'",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// Python's int() of a string: surrounding whitespace, an optional sign, digits with single
/// underscores between them.
pub fn parse_int(s: &str) -> Result<i128, ToolError> {
    let fail = || {
        ToolError::value(format!(
            "invalid literal for int() with base 10: {}",
            tauguard_core::pyjson::str_repr(s)
        ))
    };
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return Err(fail());
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let v: i128 = clean.parse().map_err(|_| fail())?;
    Ok(if neg { v.saturating_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_operations() {
        assert_eq!(type_name(&json!(1.0)), "float");
        assert!(all_dicts(&json!("")).unwrap());
        assert!(!all_dicts(&json!("ab")).unwrap());
        assert_eq!(
            all_dicts(&json!(3)).unwrap_err().message,
            "'int' object is not iterable"
        );
        assert_eq!(len(&json!("ab")), 2);
        assert_eq!(sub(&json!(3), &json!(true)).unwrap(), Num::Int(2));
        assert_eq!(sub(&json!(3.0), &json!(1)).unwrap(), Num::Float(2.0));
        assert_eq!(
            sub(&json!("3"), &json!(1)).unwrap_err().message,
            "unsupported operand type(s) for -: 'str' and 'int'"
        );
        assert_eq!(Num::Int(0).max(Num::Float(0.0)), Num::Int(0));
        assert_eq!(Num::Int(0).max(Num::Float(1.5)), Num::Float(1.5));
        let m: IndexMap<String, i32> = [("a".to_string(), 1)].into_iter().collect();
        assert_eq!(
            index(&m, &json!("b")).unwrap_err().qualified(),
            "KeyError: 'b'"
        );
        assert_eq!(
            index(&m, &json!([1])).unwrap_err().message,
            "unhashable type: 'list'"
        );
        assert_eq!(parse_int(" 1_0 ").unwrap(), 10);
        assert!(parse_int("1__0").is_err());
    }
}
