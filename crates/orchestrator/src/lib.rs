//! The engine: one simulation is user simulator ↔ agent ↔ (guard) ↔ environment until a stop,
//! then a reward. This crate owns the loop, evaluation, the run (config → records) and the
//! record files.
//!
//! A run goes config ([`RunConfig`]) → [`RunPlan`] (everything validated and built) → per
//! simulation `attempt::run_attempts` (loop, judge, reward, retries) →
//! `assemble::assemble_record` → one line appended by `records::RecordWriter`; [`run`] is the
//! batch around them. [`check_models`] probes a config's models before a run. A run scales out
//! over processes as shards ([`Shard`]) whose directories [`merge()`] unions.
//!
//! The modules are private: what other crates use is the `pub use` list below, by stage.

mod assemble;
mod attacks;
mod attempt;
mod benchmark_texts;
mod catalog;
mod check;
mod comparability;
mod config;
mod config_models;
mod embeddings;
mod estimate;
mod evaluate;
mod export;
mod file_error;
mod floors;
mod grid;
mod grid_artifacts;
mod grid_checks;
mod grid_options;
mod group_sync;
mod interrupt;
mod judge;
mod merge;
mod model_section;
mod nmr_oracle;
mod offline;
mod party;
mod plan;
mod plan_domain;
mod plan_file;
mod prerequisites;
mod prompts;
mod provenance;
mod records;
mod rescore;
mod role_prompts;
mod run_dir;
mod run_error;
mod runner;
mod runtime;
mod seeds;
mod shard;
mod simulation;
mod views;

// The config and the models it names.
pub use catalog::ModelCatalog;
pub use config::{ConfigError, DataAtKey, RunConfig};
pub use grid::NameOr;
pub use offline::FaultProfile;

// The plan, its dry-run estimate and the `--check` probe.
pub use check::check_models;
pub use comparability::Stamp;
pub use estimate::{CHARS_PER_TOKEN, Estimate, Range, RoleCalls, estimate};
pub use plan::{RunPlan, SimIndex};

// One simulation: the loop, the judge, evaluation.
pub use attempt::AttemptError;
pub use evaluate::{EvalError, GoldCache, NlCheck, Replay, Trajectory, evaluate, evaluate_final};
pub use judge::{JudgeError, llm_judge};
pub use nmr_oracle::{NmrOracle, OracleError, OracleTool};
pub use prerequisites::label_missing_prerequisites;
pub use prompts::{agent_system_prompt, render_scenario, user_system_prompt};
pub use simulation::{Sampling, SimulationError, SimulationSpec, run_simulation};

// The run: its batch, directory, records, shards, interrupt and runtime.
pub use file_error::FileError;
pub use interrupt::Interrupt;
pub use plan_file::{PlanFileError, open_gaps, thousands};
pub use records::{RecordsError, SimKey, read_records};
pub use run_dir::RunDir;
pub use runner::{Progress, RunError, RunOptions, RunSummary, format_cost, run};
pub use runtime::{Workload, build as build_runtime};
pub use shard::{Shard, ShardRequest};

// After a run: merging shards, export, re-scoring, the floor agents.
pub use export::{ExportError, ExportOptions, civil_from_days, results_json};
pub use floors::{FLOOR_AGENTS, floor_records};
pub use merge::{MergeError, MergeOptions, merge};
pub use rescore::{EvaluationReport, Judge, rescore};
