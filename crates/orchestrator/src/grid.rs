//! `[grid]`: the axes a run config crosses — domains, agents, guard configurations, verifiers,
//! artifact sets, seeds, domain options (`grid_options.rs`) — with per-domain task selection and per-cell overrides, checked as a whole so every
//! error names the key and the values it allows.
//!
//! The one-value shorthand stays: `[run].domain`, `[models.agent]`, `[guard]` (with
//! `[guard.verifier]`) and `[run].seed` are a grid of one value on each axis. New keys are left
//! out of the config's serialisation while unset, so a config written before grids keeps its
//! config hash, and [`Axes`] of it give the cells it always had.

use crate::config::{ModelSection, RunConfig};
pub(crate) use crate::grid_artifacts::ArtifactsAxis;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use tauguard_guards::{ExternalSpec, FailMode, GuardName, GuardOptions};

/// A list entry that is either a name (`"baseline"`, a model alias, `"paired"`) or a table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum NameOr<T> {
    Name(String),
    Table(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NameOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = NameOr<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a name or a table")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NameOr<T>, E> {
                Ok(NameOr::Name(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<NameOr<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(NameOr::Table)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T> From<&str> for NameOr<T> {
    fn from(name: &str) -> Self {
        NameOr::Name(name.to_string())
    }
}

/// `[[grid.guards]]`: a guard configuration under a name of its own, with its options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedGuard {
    /// The label cell ids and reports use.
    pub name: String,
    /// The configuration, one of `KNOWN_GUARDS`; left out for an `external` guard.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub guard: String,
    /// A guard outside tauguard, over the external guard protocol (`docs/guard-protocol.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalSpec>,
    /// Default: `[guard].strict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Default: `[guard].fail_mode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<FailMode>,
}

/// `[grid.tasks.<domain>]`: the domain's task selection, each key defaulting to `[run]`'s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSelection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_tasks: Option<usize>,
}

/// Which cells an override applies to: every given key must equal the cell's value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// An agent's label (its `name`, alias or model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// A guard entry's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<String>,
    /// A verifier's label (`paired`, or its `name` / model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// `[[grid.override]]`: settings changed for the matching cells; later overrides win.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    #[serde(rename = "match")]
    pub matches: CellMatch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
}

/// `[grid]`: the configurations compared side by side on the same tasks and trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSection {
    /// Domains; default `[run].domain`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub domains: Vec<String>,
    /// Agent models (tables shaped like `[models.agent]`, or aliases of `configs/models.toml`);
    /// default `[models.agent]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<NameOr<ModelSection>>,
    /// Guard configurations (names, or `[[grid.guards]]` tables); `baseline` = no guard.
    #[serde(default = "default_guards")]
    pub guards: Vec<NameOr<NamedGuard>>,
    /// Verifiers of the guards that use one: `"paired"` (the cell's agent model), model tables
    /// or aliases; default `[guard.verifier]`, else paired.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verifiers: Vec<NameOr<ModelSection>>,
    /// Artifact sets the guards that read checklists or a workflow run on, one cell each:
    /// `"frozen"` (`tasks/<domain>/`) or a compiled set's directory (see
    /// `[guard] artifacts`); default `[guard].artifacts`, else frozen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// Trials per task; default `[run].trials`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u32>,
    /// Run seeds, one cell each; default `[run].seed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
    /// Task selection per domain.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tasks: BTreeMap<String, TaskSelection>,
    /// Values of a domain's declared options, one domain plan per combination
    /// (`crate::grid_options`); an option set here is not also set in `[run.domain_options]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub domain_options: crate::grid_options::OptionAxes,
    #[serde(default, rename = "override", skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<Override>,
}

impl Default for GridSection {
    fn default() -> Self {
        GridSection {
            domains: Vec::new(),
            agents: Vec::new(),
            guards: default_guards(),
            verifiers: Vec::new(),
            artifacts: Vec::new(),
            trials: None,
            seeds: Vec::new(),
            tasks: BTreeMap::new(),
            domain_options: BTreeMap::new(),
            overrides: Vec::new(),
        }
    }
}

fn default_guards() -> Vec<NameOr<NamedGuard>> {
    vec!["baseline".into()]
}

/// The verifier label of the paired protocol.
pub(crate) const PAIRED: &str = "paired";

/// One agent of the grid.
#[derive(Debug, Clone)]
pub struct AgentAxis {
    /// Its `name`, else its model: what cell ids and overrides call it.
    pub label: String,
    pub model: ModelSection,
}

/// One guard entry of the grid.
#[derive(Debug, Clone)]
pub struct GuardAxis {
    /// The entry's name (for a plain name, the configuration itself).
    pub label: String,
    pub name: GuardName,
    pub options: GuardOptions,
    /// Where it is in the config, for errors.
    pub key: String,
    /// For [`GuardName::External`]: how to reach the guard.
    pub external: Option<ExternalSpec>,
}

/// One verifier of the grid (`model: None` = paired with the cell's agent).
#[derive(Debug, Clone)]
pub struct VerifierAxis {
    pub label: String,
    pub model: Option<ModelSection>,
}

/// The values of every axis, shorthand and grid keys resolved.
#[derive(Debug, Clone)]
pub struct Axes {
    pub domains: Vec<String>,
    pub agents: Vec<AgentAxis>,
    pub guards: Vec<GuardAxis>,
    pub verifiers: Vec<VerifierAxis>,
    /// Artifact sets: frozen or a compiled set's directory as the config wrote it.
    pub artifacts: Vec<ArtifactsAxis>,
    pub seeds: Vec<u64>,
    pub trials: u32,
}

/// The label of a model in a grid: its `name`, else its model name.
pub(crate) fn model_label(m: &ModelSection) -> String {
    m.name.clone().unwrap_or_else(|| m.model.clone())
}

impl Axes {
    /// The axes of a checked config whose aliases are resolved; an alias left unresolved is
    /// an error naming its key.
    pub fn of(cfg: &RunConfig) -> Result<Axes, String> {
        let g = &cfg.grid;
        let domains = if g.domains.is_empty() {
            vec![cfg.run.domain.clone()]
        } else {
            g.domains.clone()
        };
        let resolved = |key: &str, e: &NameOr<ModelSection>| match e {
            NameOr::Table(m) => Ok(m.clone()),
            NameOr::Name(alias) => Err(format!(
                "at `{key}`: model alias `{alias}` is not resolved (load the config with a model catalog, `--models FILE`)"
            )),
        };
        let agents = if g.agents.is_empty() {
            let m = cfg
                .models
                .agent
                .clone()
                .ok_or("at `models.agent`: missing")?;
            vec![AgentAxis {
                label: m.model.clone(),
                model: m,
            }]
        } else {
            g.agents
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let model = resolved(&format!("grid.agents[{i}]"), e)?;
                    Ok(AgentAxis {
                        label: model_label(&model),
                        model,
                    })
                })
                .collect::<Result<_, String>>()?
        };
        let base = GuardOptions {
            strict: cfg.guard.strict,
            fail_mode: cfg.guard.fail_mode.unwrap_or_default(),
            verifier_max_tokens: cfg.guard.verifier_max_tokens,
            guide_max_tokens: cfg.guard.guide_max_tokens,
        };
        let guards = g
            .guards
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let key = format!("grid.guards[{i}]");
                let (label, config, options) = match e {
                    NameOr::Name(n) => (n.clone(), n.as_str(), base),
                    NameOr::Table(t) => (
                        t.name.clone(),
                        t.guard.as_str(),
                        GuardOptions {
                            strict: t.strict.unwrap_or(base.strict),
                            fail_mode: t.fail_mode.unwrap_or(base.fail_mode),
                            ..base
                        },
                    ),
                };
                let external = match e {
                    NameOr::Table(t) => t.external.clone(),
                    NameOr::Name(_) => None,
                };
                let name = match external {
                    Some(_) => GuardName::External,
                    None => GuardName::parse(config).map_err(|e| format!("at `{key}`: {e}"))?,
                };
                Ok(GuardAxis {
                    label,
                    name,
                    options,
                    key,
                    external,
                })
            })
            .collect::<Result<_, String>>()?;
        let verifiers = if !g.verifiers.is_empty() {
            g.verifiers
                .iter()
                .enumerate()
                .map(|(i, e)| match e {
                    NameOr::Name(p) if p == PAIRED => Ok(VerifierAxis {
                        label: PAIRED.into(),
                        model: None,
                    }),
                    other => {
                        let m = resolved(&format!("grid.verifiers[{i}]"), other)?;
                        Ok(VerifierAxis {
                            label: model_label(&m),
                            model: Some(m),
                        })
                    }
                })
                .collect::<Result<_, String>>()?
        } else {
            vec![match &cfg.guard.verifier {
                Some(m) => VerifierAxis {
                    label: model_label(m),
                    model: Some(m.clone()),
                },
                None => VerifierAxis {
                    label: PAIRED.into(),
                    model: None,
                },
            }]
        };
        let artifacts = crate::grid_artifacts::axis(cfg);
        Ok(Axes {
            domains,
            agents,
            guards,
            verifiers,
            artifacts,
            seeds: if g.seeds.is_empty() {
                vec![cfg.run.seed]
            } else {
                g.seeds.clone()
            },
            trials: g.trials.unwrap_or(cfg.run.trials),
        })
    }
}

/// Checks the grid keys of a parsed config (models are checked by the caller); the message
/// starts with the key path.
pub(crate) fn validate(cfg: &RunConfig) -> Result<(), String> {
    let domains = crate::grid_checks::validate_domains(cfg)?;
    let g = &cfg.grid;
    if g.domains.len() > 1 && cfg.run.task_set.is_some() {
        return Err(
            "at `run.task_set`: a task set belongs to one domain, but `grid.domains` lists several"
                .into(),
        );
    }
    match (cfg.models.agent.is_some(), g.agents.is_empty()) {
        (false, true) => {
            return Err(
                "at `models.agent`: missing; configure one agent there or list several in `grid.agents`"
                    .into(),
            );
        }
        (true, false) => {
            return Err(
                "at `grid.agents`: the grid's agents replace `[models.agent]`; set only one of them"
                    .into(),
            );
        }
        _ => {}
    }
    crate::grid_checks::validate_guards(g)?;
    if !g.verifiers.is_empty() && cfg.guard.verifier.is_some() {
        return Err(
            "at `grid.verifiers`: the grid's verifiers replace `[guard.verifier]`; set only one of them"
                .into(),
        );
    }
    crate::grid_artifacts::validate(cfg)?;
    if g.trials == Some(0) {
        return Err("at `grid.trials`: must be at least 1".into());
    }
    unique("grid.seeds", g.seeds.iter().map(|s| s.to_string()))?;
    for (d, sel) in &g.tasks {
        if !domains.contains(&d.as_str()) {
            return Err(format!(
                "at `grid.tasks.{d}`: `{d}` is not a domain of the grid (domains: {})",
                domains.join(", ")
            ));
        }
        if sel.num_tasks == Some(0) {
            return Err(format!("at `grid.tasks.{d}.num_tasks`: must be at least 1"));
        }
    }
    Ok(())
}

/// `guard` for a table entry (the key holding the configuration name).
pub(crate) fn e_key(e: &NameOr<NamedGuard>) -> Option<&'static str> {
    matches!(e, NameOr::Table(_)).then_some("guard")
}

pub(crate) fn unique(key: &str, values: impl Iterator<Item = String>) -> Result<(), String> {
    let mut seen = HashSet::new();
    for (i, v) in values.enumerate() {
        if !seen.insert(v.clone()) {
            return Err(format!("at `{key}[{i}]`: `{v}` is listed twice"));
        }
    }
    Ok(())
}

/// Checks `[[grid.override]]` against the axes: every matched value exists, every override
/// changes something valid.
pub(crate) fn validate_overrides(cfg: &RunConfig, axes: &Axes) -> Result<(), String> {
    for (i, o) in cfg.grid.overrides.iter().enumerate() {
        let key = format!("grid.override[{i}]");
        let m = &o.matches;
        let check = |field: &str, value: Option<&str>, allowed: Vec<String>| match value {
            Some(v) if !allowed.iter().any(|a| a == v) => Err(format!(
                "at `{key}.match.{field}`: `{v}` is not a value of the grid (allowed: {})",
                allowed.join(", ")
            )),
            _ => Ok(()),
        };
        check("domain", m.domain.as_deref(), axes.domains.clone())?;
        check(
            "agent",
            m.agent.as_deref(),
            axes.agents.iter().map(|a| a.label.clone()).collect(),
        )?;
        check(
            "guard",
            m.guard.as_deref(),
            axes.guards.iter().map(|a| a.label.clone()).collect(),
        )?;
        check(
            "verifier",
            m.verifier.as_deref(),
            axes.verifiers.iter().map(|a| a.label.clone()).collect(),
        )?;
        check(
            "seed",
            m.seed.map(|s| s.to_string()).as_deref(),
            axes.seeds.iter().map(u64::to_string).collect(),
        )?;
        if *m == CellMatch::default() {
            return Err(format!(
                "at `{key}.match`: name at least one of domain, agent, guard, verifier, seed"
            ));
        }
        if o.trials.is_none() && o.max_steps.is_none() {
            return Err(format!(
                "at `{key}`: changes nothing; set `trials` or `max_steps`"
            ));
        }
        if o.trials == Some(0) {
            return Err(format!("at `{key}.trials`: must be at least 1"));
        }
        if o.max_steps == Some(0) {
            return Err(format!("at `{key}.max_steps`: must be at least 1"));
        }
    }
    Ok(())
}

/// The axis values of one cell, for matching overrides.
#[derive(Debug)]
pub struct CellValues<'a> {
    pub domain: &'a str,
    pub agent: &'a str,
    pub guard: &'a str,
    /// `None` for a guard without a verifier: a `verifier` match never applies to it.
    pub verifier: Option<&'a str>,
    pub seed: u64,
}

impl CellMatch {
    pub fn applies(&self, c: &CellValues) -> bool {
        self.domain.as_deref().is_none_or(|d| d == c.domain)
            && self.agent.as_deref().is_none_or(|a| a == c.agent)
            && self.guard.as_deref().is_none_or(|g| g == c.guard)
            && self
                .verifier
                .as_deref()
                .is_none_or(|v| Some(v) == c.verifier)
            && self.seed.is_none_or(|s| s == c.seed)
    }
}

impl RunConfig {
    /// The checks that need every axis resolved (aliases included): labels that tell agents
    /// and verifiers apart, and the overrides' matches.
    pub(crate) fn check_axes(&self) -> Result<(), String> {
        let axes = Axes::of(self)?;
        for (key, labels) in [
            (
                "grid.agents",
                axes.agents.iter().map(|a| &a.label).collect::<Vec<_>>(),
            ),
            (
                "grid.verifiers",
                axes.verifiers.iter().map(|v| &v.label).collect(),
            ),
        ] {
            for (j, l) in labels.iter().enumerate() {
                if let Some(i) = labels[..j].iter().position(|o| o == l) {
                    return Err(format!(
                        "at `{key}[{j}]`: its label `{l}` is also {key}[{i}]'s; give one of them a `name`"
                    ));
                }
            }
        }
        validate_overrides(self, &axes)
    }
}
