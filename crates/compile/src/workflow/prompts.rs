//! Prompt templates of the workflow compiler: `<prompts_dir>/compile/workflow/*.jinja` (the CLI
//! passes `configs/prompts`), loaded by the guards' one template loader
//! ([`tauguard_guards::policyguard::templates`]) so a template naming a variable the code does
//! not pass fails loudly. Every stage prompt opens with `Stage N of 6`, which also tells a log reader
//! (or a scripted test model) which step a request belongs to.

use std::path::Path;
use tauguard_guards::policyguard::templates::{TemplateError, Templates};

pub const SYSTEM: &str = "system.jinja";
pub const TOOLS: &str = "tools.jinja";
pub const PLAN: &str = "plan.jinja";
pub const PLAN_REVIEW: &str = "plan_review.jinja";
pub const SUBFLOW: &str = "subflow.jinja";
pub const BRANCH_REVIEW: &str = "branch_review.jinja";
pub const COMPOSE: &str = "compose.jinja";
pub const MAPPING: &str = "mapping.jinja";
pub const REPAIR: &str = crate::session::REPAIR;

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
pub fn load(prompts_dir: &Path) -> Result<Templates, TemplateError> {
    let dir = [
        prompts_dir.join("compile/workflow"),
        prompts_dir.join("workflow"),
    ]
    .into_iter()
    .find(|d| d.is_dir())
    .unwrap_or_else(|| prompts_dir.to_path_buf());
    Templates::load(&dir, &ALL)
}
