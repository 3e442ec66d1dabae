//! Guard configurations by name: the one list of names a config may use, and the one place
//! that turns a name plus its options into a guard object.
//!
//! Verifiers are LLM verifiers when the cell's verifier is a built model and the offline sim
//! verifier when it is the `sim` family's ([`RoleModel::Sim`]). No PolicyGuard variant carries the ToolGuard
//! rule set, online or offline: a verifier judges from its own inputs, so offline it can fall
//! short of ToolGuard as well as match it. The configuration that adds the rules is `hybrid`
//! (ToolGuard first, then the `pg-checklist` verifier).
//!
//! The PolicyGuide configurations are built in [`crate::policyguide::build`]: `policyguide`
//! and `policyguide-raw` with the LLM guide when the verifier is a real model and the offline
//! guide otherwise; `policyguide-self` and `flowagent` put the graph in the agent.

use crate::Guard;
use crate::artifact_set::{ArtifactSet, CHECKLIST_DIR};
use crate::catalog::ToolCatalog;
use crate::hybrid::Hybrid;
use crate::policyguard::checklist::{ArtifactError, load_domain_checklists};
use crate::policyguard::prerequisites::PrerequisitesError;
use crate::policyguard::templates::TemplateError;
use crate::policyguard::{
    FailMode, PolicyGuardError, PolicyGuardSetup, Sampling, Variant, build_variant,
};
use crate::policyguide::frozen::FrozenBundleError;
use crate::policyguide::llm::LlmGuideError;
use crate::toolguard::{RuleError, ToolGuard};
use std::path::PathBuf;
use std::sync::Arc;
use tauguard_env::DomainData;
use tauguard_llm::RoleModel;

/// A guard configuration a config may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuardName {
    /// No guard.
    Baseline,
    /// Argument-level rules ([`crate::toolguard`]).
    ToolGuard,
    /// A PolicyGuard verifier; `strict` from a `-strict` suffix.
    PolicyGuard { variant: Variant, strict: bool },
    /// ToolGuard rules first, the `pg-checklist` verifier for calls they pass.
    Hybrid,
    /// Blocks every mutating call: the floor of what blocking alone achieves.
    BlockAll,
    /// The workflow guide at user-turn boundaries; `raw`: the raw policy instead of the graph.
    PolicyGuide { raw: bool },
    /// The graph handed to the agent itself, no verifier (SELF ablation).
    PolicyGuideSelf,
    /// The graph as an in-agent controller.
    FlowAgent,
    /// A guard outside tauguard ([`crate::external`]); named by a `[[grid.guards]]` entry's
    /// `external` table, never by a configuration name, so not in [`KNOWN_GUARDS`].
    External,
}

/// One guard configuration a config may name: its typed name, the name configs, records and
/// reports use, and the line help texts show. [`GUARDS`] is the one list; parsing, names and
/// [`KNOWN_GUARDS`] are read off it.
#[derive(Debug, Clone, Copy)]
pub struct GuardEntry {
    pub name: GuardName,
    pub config: &'static str,
    pub help: &'static str,
}

const fn entry(name: GuardName, config: &'static str, help: &'static str) -> GuardEntry {
    GuardEntry { name, config, help }
}

const fn pg(variant: Variant, strict: bool) -> GuardName {
    GuardName::PolicyGuard { variant, strict }
}

/// Every guard configuration, in the order help texts list them.
pub const GUARDS: &[GuardEntry] = &[
    entry(GuardName::Baseline, "baseline", "no guard"),
    entry(
        GuardName::ToolGuard,
        "toolguard",
        "argument-level rules (ToolGuard-like)",
    ),
    entry(
        pg(Variant::Raw, false),
        "pg-raw",
        "PolicyGuard verifier with the raw policy",
    ),
    entry(
        pg(Variant::RawTraj, false),
        "pg-raw-traj",
        "PG-Raw seeing tool calls and results only, not the dialogue",
    ),
    entry(
        pg(Variant::Checklist, false),
        "pg-checklist",
        "PolicyGuard verifier with the policy and the checklists",
    ),
    entry(
        pg(Variant::Checklist, true),
        "pg-checklist-strict",
        "PG-Checklist; any NOT MET blocks",
    ),
    entry(
        pg(Variant::ChecklistOnly, false),
        "pg-checklist-only",
        "PolicyGuard verifier with the checklists and no policy text",
    ),
    entry(
        pg(Variant::ChecklistOnly, true),
        "pg-checklist-only-strict",
        "PG-Checklist-Only; any NOT MET blocks",
    ),
    entry(
        GuardName::Hybrid,
        "hybrid",
        "ToolGuard rules, then the pg-checklist verifier",
    ),
    entry(
        GuardName::BlockAll,
        "block-all",
        "blocks every mutating call (a floor)",
    ),
    entry(
        GuardName::PolicyGuide { raw: false },
        "policyguide",
        "workflow guide at user-turn boundaries with the interception gate",
    ),
    entry(
        GuardName::PolicyGuide { raw: true },
        "policyguide-raw",
        "PolicyGuide with the raw policy instead of the workflow graph",
    ),
    entry(
        GuardName::PolicyGuideSelf,
        "policyguide-self",
        "the workflow graph handed to the agent, no guard (SELF ablation)",
    ),
    entry(
        GuardName::FlowAgent,
        "flowagent",
        "the workflow graph as an in-agent controller",
    ),
];

const fn config_names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = GUARDS[i].config;
        i += 1;
    }
    out
}

/// Every name [`GuardName::parse`] accepts, in [`GUARDS`] order.
pub const KNOWN_GUARDS: &[&str] = &config_names::<{ GUARDS.len() }>();

impl GuardName {
    /// Parses a configuration name; the error lists [`KNOWN_GUARDS`].
    pub fn parse(name: &str) -> Result<GuardName, UnknownGuard> {
        GUARDS
            .iter()
            .find(|e| e.config == name)
            .map(|e| e.name)
            .ok_or_else(|| UnknownGuard(name.to_string()))
    }

    /// The configuration name, as records and reports show it.
    pub fn as_str(self) -> &'static str {
        if self == GuardName::External {
            return crate::external::EXTERNAL;
        }
        GUARDS
            .iter()
            .find(|e| e.name == self)
            .map(|e| e.config)
            .expect("every guard but `external` is in GUARDS (test: every_known_name_round_trips)")
    }

    /// Whether this configuration uses a verifier model.
    pub fn uses_verifier(self) -> bool {
        matches!(
            self,
            GuardName::PolicyGuard { .. } | GuardName::Hybrid | GuardName::PolicyGuide { .. }
        )
    }

    /// Whether this configuration reads the part of an artifact set a compiled set can
    /// replace: the checklists (the PolicyGuard family) or the workflow bundle (the guides
    /// over the graph). Nothing else a compile writes changes a guard.
    pub fn reads(self, set: &ArtifactSet) -> bool {
        let checklists = matches!(self, GuardName::PolicyGuard { .. } | GuardName::Hybrid);
        let workflow = matches!(
            self,
            GuardName::PolicyGuide { raw: false }
                | GuardName::PolicyGuideSelf
                | GuardName::FlowAgent
        );
        (checklists && set.checklist.is_some()) || (workflow && set.workflow.is_some())
    }
}

impl std::fmt::Display for GuardName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A guard name no configuration has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown guard configuration `{0}` (known: {known})", known = KNOWN_GUARDS.join(", "))]
pub struct UnknownGuard(pub String);

/// Options shared by the guard configurations of a run (`[guard]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GuardOptions {
    /// Any NOT MET forces BLOCK (checklist variants).
    pub strict: bool,
    pub fail_mode: FailMode,
    /// Token limit of every verifier completion; `None` = [`DEFAULT_VERIFIER_MAX_TOKENS`].
    /// Sent with each request, so a paired verifier never inherits the agent's `max_tokens`.
    pub verifier_max_tokens: Option<u32>,
    /// Token limit of every LLM-guide completion; `None` = [`DEFAULT_GUIDE_MAX_TOKENS`].
    pub guide_max_tokens: Option<u32>,
}

/// The verifier's default token limit. Its output contract (`configs/prompts/verifier/`) is
/// one JSON object with a name, a status and a one-sentence reason per requirement, the
/// verdict and a remediation of up to three sentences: about 45 tokens per requirement, so
/// some 1,300 tokens for the longest checklist (airline `book_reservation`, 20 requirements,
/// plus the general rules). Reasoning models bill their hidden reasoning against the same
/// limit, hence the headroom.
pub const DEFAULT_VERIFIER_MAX_TOKENS: u32 = 8192;

/// The LLM guide's default token limit. Its output contract (`configs/prompts/guide/`) is one
/// JSON object with a card per open request (id, intent, node, authorizations, status: about
/// 70 tokens each; a conversation rarely holds more than three) and a remediation of up to
/// three sentences: some 300 tokens. The same headroom for hidden reasoning as the verifier,
/// halved because the guide's contract is a quarter of the verifier's.
pub const DEFAULT_GUIDE_MAX_TOKENS: u32 = 4096;

impl GuardOptions {
    /// The token limit every verifier completion is sent with.
    pub fn verifier_token_limit(&self) -> u32 {
        self.verifier_max_tokens
            .unwrap_or(DEFAULT_VERIFIER_MAX_TOKENS)
    }

    /// The token limit every guide completion is sent with.
    pub fn guide_token_limit(&self) -> u32 {
        self.guide_max_tokens.unwrap_or(DEFAULT_GUIDE_MAX_TOKENS)
    }
}

/// What building a guard reads: the project's artifacts, the domain and the verifier model.
pub struct GuardInputs<'a> {
    /// `tasks/` of the project: rules, checklists and prerequisites per domain.
    pub tasks_dir: PathBuf,
    /// `configs/prompts` of the project (verifier templates).
    pub prompts_dir: PathBuf,
    pub data: &'a DomainData,
    /// The verifier model: a built one, or the `sim` family's offline verifier.
    pub verifier: RoleModel,
    /// A compiled artifact set whose checklists and workflow replace the frozen ones
    /// (`None` = the frozen set under `tasks_dir`).
    pub artifacts: Option<&'a ArtifactSet>,
}

impl std::fmt::Debug for GuardInputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardInputs")
            .field("tasks_dir", &self.tasks_dir)
            .field("prompts_dir", &self.prompts_dir)
            .field("domain", &self.data.domain)
            .field("verifier", &self.verifier)
            .field("artifacts", &self.artifacts.map(|s| &s.label))
            .finish()
    }
}

impl GuardInputs<'_> {
    /// The checklist directory the guards read: the set's, else `tasks/<domain>/checklist/`.
    pub fn checklist_dir(&self) -> PathBuf {
        match self.artifacts.and_then(|s| s.checklist.as_ref()) {
            Some(p) => p.dir.clone(),
            None => self.tasks_dir.join(self.data.domain).join(CHECKLIST_DIR),
        }
    }

    /// The workflow bundle the guides read: the set's, else the frozen one.
    pub fn bundle_path(&self) -> PathBuf {
        match self.artifacts.and_then(|s| s.workflow.as_ref()) {
            Some(p) => p.dir.join(crate::artifact_set::BUNDLE_FILE),
            None => crate::policyguide::frozen::bundle_path(&self.tasks_dir, self.data.domain),
        }
    }
}

/// Why a guard could not be built: its artifacts are missing or malformed.
#[derive(Debug, thiserror::Error)]
#[error("guard `{guard}`")]
pub struct GuardBuildError {
    pub guard: String,
    #[source]
    pub cause: Box<BuildCause>,
}

impl GuardBuildError {
    /// `cause` as the build error of guard configuration `guard`.
    pub(crate) fn new(guard: &str, cause: impl Into<BuildCause>) -> GuardBuildError {
        GuardBuildError {
            guard: guard.to_string(),
            cause: Box::new(cause.into()),
        }
    }
}

/// What stopped a guard's build: the artifact or prompt that failed to load.
#[derive(Debug, thiserror::Error)]
pub enum BuildCause {
    #[error(transparent)]
    Rules(#[from] RuleError),
    #[error(transparent)]
    Checklists(#[from] ArtifactError),
    #[error(transparent)]
    PolicyGuard(#[from] PolicyGuardError),
    #[error(transparent)]
    Prerequisites(#[from] PrerequisitesError),
    #[error(transparent)]
    Bundle(#[from] FrozenBundleError),
    #[error(transparent)]
    Prompt(#[from] TemplateError),
    #[error(transparent)]
    Guide(#[from] LlmGuideError),
    #[error("an external guard is built from its `external` table (crate::external)")]
    External,
}

/// Builds the guard of a configuration (`None` = baseline).
pub fn build_guard(
    name: GuardName,
    options: GuardOptions,
    inputs: &GuardInputs<'_>,
) -> Result<Option<Arc<dyn Guard>>, GuardBuildError> {
    let fail = |cause: BuildCause| GuardBuildError::new(name.as_str(), cause);
    let domain = inputs.data.domain;
    let toolguard = || -> Result<Arc<dyn Guard>, GuardBuildError> {
        Ok(Arc::new(
            ToolGuard::load(&inputs.tasks_dir, domain).map_err(|e| fail(e.into()))?,
        ))
    };
    let policyguard = |variant: Variant, strict: bool| -> Result<Arc<dyn Guard>, GuardBuildError> {
        let info = ToolCatalog::of(inputs.data.def);
        let checklists =
            load_domain_checklists(&inputs.checklist_dir(), &info).map_err(|e| fail(e.into()))?;
        let setup = PolicyGuardSetup::new(domain, inputs.prompts_dir.clone())
            .with_checklists(checklists)
            .with_policy(inputs.data.policy.clone())
            .with_fail_mode(options.fail_mode)
            .with_sampling(Sampling {
                max_tokens: Some(options.verifier_token_limit()),
                ..Sampling::default()
            })
            .load_prerequisites(&inputs.tasks_dir)
            .map_err(|e| fail(e.into()))?;
        build_variant(
            variant,
            strict || options.strict,
            inputs.verifier.clone(),
            &setup,
        )
        .map_err(|e| fail(e.into()))
    };
    Ok(match name {
        GuardName::Baseline => None,
        GuardName::ToolGuard => Some(toolguard()?),
        GuardName::Hybrid => Some(Arc::new(Hybrid::new(
            toolguard()?,
            policyguard(Variant::Checklist, false)?,
        ))),
        GuardName::PolicyGuard { variant, strict } => Some(policyguard(variant, strict)?),
        GuardName::BlockAll => Some(Arc::new(crate::block_all::BlockAll)),
        GuardName::PolicyGuide { raw } => Some(crate::policyguide::build::guide(
            name.as_str(),
            raw,
            options,
            inputs,
        )?),
        GuardName::External => {
            return Err(fail(BuildCause::External));
        }
        GuardName::PolicyGuideSelf | GuardName::FlowAgent => {
            Some(crate::policyguide::build::in_agent(
                name.as_str(),
                name == GuardName::FlowAgent,
                inputs,
            )?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_round_trips() {
        assert_eq!(KNOWN_GUARDS.len(), GUARDS.len());
        for (name, e) in KNOWN_GUARDS.iter().zip(GUARDS) {
            assert_eq!(GuardName::parse(name).unwrap(), e.name);
            assert_eq!(e.name.as_str(), *name);
            assert!(!e.help.is_empty());
        }
        let distinct: std::collections::HashSet<_> = GUARDS.iter().map(|e| e.name).collect();
        assert_eq!(distinct.len(), GUARDS.len(), "one entry per guard");
        assert!(
            GuardName::parse("external").is_err(),
            "named by its table only"
        );
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        for bad in ["pg-raw-strict", "tool-guard", ""] {
            let err = GuardName::parse(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
            assert!(
                err.contains("pg-checklist-only-strict, hybrid, block-all, policyguide"),
                "{err}"
            );
        }
    }
}
