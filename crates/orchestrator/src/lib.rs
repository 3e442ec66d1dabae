//! The engine: one simulation is user simulator ↔ agent ↔ (guard) ↔ environment until a stop,
//! then a reward. This crate owns the loop, evaluation, the run (config → records) and the
//! record files.
//!
//! A run goes config → [`plan::RunPlan`] (everything validated and built) → per simulation
//! [`attempt::run_attempts`] (loop, judge, reward, retries) → [`assemble::assemble_record`]
//! → one line appended by [`records::RecordWriter`]; [`runner::run`] is the batch around them.
//! [`check::check_models`] probes a config's models before a run. A run scales out over
//! processes as shards ([`shard`]) whose directories [`merge::merge`] unions.

pub mod assemble;
pub mod attacks;
pub mod attempt;
pub mod benchmark_texts;
pub mod catalog;
pub mod check;
pub mod comparability;
pub mod config;
mod config_models;
pub mod embeddings;
pub mod estimate;
pub mod evaluate;
pub mod export;
pub mod floors;
pub mod grid;
pub mod grid_artifacts;
mod grid_checks;
pub mod grid_options;
pub mod group_sync;
pub mod interrupt;
pub mod judge;
pub mod merge;
pub mod model_section;
pub mod nmr_oracle;
pub mod offline;
pub mod party;
pub mod plan;
mod plan_domain;
pub mod plan_file;
pub mod prerequisites;
pub mod prompts;
pub mod provenance;
pub mod records;
pub mod rescore;
pub mod role_prompts;
pub mod run_dir;
pub mod run_error;
pub mod runner;
pub mod runtime;
pub mod seeds;
pub mod shard;
pub mod simulation;
pub mod views;
