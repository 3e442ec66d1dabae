//! The one prompt-template loader of the PolicyGuard family (verifier prompts under
//! `configs/prompts/verifier/`, compiler prompts under `configs/prompts/compile/`) and of the
//! PolicyGuide LLM guide (`configs/prompts/guide/`).
//!
//! Both sets are rendered with the same minijinja settings: block tags trim their line
//! (`trim_blocks`, `lstrip_blocks`), no auto-escaping (prompts are plain text), and **strict
//! undefined**: a template that names a variable the code does not pass — even inside an `if`
//! — is an error naming the template file and the variable, so a template and the code cannot
//! drift apart silently. Rendered text has its blank-line runs collapsed and its ends trimmed,
//! so template whitespace never leaks into a prompt.

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Why a template could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("cannot read prompt template `{}`", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A syntax error, or a render error (an undefined variable names the variable).
    #[error("prompt template `{}`: {message}", file.display())]
    Template { file: PathBuf, message: String },
}

/// A set of templates read from one directory.
pub struct Templates {
    env: Environment<'static>,
    dir: PathBuf,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Templates {
    /// Reads `names` from `dir`.
    pub fn load(dir: &Path, names: &[&'static str]) -> Result<Templates, TemplateError> {
        let mut sources = Vec::with_capacity(names.len());
        for name in names {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path)
                .map_err(|cause| TemplateError::Io { path, cause })?;
            sources.push((*name, text));
        }
        Templates::from_sources(dir, sources)
    }

    /// Parses templates given as `(file name, source)`; `dir` is where error messages say
    /// they live.
    pub fn from_sources(
        dir: &Path,
        sources: impl IntoIterator<Item = (&'static str, String)>,
    ) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| TemplateError::Template {
                file: dir.to_path_buf(),
                message: describe(&e),
            })?;
        env.set_syntax(syntax);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        for (name, text) in sources {
            env.add_template_owned(name, text)
                .map_err(|e| TemplateError::Template {
                    file: dir.join(name),
                    message: describe(&e),
                })?;
        }
        Ok(Templates {
            env,
            dir: dir.to_path_buf(),
        })
    }

    /// Renders template `name` with `vars`, tidied.
    pub fn render<S: Serialize>(&self, name: &str, vars: &S) -> Result<String, TemplateError> {
        let fail = |message: String| TemplateError::Template {
            file: self.dir.join(name),
            message,
        };
        let template = self
            .env
            .get_template(name)
            .map_err(|e| fail(describe(&e)))?;
        match template.render(Serde(vars)) {
            Ok(text) => Ok(tidy(&text)),
            Err(e) if e.kind() == ErrorKind::UndefinedError => {
                let missing = missing_variables(&template, vars);
                let message = if missing.is_empty() {
                    describe(&e)
                } else {
                    format!(
                        "undefined variable `{}` ({})",
                        missing.join("`, `"),
                        describe(&e)
                    )
                };
                Err(fail(message))
            }
            Err(e) => Err(fail(describe(&e))),
        }
    }
}

/// The variables the template reads (with attribute paths, e.g. `tool.description`) that
/// `vars` does not provide, in name order.
fn missing_variables<S: Serialize>(
    template: &minijinja::Template<'_, '_>,
    vars: &S,
) -> Vec<String> {
    let given = serde_json::to_value(vars).unwrap_or_default();
    let mut missing: Vec<String> = template
        .undeclared_variables(true)
        .into_iter()
        .filter(|path| {
            let mut value = &given;
            for part in path.split('.') {
                match value.get(part) {
                    Some(v) => value = v,
                    // Attributes of a list item, a string or a null are not checked here.
                    None => return value.is_object(),
                }
            }
            false
        })
        .collect();
    missing.sort();
    missing
}

/// The error with its detail and line, once each.
fn describe(e: &minijinja::Error) -> String {
    let mut message = e.to_string();
    if let Some(detail) = e.detail()
        && !message.contains(detail)
    {
        message = format!("{message} ({detail})");
    }
    message
}

/// Collapses runs of blank lines to one, trims every line's end and the text's ends.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.trim().lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(source: &str) -> Templates {
        Templates::from_sources(
            Path::new("prompts/verifier"),
            [("t.jinja", source.to_string())],
        )
        .unwrap()
    }

    #[test]
    fn a_missing_variable_names_the_file_and_the_variable() {
        let t = one("Hello {{ name }} of {{ domain }}.");
        let err = t
            .render("t.jinja", &serde_json::json!({ "domain": "airline" }))
            .unwrap_err()
            .to_string();
        assert!(err.contains("prompts/verifier/t.jinja"), "{err}");
        assert!(err.contains("`name`"), "{err}");
        assert!(!err.contains("`domain`"), "{err}");
    }

    #[test]
    fn a_missing_variable_in_a_condition_is_an_error_too() {
        let t = one("{% if strict %}strict{% endif %}");
        let err = t.render("t.jinja", &serde_json::json!({})).unwrap_err();
        assert!(err.to_string().contains("`strict`"), "{err}");
        assert_eq!(
            t.render("t.jinja", &serde_json::json!({ "strict": false }))
                .unwrap(),
            ""
        );
    }

    #[test]
    fn a_missing_attribute_names_its_path() {
        let t = one("{{ tool.name }}: {{ tool.description }}");
        let err = t
            .render("t.jinja", &serde_json::json!({ "tool": { "name": "x" } }))
            .unwrap_err();
        assert!(err.to_string().contains("`tool.description`"), "{err}");
        let none = serde_json::json!({ "tool": { "name": "x", "description": null } });
        assert_eq!(t.render("t.jinja", &none).unwrap(), "x: None");
    }

    #[test]
    fn a_syntax_error_names_the_file() {
        let err = Templates::from_sources(Path::new("p"), [("bad.jinja", "{% if %}".into())])
            .unwrap_err();
        assert!(err.to_string().contains("p/bad.jinja"), "{err}");
    }

    #[test]
    fn tidy_collapses_blank_runs() {
        assert_eq!(tidy("\n a\n\n\n\nb  \n\n"), "a\n\nb");
        assert_eq!(tidy("  \n\n "), "");
    }
}
