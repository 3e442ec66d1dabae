//! Building one cell of the plan from its point of the grid: the overrides that apply, the
//! guard with its options and verifier, the comparability stamp, the cell spec and hash, and
//! the cell id records carry.

use super::{AgentPlan, Cell, DomainPlan};
use crate::comparability::{self, Stamp};
use crate::config::RunConfig;
use crate::grid::{Axes, CellValues, GuardAxis, VerifierAxis};
use crate::provenance::{CellSettings, InputHashes, cell_hash, cell_spec};
use crate::runner::RunError;
use crate::seeds::trial_seeds;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_guards::{ArtifactSet, Guard, GuardInputs, GuardOptions, build_guard};
use tauguard_llm::RoleModel;

/// A cell's guard (`None` = baseline), and what an external guard adds to the cell's spec.
type BuiltGuard = (Option<Arc<dyn Guard>>, Vec<(String, serde_json::Value)>);

/// One point of the grid while its cell is built.
pub(super) struct CellAt<'a> {
    pub(super) cfg: &'a RunConfig,
    pub(super) axes: &'a Axes,
    pub(super) domain: &'a DomainPlan,
    pub(super) di: usize,
    pub(super) agent: &'a AgentPlan,
    pub(super) ai: usize,
    pub(super) guard: &'a GuardAxis,
    pub(super) verifier: &'a VerifierAxis,
    /// The verifier's model (`None` = paired with the agent).
    pub(super) verifier_model: Option<RoleModel>,
    pub(super) seed: u64,
    pub(super) hashes: &'a InputHashes,
    /// The compiled artifact set of the cell (`None` = the frozen one).
    pub(super) set: Option<&'a ArtifactSet>,
}

impl CellAt<'_> {
    pub(super) fn cell(self, project: &Path, prompts: &Path) -> Result<Cell, RunError> {
        let (cfg, guard) = (self.cfg, self.guard);
        let uses_verifier = guard.name.uses_verifier();
        let domain_name = self.domain.data.domain;
        let (trials, max_steps) = self.limits();
        let options = self.guard_options();
        let (built, external) = self.build_guard(options, project, prompts)?;
        let stamp = self.stamp(max_steps);
        let mut spec = cell_spec(
            &CellSettings {
                domain: domain_name,
                agent: &self.agent.section,
                user: &cfg.models.user,
                judge: cfg.models.judge.as_ref(),
                guard: guard.name,
                guard_label: &guard.label,
                options,
                verifier: self.verifier.model.as_ref(),
                seed: self.seed,
                max_steps,
                max_errors: cfg.run.max_errors,
                model_errors: cfg.run.model_errors,
                truncated_replies: cfg.run.truncated_replies,
            },
            self.hashes,
        );
        // An external guard's command and reported version are part of the cell, and so is
        // what a remote agent's server says it is.
        spec.extend(external);
        if let Some(identity) = &self.agent.identity {
            spec.insert("agent.identity".into(), identity.clone());
        }
        stamp.insert_into(&mut spec);
        let agent_system_prompt = match built.as_ref().and_then(|g| g.agent_instructions()) {
            Some(extra) => format!("{}\n\n{extra}", self.domain.agent_system_prompt).into(),
            None => self.domain.agent_system_prompt.clone(),
        };
        Ok(Cell {
            id: self.id(),
            domain: self.di,
            agent: self.ai,
            guard_label: guard.label.clone(),
            guard_name: guard.name,
            guard: built,
            verifier: uses_verifier.then(|| self.verifier.label.clone()),
            seed: self.seed,
            seeds: trial_seeds(self.seed, trials as usize),
            trials,
            max_steps,
            hash: cell_hash(&spec),
            spec,
            agent_system_prompt,
            stamp,
        })
    }

    /// The cell's trials and step limit, after the grid's overrides that apply to it.
    fn limits(&self) -> (u32, u32) {
        let values = CellValues {
            domain: self.domain.data.domain,
            agent: &self.agent.label,
            guard: &self.guard.label,
            verifier: self
                .guard
                .name
                .uses_verifier()
                .then_some(self.verifier.label.as_str()),
            seed: self.seed,
        };
        let (mut trials, mut max_steps) = (self.axes.trials, self.cfg.run.max_steps);
        for o in self
            .cfg
            .grid
            .overrides
            .iter()
            .filter(|o| o.matches.applies(&values))
        {
            trials = o.trials.unwrap_or(trials);
            max_steps = o.max_steps.unwrap_or(max_steps);
        }
        (trials, max_steps)
    }

    /// The guard's options with its token limits. Each role has its own: the verifier and
    /// the guide never take the agent's (a paired verifier shares its model, whose spec
    /// holds the agent's `max_tokens`, but every verifier request sets its own); an explicit
    /// verifier's `max_tokens` is the default of both.
    fn guard_options(&self) -> GuardOptions {
        let mut options = self.guard.options;
        let explicit = self.verifier.model.as_ref().and_then(|m| m.max_tokens);
        options.verifier_max_tokens = options.verifier_max_tokens.or(explicit);
        options.guide_max_tokens = options.guide_max_tokens.or(explicit);
        options
    }

    /// The cell's guard (`None` = baseline), and what an external guard adds to the cell.
    fn build_guard(
        &self,
        options: GuardOptions,
        project: &Path,
        prompts: &Path,
    ) -> Result<BuiltGuard, RunError> {
        let guard = self.guard;
        let at = |message: String| RunError::Input {
            path: PathBuf::from(&guard.key),
            message,
        };
        // Paired-verifier protocol: without a verifier model of its own, the cell's agent
        // model judges.
        let verifier_model = match &self.verifier_model {
            Some(m) => m.clone(),
            None => self.agent.model.clone(),
        };
        let inputs = GuardInputs {
            tasks_dir: project.join("tasks"),
            prompts_dir: prompts.to_path_buf(),
            data: &self.domain.data,
            verifier: verifier_model,
            artifacts: self.set,
        };
        Ok(match &guard.external {
            Some(x) => {
                let g =
                    tauguard_guards::ExternalGuard::build(x, options.fail_mode, &self.domain.data)
                        .map_err(|e| {
                            at(format!(
                                "guard `{}`: {}",
                                guard.label,
                                tauguard_core::Chain(&e)
                            ))
                        })?;
                let settings = g.provenance().cell_settings();
                (Some(Arc::new(g) as Arc<dyn Guard>), settings)
            }
            None => (
                build_guard(guard.name, options, &inputs).map_err(|e| match self.set {
                    Some(set) => {
                        let key = self.axes.artifacts.iter().find(|a| a.label == set.label);
                        let key = key.map_or("guard.artifacts", |a| a.key.as_str());
                        at(format!(
                            "{} (the artifact set of `{key}`, `{}`)",
                            tauguard_core::Chain(&e),
                            set.label
                        ))
                    }
                    None => at(tauguard_core::chain_text(&e)),
                })?,
                Vec::new(),
            ),
        })
    }

    /// The comparability stamp: the domain's items, then the evaluator, sampling and limits.
    fn stamp(&self, max_steps: u32) -> Stamp {
        let cfg = self.cfg;
        let mut stamp = Stamp {
            items: self.domain.stamp_items.clone(),
        };
        stamp.items.push(comparability::evaluator_item(
            &self.domain.tasks,
            cfg.models.judge.as_ref(),
        ));
        stamp.items.push(comparability::sampling_item(
            &self.agent.section,
            &cfg.models.user,
        ));
        stamp.items.push(comparability::limits_item(
            max_steps,
            cfg.run.max_errors,
            cfg.run.max_retries,
            cfg.run.model_errors,
            cfg.run.truncated_replies,
        ));
        stamp
    }

    /// `domain|agent|guard`, then the domain's option values, the verifier and the seed when
    /// those axes hold several values, and a compiled artifact set.
    fn id(&self) -> String {
        let axes = self.axes;
        let mut id = format!(
            "{}|{}|{}{}",
            self.domain.data.domain, self.agent.label, self.guard.label, self.domain.id_suffix
        );
        if self.guard.name.uses_verifier() && axes.verifiers.len() > 1 {
            id.push_str(&format!("|verifier={}", self.verifier.label));
        }
        if let Some(set) = self.set {
            id.push_str(&format!("|artifacts={}", set.label));
        }
        if axes.seeds.len() > 1 {
            id.push_str(&format!("|seed={}", self.seed));
        }
        id
    }
}
