//! The Python behaviours banking tool texts are made of, beyond the shared `py` module:
//! `json.loads` with CPython's error messages (tools print them, and build JSON from
//! f-strings, so a quote in an argument surfaces as a decode error), `json.dumps(indent=2)`,
//! truthiness, `str.title()`, `f"{x:.2f}"` and `f"{n:,}"`.

use serde_json::{Map, Number, Value};
use tauguard_core::pyjson::{self, write_json_string};

/// `json.loads(text)` (or with `parse_int=float`): the value, or `str(JSONDecodeError)`.
///
/// `NaN`/`Infinity` literals, which Python accepts, have no JSON value here and are
/// reported as "Expecting value" (no task or tool sends them).
pub(super) fn loads(text: &str, parse_int_float: bool) -> Result<Value, String> {
    let chars: Vec<char> = text.chars().collect();
    let p = Parser {
        s: &chars,
        ints_as_floats: parse_int_float,
    };
    let start = p.ws(0);
    let (value, end) = p.value(start)?;
    let end = p.ws(end);
    if end != chars.len() {
        return Err(p.err("Extra data", end));
    }
    Ok(value)
}

struct Parser<'a> {
    s: &'a [char],
    ints_as_floats: bool,
}

impl Parser<'_> {
    fn err(&self, msg: &str, pos: usize) -> String {
        let before = &self.s[..pos.min(self.s.len())];
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let col = match before.iter().rposition(|c| *c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        format!("{msg}: line {line} column {col} (char {pos})")
    }

    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(' ' | '\t' | '\n' | '\r')) {
            i += 1;
        }
        i
    }

    fn value(&self, i: usize) -> Result<(Value, usize), String> {
        match self.at(i) {
            Some('"') => {
                let (s, end) = self.string(i + 1)?;
                Ok((Value::String(s), end))
            }
            Some('{') => self.object(i + 1),
            Some('[') => self.array(i + 1),
            Some('n') if self.lit(i, "null") => Ok((Value::Null, i + 4)),
            Some('t') if self.lit(i, "true") => Ok((Value::Bool(true), i + 4)),
            Some('f') if self.lit(i, "false") => Ok((Value::Bool(false), i + 5)),
            Some('-' | '0'..='9') => self.number(i),
            _ => Err(self.err("Expecting value", i)),
        }
    }

    fn lit(&self, i: usize, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(k, c)| self.at(i + k) == Some(c))
    }

    fn number(&self, start: usize) -> Result<(Value, usize), String> {
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('0') => i += 1,
            Some('1'..='9') => {
                while matches!(self.at(i), Some('0'..='9')) {
                    i += 1;
                }
            }
            _ => return Err(self.err("Expecting value", start)),
        }
        let mut is_float = false;
        if self.at(i) == Some('.') && matches!(self.at(i + 1), Some('0'..='9')) {
            is_float = true;
            i += 1;
            while matches!(self.at(i), Some('0'..='9')) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.at(j), Some('+' | '-')) {
                j += 1;
            }
            if matches!(self.at(j), Some('0'..='9')) {
                while matches!(self.at(j), Some('0'..='9')) {
                    j += 1;
                }
                is_float = true;
                i = j;
            }
        }
        let text: String = self.s[start..i].iter().collect();
        let number = if is_float || self.ints_as_floats {
            text.parse::<f64>().ok().and_then(Number::from_f64)
        } else {
            text.parse::<i64>()
                .map(Number::from)
                .ok()
                .or_else(|| text.parse::<u64>().ok().map(Number::from))
                .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
        };
        match number {
            Some(n) => Ok((Value::Number(n), i)),
            None => Err(self.err("Expecting value", start)),
        }
    }

    /// A string body starting after its opening quote; returns the text and the index after
    /// the closing quote.
    fn string(&self, begin: usize) -> Result<(String, usize), String> {
        let mut out = String::new();
        let mut i = begin;
        loop {
            let Some(c) = self.at(i) else {
                return Err(self.err("Unterminated string starting at", begin - 1));
            };
            match c {
                '"' => return Ok((out, i + 1)),
                '\\' => {
                    let Some(e) = self.at(i + 1) else {
                        return Err(self.err("Unterminated string starting at", begin - 1));
                    };
                    let simple = match e {
                        '"' => Some('"'),
                        '\\' => Some('\\'),
                        '/' => Some('/'),
                        'b' => Some('\u{08}'),
                        'f' => Some('\u{0c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        out.push(ch);
                        i += 2;
                    } else if e == 'u' {
                        let (unit, next) = self.hex4(i)?;
                        i = next;
                        if (0xd800..0xdc00).contains(&unit)
                            && self.at(i) == Some('\\')
                            && self.at(i + 1) == Some('u')
                        {
                            let (low, after) = self.hex4(i)?;
                            if (0xdc00..0xe000).contains(&low) {
                                let cp = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                                out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                                i = after;
                                continue;
                            }
                        }
                        out.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
                    } else {
                        return Err(self.err("Invalid \\escape", i));
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.err("Invalid control character at", i));
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    }

    /// The `\uXXXX` escape at `i` (the backslash).
    fn hex4(&self, i: usize) -> Result<(u32, usize), String> {
        let digits: String = (i + 2..i + 6).filter_map(|k| self.at(k)).collect();
        if digits.len() == 4 && digits.chars().all(|c| c.is_ascii_hexdigit()) {
            Ok((u32::from_str_radix(&digits, 16).unwrap_or(0), i + 6))
        } else {
            Err(self.err("Invalid \\uXXXX escape", i + 1))
        }
    }

    fn object(&self, i: usize) -> Result<(Value, usize), String> {
        let mut map = Map::new();
        let mut i = self.ws(i);
        match self.at(i) {
            Some('}') => return Ok((Value::Object(map), i + 1)),
            Some('"') => {}
            _ => {
                return Err(self.err("Expecting property name enclosed in double quotes", i));
            }
        }
        loop {
            let (key, after_key) = self.string(i + 1)?;
            let mut j = self.ws(after_key);
            if self.at(j) != Some(':') {
                return Err(self.err("Expecting ':' delimiter", j));
            }
            j = self.ws(j + 1);
            let (value, after_value) = self.value(j)?;
            map.insert(key, value);
            j = self.ws(after_value);
            match self.at(j) {
                Some('}') => return Ok((Value::Object(map), j + 1)),
                Some(',') => {}
                _ => return Err(self.err("Expecting ',' delimiter", j)),
            }
            i = self.ws(j + 1);
            if self.at(i) != Some('"') {
                return Err(self.err("Expecting property name enclosed in double quotes", i));
            }
        }
    }

    fn array(&self, i: usize) -> Result<(Value, usize), String> {
        let mut items = Vec::new();
        let mut i = self.ws(i);
        if self.at(i) == Some(']') {
            return Ok((Value::Array(items), i + 1));
        }
        loop {
            let (value, after) = self.value(i)?;
            items.push(value);
            let j = self.ws(after);
            match self.at(j) {
                Some(']') => return Ok((Value::Array(items), j + 1)),
                Some(',') => {}
                _ => return Err(self.err("Expecting ',' delimiter", j)),
            }
            i = self.ws(j + 1);
        }
    }
}

/// `json.dumps(value, indent=2)`: one item per line, `", "` becoming `","` at line ends,
/// empty containers as `[]` / `{}`.
pub(super) fn dumps_indent2(value: &Value) -> String {
    let mut out = String::new();
    write_indented(&mut out, value, 0);
    out
}

fn write_indented(out: &mut String, value: &Value, depth: usize) {
    let pad = |out: &mut String, d: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(2 * d));
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                write_indented(out, item, depth + 1);
            }
            pad(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                write_json_string(out, k);
                out.push_str(": ");
                write_indented(out, v, depth + 1);
            }
            pad(out, depth);
            out.push('}');
        }
        other => out.push_str(&pyjson::dumps(other)),
    }
}

/// Python truthiness of the object `json.loads` builds from `v`.
pub(super) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python `str.title()`: a letter after a non-letter is upper-cased, every other letter
/// lower-cased.
pub(super) fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_cased = true;
        } else {
            out.push(c);
            prev_cased = false;
        }
    }
    out
}

/// `x.replace('_', ' ').title()`, the display form tools give enum-like arguments.
pub(super) fn display(s: &str) -> String {
    title(&s.replace('_', " "))
}

/// `f"{x:.2f}"`.
pub(super) fn f2(x: f64) -> String {
    crate::py::fixed2(x)
}

/// `f"{n:,}"` of an integer.
pub(super) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A float as a JSON number value (`float` objects dump with a `.0`).
pub(super) fn float_value(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decode_errors_read_as_cpython_prints_them() {
        let cases = [
            (
                r#"{"user_id": "a"b"}"#,
                "Expecting ',' delimiter: line 1 column 16 (char 15)",
            ),
            ("", "Expecting value: line 1 column 1 (char 0)"),
            (
                "{'a': 1}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                r#"{"a" 1}"#,
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            (r#"{"a": 1} x"#, "Extra data: line 1 column 10 (char 9)"),
            (
                "{\"a\": \"x",
                "Unterminated string starting at: line 1 column 7 (char 6)",
            ),
            ("[1,\n 2,]", "Expecting value: line 2 column 4 (char 7)"),
        ];
        for (text, want) in cases {
            assert_eq!(loads(text, false).unwrap_err(), want, "{text}");
        }
    }

    #[test]
    fn parse_int_float_makes_every_number_a_float() {
        let v = loads(r#"{"a": 33, "b": [1, 2.5], "c": "x"}"#, true).unwrap();
        assert_eq!(
            pyjson::dumps(&v),
            r#"{"a": 33.0, "b": [1.0, 2.5], "c": "x"}"#
        );
        let v = loads(r#"{"a": 33}"#, false).unwrap();
        assert_eq!(pyjson::dumps(&v), r#"{"a": 33}"#);
    }

    #[test]
    fn indent_two_and_python_text_forms() {
        assert_eq!(
            dumps_indent2(&json!({"a": "é", "b": [], "c": [1, {"d": null}]})),
            "{\n  \"a\": \"\\u00e9\",\n  \"b\": [],\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ]\n}"
        );
        assert_eq!(
            display("goods_services_not_received"),
            "Goods Services Not Received"
        );
        assert_eq!(title("fee-free o'neil"), "Fee-Free O'Neil");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(500), "500");
        assert!(!truthy(&json!(0.0)) && truthy(&json!("x")) && !truthy(&json!({})));
    }
}
