//! Shared helpers of the env integration tests: locating the τ²-bench data directory and the
//! upstream parity fixtures.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use tauguard_env::{DataDir, DomainData};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The τ²-bench data directory: `TAUGUARD_DATA_DIR` (relative paths are taken from the
/// workspace root, as `.ci/run` sets them), else `../shared/tau2` beside the workspace.
/// `None` when neither exists; under CI that is a failure, not a skip.
pub fn data_dir() -> Option<DataDir> {
    let candidate = match std::env::var_os("TAUGUARD_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                workspace_root().join(p)
            }
        }
        None => workspace_root().join("../shared/tau2"),
    };
    match DataDir::resolve(Some(&candidate)) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have the τ²-bench data: {e}"
            );
            skipped(&candidate);
            None
        }
    }
}

/// The project's own fixture data directory (always present).
pub fn fixture_dir() -> DataDir {
    DataDir::resolve(Some(&workspace_root().join("tasks/fixtures"))).expect("tasks/fixtures exists")
}

pub fn load(domain: &str) -> Option<DomainData> {
    let dir = data_dir()?;
    Some(DomainData::load(&dir, domain).unwrap_or_else(|e| panic!("loading {domain}: {e}")))
}

/// Reference lines of `reference/<domain>_gold_train.jsonl`.
pub fn reference(domain: &str) -> Option<Vec<serde_json::Value>> {
    let dir = data_dir()?;
    let path = dir
        .path()
        .join(format!("reference/{domain}_gold_train.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(
        text.lines()
            .map(|l| serde_json::from_str(l).expect("reference line is JSON"))
            .collect(),
    )
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
