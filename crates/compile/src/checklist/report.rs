//! `compile_report.json`: what a compile did — the classification the artifacts use, every
//! step's outcome and repairs, token usage and cost, and the sizes of the written set.

use crate::session::{CompileUsage, StepTally};
use serde::{Deserialize, Serialize};
use std::fmt;
use tauguard_guards::{DomainChecklists, RequirementType, ToolCatalog};

/// File name of the compile report inside the output directory.
pub const REPORT_FILE: &str = "compile_report.json";
/// Schema tag of [`CompileReport`].
pub const REPORT_SCHEMA: &str = "tauguard.checklist_compile_report/1";

/// The four steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Classify,
    ToolChecklist,
    GeneralRules,
    Review,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Classify => "classify",
            Step::ToolChecklist => "tool_checklist",
            Step::GeneralRules => "general_rules",
            Step::Review => "review",
        })
    }
}

/// One step for one target (a tool, `general_rules`, or `tools` for step 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: Step,
    pub target: String,
    /// Its outcome and tallies; `changed` is the review's: whether the reviewed document
    /// differs from the draft.
    #[serde(flatten)]
    pub tally: StepTally,
}

/// Sizes of the written artifact set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactCounts {
    pub tools: usize,
    pub constraints: usize,
    pub requirements: usize,
    pub data_requirements: usize,
    pub procedural_requirements: usize,
    pub general_rules: usize,
}

impl ArtifactCounts {
    pub fn of(set: &DomainChecklists) -> ArtifactCounts {
        let reqs = || set.tools.values().flat_map(|c| c.requirements.iter());
        ArtifactCounts {
            tools: set.tools.len(),
            constraints: set.constraint_count(),
            requirements: set.requirement_count(),
            data_requirements: reqs().filter(|r| r.kind == RequirementType::Data).count(),
            procedural_requirements: reqs()
                .filter(|r| r.kind == RequirementType::Procedural)
                .count(),
            general_rules: set.general.len(),
        }
    }
}

/// `compile_report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileReport {
    pub schema: String,
    pub domain: String,
    /// [`ChatModel::id`] of the compiling model.
    pub model: String,
    /// Step 1's classification, as the artifacts use it.
    pub classification: ToolCatalog,
    /// Disagreements with [`crate::CompileOptions::known_tools`] (`tool: compiled X, environment Y`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classification_mismatches: Vec<String>,
    pub steps: Vec<StepRecord>,
    /// Repair turns over all steps (a review that ended with the previous version counts its
    /// repair too).
    pub repairs: u32,
    /// Reviews that changed their document.
    pub reviews_changed: u32,
    /// Reviews whose output stayed invalid after a repair: the pre-review document was kept.
    pub reviews_kept_previous: u32,
    pub counts: ArtifactCounts,
    pub usage: CompileUsage,
    /// Files written, relative to the output directory.
    pub files: Vec<String>,
}
