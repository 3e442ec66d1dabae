//! What the run tests share: a run config parsed from a testkit builder, a run on the
//! runtime the binary would choose for it, and its records, so every test drives the
//! production path the same way.

use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::read_records;
use tauguard_orchestrator::{RunError, RunOptions, RunSummary, run};
use tauguard_orchestrator::{Workload, build_runtime};
use tauguard_testkit::SimConfig;

pub(crate) fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

/// `tasks/fixtures`, the project's airline-shaped domain.
pub(crate) fn fixture_dir() -> PathBuf {
    tauguard_testkit::fixtures_dir()
}

/// The config `builder` writes, parsed as `file` would be.
pub(crate) fn parse(file: &str, builder: &SimConfig) -> RunConfig {
    RunConfig::parse(Path::new(file), &builder.toml())
        .unwrap_or_else(|e| panic!("{file}: {e}\n{}", builder.toml()))
}

/// Options of a run into `out` with the workspace as its project.
pub(crate) fn opts(out: &Path) -> RunOptions {
    RunOptions {
        out_dir: Some(out.to_path_buf()),
        project_dir: Some(root()),
        ..Default::default()
    }
}

/// Runs `cfg` with `opts` on the runtime its workload asks for, as the binary does.
pub(crate) fn run_with(cfg: RunConfig, opts: RunOptions) -> Result<RunSummary, RunError> {
    let rt = build_runtime(Workload::of(&cfg)).unwrap();
    rt.block_on(run(cfg, opts))
}

/// Runs `cfg` into `out` ([`opts`]).
pub(crate) fn run_to(cfg: RunConfig, out: &Path) -> Result<RunSummary, RunError> {
    run_with(cfg, opts(out))
}

/// The records of the run in `out`.
pub(crate) fn run_records(out: &Path) -> Vec<SimulationRecord> {
    read_records(&out.join("records.jsonl")).unwrap()
}

/// Runs `cfg` into a directory of its own, dropped afterwards; returns the summary and the
/// records written.
pub(crate) fn run_fresh(cfg: RunConfig) -> (RunSummary, Vec<SimulationRecord>) {
    let out = tempfile::tempdir().unwrap();
    let summary = run_to(cfg, out.path()).unwrap();
    (summary, run_records(out.path()))
}

/// The failed HTTP exchanges of `cause` over `records`.
pub(crate) fn http_failures(records: &[SimulationRecord], cause: &str) -> u64 {
    records
        .iter()
        .map(|r| r.attempts.http_failures.get(cause).copied().unwrap_or(0))
        .sum()
}
