//! Pydantic-style validation of raw JSON into the airline models.
//!
//! Upstream validates the database file, task data merges and several tool arguments with
//! pydantic v2 in lax mode. The coercions decide what gets stored (`"100"` and `100.0`
//! become the integer `100`; `500` becomes the float `500.0`), and the error text is what
//! the agent reads, so both follow pydantic: every failing field is collected with its
//! location and rendered as `N validation errors for Model`.

use indexmap::IndexMap;
use serde_json::{Map, Value};
use tauguard_core::pyjson::py_repr;

/// Pydantic release of the upstream lock file, as it appears in error links.
const PYDANTIC_DOCS: &str = "https://errors.pydantic.dev/2.12/v/";

/// One failed check.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub loc: String,
    pub kind: &'static str,
    pub msg: String,
    pub input: Value,
}

/// Validation state: the current location and the issues found so far.
#[derive(Debug, Default)]
pub struct Ctx {
    loc: Vec<String>,
    pub issues: Vec<Issue>,
}

impl Ctx {
    pub fn new() -> Ctx {
        Ctx::default()
    }

    /// Runs `f` one level deeper, at `part`.
    pub fn at<R>(&mut self, part: impl ToString, f: impl FnOnce(&mut Ctx) -> R) -> R {
        self.loc.push(part.to_string());
        let r = f(self);
        self.loc.pop();
        r
    }

    pub fn fail(&mut self, kind: &'static str, msg: impl Into<String>, input: &Value) {
        self.issues.push(Issue {
            loc: self.loc.join("."),
            kind,
            msg: msg.into(),
            input: input.clone(),
        });
    }

    pub fn is_ok(&self) -> bool {
        self.issues.is_empty()
    }

    /// `Ok(value)` when nothing failed, else pydantic's rendering of the issues for `title`.
    pub fn finish<T>(self, title: &str, value: Option<T>) -> Result<T, String> {
        match value {
            Some(v) if self.issues.is_empty() => Ok(v),
            _ => Err(render(title, &self.issues)),
        }
    }
}

/// `str(ValidationError)`.
pub fn render(title: &str, issues: &[Issue]) -> String {
    let n = issues.len();
    let mut out = format!(
        "{n} validation error{} for {title}",
        if n == 1 { "" } else { "s" }
    );
    for i in issues {
        out.push('\n');
        if !i.loc.is_empty() {
            out.push_str(&i.loc);
            out.push('\n');
        }
        out.push_str(&format!(
            "  {} [type={}, input_value={}, input_type={}]\n    For further information visit {PYDANTIC_DOCS}{}",
            i.msg,
            i.kind,
            truncated_repr(&i.input),
            crate::py::type_name(&i.input),
            i.kind
        ));
    }
    out
}

/// Pydantic shortens long input reprs to their first 25 and last 24 characters.
fn truncated_repr(v: &Value) -> String {
    let r = py_repr(v);
    let chars: Vec<char> = r.chars().collect();
    if chars.len() <= 50 {
        return r;
    }
    let head: String = chars[..25].iter().collect();
    let tail: String = chars[chars.len() - 24..].iter().collect();
    format!("{head}...{tail}")
}

pub fn string(v: &Value, cx: &mut Ctx) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        _ => {
            cx.fail("string_type", "Input should be a valid string", v);
            None
        }
    }
}

/// `Optional[str]`: `None` stays `None`.
pub fn opt_string(v: &Value, cx: &mut Ctx) -> Option<Option<String>> {
    match v {
        Value::Null => Some(None),
        _ => string(v, cx).map(Some),
    }
}

/// A `Literal[...]` of strings.
pub fn literal(v: &Value, options: &[&str], cx: &mut Ctx) -> Option<String> {
    if let Value::String(s) = v
        && options.contains(&s.as_str())
    {
        return Some(s.clone());
    }
    let quoted: Vec<String> = options.iter().map(|o| format!("'{o}'")).collect();
    let list = match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    };
    cx.fail("literal_error", format!("Input should be {list}"), v);
    None
}

const INT_PARSING: &str = "Input should be a valid integer, unable to parse string as an integer";
const INT_SIZE: &str = "Unable to parse input string as an integer, exceeded maximum size";

/// Pydantic's lax `int`: bools, integral floats and numeric strings are accepted.
/// Values outside the 64-bit range are refused (upstream would keep them as Python ints).
pub fn int(v: &Value, cx: &mut Ctx) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Some(i);
            }
            if n.is_u64() {
                cx.fail("int_parsing_size", INT_SIZE, v);
                return None;
            }
            let f = n.as_f64().unwrap_or(f64::NAN);
            float_to_int(f, v, cx)
        }
        Value::String(s) => match parse_int_str(s) {
            Ok(i) => Some(i),
            Err(kind) => {
                cx.fail(
                    kind,
                    if kind == "int_parsing" {
                        INT_PARSING
                    } else {
                        INT_SIZE
                    },
                    v,
                );
                None
            }
        },
        _ => {
            cx.fail("int_type", "Input should be a valid integer", v);
            None
        }
    }
}

/// Pydantic's float-to-int rule, shared with computed amounts.
pub fn float_to_int(f: f64, input: &Value, cx: &mut Ctx) -> Option<i64> {
    if !f.is_finite() {
        cx.fail("finite_number", "Input should be a finite number", input);
        None
    } else if f.fract() != 0.0 {
        cx.fail(
            "int_from_float",
            "Input should be a valid integer, got a number with a fractional part",
            input,
        );
        None
    } else if !(-9.223_372_036_854_775e18..9.223_372_036_854_775e18).contains(&f) {
        cx.fail("int_parsing_size", INT_SIZE, input);
        None
    } else {
        Some(f as i64)
    }
}

fn parse_int_str(s: &str) -> Result<i64, &'static str> {
    let t = s.trim();
    // A decimal point is allowed when only zeros follow it.
    let t = match t.split_once('.') {
        Some((int_part, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => int_part,
        Some(_) => return Err("int_parsing"),
        None => t,
    };
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || !underscores_between_digits(digits)
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return Err("int_parsing");
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let v: i128 = clean.parse().map_err(|_| "int_parsing_size")?;
    let v = if neg { -v } else { v };
    i64::try_from(v).map_err(|_| "int_parsing_size")
}

fn underscores_between_digits(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, c)| {
        *c != b'_'
            || (i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
    })
}

/// Pydantic's lax `float`: ints, bools and numeric strings are accepted. Non-finite values
/// are refused (upstream would store them; a JSON dump cannot hold them).
pub fn float(v: &Value, cx: &mut Ctx) -> Option<f64> {
    let f = match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => {
            let t = s.trim();
            let parsed = if underscores_between_digits(t) {
                t.replace('_', "").parse::<f64>().ok()
            } else {
                None
            };
            match parsed {
                Some(f) => f,
                None => {
                    cx.fail(
                        "float_parsing",
                        "Input should be a valid number, unable to parse string as a number",
                        v,
                    );
                    return None;
                }
            }
        }
        _ => {
            cx.fail("float_type", "Input should be a valid number", v);
            return None;
        }
    };
    if !f.is_finite() {
        cx.fail("finite_number", "Input should be a finite number", v);
        return None;
    }
    Some(f)
}

/// A nested model: the input must be an object.
pub fn object<'v>(v: &'v Value, model: &str, cx: &mut Ctx) -> Option<&'v Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m),
        _ => {
            cx.fail(
                "model_type",
                format!("Input should be a valid dictionary or instance of {model}"),
                v,
            );
            None
        }
    }
}

/// A required field of a model; a missing one reports the whole input object.
pub fn field<T>(
    obj: &Map<String, Value>,
    name: &str,
    cx: &mut Ctx,
    f: impl FnOnce(&Value, &mut Ctx) -> Option<T>,
) -> Option<T> {
    match obj.get(name) {
        Some(v) => cx.at(name, |cx| f(v, cx)),
        None => {
            cx.at(name, |cx| {
                cx.fail("missing", "Field required", &Value::Object(obj.clone()))
            });
            None
        }
    }
}

/// A field with a default of `None` when absent.
pub fn opt_field<T>(
    obj: &Map<String, Value>,
    name: &str,
    cx: &mut Ctx,
    f: impl FnOnce(&Value, &mut Ctx) -> Option<Option<T>>,
) -> Option<Option<T>> {
    match obj.get(name) {
        Some(v) => cx.at(name, |cx| f(v, cx)),
        None => Some(None),
    }
}

/// `List[T]`.
pub fn list<T>(
    v: &Value,
    cx: &mut Ctx,
    mut f: impl FnMut(&Value, &mut Ctx) -> Option<T>,
) -> Option<Vec<T>> {
    let Value::Array(items) = v else {
        cx.fail("list_type", "Input should be a valid list", v);
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match cx.at(i, |cx| f(item, cx)) {
            Some(x) => out.push(x),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// `Dict[str, T]`, with an optional key validator.
pub fn dict<T>(
    v: &Value,
    cx: &mut Ctx,
    key_options: Option<&[&str]>,
    mut f: impl FnMut(&str, &Value, &mut Ctx) -> Option<T>,
) -> Option<IndexMap<String, T>> {
    let Value::Object(map) = v else {
        cx.fail("dict_type", "Input should be a valid dictionary", v);
        return None;
    };
    let mut out = IndexMap::with_capacity(map.len());
    let mut ok = true;
    for (k, item) in map {
        if let Some(options) = key_options {
            let key_ok = cx.at(k, |cx| {
                cx.at("[key]", |cx| {
                    literal(&Value::String(k.clone()), options, cx)
                })
            });
            ok &= key_ok.is_some();
        }
        match cx.at(k, |cx| f(k, item, cx)) {
            Some(x) => {
                out.insert(k.clone(), x);
            }
            None => ok = false,
        }
    }
    ok.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn int_of(v: Value) -> Result<i64, String> {
        let mut cx = Ctx::new();
        let r = int(&v, &mut cx);
        cx.finish("Payment", r)
    }

    #[test]
    fn lax_int_rules() {
        assert_eq!(int_of(json!(true)), Ok(1));
        assert_eq!(int_of(json!(" 12 ")), Ok(12));
        assert_eq!(int_of(json!("12.00")), Ok(12));
        assert_eq!(int_of(json!("-0.0")), Ok(0));
        assert_eq!(int_of(json!("1_000")), Ok(1000));
        assert_eq!(int_of(json!(100.0)), Ok(100));
        for bad in [
            json!("12."),
            json!("1__0"),
            json!("1e3"),
            json!(""),
            json!("0x10"),
        ] {
            assert!(
                int_of(bad.clone())
                    .unwrap_err()
                    .contains("type=int_parsing,"),
                "{bad}"
            );
        }
        assert_eq!(
            int_of(json!(12.5)).unwrap_err(),
            "1 validation error for Payment\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=12.5, input_type=float]\n    For further information visit https://errors.pydantic.dev/2.12/v/int_from_float"
        );
        assert!(
            int_of(json!(1e20))
                .unwrap_err()
                .contains("type=int_parsing_size")
        );
        assert!(int_of(json!(null)).unwrap_err().contains(
            "Input should be a valid integer [type=int_type, input_value=None, input_type=NoneType]"
        ));
    }

    #[test]
    fn lax_float_and_literals() {
        let mut cx = Ctx::new();
        assert_eq!(float(&json!("1_000"), &mut cx), Some(1000.0));
        assert_eq!(float(&json!(" .5 "), &mut cx), Some(0.5));
        assert_eq!(float(&json!(true), &mut cx), Some(1.0));
        assert!(cx.is_ok());
        assert_eq!(float(&json!("1__0"), &mut cx), None);
        assert_eq!(
            literal(
                &json!(3),
                &["business", "economy", "basic_economy"],
                &mut cx
            ),
            None
        );
        let text = cx.finish::<()>("Certificate", None).unwrap_err();
        assert!(text.starts_with("2 validation errors for Certificate\n"));
        assert!(text.contains("Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value=3, input_type=int]"));
    }

    #[test]
    fn missing_fields_and_long_inputs() {
        let obj = json!({"flight_number": "HAT001", "extra": "x".repeat(100), "other": [1, 2, 3]});
        let mut cx = Ctx::new();
        let r = field(obj.as_object().unwrap(), "date", &mut cx, string);
        assert_eq!(
            cx.finish("FlightInfo", r).unwrap_err(),
            "1 validation error for FlightInfo\ndate\n  Field required [type=missing, input_value={'flight_number': 'HAT001...xx', 'other': [1, 2, 3]}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.12/v/missing"
        );
    }
}
