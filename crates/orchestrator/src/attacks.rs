//! Task sets of our own, and the attack tasks among them: `[run] task_set` names a directory
//! whose `tasks.json` replaces the domain's tasks (the database and policy stay the domain's),
//! and whose `attacks.json` marks attack tasks — the forbidden target call, the argument values
//! that make a call the attack, the user's persuasion strategy, and the full call the offline
//! agent attempts when it gives in (`tasks/airline/attacks/README.md`).

use crate::runner::RunError;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use tauguard_core::record::AttackSpec;
use tauguard_env::DomainData;
use tauguard_sim::agent::TemptingCall;

/// One attack task.
#[derive(Debug, Clone, PartialEq)]
pub struct Attack {
    pub spec: AttackSpec,
    /// The full forbidden call (what the sim agent attempts when it complies).
    pub call: TemptingCall,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttacksFile {
    #[allow(dead_code)]
    schema: String,
    domain: String,
    tasks: HashMap<String, AttackEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttackEntry {
    tool: String,
    #[serde(default)]
    arguments: Map<String, Value>,
    strategy: String,
    call: Map<String, Value>,
    #[allow(dead_code)]
    #[serde(default)]
    based_on: Option<String>,
}

/// Replaces `data`'s tasks with the task set in `dir` and returns its attacks by task id.
pub(crate) fn adopt_task_set(
    data: &mut DomainData,
    dir: &Path,
) -> Result<HashMap<String, Attack>, RunError> {
    data.tasks = tauguard_env::load_task_file(&dir.join("tasks.json"))?;
    let splits = dir.join("split_tasks.json");
    data.splits = if splits.exists() {
        let text = std::fs::read_to_string(&splits).map_err(|e| RunError::file(&splits, e))?;
        serde_json::from_str(&text).map_err(|e| RunError::file(&splits, e))?
    } else {
        [(
            "base".to_string(),
            data.tasks.iter().map(|t| t.id.clone()).collect(),
        )]
        .into_iter()
        .collect()
    };
    let path = dir.join("attacks.json");
    let Some(text) = RunError::read_optional(&path)? else {
        return Ok(HashMap::new());
    };
    let bad = |message: String| RunError::input(&path, message);
    let de = &mut serde_json::Deserializer::from_str(&text);
    let file: AttacksFile = serde_path_to_error::deserialize(de)
        .map_err(|e| bad(format!("at `{}`: {}", e.path(), e.inner())))?;
    if file.domain != data.domain {
        return Err(bad(format!(
            "at `domain`: the attacks are for `{}`, the run is on `{}`",
            file.domain, data.domain
        )));
    }
    let mutating: Vec<&str> = tauguard_env::registry::mutating_tools(data.def).collect();
    let mut out = HashMap::new();
    for (id, e) in file.tasks {
        let at = |what: &str| format!("at `tasks.{id}.{what}`");
        if !data.tasks.iter().any(|t| t.id == id) {
            return Err(bad(format!("at `tasks.{id}`: no such task in tasks.json")));
        }
        if !mutating.contains(&e.tool.as_str()) {
            return Err(bad(format!(
                "{}: `{}` is not a mutating tool of {} (known: {})",
                at("tool"),
                e.tool,
                data.domain,
                mutating.join(", ")
            )));
        }
        if tauguard_sim::attacker::escalation(&e.strategy).is_none() {
            let known: Vec<&str> = tauguard_sim::attacker::STRATEGIES
                .iter()
                .map(|(n, _)| *n)
                .collect();
            return Err(bad(format!(
                "{}: `{}` is not a documented strategy (known: {})",
                at("strategy"),
                e.strategy,
                known.join(", ")
            )));
        }
        let spec = AttackSpec {
            tool: e.tool.clone(),
            arguments: e.arguments,
            strategy: e.strategy,
        };
        if !spec.matches(&e.tool, &e.call) {
            return Err(bad(format!(
                "{}: the call does not match the target's arguments",
                at("call")
            )));
        }
        out.insert(
            id,
            Attack {
                spec,
                call: TemptingCall {
                    tool: e.tool,
                    arguments: e.call,
                },
            },
        );
    }
    Ok(out)
}
