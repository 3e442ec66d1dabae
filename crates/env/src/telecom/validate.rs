//! Pydantic-style validation of the one model a tool builds from raw arguments:
//! `set_apn_settings(apn_settings={...})` runs `APNSettings(**apn_settings)`. The error text
//! follows pydantic 2.12's `ValidationError` layout (what upstream pins), with the lax
//! Python-mode coercions pydantic applies to bools, ints and strings.

use super::user_model::{ApnName, ApnSettings};
use crate::py::type_name;
use crate::tooling::ToolError;
use serde_json::{Map, Number, Value};
use tauguard_core::pyjson::py_repr;

const PYDANTIC_DOCS: &str = "https://errors.pydantic.dev/2.12/v/";

struct LineError {
    loc: String,
    msg: &'static str,
    kind: &'static str,
    input: Value,
}

fn render(model: &str, errors: &[LineError]) -> String {
    let n = errors.len();
    let mut out = format!(
        "{n} validation error{} for {model}",
        if n == 1 { "" } else { "s" }
    );
    for e in errors {
        let repr = py_repr(&e.input);
        let shown = if repr.chars().count() > 50 {
            let chars: Vec<char> = repr.chars().collect();
            let head: String = chars[..25].iter().collect();
            let tail: String = chars[chars.len() - 24..].iter().collect();
            format!("{head}...{tail}")
        } else {
            repr
        };
        out.push_str(&format!(
            "\n{}\n  {} [type={}, input_value={shown}, input_type={}]\n    For further information visit {PYDANTIC_DOCS}{}",
            e.loc,
            e.msg,
            e.kind,
            type_name(&e.input),
            e.kind
        ));
    }
    out
}

type Check<T> = Result<T, (&'static str, &'static str)>;

/// Lax bool: bools, 0/1 ints and floats, and the usual yes/no words.
fn lax_bool(v: &Value) -> Check<bool> {
    const PARSE: (&str, &str) = (
        "Input should be a valid boolean, unable to interpret input",
        "bool_parsing",
    );
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x == 0.0 || x == 1.0 {
                Ok(x == 1.0)
            } else {
                Err(("Input should be a valid boolean", "bool_type"))
            }
        }
        Value::Number(n) => match n.as_i64() {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            _ => Err(PARSE),
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            _ => Err(PARSE),
        },
        _ => Err(("Input should be a valid boolean", "bool_type")),
    }
}

/// Lax int: ints, bools, integral floats within 64 bits, and decimal strings.
fn lax_int(v: &Value) -> Check<Number> {
    const PARSE: (&str, &str) = (
        "Input should be a valid integer, unable to parse string as an integer",
        "int_parsing",
    );
    match v {
        Value::Bool(b) => Ok(Number::from(i64::from(*b))),
        Value::Number(n) if !n.is_f64() => Ok(n.clone()),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if !x.is_finite() {
                Err(("Input should be a finite number", "finite_number"))
            } else if x.fract() != 0.0 {
                Err((
                    "Input should be a valid integer, got a number with a fractional part",
                    "int_from_float",
                ))
            } else if x.abs() >= 9.223_372_036_854_776e18 {
                Err((
                    "Unable to parse input string as an integer, exceeded maximum size",
                    "int_parsing_size",
                ))
            } else {
                Ok(Number::from(x as i64))
            }
        }
        Value::String(s) => parse_int_text(s.trim()).ok_or(PARSE),
        _ => Err(("Input should be a valid integer", "int_type")),
    }
}

/// Python-int-like text: optional sign, digits with single `_` separators, optionally a
/// fraction of zeros (`"1.000"`).
fn parse_int_text(s: &str) -> Option<Number> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let int_part = match body.split_once('.') {
        Some((i, f)) if !f.is_empty() && f.bytes().all(|c| c == b'0') => i,
        Some(_) => return None,
        None => body,
    };
    if int_part.is_empty()
        || int_part.starts_with('_')
        || int_part.ends_with('_')
        || int_part.contains("__")
        || !int_part.bytes().all(|c| c.is_ascii_digit() || c == b'_')
    {
        return None;
    }
    let digits: String = int_part.chars().filter(|c| *c != '_').collect();
    let text = if neg { format!("-{digits}") } else { digits };
    if let Ok(i) = text.parse::<i64>() {
        return Some(Number::from(i));
    }
    text.parse::<u64>().ok().map(Number::from)
}

fn opt_str(v: &Value) -> Check<Option<String>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        _ => Err(("Input should be a valid string", "string_type")),
    }
}

/// `APNSettings(**fields)`.
pub(super) fn apn_settings(fields: &Map<String, Value>) -> Result<ApnSettings, ToolError> {
    let mut out = ApnSettings::default();
    let mut errors = Vec::new();
    let field = |name: &'static str,
                 errors: &mut Vec<LineError>,
                 check: &mut dyn FnMut(&Value) -> Check<()>| {
        if let Some(v) = fields.get(name)
            && let Err((msg, kind)) = check(v)
        {
            errors.push(LineError {
                loc: name.into(),
                msg,
                kind,
                input: v.clone(),
            });
        }
    };
    field(
        "apn_name",
        &mut errors,
        &mut |v| match v.as_str().and_then(ApnName::parse) {
            Some(n) => {
                out.apn_name = n;
                Ok(())
            }
            None => Err(("Input should be 'internet' or 'broken'", "enum")),
        },
    );
    field("reset_at_reboot", &mut errors, &mut |v| {
        lax_bool(v).map(|b| out.reset_at_reboot = b)
    });
    field("mms_apn", &mut errors, &mut |v| {
        opt_str(v).map(|s| out.mms_apn = s)
    });
    field("mmsc_url", &mut errors, &mut |v| {
        opt_str(v).map(|s| out.mmsc_url = s)
    });
    field("mms_proxy", &mut errors, &mut |v| {
        opt_str(v).map(|s| out.mms_proxy = s)
    });
    field("mms_port", &mut errors, &mut |v| match v {
        Value::Null => {
            out.mms_port = None;
            Ok(())
        }
        other => lax_int(other).map(|n| out.mms_port = Some(n)),
    });
    const KNOWN: [&str; 6] = [
        "apn_name",
        "reset_at_reboot",
        "mms_apn",
        "mmsc_url",
        "mms_proxy",
        "mms_port",
    ];
    for (k, v) in fields {
        if !KNOWN.contains(&k.as_str()) {
            errors.push(LineError {
                loc: k.clone(),
                msg: "Extra inputs are not permitted",
                kind: "extra_forbidden",
                input: v.clone(),
            });
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(ToolError::validation(render("APNSettings", &errors)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn coerces_like_pydantic() {
        let s = apn_settings(&fields(
            json!({"reset_at_reboot": "YES", "mms_port": " 1_000 "}),
        ))
        .unwrap();
        assert!(s.reset_at_reboot);
        assert_eq!(s.mms_port, Some(Number::from(1000)));
        let s = apn_settings(&fields(json!({"mms_port": 2.0, "mms_apn": null}))).unwrap();
        assert_eq!(s.mms_port, Some(Number::from(2)));
        assert_eq!(s.mms_apn, None);
        assert_eq!(
            s.mmsc_url.as_deref(),
            Some(super::super::user_model::DEFAULT_MMSC_URL)
        );
    }

    #[test]
    fn error_text_like_pydantic() {
        let e = apn_settings(&fields(json!({"apn_name": "x"}))).unwrap_err();
        assert_eq!(
            e.message,
            "1 validation error for APNSettings\napn_name\n  Input should be 'internet' or 'broken' [type=enum, input_value='x', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/enum"
        );
        let e = apn_settings(&fields(json!({"foo": 2, "mms_port": 1.5}))).unwrap_err();
        assert!(e.message.starts_with("2 validation errors for APNSettings\nmms_port\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]"));
        assert!(e.message.contains("\nfoo\n  Extra inputs are not permitted [type=extra_forbidden, input_value=2, input_type=int]"));
        let long = "x".repeat(60);
        let e = apn_settings(&fields(json!({"mms_port": long}))).unwrap_err();
        assert!(e.message.contains(
            "input_value='xxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxx', input_type=str"
        ));
    }
}
