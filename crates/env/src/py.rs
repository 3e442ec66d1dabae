//! Python semantics of raw tool arguments, shared by every domain.
//!
//! Upstream passes the model's JSON arguments to its tool methods untouched, so what a bad
//! argument does is whatever the Python expression first using it does: `x in dict` with a
//! list raises `unhashable type`, `len(3)` has no length, `"ab".lower()` works and
//! `(1).lower()` raises an `AttributeError`, `50 * "2"` repeats a string. Each behaviour is
//! reproduced here once, under one name, and the domains call it wherever the upstream code
//! applies that operation to a raw argument; the texts are the exception messages Python
//! prints, which reach the agent verbatim as tool errors.

use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;
use tauguard_core::pyjson::{float_repr, py_repr, str_repr};

pub(crate) use tauguard_core::pyjson::type_name;

// ---------------------------------------------------------------------------------------
// Exceptions
// ---------------------------------------------------------------------------------------

/// `TypeError: unhashable type: '<type>'`, for a list or dict used as a dict key (`x in d`,
/// `d[x]`, `d.get(x)`).
pub(crate) fn unhashable(v: &Value) -> ToolError {
    ToolError::type_error(format!("unhashable type: '{}'", type_name(v)))
}

/// `AttributeError: '<class>' object has no attribute '<attr>'`: `v.attr` on a raw value of
/// the wrong type (`class` = [`type_name`] of it), or a toolkit method that does not exist
/// (`class` = the toolkit's class name, `NoneType` for a side without a toolkit).
pub(crate) fn no_attribute(class: &str, attr: &str) -> ToolError {
    ToolError::attribute(format!("'{class}' object has no attribute '{attr}'"))
}

/// `TypeError: '<op>' not supported between instances of '<a>' and '<b>'`.
pub(crate) fn unorderable(op: &str, left: &str, right: &str) -> ToolError {
    ToolError::type_error(format!(
        "'{op}' not supported between instances of '{left}' and '{right}'"
    ))
}

/// `ValueError: <repr> is not a valid <Enum>`, what calling an enum class with a bad value
/// raises.
pub(crate) fn not_a_valid(v: &Value, enum_name: &str) -> ToolError {
    ToolError::value(format!("{} is not a valid {enum_name}", py_repr(v)))
}

// ---------------------------------------------------------------------------------------
// Dict keys, iteration, length, strings
// ---------------------------------------------------------------------------------------

/// `v` as a key of a dict with string keys: the string to look up, `None` for a hashable
/// non-string (it is never found), `unhashable type` for lists and dicts. Calling it only for
/// its error is Python's hashability check (`dict.get(v)` on any dict).
pub(crate) fn dict_key(v: &Value) -> Result<Option<&str>, ToolError> {
    match v {
        Value::String(s) => Ok(Some(s)),
        Value::Array(_) | Value::Object(_) => Err(unhashable(v)),
        _ => Ok(None),
    }
}

/// `key in mapping` for a dict with string keys: `Some(key)` when present.
pub(crate) fn find_key<'a, K, T>(
    map: &IndexMap<K, T>,
    key: &'a Value,
) -> Result<Option<&'a str>, ToolError>
where
    K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
{
    Ok(dict_key(key)?.filter(|k| map.contains_key(*k)))
}

/// `mapping[key]` on a dict with string keys: a `KeyError` when absent.
pub(crate) fn index<'m, T>(map: &'m IndexMap<String, T>, key: &Value) -> Result<&'m T, ToolError> {
    match find_key(map, key)? {
        Some(k) => Ok(&map[k]),
        None => Err(ToolError::key(key)),
    }
}

/// The items `for x in v` visits: list elements (borrowed), string characters, dict keys; a
/// `TypeError` for anything else.
pub(crate) fn iterate(v: &Value) -> Result<Cow<'_, [Value]>, ToolError> {
    match v {
        Value::Array(items) => Ok(Cow::Borrowed(items)),
        Value::String(s) => Ok(Cow::Owned(
            s.chars().map(|c| Value::String(c.to_string())).collect(),
        )),
        Value::Object(map) => Ok(Cow::Owned(
            map.keys().map(|k| Value::String(k.clone())).collect(),
        )),
        other => Err(ToolError::type_error(format!(
            "'{}' object is not iterable",
            type_name(other)
        ))),
    }
}

/// `all(isinstance(x, dict) for x in v)`.
pub(crate) fn all_dicts(v: &Value) -> Result<bool, ToolError> {
    Ok(iterate(v)?.iter().all(Value::is_object))
}

/// `len(v)`.
pub(crate) fn len(v: &Value) -> Result<usize, ToolError> {
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

/// `v.lower()`.
pub(crate) fn lower(v: &Value) -> Result<String, ToolError> {
    match v {
        Value::String(s) => Ok(s.to_lowercase()),
        other => Err(no_attribute(type_name(other), "lower")),
    }
}

/// `str(v)`, for messages that interpolate raw arguments.
pub(crate) fn arg_str(v: &Value) -> String {
    tauguard_core::pyjson::py_str(v)
}

/// `for x in ids: if ids.count(x) > order_ids.count(x): raise ValueError(message(x))`: the
/// check that every id named in an argument occurs in the order at least as often. On
/// success every element is a string; they are returned in argument order.
pub(crate) fn check_multiplicity(
    ids: &Value,
    order_ids: &[&str],
    message: impl Fn(&Value) -> String,
) -> Result<Vec<String>, ToolError> {
    let items = iterate(ids)?;
    if matches!(ids, Value::Object(_)) && !items.is_empty() {
        return Err(no_attribute(type_name(ids), "count"));
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

// ---------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------

/// A Python `int` (bools count as ints) or `float`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    /// The number a JSON value is in Python, or `None` for non-numbers.
    pub(crate) fn of(v: &Value) -> Option<Num> {
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

    /// The value float arithmetic sees (`x * 1.0`).
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub(crate) fn is_zero(self) -> bool {
        self.as_f64() == 0.0
    }

    pub(crate) fn sub(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_sub(b)),
            (a, b) => Num::Float(a.as_f64() - b.as_f64()),
        }
    }

    pub(crate) fn add(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_add(b)),
            (a, b) => Num::Float(a.as_f64() + b.as_f64()),
        }
    }

    pub(crate) fn mul(self, other: Num) -> Num {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Num::Int(a.saturating_mul(b)),
            (a, b) => Num::Float(a.as_f64() * b.as_f64()),
        }
    }

    /// Python's numeric comparison (exact between ints).
    pub(crate) fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// `max(self, other)`: the first argument wins ties, as Python's `max` does.
    pub(crate) fn max(self, other: Num) -> Num {
        if other.cmp(self) == Some(Ordering::Greater) {
            other
        } else {
            self
        }
    }

    /// Python `str()` of the number.
    pub(crate) fn py_str(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => float_str(f),
        }
    }

    /// The JSON value of the number, when representable.
    pub(crate) fn to_value(self) -> Option<Value> {
        match self {
            Num::Int(i) => i64::try_from(i)
                .ok()
                .map(Value::from)
                .or_else(|| u64::try_from(i).ok().map(Value::from)),
            Num::Float(f) => Number::from_f64(f).map(Value::Number),
        }
    }
}

/// `a - b` on raw values (numbers and bools only; anything else is a `TypeError`).
pub(crate) fn sub(a: &Value, b: &Value) -> Result<Num, ToolError> {
    match (Num::of(a), Num::of(b)) {
        (Some(x), Some(y)) => Ok(x.sub(y)),
        _ => Err(ToolError::type_error(format!(
            "unsupported operand type(s) for -: '{}' and '{}'",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// `int(s)` of a string: surrounding whitespace, an optional sign, digits with single
/// underscores between them.
pub(crate) fn parse_int(s: &str) -> Result<i128, ToolError> {
    let fail = || {
        ToolError::value(format!(
            "invalid literal for int() with base 10: {}",
            str_repr(s)
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

/// `str(x)` of a float.
pub(crate) fn float_str(x: f64) -> String {
    float_repr(x)
}

/// `f"{x:.2f}"`: fixed two decimals, correctly rounded on the binary value.
pub(crate) fn fixed2(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:.2}")
    }
}

// ---------------------------------------------------------------------------------------
// pydantic construction
// ---------------------------------------------------------------------------------------

/// Constructs a model of string fields the way pydantic validates it: every non-string is a
/// `string_type` error, all reported at once in field order.
pub(crate) fn validate_strings(
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

// ---------------------------------------------------------------------------------------
// str-valued enums
// ---------------------------------------------------------------------------------------

/// Declares a `str`-valued Python enum: its values (what dumps and messages show), its member
/// names (what `repr` shows) and serde support through the value.
macro_rules! py_enum {
    ($(#[$meta:meta])* $name:ident = $py:literal { $($var:ident = $member:literal : $val:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub(crate) enum $name { $($var),+ }

        impl $name {
            /// Members in declaration order.
            pub(crate) const ALL: &'static [$name] = &[$($name::$var),+];

            /// The member's value, as dumps and f-strings with `.value` show it.
            pub(crate) fn value(self) -> &'static str {
                match self { $($name::$var => $val),+ }
            }

            /// `EnumClass(value)` for a string value.
            pub(crate) fn parse(s: &str) -> Option<Self> {
                match s { $($val => Some($name::$var),)+ _ => None }
            }

            /// Python `repr(member)`: `<Class.NAME: 'value'>`.
            #[allow(dead_code)]
            pub(crate) fn py_repr(self) -> String {
                let member = match self { $($name::$var => $member),+ };
                format!("<{}.{}: {}>", $py, member, tauguard_core::pyjson::str_repr(self.value()))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.value())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| {
                    let allowed: Vec<String> =
                        Self::ALL.iter().map(|m| format!("'{}'", m.value())).collect();
                    serde::de::Error::custom(format!(
                        "{}: input should be one of {}, got {:?}",
                        $py,
                        allowed.join(", "),
                        s
                    ))
                })
            }
        }
    };
}
pub(crate) use py_enum;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exception_texts() {
        assert_eq!(type_name(&json!(1.0)), "float");
        assert_eq!(
            no_attribute(type_name(&json!(1)), "lower").message,
            "'int' object has no attribute 'lower'"
        );
        assert_eq!(
            no_attribute(type_name(&json!(null)), "value").message,
            "'NoneType' object has no attribute 'value'"
        );
        assert_eq!(
            unorderable("<=", "str", "int").qualified(),
            "TypeError: '<=' not supported between instances of 'str' and 'int'"
        );
        assert_eq!(
            not_a_valid(&json!("x"), "NetworkStatus").message,
            "'x' is not a valid NetworkStatus"
        );
    }

    #[test]
    fn keys_iteration_and_length() {
        assert_eq!(dict_key(&json!(5)).unwrap(), None);
        assert_eq!(dict_key(&json!("k")).unwrap(), Some("k"));
        assert_eq!(
            dict_key(&json!([1])).unwrap_err().message,
            "unhashable type: 'list'"
        );
        let m: IndexMap<String, i32> = [("a".to_string(), 1)].into_iter().collect();
        assert_eq!(find_key(&m, &json!("a")).unwrap(), Some("a"));
        assert_eq!(find_key(&m, &json!("b")).unwrap(), None);
        assert_eq!(find_key(&m, &json!(1)).unwrap(), None);
        assert_eq!(
            index(&m, &json!("b")).unwrap_err().qualified(),
            "KeyError: 'b'"
        );
        assert_eq!(
            index(&m, &json!([1])).unwrap_err().message,
            "unhashable type: 'list'"
        );
        assert_eq!(iterate(&json!("ab")).unwrap(), vec![json!("a"), json!("b")]);
        assert!(all_dicts(&json!("")).unwrap());
        assert!(!all_dicts(&json!("ab")).unwrap());
        assert_eq!(
            all_dicts(&json!(3)).unwrap_err().message,
            "'int' object is not iterable"
        );
        assert_eq!(len(&json!("ab")).unwrap(), 2);
        assert_eq!(len(&json!({"a": 1})).unwrap(), 1);
        assert_eq!(
            len(&json!(1.5)).unwrap_err().message,
            "object of type 'float' has no len()"
        );
        assert_eq!(
            lower(&json!(null)).unwrap_err().message,
            "'NoneType' object has no attribute 'lower'"
        );
        assert_eq!(arg_str(&json!("x")), "x");
        assert_eq!(arg_str(&json!(null)), "None");
    }

    #[test]
    fn multiplicity() {
        let msg = |v: &Value| format!("{} not found", arg_str(v));
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
    fn numbers() {
        assert_eq!(sub(&json!(3), &json!(true)).unwrap(), Num::Int(2));
        assert_eq!(sub(&json!(3.0), &json!(1)).unwrap(), Num::Float(2.0));
        assert_eq!(
            sub(&json!("3"), &json!(1)).unwrap_err().message,
            "unsupported operand type(s) for -: 'str' and 'int'"
        );
        assert_eq!(Num::Int(0).max(Num::Float(0.0)), Num::Int(0));
        assert_eq!(Num::Int(0).max(Num::Float(1.5)), Num::Float(1.5));
        assert_eq!(Num::of(&json!(true)).map(Num::as_f64), Some(1.0));
        assert_eq!(Num::of(&json!("1")), None);
        assert_eq!(Num::Float(2.0).py_str(), "2.0");
        assert_eq!(parse_int(" 1_0 ").unwrap(), 10);
        assert!(parse_int("1__0").is_err());
        assert_eq!(fixed2(4.0), "4.00");
        assert_eq!(fixed2(0.125), "0.12");
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
