//! The offline checklist compiler (PolicyGuard's four-step pipeline):
//!
//! 1. **classify** the domain's tools as mutating / read-only / other (JSON reply);
//! 2. **tool checklist**: one YAML checklist per mutating tool;
//! 3. **general rules**: one `general_rules.yaml` for cross-tool rules;
//! 4. **review**: a reviewer pass over every YAML against the policy, returning a corrected
//!    document.
//!
//! Every reply is extracted robustly (code fences, surrounding prose) and validated with the
//! artifact loader's own checks; an invalid reply gets one repair turn that quotes the
//! validation errors (the session both compilers share). A step that is still invalid fails
//! the compile, except the review: an invalid review keeps the pre-review document and notes
//! it in the report. The result is a
//! new artifact set in the output directory plus `compile_report.json` (model, step results,
//! repairs, token usage and cost); the set is reloaded with [`load_domain_checklists`] before
//! returning.

pub mod prompts;
mod report;
mod steps;

pub use crate::CompileInput;
pub use crate::session::{CompileOptions, CompileUsage, StepOutcome};
pub use report::{ArtifactCounts, CompileReport, REPORT_FILE, REPORT_SCHEMA, Step, StepRecord};

use crate::extract;
use crate::output::{OutputError, check_empty, io_at};
use crate::session::{Ask, AskError, Session};
use serde::Serialize;
use std::path::Path;
use steps::{Classified, Steps};
use tauguard_core::ToolSpec;
use tauguard_guards::{
    ArtifactError, GENERAL_RULES_FILE, TemplateError, load_domain_checklists,
    write_domain_checklists,
};
use tauguard_llm::LlmError;

/// Why a compile failed.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Prompt(#[from] TemplateError),
    #[error("{step} ({target}): model call failed")]
    Model {
        step: Step,
        target: String,
        #[source]
        cause: LlmError,
    },
    #[error("{step} ({target}): no valid reply after one repair: {error}")]
    Invalid {
        step: Step,
        target: String,
        error: String,
    },
    /// A draft the review step shows the model does not render as YAML.
    #[error("{step} ({target}): the draft does not render as YAML")]
    Draft {
        step: Step,
        target: String,
        #[source]
        cause: serde_saphyr::SerializeError,
    },
    #[error("the compiled artifact set does not load")]
    Artifact(#[from] ArtifactError),
}

/// Runs the four-step pipeline with [`CompileOptions::default`] and writes a new artifact set
/// into `out_dir`; the templates are `compile/*.jinja` under the input's prompt directory.
pub async fn compile_checklists(
    input: CompileInput<'_>,
    out_dir: &Path,
) -> Result<CompileReport, CompileError> {
    compile_checklists_with(input, out_dir, &CompileOptions::default()).await
}

/// [`compile_checklists`] with explicit options.
pub async fn compile_checklists_with(
    input: CompileInput<'_>,
    out_dir: &Path,
    options: &CompileOptions,
) -> Result<CompileReport, CompileError> {
    check_empty(out_dir, options.overwrite)?;
    let prompts = prompts::load(input.prompts_dir)?;
    let tool_views: Vec<ToolView> = input.tools.iter().map(ToolView::of).collect();
    let mut run = Run {
        session: Session::open(input.model, &prompts, options, input.domain)?,
        steps: Vec::new(),
    };
    let mut steps = Steps {
        run: &mut run,
        domain: input.domain,
        policy: input.policy,
    };
    let classified = steps.classify(input.tools, &tool_views).await?;
    let mut drafts = steps.draft_tool_checklists(&classified).await?;
    drafts.general = steps.draft_general_rules(&classified).await?;
    let reviewed = steps.review(&classified, &drafts).await?;
    let Classified {
        info,
        mismatches: classification_mismatches,
        ..
    } = classified;

    // Write, report, reload.
    prepare_out_dir(out_dir, options.overwrite)?;
    write_domain_checklists(out_dir, &reviewed)?;
    let mut files: Vec<String> = reviewed.tools.keys().map(|t| format!("{t}.yaml")).collect();
    files.push(GENERAL_RULES_FILE.to_string());
    files.push(REPORT_FILE.to_string());
    let repairs = run
        .steps
        .iter()
        .map(|s| s.tally.calls.saturating_sub(1))
        .sum();
    let reviews = || run.steps.iter().filter(|s| s.step == Step::Review);
    let report = CompileReport {
        schema: REPORT_SCHEMA.to_string(),
        domain: input.domain.to_string(),
        model: input.model.id().to_string(),
        classification: info.clone(),
        classification_mismatches,
        repairs,
        reviews_changed: reviews().filter(|s| s.tally.changed == Some(true)).count() as u32,
        reviews_kept_previous: reviews()
            .filter(|s| s.tally.outcome == StepOutcome::KeptPrevious)
            .count() as u32,
        counts: ArtifactCounts::of(&reviewed),
        usage: run.session.usage.clone(),
        steps: run.steps.clone(),
        files,
    };
    let path = out_dir.join(REPORT_FILE);
    let json = serde_json::to_string_pretty(&report).expect("the report serializes");
    std::fs::write(&path, json + "\n").map_err(io_at(&path))?;
    let loaded = load_domain_checklists(out_dir, &info)?;
    debug_assert_eq!(loaded, reviewed);
    Ok(report)
}

/// A tool as the templates see it.
#[derive(Debug, Clone, Serialize)]
struct ToolView {
    name: String,
    description: String,
    /// The JSON schema of the arguments, compact.
    parameters: String,
}

impl ToolView {
    fn of(spec: &ToolSpec) -> ToolView {
        ToolView {
            name: spec.name.clone(),
            description: crate::classify::one_line_description(spec),
            parameters: spec.parameters.to_string(),
        }
    }
}

/// The checklist compile's session with its model and the record of every step.
struct Run<'a> {
    session: Session<'a>,
    steps: Vec<StepRecord>,
}

impl Run<'_> {
    /// One step: ask, validate, and on failure repair once (the shared session). Returns
    /// `None` only for the review step (both replies invalid); other steps fail instead.
    async fn ask<T>(
        &mut self,
        step: Step,
        target: &str,
        user: String,
        format: &'static str,
        json_mode: bool,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, CompileError> {
        let ask = Ask {
            user,
            json_mode,
            format: Some(format),
            may_keep_previous: step == Step::Review,
        };
        let reply = match self.session.ask_validated(ask, parse).await {
            Ok(reply) => reply,
            Err(AskError::Prompt(e)) => return Err(CompileError::Prompt(e)),
            Err(AskError::Model(cause)) => {
                return Err(CompileError::Model {
                    step,
                    target: target.to_string(),
                    cause,
                });
            }
            Err(AskError::Invalid(error)) => return Err(invalid(step, target, error)),
        };
        self.steps.push(StepRecord {
            step,
            target: target.to_string(),
            tally: reply.tally,
        });
        Ok(reply.value)
    }

    /// The reviewed document, or the draft when the review stayed invalid; records whether
    /// the review changed anything.
    fn settle_review<T: Clone + PartialEq>(&mut self, result: Option<T>, draft: &T) -> T {
        let record = self.steps.last_mut().expect("the review step was recorded");
        match result {
            Some(reviewed) => {
                record.tally.changed = Some(&reviewed != draft);
                reviewed
            }
            None => {
                record.tally.changed = Some(false);
                draft.clone()
            }
        }
    }
}

fn invalid(step: Step, target: &str, error: String) -> CompileError {
    CompileError::Invalid {
        step,
        target: target.to_string(),
        error,
    }
}

/// Tries the YAML candidates of `reply` in order; the first that validates wins, otherwise the
/// error of the first candidate (the most likely document) is returned.
fn parse_yaml_reply<T>(
    reply: &str,
    top_keys: &[&str],
    parse: impl Fn(&str) -> Result<T, ArtifactError>,
) -> Result<T, String> {
    if reply.trim().is_empty() {
        return Err("the reply was empty".to_string());
    }
    let mut first_error = None;
    for candidate in extract::yaml_candidates(reply, top_keys) {
        match parse(&candidate) {
            Ok(v) => return Ok(v),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let key = top_keys.first().copied().unwrap_or("tool");
    match first_error {
        Some(e) if e.fields().any(|f| f != "(document)") => Err(e.details()),
        Some(e) => Err(format!(
            "no YAML document found in the reply (it must be a mapping that starts with `{key}:`)\n{}",
            e.details()
        )),
        None => Err(format!(
            "no YAML document found in the reply (it must start with `{key}:`)"
        )),
    }
}

/// Creates the output directory; when overwriting, removes the previous artifact set
/// (`*.yaml`, `*.yml` and the report) so no stale checklist survives.
fn prepare_out_dir(out_dir: &Path, overwrite: bool) -> Result<(), OutputError> {
    check_empty(out_dir, overwrite)?;
    std::fs::create_dir_all(out_dir).map_err(io_at(out_dir))?;
    if overwrite {
        for entry in std::fs::read_dir(out_dir).map_err(io_at(out_dir))? {
            let path = entry.map_err(io_at(out_dir))?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_file()
                && (name.ends_with(".yaml") || name.ends_with(".yml") || name == REPORT_FILE)
            {
                std::fs::remove_file(&path).map_err(io_at(&path))?;
            }
        }
    }
    Ok(())
}
