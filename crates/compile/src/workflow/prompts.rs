//! Prompt templates of the workflow compiler: `<prompts_dir>/compile/workflow/*.jinja` (the CLI
//! passes `configs/prompts`), loaded by the guards' one template loader
//! ([`tauguard_guards::Templates`]) so a template naming a variable the code does
//! not pass fails loudly. Every stage prompt opens with `Stage N of 6`, which also tells a log reader
//! (or a scripted test model) which step a request belongs to.

use std::path::Path;
use tauguard_guards::{TemplateError, Templates};

pub(super) const SYSTEM: &str = crate::session::SYSTEM;
pub(super) const TOOLS: &str = "tools.jinja";
pub(super) const PLAN: &str = "plan.jinja";
pub(super) const PLAN_REVIEW: &str = "plan_review.jinja";
pub(super) const SUBFLOW: &str = "subflow.jinja";
pub(super) const BRANCH_REVIEW: &str = "branch_review.jinja";
pub(super) const COMPOSE: &str = "compose.jinja";
pub(super) const MAPPING: &str = "mapping.jinja";
pub(super) const REPAIR: &str = crate::session::REPAIR;

const ALL: [&str; 9] = [
    SYSTEM,
    TOOLS,
    PLAN,
    PLAN_REVIEW,
    SUBFLOW,
    BRANCH_REVIEW,
    COMPOSE,
    MAPPING,
    REPAIR,
];

/// Loads the templates from `<prompts_dir>/compile/workflow/`, else `<prompts_dir>/workflow/`,
/// else `prompts_dir` itself.
pub(super) fn load(prompts_dir: &Path) -> Result<Templates, TemplateError> {
    let dir = [
        prompts_dir.join("compile/workflow"),
        prompts_dir.join("workflow"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or_else(|| prompts_dir.to_path_buf());
    Templates::load(&dir, &ALL)
}
