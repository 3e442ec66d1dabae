//! The three templates of a model-calling guard, read from one folder of the prompts
//! directory: the static prefix (the system message), the per-call request (the user message)
//! and the repair turn after an unusable reply. The PolicyGuard verifier
//! (`verifier/*.jinja`) and the LLM guide (`guide/*.md`) both talk to their model in this
//! shape; each names its folder and files once, and the loading and rendering live here.

use super::templates::{TemplateError, Templates};
use serde::Serialize;
use std::path::Path;

/// The three templates of one guard, parsed.
#[derive(Debug)]
pub struct GuardPrompts {
    templates: Templates,
    /// System, request and repair template names, in that order.
    files: [&'static str; 3],
}

impl GuardPrompts {
    /// Loads `files` (system, request, repair) from `dir`.
    pub fn load(dir: &Path, files: [&'static str; 3]) -> Result<GuardPrompts, TemplateError> {
        Ok(GuardPrompts {
            templates: Templates::load(dir, &files)?,
            files,
        })
    }

    /// The static prefix (system message).
    pub fn render_prefix(&self, vars: &impl Serialize) -> Result<String, TemplateError> {
        self.templates.render(self.files[0], vars)
    }

    /// The dynamic part (user message).
    pub fn render_request(&self, vars: &impl Serialize) -> Result<String, TemplateError> {
        self.templates.render(self.files[1], vars)
    }

    /// The repair instruction after an unusable reply.
    pub fn render_repair(&self, error: &str) -> Result<String, TemplateError> {
        #[derive(Serialize)]
        struct Vars<'a> {
            error: &'a str,
        }
        self.templates.render(self.files[2], &Vars { error })
    }
}
