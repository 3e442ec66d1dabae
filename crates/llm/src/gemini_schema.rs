//! Rewrites a tool's JSON schema into the OpenAPI subset Gemini's `functionDeclarations`
//! accept.
//!
//! Gemini rejects `$ref`/`$defs`, `title`, `additionalProperties`, `default`, most `format`s
//! and type arrays; τ²-bench's schemas come from pydantic and use all of them. The rewrite:
//! inlines `$ref`s (from `$defs` / `definitions`; cycles and unknown targets become a bare
//! `{"type": "object"}`), merges single-member `allOf`s, turns `anyOf [X, null]` and
//! `type: [X, "null"]` into `X` + `nullable: true`, turns `const` into a one-value `enum`,
//! keeps only string `enum`s, keeps `format` only where Gemini supports it, drops every other
//! key outside an allow-list, and trims `required` to declared properties.
//!
//! Gemini rejects an `OBJECT` schema without `properties` anywhere in a declaration ("should
//! be non-empty for OBJECT type"), and the google-genai `Schema` type has no way to say "any
//! object". pydantic emits one for every `dict` and for the free-form branch of
//! `Model | dict` (telecom's `set_apn_settings`: `anyOf [APNSettings, {type: object,
//! additionalProperties: true}]`). So a property-less object member of a union is dropped
//! when another member remains (the structured form stays offered), and a property-less
//! object property is left out of its parent (and of `required`): the model can still call
//! the tool, whereas one such schema makes the API refuse the whole request.

use serde_json::{Map, Value, json};

/// Keys kept as they are (after their values are cleaned where they hold schemas).
const ALLOWED: &[&str] = &[
    "type",
    "description",
    "nullable",
    "enum",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "pattern",
    "propertyOrdering",
];

/// `format` values Gemini accepts.
const FORMATS: &[&str] = &["enum", "date-time", "int32", "int64", "float", "double"];

/// Deepest `$ref` chain followed before giving up (cycles).
const MAX_DEPTH: usize = 24;

/// The Gemini-compatible form of `schema`.
pub(crate) fn sanitize(schema: &Value) -> Value {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            defs.extend(d.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    clean(schema, &defs, 0)
}

/// Whether a cleaned parameters schema declares nothing (Gemini rejects an object with no
/// properties, so such a declaration is sent without `parameters`).
pub(crate) fn is_empty_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && schema
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
}

fn clean(v: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    let Value::Object(obj) = v else {
        return v.clone();
    };
    if depth > MAX_DEPTH {
        return json!({"type": "object"});
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        let mut out = match defs.get(name) {
            Some(target) => into_map(clean(target, defs, depth + 1)),
            None => into_map(json!({"type": "object"})),
        };
        // Siblings of `$ref` (typically a description) override the target's.
        let mut rest = obj.clone();
        rest.remove("$ref");
        out.extend(into_map(clean(&Value::Object(rest), defs, depth + 1)));
        return Value::Object(out);
    }

    let mut out = Map::new();
    // allOf: merge every member (pydantic wraps a described `$ref` in a one-member allOf).
    if let Some(Value::Array(all)) = obj.get("allOf") {
        for member in all {
            out.extend(into_map(clean(member, defs, depth + 1)));
        }
    }
    for (k, val) in obj {
        match k.as_str() {
            "properties" => {
                if let Value::Object(props) = val {
                    let props: Map<String, Value> = props
                        .iter()
                        .map(|(name, s)| (name.clone(), clean(s, defs, depth + 1)))
                        .filter(|(_, s)| !is_empty_object(s))
                        .collect();
                    out.insert(k.clone(), Value::Object(props));
                }
            }
            "items" => {
                let item = match val {
                    Value::Array(items) => items.first().cloned().unwrap_or(json!({})),
                    other => other.clone(),
                };
                out.insert(k.clone(), clean(&item, defs, depth + 1));
            }
            "anyOf" | "oneOf" => {
                if let Value::Array(members) = val {
                    merge_union(&mut out, members, defs, depth);
                }
            }
            "type" => match val {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                    match non_null.as_slice() {
                        [one] => {
                            out.insert("type".into(), (*one).clone());
                        }
                        [] => {}
                        many => {
                            let union: Vec<Value> =
                                many.iter().map(|t| json!({"type": t})).collect();
                            out.insert("anyOf".into(), Value::Array(union));
                        }
                    }
                }
                Value::String(t) if t == "null" => {
                    out.insert("nullable".into(), json!(true));
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "const" if val.is_string() => {
                out.insert("enum".into(), json!([val]));
            }
            "enum" => {
                if let Value::Array(values) = val
                    && values.iter().all(Value::is_string)
                {
                    out.insert(k.clone(), val.clone());
                }
            }
            "format" if val.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                out.insert(k.clone(), val.clone());
            }
            key if ALLOWED.contains(&key) => {
                out.insert(k.clone(), val.clone());
            }
            _ => {}
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), json!("string"));
    }
    if out.contains_key("properties") && !out.contains_key("type") {
        out.insert("type".into(), json!("object"));
    }
    if let Some(Value::Array(required)) = out.get("required") {
        let props = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .iter()
            .filter(|r| {
                r.as_str()
                    .is_some_and(|r| props.is_some_and(|p| p.contains_key(r)))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), Value::Array(kept));
        }
    }
    Value::Object(out)
}

/// `anyOf`/`oneOf`: null members become `nullable`; one remaining member is merged in place.
fn merge_union(
    out: &mut Map<String, Value>,
    members: &[Value],
    defs: &Map<String, Value>,
    depth: usize,
) {
    let is_null = |m: &Value| m.get("type").and_then(Value::as_str) == Some("null");
    let mut rest: Vec<Value> = members
        .iter()
        .filter(|m| !is_null(m))
        .map(|m| clean(m, defs, depth + 1))
        .collect();
    let non_null = rest.len();
    if rest.iter().any(|m| !is_empty_object(m)) {
        rest.retain(|m| !is_empty_object(m));
    }
    if non_null < members.len() {
        out.insert("nullable".into(), json!(true));
    }
    match rest.len() {
        0 => {}
        1 => {
            for (k, v) in into_map(rest.into_iter().next().unwrap_or(Value::Null)) {
                out.entry(k).or_insert(v);
            }
        }
        _ => {
            out.insert("anyOf".into(), Value::Array(rest));
        }
    }
}

fn into_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pydantic_schema_is_rewritten() {
        let schema = json!({
            "title": "book_reservation",
            "type": "object",
            "additionalProperties": false,
            "$defs": {
                "Passenger": {
                    "title": "Passenger",
                    "type": "object",
                    "properties": {
                        "first_name": {"title": "First Name", "type": "string"},
                        "dob": {"type": "string", "format": "date"}
                    },
                    "required": ["first_name", "dob"]
                },
                "Cabin": {"enum": ["basic_economy", "economy", "business"], "title": "Cabin"}
            },
            "properties": {
                "passengers": {"type": "array", "items": {"$ref": "#/$defs/Passenger"}},
                "cabin": {"allOf": [{"$ref": "#/$defs/Cabin"}], "description": "cabin class"},
                "insurance": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "nonce": {"type": ["integer", "null"]},
                "kind": {"const": "round_trip"}
            },
            "required": ["passengers", "cabin", "ghost"]
        });
        let out = sanitize(&schema);
        let text = out.to_string();
        for banned in [
            "$ref",
            "$defs",
            "title",
            "additionalProperties",
            "default",
            "\"date\"",
        ] {
            assert!(!text.contains(banned), "{banned} left in {text}");
        }
        let props = &out["properties"];
        assert_eq!(
            props["passengers"]["items"]["properties"]["first_name"]["type"],
            json!("string")
        );
        assert_eq!(props["cabin"]["enum"][2], json!("business"));
        assert_eq!(props["cabin"]["type"], json!("string"));
        assert_eq!(props["cabin"]["description"], json!("cabin class"));
        assert_eq!(
            props["insurance"],
            json!({"nullable": true, "type": "string"})
        );
        assert_eq!(props["nonce"], json!({"nullable": true, "type": "integer"}));
        assert_eq!(props["kind"]["enum"], json!(["round_trip"]));
        assert_eq!(out["required"], json!(["passengers", "cabin"]));
    }

    /// telecom `set_apn_settings` (τ²-bench tools.json): `Model | dict`.
    #[test]
    fn free_form_object_members_and_properties_are_dropped() {
        let schema = json!({
            "$defs": {"APNSettings": {"type": "object", "additionalProperties": false,
                "properties": {"apn_name": {"type": "string"}}}},
            "properties": {
                "apn_settings": {"anyOf": [{"$ref": "#/$defs/APNSettings"},
                    {"additionalProperties": true, "type": "object"}]},
                "metadata": {"type": "object", "additionalProperties": true},
                "opt": {"anyOf": [{"type": "object"}, {"type": "null"}]}
            },
            "required": ["apn_settings", "metadata"],
            "type": "object"
        });
        let out = sanitize(&schema);
        let apn = &out["properties"]["apn_settings"];
        assert_eq!(apn["type"], json!("object"));
        assert_eq!(apn["properties"]["apn_name"]["type"], json!("string"));
        assert!(apn.get("anyOf").is_none(), "{apn}");
        assert!(out["properties"].get("metadata").is_none());
        assert!(out["properties"].get("opt").is_none());
        assert_eq!(out["required"], json!(["apn_settings"]));
    }

    #[test]
    fn recursive_refs_terminate() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"
        });
        let out = sanitize(&schema);
        assert_eq!(out["type"], json!("object"));
        assert!(is_empty_object(&sanitize(
            &json!({"type": "object", "properties": {}})
        )));
    }
}
