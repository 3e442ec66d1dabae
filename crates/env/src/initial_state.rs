//! Applying a task's `initial_state` (§1.7): data merge, initialization actions, then the
//! tool calls of its message history. The live run and both evaluation environments use
//! this same path.

use crate::environment::Environment;
use crate::replay::{ReplayError, replay_tool_calls};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tauguard_core::task::InitialState;

/// Recursive dict merge as upstream's `update_pydantic_model_with_dict`: objects merge key
/// by key, any other value (lists included) replaces the old one wholesale.
pub(crate) fn deep_merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// `patch` merged into `dump` (a database's plain-data dump) as [`deep_merge`] merges it,
/// and the result validated again as the database's model `T`, named `model` in the error.
pub(crate) fn revalidate<T: DeserializeOwned>(
    mut dump: Value,
    patch: &Value,
    model: &'static str,
) -> Result<T, MergeError> {
    deep_merge(&mut dump, patch);
    serde_path_to_error::deserialize(dump).map_err(|e| MergeError::Invalid {
        model,
        at: e.path().to_string(),
        cause: e.into_inner(),
    })
}

/// Why `initialization_data` could not be merged into a domain's databases.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// The merged database is no valid `model`; `at` is the key path of the first bad value.
    #[error("validation error for {model} at `{at}`")]
    Invalid {
        model: &'static str,
        at: String,
        #[source]
        cause: serde_json::Error,
    },
    /// The domain's own validation refused the data (its message names the bad value), or
    /// it has no database for one side.
    #[error("{0}")]
    Rejected(String),
}

/// Why a task's initial state could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum InitialStateError {
    #[error("initialization_data does not validate")]
    Data(#[source] MergeError),
    #[error("initialization action `{func}` failed: {message}")]
    Action { func: String, message: String },
    #[error("message_history replay failed")]
    History(#[from] ReplayError),
}

/// Applies `state` to `env` in upstream order.
pub fn apply_initial_state(
    env: &mut dyn Environment,
    state: Option<&InitialState>,
) -> Result<(), InitialStateError> {
    let Some(state) = state else { return Ok(()) };
    if let Some(data) = &state.initialization_data {
        env.merge_initialization_data(data.agent_data.as_ref(), data.user_data.as_ref())
            .map_err(InitialStateError::Data)?;
    }
    for action in state.initialization_actions.iter().flatten() {
        let fail = |e: crate::ToolError| InitialStateError::Action {
            func: action.func_name.clone(),
            message: e.qualified(),
        };
        env.call(action.env_type, &action.func_name, &action.arguments)
            .map_err(fail)?;
        env.sync_tools().map_err(fail)?;
    }
    // Upstream's `set_state` replays the history (possibly empty) and always ends with a sync.
    replay_tool_calls(env, state.message_history.as_deref().unwrap_or(&[]), true)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_replaces_lists_and_merges_objects() {
        let mut t = json!({"a": {"x": 1, "y": [1, 2]}, "b": 2});
        deep_merge(&mut t, &json!({"a": {"y": [3], "z": null}, "c": {"d": 1}}));
        assert_eq!(
            t,
            json!({"a": {"x": 1, "y": [3], "z": null}, "b": 2, "c": {"d": 1}})
        );
    }
}
