//! Tool classification and the schema an LLM sees for a tool.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// τ²-bench's conceptual tool type. Only `Write` tools mutate state by default: they are the
/// calls a guard intercepts and the calls evaluation replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Write,
    Think,
    Generic,
}

impl ToolKind {
    /// Whether calls of this kind change the environment (replayed in evaluation, guarded).
    pub fn mutates_state(self) -> bool {
        self == ToolKind::Write
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Write => "write",
            ToolKind::Think => "think",
            ToolKind::Generic => "generic",
        }
    }
}

/// A tool as offered to a model: OpenAI function-calling shape, provider-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

impl ToolSpec {
    /// `{"type": "function", "function": {name, description, parameters}}`.
    pub fn to_openai(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// Parses one entry of an OpenAI-style tool list (`tools.json`).
    pub fn from_openai(value: &Value) -> Result<ToolSpec, String> {
        let func = value
            .get("function")
            .ok_or_else(|| "tool entry has no `function` object".to_string())?;
        let name = func
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| "tool entry has no `function.name` string".to_string())?;
        Ok(ToolSpec {
            name: name.to_string(),
            description: func
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            parameters: func
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
        })
    }

    /// Parameter names declared by the schema, in schema order.
    pub fn parameter_names(&self) -> Vec<String> {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Required parameter names declared by the schema.
    pub fn required_parameters(&self) -> Vec<String> {
        self.parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}
