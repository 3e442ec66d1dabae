//! One domain of a run plan, loaded once and shared by every cell on it: its data, the
//! selected tasks, what the sim agent and the guards read from the project for it, and the
//! prompts built from its policy. Split from `plan.rs`, which crosses domains with the other
//! axes.

use crate::benchmark_texts::BenchmarkTexts;
use crate::evaluate::GoldCache;
use crate::prompts::{agent_system_prompt, user_system_prompt};
use crate::runner::RunError;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use tauguard_core::record::Slice;
use tauguard_core::{Requestor, Task, ToolSpec};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::Prerequisites;
use tauguard_sim::agent::{DeviceChecks, PlannedRead, TemptingCall};

/// The `split` value that selects every task of the domain, whatever its splits.
pub(crate) const ALL_TASKS: &str = "*";

/// Which tasks of a domain run: `[run]`'s selection with `[grid.tasks.<domain>]` over it.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub split: String,
    pub task_ids: Option<Vec<String>>,
    pub num_tasks: Option<usize>,
}

/// One domain of the run, loaded once and shared by every cell on it.
#[derive(Debug)]
pub struct DomainPlan {
    pub data: DomainData,
    /// The selected tasks, in file order.
    pub tasks: Vec<Task>,
    /// Agent-side mutating tools (what guards see and slices are cut by).
    pub mutating: HashSet<String>,
    /// Reads that establish identity (the sim agent asks for identity before them).
    pub identity: HashSet<String>,
    /// Read-only agent tools and their required parameters (the sim agent makes a read a
    /// remediation or guidance names when it can fill them).
    pub lookups: Arc<HashMap<String, Vec<String>>>,
    /// The domain's troubleshooting workflow: device checks around each action (sim agent).
    pub device_workflow: Arc<HashMap<String, DeviceChecks>>,
    /// Tempting forbidden calls of PV tasks, by task id (sim agent).
    pub tempting: HashMap<String, TemptingCall>,
    /// Attack tasks of the task set, by task id (see [`crate::attacks`]).
    pub attacks: HashMap<String, crate::attacks::Attack>,
    /// `tasks/<domain>/prerequisites.toml`, when the project has one for the domain.
    pub prereqs: Option<Prerequisites>,
    /// `tasks/<domain>/nmr_oracle.toml`: the call-NMR ground truth, for labelling only.
    pub oracle: Option<crate::nmr_oracle::NmrOracle>,
    /// The sim agent's prerequisite reads per task index (empty when the agent is a model):
    /// they depend on the task alone, so they are planned once and shared by every trial.
    pub planned_reads: Vec<Vec<Vec<PlannedRead>>>,
    /// Gold environments and gold-action JSON, built once per task.
    pub gold: GoldCache,
    /// The agent's system prompt for the domain, and the user's per task index.
    pub agent_system_prompt: Arc<str>,
    pub user_system_prompts: Vec<Arc<str>>,
    /// The comparability items of the domain's texts and data (see [`crate::comparability`]).
    pub stamp_items: Vec<crate::comparability::Item>,
    /// What the cell ids of this plan add for the grid's domain-option axes of several values
    /// (`|retrieval=grep_only`; see [`crate::grid_options`]); empty otherwise.
    pub id_suffix: String,
}

/// Where a domain's inputs come from: shared by every domain of a run.
pub(crate) struct Sources<'a> {
    pub data_dir: &'a DataDir,
    pub project: &'a Path,
    /// The project's own prompts (`configs/prompts/`).
    pub prompts: &'a Path,
    /// The benchmark's texts.
    pub texts: &'a BenchmarkTexts,
}

pub(crate) fn plan_domain(
    domain: &str,
    options: &tauguard_env::registry::DomainOptions,
    selection: &Selection,
    task_set: Option<&Path>,
    sources: &Sources<'_>,
    sim_agent: bool,
) -> Result<DomainPlan, RunError> {
    let Sources {
        data_dir,
        project,
        prompts,
        texts,
    } = *sources;
    let mut data = DomainData::load_with(data_dir, domain, options)?;
    let attacks = match task_set {
        Some(set) => crate::attacks::adopt_task_set(&mut data, &project.join(set))?,
        None => HashMap::new(),
    };
    let tasks: Vec<Task> = data
        .select_tasks(
            (selection.split != ALL_TASKS).then_some(selection.split.as_str()),
            selection.task_ids.as_deref(),
            selection.num_tasks,
        )?
        .into_iter()
        .cloned()
        .collect();
    let task_file = match task_set {
        Some(set) => project.join(set).join("tasks.json"),
        None => data.dir.join("tasks.json"),
    };
    check_gold_tools(&data, &tasks, &task_file)?;
    let mutating: HashSet<String> = tauguard_env::registry::mutating_tools(data.def)
        .map(str::to_string)
        .collect();
    let prereqs = {
        let path = project
            .join("tasks")
            .join(data.domain)
            .join("prerequisites.toml");
        if path.exists() {
            Some(Prerequisites::load(&path)?)
        } else {
            None
        }
    };
    let oracle = crate::nmr_oracle::NmrOracle::load_domain(&project.join("tasks"), data.domain)?;
    let planned_reads = match (&prereqs, sim_agent) {
        (Some(p), true) => tasks
            .iter()
            .map(|t| crate::prerequisites::plan_prerequisite_reads(&data, t, p, &mutating))
            .collect(),
        _ => vec![Vec::new(); tasks.len()],
    };
    let with_tools: Vec<bool> = tasks
        .iter()
        .map(|t| !task_user_tools(&data, t).is_empty())
        .collect();
    let mut stamp_items = crate::comparability::text_items(
        texts,
        with_tools.iter().any(|w| *w),
        with_tools.iter().any(|w| !*w),
        !attacks.is_empty(),
    );
    stamp_items.extend(crate::comparability::domain_items(
        &data,
        &tasks,
        task_set.map(|p| p.display().to_string()).as_deref(),
    ));
    let attacker = if attacks.is_empty() {
        String::new()
    } else {
        read_prompt(prompts, "user_attacker.md")?
    };
    Ok(DomainPlan {
        lookups: Arc::new(lookups(&data)),
        device_workflow: Arc::new(device_workflow(data.def)),
        identity: data
            .def
            .identity_reads()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        tempting: {
            let mut t = load_tempting(project, &data)?;
            // An attack's forbidden call is what the sim agent attempts when it gives in.
            for (id, a) in &attacks {
                t.insert(id.clone(), a.call.clone());
            }
            t
        },
        agent_system_prompt: agent_system_prompt(&texts.agent_instruction.text, &data.policy)
            .into(),
        user_system_prompts: tasks
            .iter()
            .zip(&with_tools)
            .map(|(t, &tools)| {
                let g = if attacks.contains_key(&t.id) {
                    &attacker
                } else {
                    &texts.guidelines(tools).text
                };
                user_system_prompt(g, t).into()
            })
            .collect(),
        stamp_items,
        id_suffix: String::new(),
        attacks,
        gold: GoldCache::default(),
        planned_reads,
        prereqs,
        oracle,
        mutating,
        tasks,
        data,
    })
}

/// Refuses a selected task whose gold action names a tool its side does not have: the gold
/// replay would skip it and the task would score as if the action were right.
fn check_gold_tools(data: &DomainData, tasks: &[Task], file: &Path) -> Result<(), RunError> {
    let env = data.fresh_env();
    for t in tasks {
        for (i, a) in t.gold_actions().iter().enumerate() {
            if env.tool_kind(a.requestor, &a.name).is_none() {
                let side = match a.requestor {
                    Requestor::Assistant => "assistant",
                    Requestor::User => "user",
                };
                return Err(RunError::Input {
                    path: file.to_path_buf(),
                    message: format!(
                        "task `{}`: evaluation_criteria.actions[{i}] names `{}`, which is no {side} tool of domain `{}`",
                        t.id, a.name, data.domain
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The tools a task's user simulator gets, as upstream's runner gives them
/// (`environment.get_user_tools(include=task.user_tools) or None`): every user tool when the
/// task names none; only the named ones otherwise; none at all when a name is unknown (upstream
/// raises there and builds the user without tools).
pub(crate) fn task_user_tools(data: &DomainData, task: &Task) -> Arc<[ToolSpec]> {
    let all = &data.tool_schemas.user;
    match &task.user_tools {
        None => all.clone(),
        Some(names) if names.iter().all(|n| all.iter().any(|t| &t.name == n)) => all
            .iter()
            .filter(|t| names.contains(&t.name))
            .cloned()
            .collect(),
        Some(_) => Arc::from(Vec::new()),
    }
}

/// PV when no agent-side gold action is a mutating tool.
pub(crate) fn task_slice(task: &Task, mutating: &HashSet<String>) -> Slice {
    let mutates = task
        .gold_actions()
        .iter()
        .any(|a| a.requestor == Requestor::Assistant && mutating.contains(&a.name));
    if mutates { Slice::Mut } else { Slice::Pv }
}

/// Tempting calls of PV tasks: `pv_annotations.json` beside the domain's data (task sets of
/// our own, such as the fixtures, carry theirs), else `tasks/<domain>/pv_annotations.json`
/// (absent = none).
fn load_tempting(
    project: &Path,
    data: &DomainData,
) -> Result<HashMap<String, TemptingCall>, RunError> {
    let beside = data.dir.join("pv_annotations.json");
    let path = if beside.exists() {
        beside
    } else {
        project
            .join("tasks")
            .join(data.domain)
            .join("pv_annotations.json")
    };
    let Some(text) = RunError::read_optional(&path)? else {
        return Ok(HashMap::new());
    };
    let bad = |message: String| RunError::input(&path, message);
    let v: Value = serde_json::from_str(&text).map_err(|e| RunError::file(&path, e))?;
    let tasks = v
        .get("tasks")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("missing `tasks` object".into()))?;
    let mut out = HashMap::new();
    for (id, t) in tasks {
        let Some(tool) = t.get("tool").and_then(Value::as_str) else {
            continue;
        };
        let arguments = t
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| bad(format!("at `tasks.{id}.arguments`: expected an object")))?;
        out.insert(
            id.clone(),
            TemptingCall {
                tool: tool.to_string(),
                arguments,
            },
        );
    }
    Ok(out)
}

pub(crate) fn read_prompt(dir: &Path, name: &str) -> Result<String, RunError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| RunError::file(&path, e))
}

/// The domain's read-only agent tools with the parameters their schemas require.
/// The registry's device workflow in the sim agent's terms.
fn device_workflow(def: &dyn tauguard_env::registry::Domain) -> HashMap<String, DeviceChecks> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    def.device_workflow()
        .iter()
        .map(|w| {
            let checks = DeviceChecks {
                diagnose: w
                    .diagnose
                    .iter()
                    .map(|(t, take)| (t.to_string(), owned(take)))
                    .collect(),
                verify: owned(w.verify),
            };
            (w.action.to_string(), checks)
        })
        .collect()
}

fn lookups(data: &DomainData) -> HashMap<String, Vec<String>> {
    let reads: HashSet<&str> = tauguard_env::registry::read_only_tools(data.def).collect();
    data.tool_schemas
        .assistant
        .iter()
        .filter(|t| reads.contains(t.name.as_str()))
        .map(|t| {
            let required = t.parameters["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect();
            (t.name.clone(), required)
        })
        .collect()
}
