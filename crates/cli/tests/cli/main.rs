//! The `tauguard` binary's tests as one test binary: errors and exit codes, export and report,
//! the columnar sidecar (`export-table`),
//! gold, the guard seam, the toy domain, workflow validation and compilation, sharded runs
//! and their merge with the cluster launchers, and the workspace invariants (`tidy`).

mod attacks;
mod cluster_scripts;
mod compile_workflow;
mod errors;
mod export_report;
mod export_table;
mod floors;
mod gold_command;
mod guard_seam;
mod offline_variants;
mod shard_merge;
mod support;
mod tidy;
mod toy_domain;
mod validate_workflow;
