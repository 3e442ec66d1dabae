//! The `tauguard` binary's tests as one test binary: errors and exit codes, export and report,
//! gold, the guard seam, the toy domain, workflow validation and compilation, and the
//! workspace invariants (`tidy`).

mod attacks;
mod compile_workflow;
mod errors;
mod export_report;
mod floors;
mod gold_command;
mod guard_seam;
mod offline_variants;
mod support;
mod tidy;
mod toy_domain;
mod validate_workflow;
