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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = match std::env::var_os("TAUGUARD_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() { p } else { root.join(p) }
        }
        None => root.join("../shared/tau2"),
    };
    if dir.join("airline/tasks.json").is_file() {
        Some(dir)
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have the τ²-bench data at {}",
            dir.display()
        );
        skipped(&dir);
        None
    }
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

/// Says that a test skips for want of τ²-bench data, where `cargo test` shows it: stderr of a
/// passing test is captured, so the line also goes to the terminal (`/dev/tty`) when there is
/// one (`--nocapture` shows the stderr copy too).
fn skipped(dir: &std::path::Path) {
    let line = format!(
        "SKIPPED: τ²-bench data not found at {} (set TAUGUARD_DATA_DIR; under CI this fails)",
        dir.display()
    );
    eprintln!("{line}");
    if let Ok(mut tty) = std::fs::OpenOptions::new().write(true).open("/dev/tty") {
        use std::io::Write;
        let _ = writeln!(tty, "{line}");
    }
}
