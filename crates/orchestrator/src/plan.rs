//! The run plan: a config turned into typed, validated, fully built parts before any
//! simulation starts — the domain's data and tasks, the models of every role, the guard of
//! every cell, the prompts and the guard artifacts. Everything that can be wrong with the
//! input fails here, with the file and key, not halfway through a run.
//!
//! A cell is one column of a results table: a domain, an agent and a guard configuration.
//! The run's grid is the list of cells; new grid axes add cells, not code paths.

use crate::config::{ModelSection, RunConfig};
use crate::evaluate::GoldCache;
use crate::prompts::{agent_system_prompt, user_system_prompt};
use crate::provenance::{CellSpec, InputHashes, cell_hash, cell_spec, tree_hash};
use crate::records::SimKey;
use crate::runner::{RunError, RunOptions};
use crate::seeds::trial_seeds;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_core::record::Slice;
use tauguard_core::{Requestor, Task};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::factory::GuardInputs;
use tauguard_guards::policyguard::prerequisites::Prerequisites;
use tauguard_guards::{Guard, GuardName, GuardOptions, build_guard};
use tauguard_llm::model::ChatModel;
use tauguard_llm::{CacheMode, ModelFactory};
use tauguard_sim::agent::{PlannedRead, TemptingCall};

/// The `run.split` value that selects every task of the domain, whatever its splits.
pub const ALL_TASKS: &str = "*";

/// One domain of the run, loaded once and shared by every cell on it.
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
}

/// The models of every role. `None` = the offline `sim` model of that role.
pub struct Models {
    pub agent: Option<Arc<dyn ChatModel>>,
    pub user: Option<Arc<dyn ChatModel>>,
    pub judge: Option<Arc<dyn ChatModel>>,
    /// The guard's verifier (paired with the agent unless configured).
    pub verifier: Option<Arc<dyn ChatModel>>,
    /// The factory HTTP models came from (its cache statistics close the run).
    pub factory: Option<ModelFactory>,
}

/// One cell of the grid.
pub struct Cell {
    /// The cell id records carry: `domain|agent model|guard`.
    pub id: String,
    /// Index into [`RunPlan::domains`].
    pub domain: usize,
    pub guard_name: GuardName,
    /// `None` = baseline.
    pub guard: Option<Arc<dyn Guard>>,
    /// Every setting that can change the cell's results, and its hash (see
    /// [`crate::provenance`]).
    pub spec: CellSpec,
    pub hash: String,
    /// The agent's system prompt in this cell: the domain's, plus what the guard hands the
    /// agent (a guard that gives the agent the workflow itself).
    pub agent_system_prompt: Arc<str>,
}

/// One planned simulation, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimIndex {
    pub cell: usize,
    pub task: usize,
    pub trial: u32,
}

/// A config resolved into everything its simulations need.
pub struct RunPlan {
    pub cfg: RunConfig,
    pub run_id: String,
    pub config_hash: String,
    /// Trial seeds, derived from the run seed as upstream derives them.
    pub seeds: Vec<u64>,
    pub domains: Vec<DomainPlan>,
    pub models: Models,
    pub cells: Vec<Cell>,
}

impl RunPlan {
    /// Validates and builds every part of the run named by `cfg`.
    pub fn build(cfg: RunConfig, opts: &RunOptions) -> Result<RunPlan, RunError> {
        let project = opts
            .project_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let prompts = cfg
            .run
            .prompts_dir
            .clone()
            .unwrap_or_else(|| project.join("configs/prompts"));
        let models = build_models(&cfg, opts)?;
        let data_dir = DataDir::resolve(opts.data_dir.as_deref().or(cfg.run.data_dir.as_deref()))?;
        let domain = plan_domain(&cfg, &data_dir, &project, &prompts, models.agent.is_none())?;
        let options = GuardOptions {
            strict: cfg.guard.strict,
            fail_mode: cfg.guard.fail_mode.unwrap_or_default(),
        };
        let hashes = InputHashes {
            prompts: tree_hash(&prompts).map_err(|e| RunError::Input {
                path: prompts.clone(),
                message: e.to_string(),
            })?,
            artifacts: {
                let dir = project.join("tasks").join(domain.data.domain);
                tree_hash(&dir).map_err(|e| RunError::Input {
                    path: dir.clone(),
                    message: e.to_string(),
                })?
            },
        };
        let mut cells = Vec::new();
        for (i, name) in cfg.grid.guards.iter().enumerate() {
            let at = |message: String| RunError::Input {
                path: PathBuf::from(format!("grid.guards[{i}]")),
                message,
            };
            let guard_name = GuardName::parse(name).map_err(|e| at(e.to_string()))?;
            let inputs = GuardInputs {
                tasks_dir: project.join("tasks"),
                prompts_dir: prompts.clone(),
                data: &domain.data,
                verifier: models.verifier.clone(),
            };
            let guard = build_guard(guard_name, options, &inputs).map_err(|e| at(e.to_string()))?;
            let spec = cell_spec(&cfg, domain.data.domain, guard_name, &hashes);
            let agent_system_prompt = match guard.as_ref().and_then(|g| g.agent_instructions()) {
                Some(extra) => format!("{}\n\n{extra}", domain.agent_system_prompt).into(),
                None => domain.agent_system_prompt.clone(),
            };
            cells.push(Cell {
                agent_system_prompt,
                hash: cell_hash(&spec),
                spec,
                id: format!("{}|{}|{}", domain.data.domain, cfg.models.agent.model, name),
                domain: 0,
                guard_name,
                guard,
            });
        }
        Ok(RunPlan {
            run_id: cfg.run.name.clone(),
            config_hash: cfg.hash(),
            seeds: trial_seeds(cfg.run.seed, cfg.run.trials as usize),
            domains: vec![domain],
            models,
            cells,
            cfg,
        })
    }

    /// Every simulation of the plan: cell by cell, trial-major within a cell, as upstream
    /// orders them.
    pub fn simulations(&self) -> impl Iterator<Item = SimIndex> + '_ {
        self.cells.iter().enumerate().flat_map(move |(cell, c)| {
            let tasks = self.domains[c.domain].tasks.len();
            (0..self.cfg.run.trials)
                .flat_map(move |trial| (0..tasks).map(move |task| SimIndex { cell, task, trial }))
        })
    }

    /// The key of simulation `at`, as records carry it: what `--resume` de-duplicates by and
    /// `--shard` hashes.
    pub fn key(&self, at: SimIndex) -> SimKey {
        let cell = &self.cells[at.cell];
        let task = &self.domains[cell.domain].tasks[at.task];
        (cell.id.clone(), task.id.clone(), at.trial)
    }

    /// How many simulations the plan holds.
    pub fn planned(&self) -> usize {
        self.cells
            .iter()
            .map(|c| self.domains[c.domain].tasks.len() * self.cfg.run.trials as usize)
            .sum()
    }
}

fn build_models(cfg: &RunConfig, opts: &RunOptions) -> Result<Models, RunError> {
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
    let build =
        |role: &str, m: Option<&ModelSection>| -> Result<Option<Arc<dyn ChatModel>>, RunError> {
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
    let agent = build("agent", Some(&cfg.models.agent))?;
    let user = build("user", Some(&cfg.models.user))?;
    let judge = build("judge", cfg.models.judge.as_ref())?;
    // Paired-verifier protocol: the verifier defaults to the agent's model.
    let verifier = match &cfg.guard.verifier {
        Some(v) => build("guard.verifier", Some(v))?,
        None => agent.clone(),
    };
    Ok(Models {
        agent,
        user,
        judge,
        verifier,
        factory,
    })
}

fn plan_domain(
    cfg: &RunConfig,
    data_dir: &DataDir,
    project: &Path,
    prompts: &Path,
    sim_agent: bool,
) -> Result<DomainPlan, RunError> {
    let mut data = DomainData::load(data_dir, &cfg.run.domain)?;
    let attacks = match &cfg.run.task_set {
        Some(set) => crate::attacks::adopt_task_set(&mut data, &project.join(set))?,
        None => HashMap::new(),
    };
    let tasks: Vec<Task> = data
        .select_tasks(
            (cfg.run.split != ALL_TASKS).then_some(cfg.run.split.as_str()),
            cfg.run.task_ids.as_deref(),
            cfg.run.num_tasks,
        )?
        .into_iter()
        .cloned()
        .collect();
    let mutating: HashSet<String> = tauguard_env::registry::mutating_tools(data.def)
        .map(str::to_string)
        .collect();
    let prereqs = {
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
    };
    let oracle = crate::nmr_oracle::NmrOracle::load_domain(&project.join("tasks"), data.domain)
        .map_err(|e| {
            let (path, message) = e.into_parts();
            RunError::Input { path, message }
        })?;
    let planned_reads = match (&prereqs, sim_agent) {
        (Some(p), true) => tasks
            .iter()
            .map(|t| crate::prerequisites::plan_prerequisite_reads(&data, t, p, &mutating))
            .collect(),
        _ => vec![Vec::new(); tasks.len()],
    };
    let guidelines_file = if data.tool_schemas.user.is_empty() {
        "user_guidelines.md"
    } else {
        "user_guidelines_tools.md"
    };
    let guidelines = read_prompt(prompts, guidelines_file)?;
    let attacker = if attacks.is_empty() {
        String::new()
    } else {
        read_prompt(prompts, "user_attacker.md")?
    };
    Ok(DomainPlan {
        lookups: Arc::new(lookups(&data)),
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
        agent_system_prompt: agent_system_prompt(
            &read_prompt(prompts, "agent_instruction.md")?,
            &data.policy,
        )
        .into(),
        user_system_prompts: tasks
            .iter()
            .map(|t| {
                let g = if attacks.contains_key(&t.id) {
                    &attacker
                } else {
                    &guidelines
                };
                user_system_prompt(g, t).into()
            })
            .collect(),
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

/// PV when no agent-side gold action is a mutating tool.
pub fn task_slice(task: &Task, mutating: &HashSet<String>) -> Slice {
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

/// The domain's read-only agent tools with the parameters their schemas require.
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
