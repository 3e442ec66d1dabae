//! `compile_report.json` of the workflow compiler: what each of the six stages did (model
//! calls, repairs, whether a review changed its input), the plan the subflows were written
//! from, the subflows pruned, the validator's verdict and the policy↔graph mapping review, so
//! a compiled bundle can be audited without re-running the model.

use super::plan::Plan;
use crate::session::{CompileUsage, StepOutcome, StepTally};
use serde::{Deserialize, Serialize};
use std::fmt;
use tauguard_guards::ToolCatalog;

/// File name of the compile report inside the output directory.
pub const REPORT_FILE: &str = "compile_report.json";
/// File name of the compiled bundle inside the output directory.
pub const BUNDLE_FILE: &str = "bundle.json";
/// Schema tag of [`WorkflowCompileReport`].
pub const REPORT_SCHEMA: &str = "tauguard.workflow_compile_report/1";

/// The six stages, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// 1: tool specs and the mutating tools.
    Tools,
    /// 2: request types, shared procedures, ordered subflows, coverage audit.
    Plan,
    /// 3: the reviewer's corrected plan.
    PlanReview,
    /// 4: one graph per planned subflow, each with a branch review.
    Subflows,
    /// 5: the main graph (entry spine, classifier, one subflow node per request type).
    Compose,
    /// 6: pruning, the validator, the policy↔graph mapping review.
    Validate,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Tools,
        Stage::Plan,
        Stage::PlanReview,
        Stage::Subflows,
        Stage::Compose,
        Stage::Validate,
    ];

    pub fn number(self) -> usize {
        Stage::ALL.iter().position(|&s| s == self).unwrap_or(0) + 1
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Tools => "tools",
            Stage::Plan => "plan",
            Stage::PlanReview => "plan_review",
            Stage::Subflows => "subflows",
            Stage::Compose => "compose",
            Stage::Validate => "validate",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One kind of model exchange; each belongs to one [`Stage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Classify,
    Plan,
    PlanReview,
    Subflow,
    BranchReview,
    Compose,
    Mapping,
}

impl Step {
    pub fn stage(self) -> Stage {
        match self {
            Step::Classify => Stage::Tools,
            Step::Plan => Stage::Plan,
            Step::PlanReview => Stage::PlanReview,
            Step::Subflow | Step::BranchReview => Stage::Subflows,
            Step::Compose => Stage::Compose,
            Step::Mapping => Stage::Validate,
        }
    }

    /// Steps whose reply may stay invalid: the previous version (the draft, or for compose
    /// the code's own wording, for the mapping no mapping) is kept instead of failing.
    pub fn may_keep_previous(self) -> bool {
        matches!(
            self,
            Step::PlanReview | Step::BranchReview | Step::Compose | Step::Mapping
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Step::Classify => "classify",
            Step::Plan => "plan",
            Step::PlanReview => "plan_review",
            Step::Subflow => "subflow",
            Step::BranchReview => "branch_review",
            Step::Compose => "compose",
            Step::Mapping => "mapping",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One step for one target (`tools`, `plan`, a subflow id, `main`, `bundle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub stage: Stage,
    pub step: Step,
    pub target: String,
    /// Its outcome and tallies.
    #[serde(flatten)]
    pub tally: StepTally,
}

/// One stage at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageSummary {
    pub number: usize,
    pub stage: Stage,
    pub calls: u32,
    pub repairs: u32,
    /// Steps of the stage that kept the previous version.
    pub kept_previous: u32,
    /// What the stage produced, in words.
    pub result: String,
}

/// The validator's verdict on the written bundle (it always passed: a failing bundle is not
/// written).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationSummary {
    /// Which catalogue the bundle was validated against: `environment` or `classification`.
    pub catalog: String,
    pub graphs: usize,
    pub nodes: usize,
    pub edges: usize,
    pub authorization_nodes: usize,
}

/// The mapping review's answer: which policy statements the graph implements where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MappingReview {
    /// A policy statement and the `graph/node` ids that implement it.
    pub mappings: Vec<PolicyMapping>,
    /// Policy statements no node implements.
    #[serde(default)]
    pub unmapped_policy: Vec<String>,
    /// `graph/node` ids the policy does not support.
    #[serde(default)]
    pub unsupported_nodes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyMapping {
    pub policy: String,
    pub nodes: Vec<String>,
}

/// `compile_report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowCompileReport {
    pub schema: String,
    pub domain: String,
    /// `ChatModel::id` of the compiling model.
    pub model: String,
    /// The six stages in order.
    pub stages: Vec<StageSummary>,
    /// Stage 1: the model's classification of the agent tools.
    pub classification: ToolCatalog,
    /// Disagreements with the environment's catalogue (`tool: compiled X, environment Y`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classification_mismatches: Vec<String>,
    /// The reviewed plan the subflows were written from.
    pub plan: Plan,
    /// Planned subflows no node of the final bundle runs, removed before validation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pruned_subflows: Vec<String>,
    pub validation: ValidationSummary,
    /// `None` when the mapping reply stayed invalid after its repair.
    pub mapping: Option<MappingReview>,
    /// Every model step, in order.
    pub steps: Vec<StepRecord>,
    /// Repair turns over all steps.
    pub repairs: u32,
    pub usage: CompileUsage,
    /// Files written, relative to the output directory.
    pub files: Vec<String>,
}

/// The per-stage summaries of `steps`, with each stage's result text.
pub(super) fn summarize(steps: &[StepRecord], results: [String; 6]) -> Vec<StageSummary> {
    Stage::ALL
        .iter()
        .zip(results)
        .map(|(&stage, result)| {
            let of = || steps.iter().filter(move |s| s.stage == stage);
            StageSummary {
                number: stage.number(),
                stage,
                calls: of().map(|s| s.tally.calls).sum(),
                repairs: of().map(|s| s.tally.calls.saturating_sub(1)).sum(),
                kept_previous: of()
                    .filter(|s| s.tally.outcome == StepOutcome::KeptPrevious)
                    .count() as u32,
                result,
            }
        })
        .collect()
}
