//! The run: expand a config into simulations, run them concurrently, evaluate each, and
//! append one record per simulation. Failures are data: a simulation that keeps failing
//! after its retries becomes an `infrastructure_error` record, never an aborted run.

use crate::config::{ConfigError, RunConfig};
use crate::evaluate::{GoldCache, NlCheck, evaluate_final, nl_assertions_to_judge};
use crate::prompts::{agent_system_prompt, user_system_prompt};
use crate::records::{RecordWriter, RecordsError};
use crate::seeds::trial_seeds;
use crate::simulation::{Sampling, SimulationSpec, run_simulation};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tauguard_core::record::{RoleUsage, SimulationRecord, Slice};
use tauguard_core::{Requestor, Task, ToolKind};
use tauguard_env::{DataDir, DomainData, LoadError};
use tauguard_guards::factory::GuardInputs;
use tauguard_guards::policyguard::prerequisites::Prerequisites;
use tauguard_guards::{Guard, GuardName, GuardOptions, build_guard};
use tauguard_llm::model::ChatModel;
use tauguard_llm::{CacheMode, ModelFactory};
use tauguard_sim::agent::{SimAgent, SimAgentSpec, TemptingCall};
use tauguard_sim::model::{SimAgentModel, SimUserModel};
use tauguard_sim::user::SimUser;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error("`{path}`: {message}")]
    Input { path: PathBuf, message: String },
    #[error(
        "output `{0}` already holds records; pass --resume to continue it or choose another --out"
    )]
    OutputExists(PathBuf),
    #[error("`{role}` model: {message}")]
    Model { role: String, message: String },
}

/// Options from the command line.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub out_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub resume: bool,
    /// Project root holding `configs/prompts` and `tasks/` (default: working directory).
    pub project_dir: Option<PathBuf>,
    /// Stop after this many simulations (tests use it to emulate a killed run).
    pub stop_after: Option<usize>,
    /// Bypass the response cache (`--no-cache`).
    pub no_cache: bool,
}

/// What happened, for the closing lines of `tauguard run`.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub out_dir: PathBuf,
    pub planned: usize,
    pub skipped: usize,
    pub completed: usize,
    pub infra_errors: usize,
    pub successes: usize,
    pub cost: f64,
    /// The response cache's closing line, when HTTP models were used.
    pub cache_stats: Option<String>,
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
    if !path.exists() {
        return Ok(HashMap::new());
    }
    let bad = |message: String| RunError::Input {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
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

fn read_prompt(dir: &Path, name: &str) -> Result<String, RunError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| RunError::Input {
        path,
        message: e.to_string(),
    })
}

/// PV when no agent-side gold action is a mutating tool.
pub fn task_slice(task: &Task, mutating: &HashSet<String>) -> Slice {
    let mutates = task
        .gold_actions()
        .iter()
        .any(|a| a.requestor == Requestor::Assistant && mutating.contains(&a.name));
    if mutates { Slice::Mut } else { Slice::Pv }
}

/// One grid configuration: its name, its cell id in records, its guard (`None` = baseline).
type Cell = (String, String, Option<Arc<dyn Guard>>);

struct Shared {
    cfg: RunConfig,
    cells: Vec<Cell>,
    data: DomainData,
    tasks: Vec<Task>,
    seeds: Vec<u64>,
    mutating: HashSet<String>,
    identity: HashSet<String>,
    tempting: HashMap<String, TemptingCall>,
    gold: GoldCache,
    /// Sim-agent prerequisite reads per task id.
    planned_reads: std::sync::Mutex<HashMap<String, Vec<Vec<tauguard_sim::agent::PlannedRead>>>>,
    /// `tasks/<domain>/prerequisites.toml`, when the project has one for the domain.
    prereqs: Option<Prerequisites>,
    /// System prompts, built once: the agent's for the domain, the user's per task index.
    agent_system_prompt: Arc<str>,
    user_system_prompts: Vec<Arc<str>>,
    /// HTTP models (`None` = the sim model of that role).
    agent_llm: Option<Arc<dyn ChatModel>>,
    user_llm: Option<Arc<dyn ChatModel>>,
    judge_llm: Option<Arc<dyn ChatModel>>,
    run_id: String,
    config_hash: String,
}

/// Runs a config to completion (or to `stop_after`).
pub async fn run(cfg: RunConfig, opts: RunOptions) -> Result<RunSummary, RunError> {
    let project = opts
        .project_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let data_dir = DataDir::resolve(opts.data_dir.as_deref().or(cfg.run.data_dir.as_deref()))?;
    let data = DomainData::load(&data_dir, &cfg.run.domain)?;
    let tasks: Vec<Task> = data
        .select_tasks(
            Some(&cfg.run.split),
            cfg.run.task_ids.as_deref(),
            cfg.run.num_tasks,
        )?
        .into_iter()
        .cloned()
        .collect();
    let probe = data.fresh_env();
    let mutating: HashSet<String> = probe
        .toolkit(Requestor::Assistant)
        .iter()
        .filter(|t| t.is_tool && t.kind == ToolKind::Write)
        .map(|t| t.name.to_string())
        .collect();
    let prompts = cfg
        .run
        .prompts_dir
        .clone()
        .unwrap_or_else(|| project.join("configs/prompts"));
    let guidelines_file = if data.tool_schemas.user.is_empty() {
        "user_guidelines.md"
    } else {
        "user_guidelines_tools.md"
    };
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&cfg.run.name));
    std::fs::create_dir_all(&out_dir).map_err(|e| RunError::Input {
        path: out_dir.clone(),
        message: e.to_string(),
    })?;
    let records_path = out_dir.join("records.jsonl");
    if records_path.exists()
        && !opts.resume
        && std::fs::metadata(&records_path)
            .map(|m| m.len() > 0)
            .unwrap_or(false)
    {
        return Err(RunError::OutputExists(out_dir));
    }
    let (writer, done) = RecordWriter::open(&records_path)?;
    std::fs::write(
        out_dir.join("config.json"),
        serde_json::to_string_pretty(&cfg).expect("config serialises"),
    )
    .map_err(|e| RunError::Input {
        path: out_dir.clone(),
        message: e.to_string(),
    })?;
    let config_hash = cfg.hash();
    let factory = if cfg.uses_network() {
        let f = ModelFactory::new(cfg.llm.clone()).map_err(|e| RunError::Model {
            role: "llm".into(),
            message: e.to_string(),
        })?;
        Some(if opts.no_cache {
            f.with_cache_mode(CacheMode::Off)
        } else {
            f
        })
    } else {
        None
    };
    let build = |role: &str,
                 m: Option<&crate::config::ModelSection>|
     -> Result<Option<Arc<dyn ChatModel>>, RunError> {
        match (m, &factory) {
            (Some(m), Some(f)) if !m.is_sim() => {
                f.build(&m.spec()).map(Some).map_err(|e| RunError::Model {
                    role: role.into(),
                    message: e.to_string(),
                })
            }
            _ => Ok(None),
        }
    };
    let agent_llm = build("agent", Some(&cfg.models.agent))?;
    let user_llm = build("user", Some(&cfg.models.user))?;
    let judge_llm = build("judge", cfg.models.judge.as_ref())?;
    // Paired-verifier protocol: the verifier defaults to the agent's model.
    let verifier = match &cfg.guard.verifier {
        Some(v) => build("guard.verifier", Some(v))?,
        None => agent_llm.clone(),
    };
    let mut cells = Vec::new();
    for (i, name) in cfg.grid.guards.iter().enumerate() {
        let guard_name = GuardName::parse(name).map_err(|e| RunError::Input {
            path: PathBuf::from(format!("grid.guards[{i}]")),
            message: e.to_string(),
        })?;
        let inputs = GuardInputs {
            tasks_dir: project.join("tasks"),
            prompts_dir: prompts.clone(),
            data: &data,
            verifier: verifier.clone(),
        };
        let options = GuardOptions {
            strict: cfg.guard.strict,
            fail_mode: cfg.guard.fail_mode.unwrap_or_default(),
        };
        let guard = build_guard(guard_name, options, &inputs).map_err(|e| RunError::Input {
            path: PathBuf::from(format!("grid.guards[{i}]")),
            message: e.to_string(),
        })?;
        let cell = format!("{}|{}|{}", cfg.run.domain, cfg.models.agent.model, name);
        cells.push((name.clone(), cell, guard));
    }
    let shared = Arc::new(Shared {
        seeds: trial_seeds(cfg.run.seed, cfg.run.trials as usize),
        tempting: load_tempting(&project, &data)?,
        gold: GoldCache::default(),
        planned_reads: Default::default(),
        prereqs: {
            let path = project
                .join("tasks")
                .join(data.domain)
                .join("prerequisites.toml");
            if path.exists() {
                Some(Prerequisites::load(&path).map_err(|e| RunError::Input {
                    path,
                    message: e.to_string(),
                })?)
            } else {
                None
            }
        },
        identity: data
            .def
            .identity_reads()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        agent_llm,
        user_llm,
        judge_llm,
        agent_system_prompt: agent_system_prompt(
            &read_prompt(&prompts, "agent_instruction.md")?,
            &data.policy,
        )
        .into(),
        user_system_prompts: {
            let guidelines = read_prompt(&prompts, guidelines_file)?;
            tasks
                .iter()
                .map(|t| user_system_prompt(&guidelines, t).into())
                .collect()
        },
        run_id: cfg.run.name.clone(),
        cells,
        config_hash,
        mutating,
        tasks,
        data,
        cfg,
    });
    // Trial-major order within each cell, as upstream.
    let mut jobs = Vec::new();
    for (ci, (_, cell_id, _)) in shared.cells.iter().enumerate() {
        for trial in 0..shared.cfg.run.trials {
            for (ti, task) in shared.tasks.iter().enumerate() {
                if !done.contains(&(cell_id.clone(), task.id.clone(), trial)) {
                    jobs.push((ci, ti, trial));
                }
            }
        }
    }
    let planned = shared.cells.len() * shared.tasks.len() * shared.cfg.run.trials as usize;
    let mut summary = RunSummary {
        out_dir: out_dir.clone(),
        planned,
        skipped: planned - jobs.len(),
        ..Default::default()
    };
    if let Some(n) = opts.stop_after {
        jobs.truncate(n);
    }
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    let sem = Arc::new(tokio::sync::Semaphore::new(shared.cfg.run.concurrency));
    let mut set = tokio::task::JoinSet::new();
    for (ci, ti, trial) in jobs {
        let (shared, writer, sem) = (shared.clone(), writer.clone(), sem.clone());
        set.spawn(async move {
            let _permit = sem
                .acquire_owned()
                .await
                .expect("semaphore is never closed");
            let record = simulate(&shared, ci, ti, trial).await;
            writer.lock().await.append(&record)?;
            Ok::<SimulationRecord, RecordsError>(record)
        });
    }
    let total = set.len() as u64;
    // Drawn only on a terminal; hidden when stderr is redirected.
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} · eta {eta}")
            .expect("static template parses"),
    );
    while let Some(joined) = set.join_next().await {
        let record = joined.expect("simulation task panicked")?;
        summary.completed += 1;
        summary.infra_errors += usize::from(record.is_infra_error());
        summary.successes += usize::from(record.succeeded());
        summary.cost += record.usage.values().filter_map(|u| u.cost).sum::<f64>();
        let running = (total as usize - summary.completed).min(shared.cfg.run.concurrency);
        bar.set_message(format!(
            "done {} · running {running} · failed {} · cost ${:.4}",
            summary.completed, summary.infra_errors, summary.cost
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    summary.cache_stats = factory
        .as_ref()
        .and_then(|f| f.cache_stats())
        .map(|s| s.to_string());
    Ok(summary)
}

async fn simulate(shared: &Shared, ci: usize, ti: usize, trial: u32) -> SimulationRecord {
    let task = &shared.tasks[ti];
    let (guard_name, cell_id, guard) = &shared.cells[ci];
    let seed = shared.seeds[trial as usize];
    let cfg = &shared.cfg;
    let started_at = now_stamp();
    let t0 = Instant::now();
    let slice = task_slice(task, &shared.mutating);
    let agent = SimAgent::new(SimAgentSpec {
        task: task.clone(),
        mutating: shared.mutating.clone(),
        identity_reads: shared.identity.clone(),
        tempting: shared.tempting.get(&task.id).cloned(),
        prerequisite_reads: match (&shared.prereqs, &shared.agent_llm) {
            // The reads depend on the task alone: planned once per task, shared by its trials
            // and guard configurations.
            (Some(p), None) => shared
                .planned_reads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(task.id.clone())
                .or_insert_with(|| {
                    crate::prerequisites::plan_prerequisite_reads(
                        &shared.data,
                        task,
                        p,
                        &shared.mutating,
                    )
                })
                .clone(),
            _ => Vec::new(),
        },
        profile: cfg.models.agent.faults.unwrap_or_default(),
        trial,
        seed,
    });
    let device_tools = shared
        .data
        .tool_schemas
        .user
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let sim_agent = SimAgentModel(agent);
    let sim_user = SimUserModel(SimUser::new(task, device_tools));
    let agent_model: &dyn ChatModel = match &shared.agent_llm {
        Some(m) => m.as_ref(),
        None => &sim_agent,
    };
    let user_model: &dyn ChatModel = match &shared.user_llm {
        Some(m) => m.as_ref(),
        None => &sim_user,
    };
    let spec = SimulationSpec {
        data: &shared.data,
        task,
        trial,
        seed,
        agent: agent_model,
        user: user_model,
        agent_sampling: Sampling {
            temperature: cfg.models.agent.temperature,
            max_tokens: cfg.models.agent.max_tokens,
        },
        user_sampling: Sampling {
            temperature: cfg.models.user.temperature,
            max_tokens: cfg.models.user.max_tokens,
        },
        agent_system_prompt: shared.agent_system_prompt.clone(),
        user_system_prompt: shared.user_system_prompts[ti].clone(),
        max_steps: cfg.run.max_steps,
        max_errors: cfg.run.max_errors,
        guard: guard.as_deref(),
    };
    let mut last_error = String::new();
    let mut outcome = None;
    for _attempt in 0..=cfg.run.max_retries {
        match run_simulation(&spec).await {
            Ok(mut o) => {
                let nl = match (nl_assertions_to_judge(task), &shared.judge_llm) {
                    (None, _) => None,
                    (Some(assertions), Some(judge)) => {
                        match crate::judge::llm_judge(
                            judge.as_ref(),
                            &o.messages,
                            assertions,
                            seed,
                            trial,
                        )
                        .await
                        {
                            Ok((checks, usage)) => {
                                o.judge_usage = Some(usage);
                                Some(checks)
                            }
                            Err(e) => {
                                last_error = format!("NL judge: {e}");
                                continue;
                            }
                        }
                    }
                    (Some(assertions), None) => Some(
                        tauguard_sim::judge::sim_judge(&o.messages, assertions)
                            .into_iter()
                            .zip(assertions)
                            .map(|((met, justification), a)| NlCheck {
                                nl_assertion: a.clone(),
                                met,
                                justification,
                            })
                            .collect(),
                    ),
                };
                let final_env = o.final_env.take();
                match evaluate_final(
                    &shared.data,
                    task,
                    &o.messages,
                    &o.termination_reason,
                    nl,
                    &shared.gold,
                    final_env.as_ref().map(|e| e.0.as_ref()),
                ) {
                    Ok(reward) => {
                        outcome = Some((o, reward));
                        break;
                    }
                    Err(e) => last_error = format!("evaluation: {e}"),
                }
            }
            Err(e) => last_error = e.to_string(),
        }
    }
    let mut record = SimulationRecord {
        schema_version: tauguard_core::record::RECORD_SCHEMA_VERSION,
        run_id: shared.run_id.clone(),
        cell_id: cell_id.clone(),
        config_hash: shared.config_hash.clone(),
        domain: cfg.run.domain.clone(),
        agent_model: cfg.models.agent.model.clone(),
        user_model: cfg.models.user.model.clone(),
        guard: guard_name.clone(),
        task_id: task.id.clone(),
        slice,
        trial,
        seed,
        termination_reason: "infrastructure_error".into(),
        reward: None,
        error: None,
        messages: Vec::new(),
        guard_events: Vec::new(),
        injected_faults: Vec::new(),
        call_attempts: Vec::new(),
        attack_target: None,
        gold_trace: shared
            .data
            .def
            .ordered_gold_trace()
            .then(|| task.gold_actions().iter().map(|a| a.name.clone()).collect()),
        usage: BTreeMap::new(),
        agent_turns: 0,
        user_turns: 0,
        wall_seconds: 0.0,
        started_at,
    };
    match outcome {
        Some((o, reward)) => {
            let attempts: Vec<(String, String, Map<String, Value>)> = o
                .messages
                .iter()
                .flat_map(|m| m.tool_calls())
                .filter(|c| o.call_attempts.iter().any(|a| a.call_id == c.id))
                .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
                .collect();
            if shared.agent_llm.is_none() {
                record.injected_faults = sim_agent.0.label_faults(&attempts);
            }
            record.call_attempts = o.call_attempts;
            if let Some(p) = &shared.prereqs {
                crate::prerequisites::label_missing_prerequisites(
                    &mut record.call_attempts,
                    &o.messages,
                    p,
                    &shared.data,
                );
            }
            record.guard_events = o.guard_events;
            let mut guard_usage = RoleUsage {
                cost: Some(0.0),
                ..Default::default()
            };
            for e in &record.guard_events {
                let u = &e.usage;
                guard_usage.calls += u.calls;
                guard_usage.usage.prompt_tokens += u.usage.prompt_tokens;
                guard_usage.usage.completion_tokens += u.usage.completion_tokens;
                guard_usage.usage.cached_prompt_tokens += u.usage.cached_prompt_tokens;
                guard_usage.latency_seconds += u.latency_seconds;
                guard_usage.cache_hits += u.cache_hits;
                // An unpriced verifier call makes the total unknown, never silently zero.
                guard_usage.cost = match (guard_usage.cost, u.cost) {
                    (Some(a), Some(b)) => Some(a + b),
                    (Some(a), None) if u.calls == 0 => Some(a),
                    _ => None,
                };
            }
            if guard.is_some() {
                record.usage.insert("guard".into(), guard_usage);
            }
            for a in &mut record.call_attempts {
                a.faults = record
                    .injected_faults
                    .iter()
                    .filter(|f| f.call_id.as_deref() == Some(a.call_id.as_str()))
                    .map(|f| f.kind.clone())
                    .collect();
            }
            record.termination_reason = o.termination_reason;
            record.reward = Some(reward);
            record.messages = o.messages;
            record.agent_turns = o.agent_turns;
            record.user_turns = o.user_turns;
            record.usage.insert("agent".into(), o.agent_usage);
            record.usage.insert("user".into(), o.user_usage);
            if let Some(j) = o.judge_usage {
                record.usage.insert("judge".into(), j);
            }
        }
        None => {
            record.error = Some(last_error);
            record.usage.insert("agent".into(), RoleUsage::default());
        }
    }
    record.wall_seconds = t0.elapsed().as_secs_f64();
    record
}

fn now_stamp() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}", d.as_secs())
}
