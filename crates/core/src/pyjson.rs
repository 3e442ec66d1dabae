//! Python-compatible rendering of JSON values.
//!
//! τ²-bench hashes databases and serialises tool results with Python's `json.dumps` and
//! `str()`/`repr()`. Hash parity and tool-output parity therefore depend on reproducing
//! Python's float repr, its ASCII escaping, its separators and its container reprs exactly.
//! Everything that must look like Python output goes through this module.

mod direct;

pub use direct::dumps_model;
use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

/// Python `repr(float)`: shortest round-trip digits, positional for exponents in [-4, 16),
/// scientific (`1e+16`, `1e-05`) otherwise; integral values keep a `.0`.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` prints the shortest round-trip digits in scientific form: `1.2345e-5`.
    let mut sci = format!("{:e}", x.abs());
    let shortest_len = sci
        .split_once('e')
        .map_or(0, |(m, _)| m.len() - usize::from(m.contains('.')));
    if shortest_len > 1 {
        // When two shortest candidates are equally near (`89012345670890.125` → `.12`/`.13`),
        // Rust picks the upper one and Python the even one. Exact-precision formatting rounds
        // ties to even; it is the nearest decimal of that length, so use it when it round-trips.
        let exact = format!("{:.*e}", shortest_len - 1, x.abs());
        if exact.parse::<f64>() == Ok(x.abs()) {
            sci = exact;
        }
    }
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if x < 0.0 {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Python `round(x, 2)`: correctly rounded on the exact binary value, ties to even.
/// Formatting with two decimals rounds the exact binary value, which is what Python does.
pub fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().expect("formatted float parses")
}

/// How a JSON number renders in Python: integers as integers, floats with float repr.
pub fn number_repr(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        float_repr(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Options of a `json.dumps` call. Separators are always Python's defaults (`", "`, `": "`)
/// and `ensure_ascii` is always on, as in every τ²-bench call site.
#[derive(Debug, Clone, Copy, Default)]
pub struct DumpOptions {
    /// `sort_keys=True`: sort object keys by code point at every level (hashing).
    pub sort_keys: bool,
}

/// `json.dumps(value)` with Python defaults (insertion order).
pub fn dumps(value: &Value) -> String {
    dumps_with(value, DumpOptions::default())
}

/// `json.dumps(value, sort_keys=True)`: the canonical form τ²-bench hashes.
pub fn dumps_sorted(value: &Value) -> String {
    dumps_with(value, DumpOptions { sort_keys: true })
}

/// `json.dumps` with the given options.
pub fn dumps_with(value: &Value, opts: DumpOptions) -> String {
    let mut out = String::new();
    write_value(&mut out, value, opts);
    out
}

/// Appends the Python `json.dumps` rendering of `value` to `out`.
pub fn write_value(out: &mut String, value: &Value, opts: DumpOptions) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_json_number(out, n),
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, opts);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, opts),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>, opts: DumpOptions) {
    out.push('{');
    let write_entry = |i: usize, k: &str, v: &Value, out: &mut String| {
        if i > 0 {
            out.push_str(", ");
        }
        write_json_string(out, k);
        out.push_str(": ");
        write_value(out, v, opts);
    };
    if opts.sort_keys {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        // Python sorts str keys by code point; UTF-8 byte order is the same order.
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            write_entry(i, k, v, out);
        }
    } else {
        for (i, (k, v)) in map.iter().enumerate() {
            write_entry(i, k, v, out);
        }
    }
    out.push('}');
}

fn write_json_number(out: &mut String, n: &Number) {
    if n.is_f64() {
        let x = n.as_f64().unwrap_or(f64::NAN);
        // json.dumps spells non-finite floats as JavaScript literals.
        if x.is_nan() {
            out.push_str("NaN");
        } else if x.is_infinite() {
            out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            out.push_str(&float_repr(x));
        }
    } else {
        out.push_str(&number_repr(n));
    }
}

/// A JSON string literal escaped as `json.dumps(ensure_ascii=True)` escapes it.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python type name of the object `json.loads` builds from `v` (`NoneType`, `int`, `dict`, ...),
/// as exception texts print it.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python `str(obj)` of the object `json.loads` would build from `value`.
/// Used wherever upstream interpolates a raw argument into a message (`User 12 not found`).
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python `repr(obj)` of the object `json.loads` would build from `value`.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
        Value::Number(n) => out.push_str(&number_repr(n)),
        Value::String(s) => out.push_str(&str_repr(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&str_repr(k));
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
    }
}

/// Python `repr(str)`: single quotes unless the text holds a `'` and no `"`.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python `==` on the objects `json.loads` would build: `1 == 1.0 == True`, dicts equal
/// regardless of key order, lists element-wise.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    fn num(v: &Value) -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Number(_) | Value::Bool(_), Value::Number(_) | Value::Bool(_)) => num(a) == num(b),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    #[allow(clippy::excessive_precision)] // the literals are exact binary values on purpose (ties)
    fn float_repr_matches_python() {
        let cases = [
            (100.0, "100.0"),
            (28.360000000000014, "28.360000000000014"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (1e18, "1e+18"),
            (3.33, "3.33"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123456789.125, "123456789.125"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
            (89012345670890.125, "89012345670890.12"),
            (2198339183111618.25, "2198339183111618.2"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "repr of {x:e}");
        }
    }

    #[test]
    fn round2_ties_to_even_on_binary_value() {
        assert_eq!(round2(2.675), 2.67);
        assert_eq!(round2(0.125), 0.12);
        assert_eq!(round2(0.375), 0.38);
        assert_eq!(round2(10.0 / 3.0), 3.33);
    }

    #[test]
    fn dumps_escapes_like_python() {
        let v = json!({"b": "Zoë \"q\"\n\u{1F600}/\u{7f}", "a": [1, 2.0, null, true]});
        assert_eq!(
            dumps(&v),
            r#"{"b": "Zo\u00eb \"q\"\n\ud83d\ude00/\u007f", "a": [1, 2.0, null, true]}"#
        );
        assert_eq!(
            dumps_sorted(&v),
            r#"{"a": [1, 2.0, null, true], "b": "Zo\u00eb \"q\"\n\ud83d\ude00/\u007f"}"#
        );
    }

    #[test]
    fn repr_of_containers() {
        let v = json!({"a": [1, "x", 2.5, null, false], "it's": "q"});
        assert_eq!(
            py_repr(&v),
            r#"{'a': [1, 'x', 2.5, None, False], "it's": 'q'}"#
        );
        assert_eq!(py_str(&json!("plain")), "plain");
        assert_eq!(py_str(&json!(150)), "150");
        assert_eq!(py_str(&json!(150.0)), "150.0");
    }

    #[test]
    fn python_equality() {
        assert!(py_eq(&json!({"a": [1, true]}), &json!({"a": [1.0, 1]})));
        assert!(!py_eq(&json!([1, 2]), &json!([2, 1])));
        assert!(!py_eq(&json!("1"), &json!(1)));
    }

    proptest::proptest! {
        #[test]
        fn float_repr_round_trips(x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL) {
            let s = float_repr(x);
            let back: f64 = s.parse().unwrap();
            proptest::prop_assert_eq!(back, x);
            proptest::prop_assert!(s.contains('.') || s.contains('e'));
        }
    }
}
