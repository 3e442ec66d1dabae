//! The `tauguard` binary's tests as one test binary: errors and exit codes, export and report,
//! gold, grids from config files and their dry run, the guard seam, fail-mode verdicts against
//! loopback model servers, costs of an unpriced model and replies cut at the token limit, the
//! toy domain, the `sim` family as a provider, workflow validation and compilation, the PolicyGuide family offline, the
//! columnar sidecar (`export-table`), sharded runs and their merge with the cluster launchers
//! (merges checked against the plan, the Slurm scripts on a real one-node cluster, the
//! Kubernetes manifests validated), the data fetch script, the viewer (also in headless Chromium), and the workspace invariants
//! (`tidy`).

#![allow(
    clippy::too_many_lines,
    reason = "a test's steps read in order (clippy.toml: tests are exempt)"
)]

mod attacks;
mod banking_embeddings;
mod banking_knowledge;
mod cluster_scripts;
mod comparability_stamp;
mod compile_workflow;
mod compiled_artifacts;
mod compiled_artifacts_edits;
mod errors;
mod evaluate_drift;
mod export_report;
mod export_table;
mod external_guard;
mod external_http;
mod fail_mode;
mod fetch_data_script;
mod floors;
mod gold_command;
mod grid;
mod grid_domain_options;
mod guard_check;
mod guard_seam;
mod honest_costs;
mod interrupt;
mod k8s_manifests;
mod merge_plan;
mod merge_spend_logs;
mod model_fit;
mod offline_variants;
mod policyguide_offline;
mod process_judge;
mod process_report;
mod process_validation;
mod remote_agent;
mod report_files;
mod reproduce;
mod reproduce_tables;
mod resume_inputs;
mod shard_merge;
mod silent_noops;
mod sim_provider;
mod slurm_cluster;
mod support;
mod tidy;
mod toy_domain;
mod validate_workflow;
mod view;
mod view_browser;
mod view_process;
