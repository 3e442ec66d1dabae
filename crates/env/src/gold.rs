//! Gold replay (§7.2.2): the environment a task's gold actions produce, and the per-task
//! report `tauguard gold` prints, shaped like the upstream parity fixtures.

use crate::data::DomainData;
use crate::environment::{Changes, Environment};
use crate::hash::db_hash;
use crate::initial_state::{InitialStateError, apply_initial_state};
use crate::tooling::ToolError;
use serde_json::{Map, Value, json};
use tauguard_core::{Requestor, Task};

/// One executed gold action and its result.
#[derive(Debug, Clone)]
pub struct GoldStep {
    pub name: String,
    pub requestor: Requestor,
    pub arguments: Map<String, Value>,
    /// Tool-message content on success, the exception otherwise.
    pub result: Result<String, ToolError>,
}

/// Everything a gold replay produced.
#[derive(Debug)]
pub struct GoldReplay {
    pub task_id: String,
    /// Base state → state after the task's initial state.
    pub initial_state_changes: Changes,
    pub steps: Vec<GoldStep>,
    /// State after the initial state → final state.
    pub changes: Changes,
    pub after_init: Box<dyn Environment>,
    pub env: Box<dyn Environment>,
}

/// A fresh environment with the task's initial state applied (initialization data,
/// initialization actions, the task's own message history).
pub fn initial_env(
    data: &DomainData,
    task: &Task,
) -> Result<Box<dyn Environment>, InitialStateError> {
    let mut env = data.task_env(task);
    apply_initial_state(env.as_mut(), task.initial_state.as_ref())?;
    Ok(env)
}

/// Runs every gold action on `env` through the raw call path (no per-call sync), keeping
/// going after failures as upstream does.
pub fn run_gold_actions(env: &mut dyn Environment, task: &Task) -> Vec<GoldStep> {
    task.gold_actions()
        .iter()
        .map(|a| GoldStep {
            name: a.name.clone(),
            requestor: a.requestor,
            arguments: a.arguments.clone(),
            result: env
                .dispatch(a.requestor, &a.name, &a.arguments)
                .map(|v| v.content()),
        })
        .collect()
}

/// The gold environment of `task`, as evaluation compares against it.
pub fn gold_env(data: &DomainData, task: &Task) -> Result<Box<dyn Environment>, InitialStateError> {
    let mut env = initial_env(data, task)?;
    run_gold_actions(env.as_mut(), task);
    Ok(env)
}

/// Replays `task`'s gold actions after its initial state and records what changed.
pub fn replay_gold(data: &DomainData, task: &Task) -> Result<GoldReplay, InitialStateError> {
    let base = data.task_env(task);
    let after_init = initial_env(data, task)?;
    let initial_state_changes = after_init.changes_since(base.as_ref());
    let mut env = after_init.snapshot();
    let steps = run_gold_actions(env.as_mut(), task);
    // The upstream reference replays end with one `sync_tools` (telecom's final state shows
    // it: the phone's surroundings reflect the last backend changes, while each step ran
    // unsynced). A no-op for airline and retail; a failing sync leaves the state as is.
    let _ = env.sync_tools();
    let changes = env.changes_since(after_init.as_ref());
    Ok(GoldReplay {
        task_id: task.id.clone(),
        initial_state_changes,
        steps,
        changes,
        after_init,
        env,
    })
}

impl GoldReplay {
    /// The report line: `task_id`, `initial_state_changes`, `gold_steps`, `changed_records`,
    /// `user_changed_records`, for domains with a user database `user_db_after_init` and
    /// `user_db_final`, and `db_sha256_sorted` (hash of the final agent database).
    pub fn to_json(&self) -> Value {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                let mut o = Map::new();
                o.insert("name".into(), json!(s.name));
                o.insert("requestor".into(), json!(s.requestor));
                o.insert("arguments".into(), Value::Object(s.arguments.clone()));
                match &s.result {
                    Ok(out) => {
                        o.insert("ok".into(), json!(true));
                        o.insert("output".into(), json!(out));
                    }
                    Err(e) => {
                        o.insert("ok".into(), json!(false));
                        o.insert("error".into(), json!(e.qualified()));
                    }
                }
                Value::Object(o)
            })
            .collect();
        let mut o = Map::new();
        o.insert("task_id".into(), json!(self.task_id));
        o.insert(
            "initial_state_changes".into(),
            Value::Object(self.initial_state_changes.agent.clone()),
        );
        o.insert("gold_steps".into(), Value::Array(steps));
        o.insert(
            "changed_records".into(),
            Value::Object(self.changes.agent.clone()),
        );
        o.insert(
            "user_changed_records".into(),
            self.changes
                .user
                .clone()
                .map(Value::Object)
                .unwrap_or(Value::Null),
        );
        if let (Some(init), Some(fin)) = (self.after_init.user_db(), self.env.user_db()) {
            o.insert("user_db_after_init".into(), init);
            o.insert("user_db_final".into(), fin);
        }
        o.insert(
            "db_sha256_sorted".into(),
            json!(db_hash(&self.env.agent_db())),
        );
        Value::Object(o)
    }
}
