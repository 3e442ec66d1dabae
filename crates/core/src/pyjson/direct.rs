//! `json.dumps` straight from a `Serialize` type, without building a `serde_json::Value`
//! first. Tool results are rendered once per call in every simulation and again in every
//! replay, so skipping the intermediate tree (one allocation per field) matters at scale.
//! The output is byte-identical to [`super::dumps`] of `serde_json::to_value(model)`.

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, Serializer};
use std::io::{self, Write};

/// Python's `json.dumps` defaults as a serde_json formatter: `", "` and `": "` separators,
/// `ensure_ascii` escapes (`\uXXXX` in UTF-16 for everything outside space..`~`), floats in
/// Python repr.
struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        // serde_json turns non-finite floats into `null` before this point, as `to_value` does.
        w.write_all(super::float_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut buf = [0u16; 2];
        for c in fragment.chars() {
            if (c as u32) < 0x7f {
                w.write_all(&[c as u8])?;
            } else {
                for unit in c.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        let s: &[u8] = match escape {
            CharEscape::Quote => b"\\\"",
            CharEscape::ReverseSolidus => b"\\\\",
            CharEscape::Solidus => b"\\/",
            CharEscape::Backspace => b"\\b",
            CharEscape::FormFeed => b"\\f",
            CharEscape::LineFeed => b"\\n",
            CharEscape::CarriageReturn => b"\\r",
            CharEscape::Tab => b"\\t",
            CharEscape::AsciiControl(b) => return write!(w, "\\u{b:04x}"),
        };
        w.write_all(s)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// `json.dumps(model)` with Python defaults, in the type's field order; `None` when the type
/// cannot be rendered as JSON (a map with non-string keys, say).
pub fn dumps_model<T: Serialize + ?Sized>(model: &T) -> Option<String> {
    let mut out = Vec::with_capacity(256);
    model
        .serialize(&mut Serializer::with_formatter(&mut out, PythonFormatter))
        .ok()?;
    // Every byte written is ASCII: non-ASCII text is escaped above.
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::super::dumps;
    use super::dumps_model;
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            any::<u64>().prop_map(|u| json!(u)),
            any::<f64>().prop_map(|f| json!(f)),
            (-1e6f64..1e6).prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
            "[ -~\\x00-\\x1f\\x7f-\\u{10ffff}]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    proptest! {
        #[test]
        fn matches_dumps_of_the_value_tree(v in value()) {
            prop_assert_eq!(dumps_model(&v).unwrap(), dumps(&v));
        }
    }

    #[test]
    fn struct_fields_keep_declaration_order_and_python_spelling() {
        #[derive(serde::Serialize)]
        struct Seat {
            zone: &'static str,
            price: f64,
            tiny: f64,
            count: u32,
            missing: Option<u8>,
            tags: Vec<&'static str>,
        }
        let s = Seat {
            zone: "Zoë\t\u{7f}",
            price: 100.0,
            tiny: 1e-5,
            count: 3,
            missing: None,
            tags: vec!["a", "b"],
        };
        assert_eq!(
            dumps_model(&s).unwrap(),
            r#"{"zone": "Zo\u00eb\t\u007f", "price": 100.0, "tiny": 1e-05, "count": 3, "missing": null, "tags": ["a", "b"]}"#
        );
    }
}
