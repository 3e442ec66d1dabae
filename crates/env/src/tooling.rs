//! What every domain's tools share: their declarations, Python-style keyword binding and the
//! exception-shaped errors upstream produces.
//!
//! Upstream calls tool methods with the JSON arguments as Python keyword arguments and no
//! schema validation, so a missing argument is a Python `TypeError`, an unknown id a
//! `ValueError`, and so on. [`ToolError`] keeps the exception class beside the message: the
//! agent reads `Error: <message>`, gold reports print `<class>: <message>`.

use serde_json::{Map, Value};
use std::fmt;
use tauguard_core::ToolKind;
use tauguard_core::tool::ToolSpec;

/// One parameter of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    /// Parameters with a default in the upstream signature are optional.
    pub required: bool,
    /// JSON schema of the parameter (a JSON literal) without its description and title, which
    /// [`ToolDef::spec`] adds; key order is free, `spec` renders pydantic's.
    pub schema: &'static str,
    pub description: &'static str,
}

/// A nested model a tool's parameters use: one entry of the schema's top-level `$defs`, which
/// a parameter schema references as `{"$ref": "#/$defs/<name>"}` (pydantic's layout).
#[derive(Debug, Clone, Copy)]
pub struct SchemaDef {
    pub name: &'static str,
    /// JSON schema of the model (a JSON literal), its descriptions and titles included; key
    /// order is free, as for [`Param::schema`].
    pub schema: &'static str,
}

/// A tool (or non-tool toolkit method, for initial states and assertions) of one toolkit.
#[derive(Debug, Clone, Copy)]
pub struct ToolDef {
    pub name: &'static str,
    pub kind: ToolKind,
    /// Non-tool helper methods (`set_user_info`, `assert_*`) are callable by initial states
    /// and assertions but never offered to a model.
    pub is_tool: bool,
    pub description: &'static str,
    pub params: &'static [Param],
    /// The nested models the parameter schemas reference, rendered as `$defs` (empty from
    /// [`tool`] and [`helper`]; a declaration with models writes `ToolDef { defs, ..tool(..) }`).
    pub defs: &'static [SchemaDef],
}

/// A required parameter (the common case; optional ones are written out in full).
pub(crate) const fn param(
    name: &'static str,
    schema: &'static str,
    description: &'static str,
) -> Param {
    Param {
        name,
        required: true,
        schema,
        description,
    }
}

/// `transfer_to_human_agents` as airline, retail and telecom declare it: upstream writes the
/// same signature and docstring in each of their toolkits.
pub(crate) const TRANSFER_TO_HUMAN_AGENTS: ToolDef = tool(
    "transfer_to_human_agents",
    ToolKind::Generic,
    "Transfer the user to a human agent, with a summary of the user's issue.\n\nOnly transfer if\n -  the user explicitly asks for a human agent\n -  given the policy and the available tools, you cannot solve the user's issue.",
    &[param(
        "summary",
        r#"{"type": "string"}"#,
        "A summary of the user's issue.",
    )],
);

/// A tool a model may call.
pub(crate) const fn tool(
    name: &'static str,
    kind: ToolKind,
    description: &'static str,
    params: &'static [Param],
) -> ToolDef {
    ToolDef {
        name,
        kind,
        is_tool: true,
        description,
        params,
        defs: &[],
    }
}

/// A toolkit method that initial states and assertions call but no model is offered.
pub(crate) const fn helper(
    name: &'static str,
    kind: ToolKind,
    description: &'static str,
    params: &'static [Param],
) -> ToolDef {
    ToolDef {
        is_tool: false,
        ..tool(name, kind, description, params)
    }
}

impl ToolDef {
    /// Schema in upstream's shape, used when the data directory ships no `tools.json`: what
    /// pydantic generates for the tool's signature (`title: "parameters"`, Title Case property
    /// titles, nested models under `$defs`) with its keys in pydantic's order, so that the
    /// serialized schema is the text upstream publishes.
    pub fn spec(&self) -> ToolSpec {
        let mut props = Map::new();
        let mut required = Vec::new();
        for p in self.params {
            let mut schema: Value = serde_json::from_str(p.schema)
                .unwrap_or_else(|e| panic!("schema of `{}.{}`: {e}", self.name, p.name));
            if let Value::Object(obj) = &mut schema {
                // Pydantic omits `description` for a parameter the docstring does not describe.
                if !p.description.is_empty() {
                    obj.insert("description".into(), Value::String(p.description.into()));
                }
                obj.insert("title".into(), Value::String(title_case(p.name)));
            }
            props.insert(p.name.to_string(), schema);
            if p.required {
                required.push(Value::String(p.name.into()));
            }
        }
        let mut params = Map::new();
        if !self.defs.is_empty() {
            let defs = self.defs.iter().map(|d| {
                let schema = serde_json::from_str(d.schema).unwrap_or_else(|e| {
                    panic!("schema of `{}` $defs `{}`: {e}", self.name, d.name)
                });
                (d.name.to_string(), schema)
            });
            params.insert("$defs".into(), Value::Object(defs.collect()));
        }
        params.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            params.insert("required".into(), Value::Array(required));
        }
        params.insert("title".into(), Value::String("parameters".into()));
        params.insert("type".into(), Value::String("object".into()));
        ToolSpec {
            name: self.name.to_string(),
            description: self.description.to_string(),
            parameters: pydantic_key_order(Value::Object(params), None),
        }
    }
}

/// Pydantic's `_sort_json_schema`: every object's keys sorted, except the members of a
/// `properties` object (field order) and a `default` value, which keep theirs; list items
/// are treated as if under their list's key.
fn pydantic_key_order(value: Value, parent: Option<&str>) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            if !matches!(parent, Some("properties" | "default")) {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            let sorted = entries.into_iter().map(|(k, v)| {
                let v = pydantic_key_order(v, Some(&k));
                (k, v)
            });
            Value::Object(sorted.collect())
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| pydantic_key_order(v, parent))
                .collect(),
        ),
        other => other,
    }
}

fn title_case(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A failed tool call, shaped like the Python exception upstream raises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Python exception class: `ValueError`, `KeyError`, `TypeError`, `ValidationError`, ...
    pub class: &'static str,
    /// `str(exception)`.
    pub message: String,
}

impl ToolError {
    pub fn value(message: impl Into<String>) -> Self {
        ToolError {
            class: "ValueError",
            message: message.into(),
        }
    }

    /// `KeyError(key)`: its `str()` is the repr of the key.
    pub fn key(key: &Value) -> Self {
        ToolError {
            class: "KeyError",
            message: tauguard_core::pyjson::py_repr(key),
        }
    }

    pub fn type_error(message: impl Into<String>) -> Self {
        ToolError {
            class: "TypeError",
            message: message.into(),
        }
    }

    pub fn attribute(message: impl Into<String>) -> Self {
        ToolError {
            class: "AttributeError",
            message: message.into(),
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        ToolError {
            class: "ValidationError",
            message: message.into(),
        }
    }

    /// The tool message the agent reads: `Error: <str(e)>`.
    pub fn content(&self) -> String {
        format!("Error: {}", self.message)
    }

    /// `<class>: <message>`, the form gold reports use.
    pub fn qualified(&self) -> String {
        format!("{}: {}", self.class, self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// Binds JSON keyword arguments to a method's parameters the way Python does, producing the
/// same `TypeError` texts: unexpected keywords first, then missing required ones.
/// Returns one slot per parameter, in declaration order (`None` = not given, default applies).
pub(crate) fn bind<'a>(
    owner: &str,
    def: &ToolDef,
    args: &'a Map<String, Value>,
) -> Result<Vec<Option<&'a Value>>, ToolError> {
    for key in args.keys() {
        if !def.params.iter().any(|p| p.name == key) {
            return Err(ToolError::type_error(format!(
                "{owner}.{}() got an unexpected keyword argument '{key}'",
                def.name
            )));
        }
    }
    let missing: Vec<&str> = def
        .params
        .iter()
        .filter(|p| p.required && !args.contains_key(p.name))
        .map(|p| p.name)
        .collect();
    if !missing.is_empty() {
        let quoted: Vec<String> = missing.iter().map(|m| format!("'{m}'")).collect();
        let list = match quoted.len() {
            1 => quoted[0].clone(),
            2 => format!("{} and {}", quoted[0], quoted[1]),
            n => format!("{}, and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
        };
        let noun = if missing.len() == 1 {
            "argument"
        } else {
            "arguments"
        };
        return Err(ToolError::type_error(format!(
            "{owner}.{}() missing {} required positional {noun}: {list}",
            def.name,
            missing.len()
        )));
    }
    Ok(def.params.iter().map(|p| args.get(p.name)).collect())
}

/// Upstream's `getattr(toolkit, name)(**args)` up to the call: the method `name` of `owner`'s
/// `toolkit` (Python's `AttributeError` when it has none) with its arguments bound as
/// [`bind`] binds them.
pub(crate) fn bind_method<'a>(
    owner: &str,
    toolkit: &'static [ToolDef],
    name: &str,
    args: &'a Map<String, Value>,
) -> Result<(&'static ToolDef, Vec<Option<&'a Value>>), ToolError> {
    let def = toolkit
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| crate::py::no_attribute(owner, name))?;
    Ok((def, bind(owner, def, args)?))
}

/// [`bind_method`] for toolkits whose every optional parameter defaults to `None`: one value
/// per parameter, JSON null where the default applies.
pub(crate) fn bind_filled<'a>(
    owner: &str,
    toolkit: &'static [ToolDef],
    name: &str,
    args: &'a Map<String, Value>,
) -> Result<Vec<&'a Value>, ToolError> {
    let (_, bound) = bind_method(owner, toolkit, name, args)?;
    Ok(bound
        .into_iter()
        .map(|v| v.unwrap_or(&Value::Null))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const P: &[Param] = &[
        param("a", r#"{"type":"string"}"#, "A."),
        param("b_c", r#"{"type":"integer"}"#, "B."),
        param("d", r#"{"type":"string"}"#, "D."),
        Param {
            name: "e",
            required: false,
            schema: r#"{"type":"string"}"#,
            description: "E.",
        },
    ];
    const DEF: ToolDef = ToolDef {
        name: "f",
        kind: ToolKind::Read,
        is_tool: true,
        description: "F.",
        params: P,
        defs: &[],
    };

    #[test]
    fn python_type_errors() {
        let args = json!({"a": 1, "zz": 2}).as_object().unwrap().clone();
        assert_eq!(
            bind("T", &DEF, &args).unwrap_err().message,
            "T.f() got an unexpected keyword argument 'zz'"
        );
        let args = json!({"a": 1}).as_object().unwrap().clone();
        assert_eq!(
            bind("T", &DEF, &args).unwrap_err().message,
            "T.f() missing 2 required positional arguments: 'b_c' and 'd'"
        );
        let args = Map::new();
        assert_eq!(
            bind("T", &DEF, &args).unwrap_err().message,
            "T.f() missing 3 required positional arguments: 'a', 'b_c', and 'd'"
        );
        let args = json!({"a": 1, "b_c": 2, "d": 3})
            .as_object()
            .unwrap()
            .clone();
        let bound = bind("T", &DEF, &args).unwrap();
        assert_eq!(bound[1], Some(&json!(2)));
        assert_eq!(bound[3], None);
    }

    #[test]
    fn spec_has_upstream_shape() {
        let spec = DEF.spec();
        assert_eq!(spec.parameters["properties"]["b_c"]["title"], "B C");
        assert_eq!(spec.parameters["required"], json!(["a", "b_c", "d"]));
        assert_eq!(spec.parameters["title"], "parameters");
    }

    #[test]
    fn spec_has_defs_and_pydantic_key_order() {
        const G: ToolDef = ToolDef {
            defs: &[SchemaDef {
                name: "M",
                schema: r#"{"type":"object","title":"M","properties":{"z":{"type":"string","title":"Z"},"a":{"type":"integer","title":"A"}},"required":["z","a"]}"#,
            }],
            ..tool(
                "g",
                ToolKind::Write,
                "G.",
                &[Param {
                    name: "x_y",
                    required: false,
                    schema: r##"{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/M"},{"type":"object","additionalProperties":true}]},"default":[{"b":1,"a":2}]}"##,
                    description: "X.",
                }],
            )
        };
        assert_eq!(
            serde_json::to_string(&G.spec().parameters).unwrap(),
            r##"{"$defs":{"M":{"properties":{"z":{"title":"Z","type":"string"},"a":{"title":"A","type":"integer"}},"required":["z","a"],"title":"M","type":"object"}},"properties":{"x_y":{"default":[{"b":1,"a":2}],"description":"X.","items":{"anyOf":[{"$ref":"#/$defs/M"},{"additionalProperties":true,"type":"object"}]},"title":"X Y","type":"array"}},"title":"parameters","type":"object"}"##
        );
    }
}
