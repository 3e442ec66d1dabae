//! Slices from τ²-bench's own task files with the built-in mutating-tool lists: airline base
//! 24 PV / 26 Mut (PolicyGuard Table 2), retail 10 PV of 114 (PolicyGuard §4).
//!
//! The data directory is `TAUGUARD_DATA_DIR` (relative to the workspace root) or
//! `../shared/tau2` beside the workspace; without it the test is skipped, except under CI.

use std::path::{Path, PathBuf};
use tauguard_core::Task;
use tauguard_core::record::Slice;
use tauguard_metrics::DomainTable;

fn data_dir() -> Option<PathBuf> {
    tauguard_testkit::tau2_dir()
}

fn counts(dir: &Path, domain: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(dir.join(domain).join("tasks.json")).unwrap();
    let tasks: Vec<Task> = serde_json::from_str(&text).unwrap();
    let table = DomainTable::builtin();
    let info = table.get(domain).unwrap();
    let pv = tasks
        .iter()
        .filter(|t| {
            info.slice_of(
                t.gold_actions()
                    .iter()
                    .map(|a| (a.name.as_str(), a.requestor)),
            ) == Slice::Pv
        })
        .count();
    (pv, tasks.len() - pv)
}

#[test]
fn airline_base_is_24_pv_26_mut() {
    let Some(dir) = data_dir() else { return };
    assert_eq!(counts(&dir, "airline"), (24, 26));
}

#[test]
fn retail_has_10_pv_tasks() {
    let Some(dir) = data_dir() else { return };
    assert_eq!(counts(&dir, "retail"), (10, 104));
}

#[test]
fn telecom_counts_only_agent_side_mutations() {
    let Some(dir) = data_dir() else { return };
    let (pv, m) = counts(&dir, "telecom");
    assert_eq!(pv + m, 114);
    assert_eq!((pv, m), (43, 71));
}
