//! Python behaviour the telecom toolkits inherit from being plain Python methods called with
//! raw JSON arguments: type names in exception texts, truthiness, comparison errors, enum
//! reprs, and the fixed clock (2025-02-25).
//!
//! Upstream never validates tool arguments, so a mistyped argument surfaces as whatever
//! Python raises when the method body first touches it (`'int' object has no attribute
//! 'lower'`). The helpers here build those texts so the tool code can stay close to the
//! upstream control flow.

use crate::tooling::ToolError;
use serde_json::Value;

pub use tauguard_core::pyjson::type_name;

/// `AttributeError: '<type>' object has no attribute '<attr>'`.
pub fn no_attr(v: &Value, attr: &str) -> ToolError {
    ToolError::attribute(format!(
        "'{}' object has no attribute '{attr}'",
        type_name(v)
    ))
}

/// `TypeError: '<op>' not supported between instances of '<a>' and '<b>'`.
pub fn unorderable(op: &str, left: &str, right: &str) -> ToolError {
    ToolError::type_error(format!(
        "'{op}' not supported between instances of '{left}' and '{right}'"
    ))
}

/// `TypeError: unhashable type: '<type>'` when `v` cannot be a dict key, as `dict.get` raises.
pub fn check_hashable(v: &Value) -> Result<(), ToolError> {
    match v {
        Value::Array(_) | Value::Object(_) => Err(crate::tooling::unhashable(v)),
        _ => Ok(()),
    }
}

/// The numeric value Python arithmetic sees for ints, floats and bools; `None` otherwise.
pub fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python `str(x)` of a float.
pub fn float_str(x: f64) -> String {
    tauguard_core::pyjson::float_repr(x)
}

/// Python `f"{x:.2f}"`: fixed two decimals, correctly rounded on the binary value.
pub fn fixed2(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:.2}")
    }
}

/// `ValueError: <repr> is not a valid <Enum>`, what calling an enum class with a bad value raises.
pub fn not_a_valid(v: &Value, enum_name: &str) -> ToolError {
    ToolError::value(format!(
        "{} is not a valid {enum_name}",
        tauguard_core::pyjson::py_repr(v)
    ))
}

/// Declares a `str`-valued Python enum: its values (what dumps and messages show), its member
/// names (what `repr` shows) and serde support through the value.
macro_rules! py_enum {
    ($(#[$meta:meta])* $name:ident = $py:literal { $($var:ident = $member:literal : $val:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($var),+ }

        impl $name {
            /// Members in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The member's value, as dumps and f-strings with `.value` show it.
            pub fn value(self) -> &'static str {
                match self { $($name::$var => $val),+ }
            }

            /// `EnumClass(value)` for a string value.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($val => Some($name::$var),)+ _ => None }
            }

            /// Python `repr(member)`: `<Class.NAME: 'value'>`.
            #[allow(dead_code)]
            pub fn py_repr(self) -> String {
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
    fn python_texts() {
        assert_eq!(
            no_attr(&json!(1), "lower").message,
            "'int' object has no attribute 'lower'"
        );
        assert_eq!(
            no_attr(&json!(null), "value").message,
            "'NoneType' object has no attribute 'value'"
        );
        assert_eq!(
            check_hashable(&json!([1])).unwrap_err().message,
            "unhashable type: 'list'"
        );
        assert_eq!(
            not_a_valid(&json!("x"), "NetworkStatus").message,
            "'x' is not a valid NetworkStatus"
        );
        assert_eq!(fixed2(4.0), "4.00");
        assert_eq!(fixed2(0.125), "0.12");
    }
}
