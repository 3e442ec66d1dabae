//! Prompt templates of the checklist compiler: `<prompts_dir>/compile/*.jinja` (the CLI passes
//! `configs/prompts`; a directory that holds the templates itself is accepted too), loaded and
//! rendered by the family's one template loader ([`tauguard_guards::Templates`]).

use std::path::Path;
use tauguard_guards::{TemplateError, Templates};

pub const SYSTEM: &str = crate::session::SYSTEM;
pub const CLASSIFY: &str = "classify.jinja";
pub const TOOL_CHECKLIST: &str = "tool_checklist.jinja";
pub const GENERAL_RULES: &str = "general_rules.jinja";
pub const REVIEW: &str = "review.jinja";
pub const REPAIR: &str = crate::session::REPAIR;

const ALL: [&str; 6] = [
    SYSTEM,
    CLASSIFY,
    TOOL_CHECKLIST,
    GENERAL_RULES,
    REVIEW,
    REPAIR,
];

/// Loads the six templates from `<prompts_dir>/compile/`, or from `prompts_dir` itself when it
/// has no `compile/` subdirectory.
pub fn load(prompts_dir: &Path) -> Result<Templates, TemplateError> {
    let nested = prompts_dir.join("compile");
    let dir = if nested.is_dir() {
        nested
    } else {
        prompts_dir.to_path_buf()
    };
    Templates::load(&dir, &ALL)
}
