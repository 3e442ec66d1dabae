//! The run plan: a config turned into typed, validated, fully built parts before any
//! simulation starts — each domain's data and tasks, the models of every role, the guard of
//! every cell, the prompts and the guard artifacts. Everything that can be wrong with the
//! input fails here, with the file and key, not halfway through a run.
//!
//! A cell is one column of a results table: one value of every grid axis (domain with its
//! option values, agent, guard configuration, verifier, artifact set, seed; see
//! [`crate::grid`] and [`crate::grid_options`]). Cells are crossed in that order, domain
//! outermost; a guard without a verifier gets one cell whatever the
//! verifiers, and a guard that reads nothing a compiled set replaces one cell on the frozen
//! set whatever the sets.
//! New grid axes add cells, not code paths. Each distinct model spec is built once and shared.

use crate::benchmark_texts::BenchmarkTexts;
use crate::comparability::Stamp;
use crate::config::{ModelSection, RunConfig};
use crate::grid::{AgentAxis, Axes};
mod cell;

pub(crate) use crate::plan_domain::{DomainPlan, Selection, task_slice};
use crate::plan_domain::{Sources, plan_domain};
use crate::provenance::{CellSpec, InputHashes, tree_hash};
use crate::records::SimKey;
use crate::runner::{RunError, RunOptions};
use cell::CellAt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_env::DataDir;
use tauguard_guards::{ArtifactSet, Guard, GuardName};
use tauguard_llm::ChatModel;
use tauguard_llm::{CacheMode, ModelFactory, RoleModel};

/// The models shared by every cell (a `sim` role's model is built per simulation).
pub struct Models {
    pub user: RoleModel,
    pub judge: RoleModel,
    /// The factory HTTP models came from (its cache statistics close the run); `None` when
    /// every role is a `sim` model.
    pub factory: Option<ModelFactory>,
    /// The embedding model of the domains that embed (see [`crate::embeddings`]).
    pub embeddings: Option<Arc<dyn tauguard_llm::EmbeddingModel>>,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Models")
            .field("user", &self.user)
            .field("judge", &self.judge)
            .field("factory", &self.factory)
            .field("embeddings", &self.embeddings.as_ref().map(|m| m.id()))
            .finish()
    }
}

/// One agent of the grid with its built model.
#[derive(Debug)]
pub struct AgentPlan {
    pub label: String,
    pub section: ModelSection,
    pub model: RoleModel,
    /// What the agent's server says it is, when its provider sets `identify = true` (a remote
    /// agent); part of every cell of this agent. Not asked in a dry run.
    pub identity: Option<serde_json::Value>,
}

/// One cell of the grid.
pub struct Cell {
    /// The cell id records carry: `domain|agent|guard`, then `|option=…` per domain-option
    /// axis, `|verifier=…` and `|seed=…` when those axes hold several values, and
    /// `|artifacts=…` on a compiled set.
    pub id: String,
    /// Index into [`RunPlan::domains`]: a domain under one combination of its option values.
    pub domain: usize,
    /// Index into [`RunPlan::agents`].
    pub agent: usize,
    /// The guard entry's name.
    pub guard_label: String,
    pub guard_name: GuardName,
    /// `None` = baseline.
    pub guard: Option<Arc<dyn Guard>>,
    /// The verifier's label, for guards that use one.
    pub verifier: Option<String>,
    /// The run seed of the cell and its trial seeds, derived as upstream derives them.
    pub seed: u64,
    pub seeds: Vec<u64>,
    pub trials: u32,
    pub max_steps: u32,
    /// Every setting that can change the cell's results, and its hash (see
    /// [`crate::provenance`]).
    pub spec: CellSpec,
    pub hash: String,
    /// The agent's system prompt in this cell: the domain's, plus what the guard hands the
    /// agent (a guard that gives the agent the workflow itself).
    pub agent_system_prompt: Arc<str>,
    /// Whether the cell runs τ²-bench's benchmark definition, item by item (also in `spec`).
    pub stamp: Stamp,
}

impl std::fmt::Debug for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cell")
            .field("id", &self.id)
            .field("guard", &self.guard.as_ref().map(|g| g.name().to_string()))
            .field("trials", &self.trials)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

/// One planned simulation, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimIndex {
    pub cell: usize,
    pub task: usize,
    pub trial: u32,
}

/// A config resolved into everything its simulations need.
#[derive(Debug)]
pub struct RunPlan {
    pub cfg: RunConfig,
    pub run_id: String,
    pub config_hash: String,
    pub axes: Axes,
    pub domains: Vec<DomainPlan>,
    pub agents: Vec<AgentPlan>,
    pub models: Models,
    pub cells: Vec<Cell>,
}

impl RunPlan {
    /// Validates and builds every part of the run named by `cfg`.
    pub fn build(cfg: RunConfig, opts: &RunOptions) -> Result<RunPlan, RunError> {
        let axes = Axes::of(&cfg).map_err(|message| RunError::Input {
            path: PathBuf::from("config"),
            message,
        })?;
        let project = opts
            .project_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let prompts = cfg
            .run
            .prompts_dir
            .clone()
            .unwrap_or_else(|| project.join("configs/prompts"));
        let mut models = ModelBuilder::new(&cfg, opts)?;
        let agents: Vec<AgentPlan> = axes
            .agents
            .iter()
            .map(
                |AgentAxis {
                     label,
                     model: section,
                 }| {
                    let model = models.build("agent", section)?;
                    Ok(AgentPlan {
                        label: label.clone(),
                        identity: models.identify("agent", section, &model)?,
                        model,
                        section: section.clone(),
                    })
                },
            )
            .collect::<Result<_, RunError>>()?;
        // `None` = paired with the cell's agent.
        let verifiers: Vec<Option<RoleModel>> = axes
            .verifiers
            .iter()
            .map(|v| {
                v.model
                    .as_ref()
                    .map(|m| models.build("verifier", m))
                    .transpose()
            })
            .collect::<Result<_, RunError>>()?;
        let mut shared = Models {
            user: models.build("user", &cfg.models.user)?,
            judge: match &cfg.models.judge {
                Some(j) => models.build("judge", j)?,
                None => RoleModel::Sim,
            },
            factory: models.into_factory(cfg.models.embeddings.is_some()),
            embeddings: None,
        };
        let data_dir = DataDir::resolve(opts.data_dir.as_deref().or(cfg.run.data_dir.as_deref()))?;
        let any_sim_agent = agents.iter().any(|a| a.model.is_sim());
        let prompts_hash = tree_hash(&prompts).map_err(|e| RunError::file(&prompts, e))?;
        let texts = BenchmarkTexts::load(&data_dir, &cfg.prompts)?;
        let sources = Sources {
            data_dir: &data_dir,
            project: &project,
            prompts: &prompts,
            texts: &texts,
        };
        let mut domains = Vec::new();
        let mut hashes = Vec::new();
        let mut frozen_hashes = Vec::new();
        // One domain plan per combination of the domain's option values (one without an axis).
        for name in &axes.domains {
            let selection = selection(&cfg, name);
            let task_set = cfg.run.task_set.as_ref().map(|s| project.join(s));
            for point in crate::grid_options::points(&cfg, name) {
                let mut d = plan_domain(
                    name,
                    &point.options,
                    &selection,
                    task_set.as_deref(),
                    &sources,
                    any_sim_agent,
                )
                .map_err(|e| at_config_key(&cfg, name, e))?;
                d.id_suffix = point.id_suffix();
                let (per_set, frozen) = artifact_hashes(&cfg, &axes, &project, &d, &prompts_hash)?;
                hashes.push(per_set);
                frozen_hashes.push(frozen);
                domains.push(d);
            }
        }
        shared.embeddings = crate::embeddings::build(&cfg, &domains, shared.factory.as_ref())?;
        crate::embeddings::stamp(&cfg, &mut domains);
        let grid = Grid {
            cfg: &cfg,
            axes: &axes,
            domains: &domains,
            agents: &agents,
            verifiers: &verifiers,
            hashes: &hashes,
            frozen_hashes: &frozen_hashes,
        };
        let cells = grid.cells(&project, &prompts)?;
        Ok(RunPlan {
            run_id: cfg.run.name.clone(),
            config_hash: cfg.hash(),
            axes,
            domains,
            agents,
            models: shared,
            cells,
            cfg,
        })
    }

    /// Every simulation of the plan: cell by cell, trial-major within a cell, as upstream
    /// orders them.
    pub fn simulations(&self) -> impl Iterator<Item = SimIndex> + '_ {
        self.cells.iter().enumerate().flat_map(move |(cell, c)| {
            let tasks = self.domains[c.domain].tasks.len();
            (0..c.trials)
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
        self.cells.iter().map(|c| self.cell_simulations(c)).sum()
    }

    /// How many simulations one cell holds.
    pub fn cell_simulations(&self, c: &Cell) -> usize {
        self.domains[c.domain].tasks.len() * c.trials as usize
    }
}

/// Per artifact set of the grid, the set (`None` = frozen) and the input hashes of its cells.
type SetHashes = Vec<(Option<ArtifactSet>, InputHashes)>;

/// The tasks asked of domain `name`: its `grid.tasks` entry, else the run's.
fn selection(cfg: &RunConfig, name: &str) -> Selection {
    let sel = cfg.grid.tasks.get(name);
    Selection {
        split: sel
            .and_then(|s| s.split.clone())
            .unwrap_or_else(|| cfg.run.split.clone()),
        task_ids: sel
            .and_then(|s| s.task_ids.clone())
            .or_else(|| cfg.run.task_ids.clone()),
        num_tasks: sel.and_then(|s| s.num_tasks).or(cfg.run.num_tasks),
    }
}

/// Input hashes of a domain's frozen artifacts, and per artifact set of the grid the set
/// (`None` = frozen) with its hashes.
fn artifact_hashes(
    cfg: &RunConfig,
    axes: &Axes,
    project: &Path,
    d: &DomainPlan,
    prompts_hash: &Option<String>,
) -> Result<(SetHashes, InputHashes), RunError> {
    let dir = project.join("tasks").join(d.data.domain);
    let origin = tauguard_guards::Provenance::load_domain(&project.join("tasks"), d.data.domain)
        .map_err(|e| RunError::file(&dir, e))?;
    let frozen = InputHashes {
        prompts: prompts_hash.clone(),
        artifacts: tree_hash(&dir).map_err(|e| RunError::file(&dir, e))?,
        origin: origin.as_ref().map(|p| p.summary()),
        ..InputHashes::default()
    };
    // One entry per artifact set of the grid; a compiled set is checked here, before
    // anything runs, and its origin replaces the frozen one of the kinds it holds.
    let mut per_set = Vec::new();
    for a in &axes.artifacts {
        if a.is_frozen() {
            per_set.push((None, frozen.clone()));
            continue;
        }
        let set = ArtifactSet::open(&a.label, &project.join(&a.label), d.data.domain)
            .map_err(|e| at_key(cfg, &a.key, e.to_string()))?;
        let set_hash = tree_hash(&set.root).map_err(|e| RunError::file(&set.root, e))?;
        let hashes = InputHashes {
            origin: Some(set.summary(origin.as_ref())),
            set: Some(a.label.clone()),
            set_hash,
            compiled: Some(set.origins()),
            ..frozen.clone()
        };
        per_set.push((Some(set), hashes));
    }
    Ok((per_set, frozen))
}

/// The grid's axes with what each domain and agent was built into: the cells are crossed
/// from it.
struct Grid<'a> {
    cfg: &'a RunConfig,
    axes: &'a Axes,
    domains: &'a [DomainPlan],
    agents: &'a [AgentPlan],
    verifiers: &'a [Option<RoleModel>],
    hashes: &'a [SetHashes],
    frozen_hashes: &'a [InputHashes],
}

impl Grid<'_> {
    /// Every cell, domain outermost, then agent, guard, verifier, artifact set and seed.
    fn cells(&self, project: &Path, prompts: &Path) -> Result<Vec<Cell>, RunError> {
        let mut cells = Vec::new();
        for (di, domain) in self.domains.iter().enumerate() {
            for (ai, agent) in self.agents.iter().enumerate() {
                for guard in &self.axes.guards {
                    // A guard without a verifier is one cell, whatever the verifiers.
                    let vs: Vec<usize> = if guard.name.uses_verifier() {
                        (0..self.axes.verifiers.len()).collect()
                    } else {
                        vec![0]
                    };
                    // A set that replaces nothing the guard reads leaves it on the frozen
                    // one: one cell for all such sets.
                    let mut sets: Vec<Option<usize>> = Vec::new();
                    for (si, (set, _)) in self.hashes[di].iter().enumerate() {
                        let s = set.as_ref().filter(|s| guard.name.reads(s)).map(|_| si);
                        if !sets.contains(&s) {
                            sets.push(s);
                        }
                    }
                    for (vi, set) in vs.iter().flat_map(|&v| sets.iter().map(move |&s| (v, s))) {
                        let (set, cell_hashes) = match set {
                            Some(si) => (self.hashes[di][si].0.as_ref(), &self.hashes[di][si].1),
                            None => (None, &self.frozen_hashes[di]),
                        };
                        for &seed in &self.axes.seeds {
                            let at = CellAt {
                                cfg: self.cfg,
                                axes: self.axes,
                                domain,
                                di,
                                agent,
                                ai,
                                guard,
                                verifier: &self.axes.verifiers[vi],
                                verifier_model: self.verifiers[vi].clone(),
                                seed,
                                hashes: cell_hashes,
                                set,
                            };
                            cells.push(at.cell(project, prompts)?);
                        }
                    }
                }
            }
        }
        Ok(cells)
    }
}

/// An error at `key` of the config file.
pub(crate) fn at_key(cfg: &RunConfig, key: &str, message: String) -> RunError {
    RunError::Config(crate::config::ConfigError::Invalid {
        path: config_path(cfg),
        message: format!("at `{key}`: {message}"),
    })
}

/// The config file errors name: its path, or `config` for one built in memory.
fn config_path(cfg: &RunConfig) -> PathBuf {
    cfg.source
        .clone()
        .unwrap_or_else(|| PathBuf::from("config"))
}

/// A domain, split or task id the data directory does not have is a config error: it names
/// the config file and the key that asked for it, and keeps the data directory's error.
fn at_config_key(cfg: &RunConfig, domain: &str, e: RunError) -> RunError {
    use tauguard_env::LoadError;
    let per_domain = cfg.grid.tasks.get(domain);
    let RunError::Load(cause) = e else {
        return e;
    };
    let key = match &cause {
        LoadError::UnknownDomain { .. } if cfg.run.domain.is_empty() => "grid.domains".to_string(),
        LoadError::UnknownDomain { .. } => "run.domain".to_string(),
        LoadError::UnknownSplit { .. } => match per_domain.and_then(|s| s.split.as_ref()) {
            Some(_) => format!("grid.tasks.{domain}.split"),
            None => "run.split".to_string(),
        },
        LoadError::UnknownTasks { .. } => match per_domain.and_then(|s| s.task_ids.as_ref()) {
            Some(_) => format!("grid.tasks.{domain}.task_ids"),
            None => "run.task_ids".to_string(),
        },
        _ => return RunError::Load(cause),
    };
    RunError::Config(crate::config::ConfigError::Data(Box::new(
        crate::config::DataAtKey {
            path: config_path(cfg),
            key,
            cause,
        },
    )))
}

/// Builds each distinct model spec once, resolving every provider through the factory.
struct ModelBuilder {
    factory: ModelFactory,
    built: HashMap<String, Arc<dyn ChatModel>>,
    dry_run: bool,
}

impl ModelBuilder {
    fn new(cfg: &RunConfig, opts: &RunOptions) -> Result<ModelBuilder, RunError> {
        let f = ModelFactory::new(cfg.llm.clone()).map_err(|e| RunError::Model {
            role: "llm".into(),
            cause: e,
        })?;
        let factory = if opts.dry_run {
            // Nothing is called: no cache directory, and a key that is not set yet does
            // not stop the plan (the dry run names it).
            f.with_cache_mode(CacheMode::Off)
                .with_env(|name| Some(std::env::var(name).unwrap_or_else(|_| "unset".into())))
        } else if opts.no_cache {
            f.with_cache_mode(CacheMode::Off)
        } else {
            f
        };
        Ok(ModelBuilder {
            factory,
            built: HashMap::new(),
            dry_run: opts.dry_run,
        })
    }

    /// The factory, when it built a model or an embedding model will be built from it (a run
    /// of `sim` models only, embedding nothing, has none).
    fn into_factory(self, embeds: bool) -> Option<ModelFactory> {
        (embeds || !self.built.is_empty()).then_some(self.factory)
    }

    /// The server's own account of a built model, for providers with `identify = true`.
    fn identify(
        &self,
        role: &str,
        m: &ModelSection,
        model: &RoleModel,
    ) -> Result<Option<serde_json::Value>, RunError> {
        match model {
            RoleModel::Built(_) if !self.dry_run => {
                self.factory
                    .identify(&m.spec())
                    .map_err(|e| RunError::Model {
                        role: role.into(),
                        cause: e,
                    })
            }
            _ => Ok(None),
        }
    }

    fn build(&mut self, role: &str, m: &ModelSection) -> Result<RoleModel, RunError> {
        let spec = m.spec();
        let key = serde_json::to_string(&spec).expect("model specs serialise");
        if let Some(model) = self.built.get(&key) {
            return Ok(RoleModel::Built(model.clone()));
        }
        let model = self
            .factory
            .role_model(&spec)
            .map_err(|e| RunError::Model {
                role: role.into(),
                cause: e,
            })?;
        if let RoleModel::Built(built) = &model {
            self.built.insert(key, built.clone());
        }
        Ok(model)
    }
}
