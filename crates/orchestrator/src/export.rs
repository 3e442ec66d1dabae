//! `tauguard export-tau2`: one grid cell's records as an upstream τ²-bench `results.json`
//! (§9), so upstream tooling (viewers, leaderboard scripts, its own metrics) reads our runs.

use serde_json::{Map, Value, json};
use tauguard_core::record::SimulationRecord;
use tauguard_env::DomainData;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no records to export{0}")]
    Empty(String),
    #[error("the records hold several grid cells ({0}); choose one with --guard")]
    SeveralCells(String),
    #[error("records of domain `{records}` cannot be exported with data of domain `{data}`")]
    DomainMismatch { records: String, data: String },
}

/// Builds the results document for the records of one cell (`guard` selects it).
pub fn results_json(
    records: &[SimulationRecord],
    data: &DomainData,
    guard: Option<&str>,
) -> Result<Value, ExportError> {
    let selected: Vec<&SimulationRecord> = records
        .iter()
        .filter(|r| guard.is_none_or(|g| r.guard == g))
        .collect();
    let first = selected.first().ok_or_else(|| {
        ExportError::Empty(
            guard
                .map(|g| format!(" for guard `{g}`"))
                .unwrap_or_default(),
        )
    })?;
    let mut cells: Vec<&str> = selected.iter().map(|r| r.cell_id.as_str()).collect();
    cells.sort_unstable();
    cells.dedup();
    if cells.len() > 1 {
        return Err(ExportError::SeveralCells(cells.join(", ")));
    }
    if first.domain != data.domain {
        return Err(ExportError::DomainMismatch {
            records: first.domain.clone(),
            data: data.domain.to_string(),
        });
    }
    let trials = selected.iter().map(|r| r.trial + 1).max().unwrap_or(1);
    let mut task_ids: Vec<&str> = selected.iter().map(|r| r.task_id.as_str()).collect();
    task_ids.sort_unstable();
    task_ids.dedup();
    let tasks: Vec<Value> = data
        .tasks
        .iter()
        .filter(|t| task_ids.contains(&t.id.as_str()))
        .map(|t| serde_json::to_value(t).expect("tasks serialise"))
        .collect();
    let simulations: Vec<Value> = selected.iter().map(|r| simulation_run(r)).collect();
    Ok(json!({
        "timestamp": first.started_at,
        "info": {
            "git_commit": null,
            "num_trials": trials,
            "max_steps": null,
            "max_errors": null,
            "user_info": {"implementation": "user_simulator", "llm": first.user_model, "llm_args": {}, "global_simulation_guidelines": null},
            "agent_info": {"implementation": "llm_agent", "llm": first.agent_model, "llm_args": {}},
            "environment_info": {"domain_name": data.domain, "policy": data.policy, "tool_defs": null},
            "seed": null,
            "tauguard": {"run_id": first.run_id, "cell_id": first.cell_id, "guard": first.guard, "config_hash": first.config_hash},
        },
        "tasks": tasks,
        "simulations": simulations,
    }))
}

fn simulation_run(r: &SimulationRecord) -> Value {
    let cost = |role: &str| r.usage.get(role).and_then(|u| u.cost);
    let mut info = Map::new();
    if let Some(e) = &r.error {
        info.insert("error".into(), json!(e));
    }
    json!({
        "id": format!("{}:{}:{}", r.cell_id, r.task_id, r.trial),
        "task_id": r.task_id,
        "timestamp": r.started_at,
        "start_time": r.started_at,
        "end_time": r.started_at,
        "duration": r.wall_seconds,
        "termination_reason": r.termination_reason,
        "agent_cost": cost("agent"),
        "user_cost": cost("user"),
        "reward_info": r.reward.as_ref().map(|w| w.details_json()),
        "messages": r.messages,
        "trial": r.trial,
        "seed": r.seed,
        "mode": "half_duplex",
        "info": if info.is_empty() { Value::Null } else { Value::Object(info) },
    })
}
