//! Runtime policy guards.
//!
//! A guard sits between the agent and the environment. The orchestrator calls
//! [`Guard::on_mutating_call`] for every mutating call before it executes (read-only calls
//! bypass guards); on [`Verdict::Block`] the call does not execute and the agent receives the
//! remediation as that call's tool result. [`Guard::before_agent_turn`] lets a guard inject
//! guidance before the agent answers a user turn.
//!
//! Configurations: `baseline` (no guard), [`ToolGuard`] (argument-level rules, no dialogue),
//! the PolicyGuard verifier family ([`build_policyguard`]: `pg-raw`, `pg-raw-traj`,
//! `pg-checklist`, `pg-checklist-only`, strict mode; with its offline [`SimVerifier`] and
//! [`DomainChecklists`]), [`Hybrid`] (rules first, verifier after), and the PolicyGuide
//! workflow guide ([`PolicyGuide`]: `policyguide` over the frozen graph, `policyguide-raw`
//! over the raw policy). Every artifact family is checked against one tool catalogue per
//! domain ([`ToolCatalog`]). A guard written in another language speaks the external guard
//! protocol ([`ExternalGuard`]) and sits behind the same seam.
//!
//! The modules are private: what other crates use is the `pub use` list below, by family.

mod artifact_diff;
mod artifact_set;
mod block_all;
mod catalog;
mod external;
mod factory;
mod hybrid;
mod policyguard;
mod policyguide;
mod provenance;
mod seam;
mod toolguard;

// The seam every guard sits behind, and the guards by name.
pub use factory::{
    BuildCause, DEFAULT_GUIDE_MAX_TOKENS, DEFAULT_VERIFIER_MAX_TOKENS, GUARDS, GuardBuildError,
    GuardEntry, GuardInputs, GuardName, GuardOptions, KNOWN_GUARDS, UnknownGuard, build_guard,
};
pub use seam::{
    Advice, Decision, Guard, GuardContext, GuardError, GuardState, Guidance, ModelPrompt, Ruling,
    SessionEnd,
};
pub use tauguard_core::record::Verdict;

// The tool catalogue and the compiled artifact sets every family reads.
pub use artifact_diff::{ChecklistDiff, WorkflowDiff};
pub use artifact_set::{
    ArtifactSet, ArtifactSetError, BUNDLE_FILE, CHECKLIST_DIR, FROZEN, Part, WORKFLOW_DIR,
};
pub use catalog::{ToolCatalog, ToolClass};
pub use provenance::{Entry, Origin, PROVENANCE_FILE, Provenance, ProvenanceError};

// Rules: ToolGuard, Hybrid, and the block-everything floor.
pub use block_all::BlockAll;
pub use hybrid::Hybrid;
pub use toolguard::ToolGuard;
pub use toolguard::load::{ArgumentRule, RuleError, RuleSet, ToolRules, parse_rule_file};
pub use toolguard::schema::OnError;

// The PolicyGuard verifier family, its checklists, prerequisites and templates.
pub use policyguard::checklist::validate::{
    ArtifactError, ArtifactIssue, parse_general_rules, parse_tool_checklist,
};
pub use policyguard::checklist::{
    Constraint, DomainChecklists, GENERAL_RULES_FILE, GeneralRule, GeneralRules, Requirement,
    RequirementType, StatedRule, ToolChecklist, general_rules_to_yaml, load_domain_checklists,
    tool_checklist_to_yaml, write_domain_checklists,
};
pub use policyguard::prerequisites::{
    ArgumentLink, Prerequisites, PrerequisitesError, ToolPrerequisites,
};
pub use policyguard::sim::grounding::RuleSources;
pub use policyguard::sim::{Input, Inputs, SimEvaluation, SimVerifier};
pub use policyguard::templates::{TemplateError, Templates};
pub use policyguard::{
    FAIL_CLOSED_MESSAGE, FailMode, PolicyGuardError, PolicyGuardSetup, PolicyGuardVerifier,
    Sampling, Variant, build_policyguard, parse_config_name,
};

// PolicyGuide: the workflow bundle, its validation, and the guides over it.
pub use policyguide::flow::Flow;
pub use policyguide::frozen::{FrozenBundleError, bundle_path, load_flow};
pub use policyguide::guide::{GuideReply, GuideRequest, GuideVerifier, PolicyGuide};
pub use policyguide::llm::{
    FAIL_CLOSED_GUIDANCE, GuideKnowledge, LlmGuide, LlmGuideError, LlmGuideSetup,
};
pub use policyguide::state::RequestUpdate;
pub use policyguide::{
    Actor, Bundle, Edge, Graph, Node, NodeKind, Problem, Report, Rule, SCHEMA_VERSION, Sizes,
    WorkflowError, validate,
};

// Guards outside tauguard, behind the external guard protocol. The conformance suite stays a
// namespace of its own (`conformance::{check, Target, Outcome}`): its names say what they are
// only beside the word conformance, and `check` or `Target` at the crate root would read as
// the guards' own.
pub use external::conformance;
pub use external::{
    ExternalGuard, ExternalProvenance, ExternalSource, ExternalSpec, ExternalStartError,
    GreetingError,
};
