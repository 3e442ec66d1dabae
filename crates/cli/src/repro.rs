//! The experiments `tauguard reproduce` knows: `configs/repro/<name>/manifest.toml` (what the
//! experiment is, which configs it runs with which agent label, the offline fault profile, how
//! its table is laid out) beside the configs it names, and the published numbers in
//! `configs/repro/published/<name>.toml`. Loading checks everything a reproduction could trip
//! over later — every config parses and validates, the layout and published cells are
//! well-formed and every published cell has a place in the table — so a bad manifest fails
//! before any simulation runs.

use anyhow::{Context, anyhow, bail};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tauguard_metrics::Floor;
use tauguard_metrics::repro::{ConfigRows, Published, TableSpec, repro_table};
use tauguard_orchestrator::{FaultProfile, RunConfig};

/// Where experiments live, relative to the project directory.
pub(crate) const REPRO_DIR: &str = "configs/repro";

/// One config of an experiment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigEntry {
    /// The config file, relative to the manifest's directory.
    pub file: PathBuf,
    /// The agent's name in the paper's table (`GPT 5.4`): the row label.
    pub agent: String,
    /// The run seed offline (see `RunConfig::offline`); default: the config's own.
    #[serde(default)]
    pub offline_seed: Option<u64>,
}

/// `[offline]`: what `--offline` swaps in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Offline {
    /// The `sim-agent`'s fault profile.
    pub faults: FaultProfile,
}

/// `manifest.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub title: String,
    /// The paper the experiment reproduces (`PolicyGuard`, `PolicyGuide`).
    pub paper: String,
    /// Its table or figure (`Table 2`).
    pub table: String,
    pub offline: Offline,
    #[serde(rename = "config")]
    pub configs: Vec<ConfigEntry>,
    pub render: TableSpec,
}

/// A loaded, checked experiment.
#[derive(Debug)]
pub(crate) struct Experiment {
    pub manifest: Manifest,
    pub published: Published,
    pub published_path: PathBuf,
    /// Each entry with its config as written (real models) and its path.
    pub configs: Vec<(ConfigEntry, PathBuf, RunConfig)>,
}

/// The names of every experiment under the project, sorted.
pub(crate) fn names(project: &Path) -> anyhow::Result<Vec<String>> {
    let dir = project.join(REPRO_DIR);
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("cannot list `{}`", dir.display()))?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("cannot list `{}`", dir.display()))?;
        if e.path().join("manifest.toml").is_file() {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(out)
}

fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read `{}`", path.display()))?;
    toml::from_str(&text).map_err(|e| anyhow!("`{}`: {}", path.display(), e.message()))
}

impl Experiment {
    /// Loads and checks experiment `name` of the project.
    pub(crate) fn load(project: &Path, name: &str) -> anyhow::Result<Experiment> {
        let dir = project.join(REPRO_DIR).join(name);
        let manifest_path = dir.join("manifest.toml");
        let manifest: Manifest = read_toml(&manifest_path)?;
        let at = |what: String| anyhow!("`{}`: {what}", manifest_path.display());
        if manifest.configs.is_empty() {
            return Err(at("list at least one `[[config]]`".into()));
        }
        manifest
            .render
            .validate()
            .map_err(|e| at(format!("`render`: {e}")))?;
        manifest
            .offline
            .faults
            .validate()
            .map_err(|e| at(format!("`offline.faults`: {e}")))?;
        let mut configs = Vec::new();
        let mut stems = HashSet::new();
        let mut offline_twins = HashSet::new();
        for (i, entry) in manifest.configs.iter().enumerate() {
            let path = dir.join(&entry.file);
            let cfg = RunConfig::load(&path)
                .with_context(|| format!("`{}`: `config[{i}]`", manifest_path.display()))?;
            if !stems.insert(stem(&path)) {
                return Err(at(format!(
                    "`config[{i}]`: another config has the file name `{}`",
                    entry.file.display()
                )));
            }
            // Offline, every agent is the same sim agent: two configs on the same tasks with
            // the same seed would be the same simulations twice, pooled by the report.
            let off = cfg.offline(manifest.offline.faults, entry.offline_seed);
            let twin = (
                off.run.domain.clone(),
                off.run.split.clone(),
                off.run.task_set.clone(),
                off.run.seed,
            );
            if !offline_twins.insert(twin) {
                return Err(at(format!(
                    "`config[{i}]` ({}): offline it would repeat another config's simulations (same domain, tasks and seed); give it its own `offline_seed`",
                    entry.agent
                )));
            }
            configs.push((entry.clone(), path, cfg));
        }
        let published_path = project
            .join(REPRO_DIR)
            .join("published")
            .join(format!("{name}.toml"));
        let published: Published = read_toml(&published_path)?;
        published
            .validate()
            .map_err(|e| anyhow!("`{}`: {e}", published_path.display()))?;
        let exp = Experiment {
            manifest,
            published,
            published_path,
            configs,
        };
        let unplaced = exp.table(&[], &[], false).unplaced;
        if !unplaced.is_empty() {
            bail!(
                "`{}`: published cells the table of `{}` has no row or column for: {}",
                exp.published_path.display(),
                manifest_path.display(),
                unplaced.join("; ")
            );
        }
        Ok(exp)
    }

    /// The configs to run: as written, or their offline twins.
    pub(crate) fn run_configs(&self, offline: bool) -> Vec<(&ConfigEntry, String, RunConfig)> {
        self.configs
            .iter()
            .map(|(entry, path, cfg)| {
                let cfg = if offline {
                    cfg.offline(self.manifest.offline.faults, entry.offline_seed)
                } else {
                    cfg.clone()
                };
                (entry, stem(path), cfg)
            })
            .collect()
    }

    /// The experiment's title as its table prints it.
    pub(crate) fn title(&self) -> String {
        let m = &self.manifest;
        format!("{} {}: {}", m.paper, m.table, m.title)
    }

    /// The table from per-config reports and summaries (in config order; empty = before any
    /// run) and the floors of the runs' domains.
    pub(crate) fn table(
        &self,
        runs: &[ConfigRun],
        floors: &[Floor],
        simulated: bool,
    ) -> tauguard_metrics::repro::ReproTable {
        self.table_titled(&self.title(), runs, floors, simulated)
    }

    pub(crate) fn table_titled(
        &self,
        title: &str,
        runs: &[ConfigRun],
        floors: &[Floor],
        simulated: bool,
    ) -> tauguard_metrics::repro::ReproTable {
        let rows: Vec<ConfigRows<'_>> = self
            .configs
            .iter()
            .enumerate()
            .map(|(i, (entry, _, cfg))| ConfigRows {
                domain: cfg.run.domain.clone(),
                agent: entry.agent.clone(),
                // The labels reports use: a named guard entry's name, else the configuration.
                guards: cfg
                    .grid
                    .guards
                    .iter()
                    .map(|g| match g {
                        tauguard_orchestrator::NameOr::Name(n) => n.clone(),
                        tauguard_orchestrator::NameOr::Table(t) => t.name.clone(),
                    })
                    .collect(),
                report: runs.get(i).map(|r| &r.report),
                summaries: runs.get(i).map_or(&[], |r| r.summaries.as_slice()),
            })
            .collect();
        repro_table(
            title,
            &self.manifest.render,
            &rows,
            &self.published,
            floors,
            simulated,
        )
    }
}

/// One config's run, as the table reads it: the report over its records and their
/// summaries.
pub(crate) struct ConfigRun {
    pub report: tauguard_metrics::Report,
    pub summaries: Vec<tauguard_metrics::SimSummary>,
}

/// A config's file stem: its run directory's name under the experiment's output.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
