//! Prompt templates of the checklist compiler: `<prompts_dir>/compile/*.jinja` (the CLI passes
//! `configs/prompts`; a directory that holds the templates itself is accepted too), rendered
//! with minijinja. Undefined variables are errors, so a template and the code cannot drift
//! apart silently.

use super::CompileError;
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub const SYSTEM: &str = "system.jinja";
pub const CLASSIFY: &str = "classify.jinja";
pub const TOOL_CHECKLIST: &str = "tool_checklist.jinja";
pub const GENERAL_RULES: &str = "general_rules.jinja";
pub const REVIEW: &str = "review.jinja";
pub const REPAIR: &str = "repair.jinja";

const ALL: [&str; 6] = [
    SYSTEM,
    CLASSIFY,
    TOOL_CHECKLIST,
    GENERAL_RULES,
    REVIEW,
    REPAIR,
];

/// The loaded templates.
pub struct CompilePrompts {
    env: Environment<'static>,
    dir: PathBuf,
}

impl std::fmt::Debug for CompilePrompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompilePrompts")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl CompilePrompts {
    /// Loads the six templates from `<prompts_dir>/compile/`, or from `prompts_dir` itself
    /// when it has no `compile/` subdirectory.
    pub fn load(prompts_dir: &Path) -> Result<CompilePrompts, CompileError> {
        let nested = prompts_dir.join("compile");
        let dir = if nested.is_dir() {
            nested
        } else {
            prompts_dir.to_path_buf()
        };
        let mut sources = Vec::new();
        for name in ALL {
            let path = dir.join(name);
            let text =
                std::fs::read_to_string(&path).map_err(|cause| CompileError::Io { path, cause })?;
            sources.push((name, text));
        }
        Self::from_sources(dir, sources)
    }

    fn from_sources(
        dir: PathBuf,
        sources: Vec<(&'static str, String)>,
    ) -> Result<CompilePrompts, CompileError> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| template_error("syntax", &e))?;
        env.set_syntax(syntax);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        for (name, text) in sources {
            env.add_template_owned(name, text)
                .map_err(|e| template_error(name, &e))?;
        }
        Ok(CompilePrompts { env, dir })
    }

    /// Renders template `name` with `vars`; blank-line runs are collapsed and the ends trimmed.
    pub fn render<S: Serialize>(&self, name: &str, vars: &S) -> Result<String, CompileError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| template_error(name, &e))?;
        let text = template
            .render(Serde(vars))
            .map_err(|e| template_error(name, &e))?;
        Ok(tidy(&text))
    }
}

fn template_error(name: &str, e: &minijinja::Error) -> CompileError {
    let mut message = e.to_string();
    if let Some(detail) = e.detail()
        && !message.contains(detail)
    {
        message = format!("{message} ({detail})");
    }
    CompileError::Prompt {
        name: name.to_string(),
        message,
    }
}

fn tidy(text: &str) -> String {
    let mut out = Vec::new();
    let mut blank = false;
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            if !blank {
                out.push(line);
            }
            blank = true;
        } else {
            out.push(line);
            blank = false;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_variables_are_errors() {
        let sources = ALL
            .iter()
            .map(|n| (*n, "{{ missing }}".to_string()))
            .collect();
        let p = CompilePrompts::from_sources(PathBuf::new(), sources).unwrap();
        let err = p.render(SYSTEM, &serde_json::json!({})).unwrap_err();
        assert!(err.to_string().contains(SYSTEM), "{err}");
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n a\n\n\n\nb  \n\n"), "a\n\nb");
    }
}
