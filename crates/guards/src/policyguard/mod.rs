//! The PolicyGuard verifier family: a dialogue-grounded sub-agent verifier that judges every
//! mutating call with one LLM completion (Kang, Yu & Hwang, 2026).
//!
//! Variants (guard config names):
//! - `pg-raw`: raw policy text + the formatted history;
//! - `pg-raw-traj`: `pg-raw` with the user–agent dialogue stripped (tool calls and results
//!   only) — the dialogue ablation;
//! - `pg-checklist`: raw policy + the domain's per-tool checklists + general rules (the
//!   headline); the checklist is advisory: the model's verdict stands;
//! - `pg-checklist-only`: checklists + general rules without the raw policy;
//! - strict mode on the checklist variants (`pg-checklist-strict`, `pg-checklist-only-strict`):
//!   any NOT MET forces BLOCK.
//!
//! The verifier model is configurable and defaults to the agent's (paired-verifier protocol,
//! [`paired_verifier`]). With the `sim` family's ([`RoleModel::Sim`]), [`build_policyguard`]
//! returns the rule-based offline stand-in ([`sim::SimVerifier`]), which decides from the inputs the variant
//! is given ([`sim::Inputs`]).
//!
//! Layout: the LLM verifier ([`PolicyGuardVerifier`]) with its history formatting
//! ([`history`]), prompts ([`prompt`]) and reply parsing ([`parse`]); the offline verifier
//! ([`sim`]) and the per-tool prerequisites it judges ([`prerequisites`]); what either LLM
//! judge keeps when its fail mode decides ([`failure`]); the checklist
//! artifacts ([`checklist`]; their compiler is the `tauguard-compile` crate); and the one
//! template loader both the verifier and the compiler render their prompts with
//! ([`templates`]).

pub(crate) mod checklist;
pub(crate) mod exchange;
pub(crate) mod failure;
pub(crate) mod guard_prompts;
pub(crate) mod history;
pub(crate) mod parse;
pub(crate) mod prerequisites;
pub(crate) mod prompt;
pub(crate) mod sim;
pub(crate) mod templates;
mod verifier;

pub(crate) use parse::ParseError;
pub(crate) use verifier::text_message;
pub use verifier::{FAIL_CLOSED_MESSAGE, PolicyGuardVerifier};

use crate::seam::Guard;
use checklist::DomainChecklists;
use prerequisites::{Prerequisites, PrerequisitesError};
use serde::{Deserialize, Serialize};
use sim::SimVerifier;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_llm::RoleModel;
use templates::TemplateError;

/// Which inputs the verifier sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Variant {
    /// `pg-raw`
    #[serde(rename = "pg-raw")]
    Raw,
    /// `pg-raw-traj`
    #[serde(rename = "pg-raw-traj")]
    RawTraj,
    /// `pg-checklist`
    #[serde(rename = "pg-checklist")]
    Checklist,
    /// `pg-checklist-only`
    #[serde(rename = "pg-checklist-only")]
    ChecklistOnly,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Raw,
        Variant::RawTraj,
        Variant::Checklist,
        Variant::ChecklistOnly,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Raw => "pg-raw",
            Variant::RawTraj => "pg-raw-traj",
            Variant::Checklist => "pg-checklist",
            Variant::ChecklistOnly => "pg-checklist-only",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The raw policy text is in the prompt.
    pub fn uses_policy(self) -> bool {
        !matches!(self, Variant::ChecklistOnly)
    }

    /// The checklists and general rules are in the prompt.
    pub fn uses_checklist(self) -> bool {
        matches!(self, Variant::Checklist | Variant::ChecklistOnly)
    }

    /// The user–agent dialogue is visible.
    pub fn sees_dialogue(self) -> bool {
        !matches!(self, Variant::RawTraj)
    }

    /// Strict mode exists for the checklist variants only.
    pub fn supports_strict(self) -> bool {
        self.uses_checklist()
    }

    /// Guard config name: the variant, with `-strict` when strict.
    pub fn config_name(self, strict: bool) -> String {
        if strict {
            format!("{}-strict", self.as_str())
        } else {
            self.as_str().to_string()
        }
    }
}

/// Parses a guard config name (`pg-checklist`, `pg-checklist-strict`, ...) into the variant
/// and its strictness.
pub fn parse_config_name(name: &str) -> Option<(Variant, bool)> {
    match name.strip_suffix("-strict") {
        Some(base) => Variant::from_name(base)
            .filter(|v| v.supports_strict())
            .map(|v| (v, true)),
        None => Variant::from_name(name).map(|v| (v, false)),
    }
}

/// What a verifier does when its reply stays unparseable after the repair retry. Recorded in
/// `Decision.info` whenever it decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailMode {
    /// PASS: the call runs unverified.
    Open,
    /// BLOCK with a generic remediation (default).
    #[default]
    Closed,
}

impl FailMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FailMode::Open => "open",
            FailMode::Closed => "closed",
        }
    }
}

/// Sampling of verifier completions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sampling {
    /// Unset by default: the verifier model's spec decides (set `temperature = 0.0` under
    /// `[guard.verifier]` for the papers' setting; reasoning models accept none).
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// Ask the provider for a JSON object reply where it supports it.
    pub json_mode: bool,
}

impl Sampling {
    /// A verifier completion request with this sampling, seeded by the simulation's seed and
    /// trial (the PolicyGuard verifier and the LLM guide ask the same way).
    pub fn request(
        &self,
        ctx: &crate::GuardContext<'_>,
        messages: Vec<tauguard_core::Message>,
    ) -> tauguard_llm::ChatRequest {
        let mut req = tauguard_llm::ChatRequest::new("", messages)
            .with_seed(ctx.seed)
            .with_trial(ctx.trial)
            .with_json_mode(self.json_mode);
        if let Some(m) = self.max_tokens {
            req = req.with_max_tokens(m);
        }
        if let Some(t) = self.temperature {
            req = req.with_temperature(t);
        }
        req
    }
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: None,
            max_tokens: None,
            json_mode: true,
        }
    }
}

/// Everything a PolicyGuard verifier needs besides its variant and model.
#[derive(Clone)]
pub struct PolicyGuardSetup {
    /// Domain name (`airline`, ...), as the prompt names it.
    pub domain: String,
    /// The prompts directory (`configs/prompts`); templates are read from its `verifier/`.
    pub prompts_dir: PathBuf,
    /// The domain's checklists (required by the LLM checklist variants; the sim verifier uses
    /// them as advisory extra requirements).
    pub checklists: DomainChecklists,
    /// Raw policy text; `None` = the policy the orchestrator passes in `GuardContext`.
    pub policy: Option<String>,
    /// `tasks/<domain>/prerequisites.toml`, parsed (required by the sim verifier).
    pub prerequisites: Option<Prerequisites>,
    pub sampling: Sampling,
    pub fail_mode: FailMode,
    /// Argument-level constraint rules the sim verifier adds as hard requirements (e.g. the
    /// ToolGuard rule set) wherever its inputs state them; `None` = none.
    pub constraints: Option<Arc<dyn Guard>>,
    /// The passage each constraint rule cites, by tool and rule name (how the sim verifier
    /// tells whether its inputs state a rule).
    pub constraint_sources: sim::RuleSources,
}

impl std::fmt::Debug for PolicyGuardSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyGuardSetup")
            .field("domain", &self.domain)
            .field("prompts_dir", &self.prompts_dir)
            .field("checklist_tools", &self.checklists.tools.len())
            .field("policy", &self.policy.as_ref().map(String::len))
            .field("prerequisites", &self.prerequisites.is_some())
            .field("sampling", &self.sampling)
            .field("fail_mode", &self.fail_mode)
            .field(
                "constraints",
                &self.constraints.as_ref().map(|g| g.name().to_string()),
            )
            .finish()
    }
}

impl PolicyGuardSetup {
    pub fn new(domain: impl Into<String>, prompts_dir: impl Into<PathBuf>) -> PolicyGuardSetup {
        PolicyGuardSetup {
            domain: domain.into(),
            prompts_dir: prompts_dir.into(),
            checklists: DomainChecklists::default(),
            policy: None,
            prerequisites: None,
            sampling: Sampling::default(),
            fail_mode: FailMode::default(),
            constraints: None,
            constraint_sources: sim::RuleSources::default(),
        }
    }

    pub fn with_checklists(mut self, checklists: DomainChecklists) -> Self {
        self.checklists = checklists;
        self
    }

    pub fn with_policy(mut self, policy: impl Into<String>) -> Self {
        self.policy = Some(policy.into());
        self
    }

    pub fn with_prerequisites(mut self, prerequisites: Prerequisites) -> Self {
        self.prerequisites = Some(prerequisites);
        self
    }

    /// Loads `<tasks_dir>/<domain>/prerequisites.toml`.
    pub fn load_prerequisites(mut self, tasks_dir: &Path) -> Result<Self, PolicyGuardError> {
        self.prerequisites = Some(Prerequisites::load_domain(tasks_dir, &self.domain)?);
        Ok(self)
    }

    pub fn with_sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    pub fn with_fail_mode(mut self, fail_mode: FailMode) -> Self {
        self.fail_mode = fail_mode;
        self
    }

    pub fn with_constraints(
        mut self,
        constraints: Arc<dyn Guard>,
        sources: sim::RuleSources,
    ) -> Self {
        self.constraints = Some(constraints);
        self.constraint_sources = sources;
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyGuardError {
    #[error(
        "unknown PolicyGuard variant `{0}` (known: pg-raw, pg-raw-traj, pg-checklist, pg-checklist-only, \
         pg-checklist-strict, pg-checklist-only-strict)"
    )]
    UnknownVariant(String),
    #[error("strict mode applies to the checklist variants only, not `{0}`")]
    StrictWithoutChecklist(String),
    #[error(
        "`{variant}` needs the {domain} checklists, but none were loaded (tasks/{domain}/checklist/)"
    )]
    MissingChecklists { variant: String, domain: String },
    #[error("the offline sim verifier needs tasks/{0}/prerequisites.toml; none was given")]
    MissingPrerequisites(String),
    #[error("the prerequisites file is for domain `{file}`, the guard for `{guard}`")]
    DomainMismatch { file: String, guard: String },
    #[error(transparent)]
    Prerequisites(#[from] PrerequisitesError),
    #[error(transparent)]
    Prompt(#[from] TemplateError),
}

/// Builds a PolicyGuard guard.
///
/// `variant` is a config name (`pg-raw`, `pg-raw-traj`, `pg-checklist`, `pg-checklist-only`,
/// optionally with `-strict` on the checklist variants); `strict = true` also asks for strict
/// mode. [`RoleModel::Sim`] gives the offline [`SimVerifier`] (needs `setup.prerequisites`); a
/// built model gives the LLM [`PolicyGuardVerifier`] (reads its templates from
/// `setup.prompts_dir`; checklist variants need `setup.checklists`).
pub fn build_policyguard(
    variant: &str,
    strict: bool,
    model: RoleModel,
    setup: &PolicyGuardSetup,
) -> Result<Arc<dyn Guard>, PolicyGuardError> {
    let (v, strict) = resolve_variant(variant, strict)?;
    build_variant(v, strict, model, setup)
}

/// [`build_policyguard`] for a variant already parsed (the guard factory's typed name).
pub(crate) fn build_variant(
    v: Variant,
    strict: bool,
    model: RoleModel,
    setup: &PolicyGuardSetup,
) -> Result<Arc<dyn Guard>, PolicyGuardError> {
    if strict && !v.supports_strict() {
        return Err(PolicyGuardError::StrictWithoutChecklist(
            v.as_str().to_string(),
        ));
    }
    match model {
        RoleModel::Sim => {
            let prerequisites = setup
                .prerequisites
                .clone()
                .ok_or_else(|| PolicyGuardError::MissingPrerequisites(setup.domain.clone()))?;
            if prerequisites.domain != setup.domain {
                return Err(PolicyGuardError::DomainMismatch {
                    file: prerequisites.domain,
                    guard: setup.domain.clone(),
                });
            }
            let mut sim = SimVerifier::new(v, strict, prerequisites, setup.checklists.clone());
            if let Some(c) = &setup.constraints {
                sim = sim.with_constraints(c.clone(), setup.constraint_sources.clone());
            }
            if let Some(policy) = &setup.policy {
                sim = sim.with_policy(policy);
            }
            Ok(Arc::new(sim))
        }
        RoleModel::Built(model) => Ok(Arc::new(PolicyGuardVerifier::new(v, strict, model, setup)?)),
    }
}

/// Validates a variant name and strictness.
pub(crate) fn resolve_variant(
    variant: &str,
    strict: bool,
) -> Result<(Variant, bool), PolicyGuardError> {
    if let Some((v, s)) = parse_config_name(variant) {
        if strict && !v.supports_strict() {
            return Err(PolicyGuardError::StrictWithoutChecklist(
                variant.to_string(),
            ));
        }
        return Ok((v, s || strict));
    }
    match variant.strip_suffix("-strict").and_then(Variant::from_name) {
        Some(_) => Err(PolicyGuardError::StrictWithoutChecklist(
            variant.to_string(),
        )),
        None => Err(PolicyGuardError::UnknownVariant(variant.to_string())),
    }
}

/// Synthesised remediation from NOT MET reasons (at most three named), 1–3 sentences.
pub(crate) fn synthesise_remediation(
    tool: &str,
    not_met: &[&tauguard_core::record::RequirementResult],
) -> String {
    if not_met.is_empty() {
        return format!(
            "The policy verifier blocked `{tool}`. Re-check the policy requirements for this action, \
             including an explicit yes from the user after a summary, before retrying."
        );
    }
    let items: Vec<String> = not_met
        .iter()
        .take(3)
        .map(|r| {
            let reason = r.reason.trim().trim_end_matches('.');
            if reason.is_empty() {
                r.name.clone()
            } else {
                format!("{} ({reason})", r.name)
            }
        })
        .collect();
    let more = if not_met.len() > 3 {
        format!(" and {} more", not_met.len() - 3)
    } else {
        String::new()
    };
    format!(
        "The call `{tool}` was blocked because these requirements are not met: {}{more}. \
         Satisfy them first, then retry the call.",
        items.join("; ")
    )
}
