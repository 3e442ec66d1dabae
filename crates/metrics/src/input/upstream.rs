//! Import of upstream τ²-bench `results.json` files (semantics notes §9) as tauguard
//! `SimulationRecord`s, so `report` and `compare` treat them like tauguard runs.
//!
//! What is kept: tasks (for the slice and, in ordered-trace domains, the gold trace),
//! simulations with `reward_info.reward`, termination reason, trial, seed, costs, duration and
//! messages. What is derived: the PV / Mut slice from the task's gold actions and the domain's
//! mutating-tool list (`domains.rs`); one executed `CallAttempt` per agent-side mutating tool
//! call (upstream has no guards, so no verdicts); agent and user turns as the number of
//! assistant and user messages. The guard is `baseline` unless the file carries tauguard's
//! provenance (written by `export-tau2`): a simulation's `info.tauguard`, else the file's
//! `info.tauguard`, gives back the guard, run id, cell id, cell hash, cell settings, config
//! hash and slice of the records it was exported from.
//!
//! A domain without an entry in the domain table (a custom upstream domain such as
//! `airline_relaxed`) is imported all the same: its tasks get `Slice::Unknown` (Pass^k
//! overall, no PV / Mut slices) and no call attempts, since which calls mutate is unknown.
//!
//! The file is read one simulation at a time (`upstream/stream.rs`), so an import holds
//! `info`, `tasks` and the simulation at hand, never the whole document.
//!
//! Parity with upstream's `compute_metrics` (§8): an infrastructure-error simulation is
//! excluded; a simulation with `reward_info: null` and another termination reason has no
//! reward upstream (pandas NaN), so it counts as a failure; it is imported with reward 0 and
//! `details.missing_reward_info = true`.

use crate::error::{MetricsError, ResultsCause};
use crate::input::domains::{DomainInfo, DomainTable};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use tauguard_core::record::{
    CallAttempt, RECORD_SCHEMA_VERSION, RewardInfo, RoleUsage, SimulationRecord, Slice,
};
use tauguard_core::termination::Termination;
use tauguard_core::{Message, Requestor};

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    tauguard: Option<Provenance>,
    agent_info: ModelInfo,
    #[serde(default)]
    user_info: Option<ModelInfo>,
    environment_info: EnvironmentInfo,
}

#[derive(Deserialize)]
struct ModelInfo {
    #[serde(default)]
    implementation: Option<String>,
    #[serde(default)]
    llm: Option<String>,
}

impl ModelInfo {
    fn name(&self) -> String {
        self.llm
            .clone()
            .or_else(|| self.implementation.clone())
            .unwrap_or_else(|| "unknown".to_string())
    }
}

/// tauguard's provenance as `export-tau2` writes it (`info.tauguard`, run-wide and per
/// simulation). Every field is optional so a file edited by hand still imports.
#[derive(Deserialize, Clone, Default)]
struct Provenance {
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    cell_id: Option<String>,
    #[serde(default)]
    guard: Option<String>,
    #[serde(default)]
    config_hash: Option<String>,
    #[serde(default)]
    cell_hash: Option<String>,
    #[serde(default)]
    cell: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    slice: Option<Slice>,
}

#[derive(Deserialize, Default)]
struct SimInfo {
    #[serde(default)]
    tauguard: Option<Provenance>,
}

#[derive(Deserialize)]
struct EnvironmentInfo {
    domain_name: String,
}

#[derive(Deserialize)]
struct UpTask {
    id: String,
    #[serde(default)]
    evaluation_criteria: Option<UpCriteria>,
}

#[derive(Deserialize)]
struct UpCriteria {
    #[serde(default)]
    actions: Option<Vec<UpAction>>,
}

#[derive(Deserialize)]
struct UpAction {
    name: String,
    #[serde(default)]
    requestor: Requestor,
}

#[derive(Deserialize)]
struct UpSimulation {
    task_id: String,
    #[serde(default)]
    trial: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    termination_reason: Termination,
    #[serde(default)]
    agent_cost: Option<f64>,
    #[serde(default)]
    user_cost: Option<f64>,
    #[serde(default)]
    reward_info: Option<UpReward>,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    start_time: Option<String>,
    /// Upstream's free-form dict; `null` in most files.
    #[serde(default)]
    info: Option<Value>,
}

#[derive(Deserialize)]
struct UpReward {
    reward: f64,
    #[serde(default)]
    reward_breakdown: Option<Map<String, Value>>,
}

mod stream;

pub(crate) use stream::for_each_record;

/// Imports every simulation of one upstream `results.json` as records, in file order.
pub(crate) fn import_results(
    path: &Path,
    domains: &DomainTable,
) -> Result<Vec<SimulationRecord>, MetricsError> {
    let mut out = Vec::new();
    for_each_record(path, domains, |rec| {
        out.push(rec);
        Ok::<(), MetricsError>(())
    })?;
    Ok(out)
}

/// The part of a results file every simulation's import reads: `timestamp`, `info` and
/// `tasks`, prepared once (see `upstream/stream.rs` for how it is read before the
/// simulations).
struct Importer<'d> {
    path: PathBuf,
    timestamp: Option<String>,
    provenance: Option<Provenance>,
    domain: String,
    /// `None` for a domain without an entry in the table (see the module docs).
    known: Option<&'d DomainInfo>,
    agent_model: String,
    user_model: String,
    run_id: String,
    cell_id: String,
    tasks: HashMap<String, UpTask>,
}

impl<'d> Importer<'d> {
    fn new(
        path: &Path,
        timestamp: Option<String>,
        info: Info,
        tasks: Vec<UpTask>,
        domains: &'d DomainTable,
    ) -> Importer<'d> {
        let domain = info.environment_info.domain_name;
        let agent_model = info.agent_info.name();
        let user_model = info
            .user_info
            .as_ref()
            .map(ModelInfo::name)
            .unwrap_or_default();
        Importer {
            path: path.to_path_buf(),
            timestamp,
            provenance: info.tauguard,
            known: domains.get(&domain),
            run_id: path.display().to_string(),
            cell_id: format!("tau2/{domain}/{agent_model}"),
            domain,
            agent_model,
            user_model,
            tasks: tasks.into_iter().map(|t| (t.id.clone(), t)).collect(),
        }
    }

    /// The record of simulation `i` of the file.
    fn record(&self, i: usize, mut sim: UpSimulation) -> Result<SimulationRecord, MetricsError> {
        let path = self.path.as_path();
        let info = self.known;
        let task =
            self.tasks
                .get(sim.task_id.as_str())
                .ok_or_else(|| MetricsError::BadResults {
                    path: path.to_path_buf(),
                    location: format!("simulations[{i}]"),
                    cause: ResultsCause::UnknownTask(sim.task_id.clone()),
                })?;
        let gold: &[UpAction] = task
            .evaluation_criteria
            .as_ref()
            .and_then(|c| c.actions.as_deref())
            .unwrap_or(&[]);
        let slice = info.map_or(Slice::Unknown, |info| {
            info.slice_of(gold.iter().map(|a| (a.name.as_str(), a.requestor)))
        });
        let gold_trace = (info.is_some_and(|i| i.ordered_trace) && !gold.is_empty())
            .then(|| gold.iter().map(|a| a.name.clone()).collect::<Vec<_>>());

        let mut messages = Vec::with_capacity(sim.messages.len());
        for (j, raw) in std::mem::take(&mut sim.messages).into_iter().enumerate() {
            messages.push(parse_message(raw).map_err(|e| MetricsError::BadResults {
                path: path.to_path_buf(),
                location: format!("simulations[{i}].messages[{j}]"),
                cause: e.into(),
            })?);
        }
        let mut agent_turns = 0;
        let mut user_turns = 0;
        let mut call_attempts = Vec::new();
        for m in &messages {
            match m {
                Message::Assistant(_) => agent_turns += 1,
                Message::User(_) => user_turns += 1,
                _ => {}
            }
            if let Message::Assistant(_) = m {
                for call in m.tool_calls() {
                    if info.is_some_and(|i| i.is_mutating(&call.name)) {
                        call_attempts.push(CallAttempt {
                            call_id: call.id.clone(),
                            tool: call.name.clone(),
                            requestor: Requestor::Assistant,
                            verdict: None,
                            executed: true,
                            faults: Vec::new(),
                            missing_prerequisites: None,
                        });
                    }
                }
            }
        }

        let reward = match &sim.reward_info {
            Some(r) => Some(RewardInfo {
                reward: r.reward,
                breakdown: r.reward_breakdown.clone().unwrap_or_default(),
                details: Value::Null,
                action_checks: Vec::new(),
            }),
            None if sim.termination_reason == Termination::InfrastructureError => None,
            None => Some(RewardInfo {
                reward: 0.0,
                breakdown: Map::new(),
                details: serde_json::json!({"missing_reward_info": true}),
                action_checks: Vec::new(),
            }),
        };
        let mut usage = BTreeMap::new();
        for (role, cost) in [("agent", sim.agent_cost), ("user", sim.user_cost)] {
            usage.insert(
                role.to_string(),
                RoleUsage {
                    cost,
                    ..RoleUsage::default()
                },
            );
        }
        let provenance = sim_provenance(&sim, path, i)?
            .or_else(|| self.provenance.clone())
            .unwrap_or_default();
        Ok(SimulationRecord {
            schema_version: RECORD_SCHEMA_VERSION,
            run_id: provenance.run_id.unwrap_or_else(|| self.run_id.clone()),
            cell_id: provenance.cell_id.unwrap_or_else(|| self.cell_id.clone()),
            config_hash: provenance.config_hash.unwrap_or_default(),
            cell_hash: provenance.cell_hash.unwrap_or_default(),
            cell: provenance.cell.unwrap_or_default(),
            domain: self.domain.clone(),
            agent_model: self.agent_model.clone(),
            user_model: self.user_model.clone(),
            guard: provenance.guard.unwrap_or_else(|| "baseline".to_string()),
            task_id: sim.task_id,
            slice: provenance.slice.unwrap_or(slice),
            trial: sim.trial.unwrap_or(0),
            seed: sim.seed.unwrap_or(0),
            termination_reason: sim.termination_reason,
            reward,
            error: None,
            messages,
            guard_events: Vec::new(),
            guide_events: Vec::new(),
            injected_faults: Vec::new(),
            behaviour_events: Vec::new(),
            call_attempts,
            attack_target: None,
            attack: None,
            gold_trace,
            usage,
            agent_turns,
            user_turns,
            wall_seconds: sim.duration.unwrap_or(0.0),
            started_at: sim
                .start_time
                .or_else(|| self.timestamp.clone())
                .unwrap_or_default(),
            attempts: Default::default(),
        })
    }
}

/// The provenance a simulation's `info.tauguard` carries, if any.
fn sim_provenance(
    sim: &UpSimulation,
    path: &Path,
    i: usize,
) -> Result<Option<Provenance>, MetricsError> {
    let Some(info) = sim.info.as_ref().filter(|v| v.is_object()) else {
        return Ok(None);
    };
    let parsed: SimInfo =
        serde_json::from_value(info.clone()).map_err(|e| MetricsError::BadResults {
            path: path.to_path_buf(),
            location: format!("simulations[{i}].info.tauguard"),
            cause: e.into(),
        })?;
    Ok(parsed.tauguard)
}

/// Upstream messages carry more fields than tauguard's and allow a null tool-message content;
/// the extra fields are ignored and a null content becomes empty.
fn parse_message(mut value: Value) -> Result<Message, serde_json::Error> {
    if let Some(obj) = value.as_object_mut()
        && obj.get("role").and_then(Value::as_str) == Some("tool")
        && obj.get("content").is_none_or(Value::is_null)
    {
        obj.insert("content".into(), Value::String(String::new()));
    }
    serde_json::from_value(value)
}
