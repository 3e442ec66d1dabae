//! The project directory — the one holding `configs/prompts/` and `tasks/` — resolved once
//! per command, so `tauguard` finds its prompts and guard artifacts from any working
//! directory.
//!
//! Order: `--project-dir`, then `TAUGUARD_HOME`, then the nearest ancestor of the working
//! directory that holds both, then the nearest ancestor of the executable that does (a
//! `cargo build` binary lives under `target/` inside the project). An explicit directory
//! without them is an error naming it; finding none is an error naming every place searched.

use std::path::{Path, PathBuf};

/// Environment variable naming the project directory.
pub(crate) const HOME_ENV: &str = "TAUGUARD_HOME";

/// What marks a project directory.
const MARKERS: [&str; 2] = ["configs/prompts", "tasks"];

fn missing(dir: &Path) -> Vec<&'static str> {
    MARKERS
        .iter()
        .copied()
        .filter(|m| !dir.join(m).is_dir())
        .collect()
}

fn explicit(origin: &str, path: PathBuf) -> anyhow::Result<PathBuf> {
    let missing = missing(&path);
    if missing.is_empty() {
        Ok(std::path::absolute(&path).unwrap_or(path))
    } else {
        Err(anyhow::anyhow!(
            "{origin} `{}` is not a tauguard project: it lacks {}",
            path.display(),
            missing.join(" and ")
        ))
    }
}

/// Resolves the project directory (see the module docs).
pub(crate) fn resolve(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return explicit("--project-dir", p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
        return explicit(HOME_ENV, PathBuf::from(p));
    }
    let mut searched = Vec::new();
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf)),
    ];
    for start in starts.into_iter().flatten() {
        if let Some(found) = start.ancestors().find(|d| missing(d).is_empty()) {
            return Ok(found.to_path_buf());
        }
        searched.push(start);
    }
    Err(anyhow::anyhow!(
        "no tauguard project (a directory holding configs/prompts/ and tasks/) found among the ancestors of {}\n  hint: pass --project-dir DIR or set {HOME_ENV}",
        searched
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect::<Vec<_>>()
            .join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_directories_must_hold_both_markers() {
        let tmp = tempfile::tempdir().unwrap();
        let err = resolve(Some(tmp.path())).unwrap_err().to_string();
        assert!(
            err.contains("--project-dir") && err.contains("configs/prompts and tasks"),
            "{err}"
        );
        std::fs::create_dir_all(tmp.path().join("configs/prompts")).unwrap();
        std::fs::create_dir_all(tmp.path().join("tasks")).unwrap();
        assert_eq!(
            resolve(Some(tmp.path())).unwrap(),
            std::path::absolute(tmp.path()).unwrap()
        );
    }
}
