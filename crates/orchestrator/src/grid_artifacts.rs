//! The artifact-set axis of a grid (`[grid] artifacts`, or its one-value shorthand `[guard]
//! artifacts`): which guard artifacts the guards that read checklists or a workflow run on —
//! the frozen `tasks/<domain>/` set or a compiled set's directory
//! (`tauguard_guards::ArtifactSet`). Only the keys are checked here; the plan opens each set
//! for each domain before anything runs.

use crate::config::RunConfig;
use tauguard_guards::FROZEN;

/// One artifact set of the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactsAxis {
    /// [`FROZEN`], or the directory as the config wrote it.
    pub label: String,
    /// Where it is in the config, for errors.
    pub key: String,
}

impl ArtifactsAxis {
    pub fn is_frozen(&self) -> bool {
        self.label == FROZEN
    }
}

/// The axis of a checked config: `[grid] artifacts`, else `[guard] artifacts`, else frozen.
pub(crate) fn axis(cfg: &RunConfig) -> Vec<ArtifactsAxis> {
    if cfg.grid.artifacts.is_empty() {
        return vec![ArtifactsAxis {
            label: cfg.guard.artifacts.clone().unwrap_or_else(|| FROZEN.into()),
            key: "guard.artifacts".into(),
        }];
    }
    cfg.grid
        .artifacts
        .iter()
        .enumerate()
        .map(|(i, a)| ArtifactsAxis {
            label: a.clone(),
            key: format!("grid.artifacts[{i}]"),
        })
        .collect()
}

/// Checks the keys: one of the two, no set twice, none empty; the message starts with the key.
pub(crate) fn validate(cfg: &RunConfig) -> Result<(), String> {
    let g = &cfg.grid;
    if !g.artifacts.is_empty() && cfg.guard.artifacts.is_some() {
        return Err(
            "at `grid.artifacts`: the grid's artifact sets replace `[guard] artifacts`; set only one of them"
                .into(),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for (i, a) in g.artifacts.iter().enumerate() {
        if !seen.insert(a) {
            return Err(format!("at `grid.artifacts[{i}]`: `{a}` is listed twice"));
        }
    }
    let sets = g
        .artifacts
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("grid.artifacts[{i}]"), a));
    let shorthand = cfg
        .guard
        .artifacts
        .iter()
        .map(|a| ("guard.artifacts".to_string(), a));
    for (key, a) in sets.chain(shorthand) {
        if a.trim().is_empty() {
            return Err(format!(
                "at `{key}`: empty; name a compiled set's directory or \"{FROZEN}\""
            ));
        }
    }
    Ok(())
}
