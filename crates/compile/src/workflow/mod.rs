//! The offline workflow compiler (PolicyGuide's six-stage pipeline): a domain's policy and
//! agent tools in, a workflow bundle ([`tauguard_guards::Bundle`], schema 1) out.
//!
//! 1. **tools** ([`tools`]): the agent tool specs; the model classifies them, and the
//!    classification is cross-checked against the environment's catalogue;
//! 2. **plan** ([`plan`]): request types, shared procedures, the subflows in writing order and
//!    a coverage audit of the mutating tools, as one JSON plan;
//! 3. **plan review**: a reviewer pass returns the corrected plan;
//! 4. **subflows** ([`subflow`]): one graph per planned subflow, deserialized with the
//!    bundle's own types and checked with the validator's single-graph rules, then a branch
//!    review of its decisions;
//! 5. **compose** ([`compose`]): the main graph, built in code from the plan; the model only
//!    words the classifier and the refusal;
//! 6. **validate**: subflows no node runs are pruned, the bundle must pass
//!    [`tauguard_guards::validate`] (an invalid bundle fails the compile with the
//!    validator's report), and a mapping review ([`mapping`]) goes to the report.
//!
//! Every reply is extracted robustly (code fences, prose) and validated; an invalid reply gets
//! one repair turn quoting the errors (the session both compilers share). The plan, the subflows and the
//! classification fail the compile when still invalid; the reviews, the wording and the
//! mapping keep the previous version instead. Nothing is written unless the bundle is valid:
//! then `bundle.json` and `compile_report.json` ([`report`]) go into the output directory.

mod compose;
mod mapping;
mod output;
mod plan;
mod prompts;
mod report;
mod run;
mod stages;
mod subflow;
mod tools;

pub use compose::{NodeText, Wording};
pub use plan::{Coverage, DENY_LABEL, Plan, PlannedSubflow, RequestType};
pub use report::{
    BUNDLE_FILE, MappingReview, PolicyMapping, REPORT_FILE, REPORT_SCHEMA, Stage, StageSummary,
    Step, StepRecord, ValidationSummary, WorkflowCompileReport,
};

pub use crate::CompileInput;
pub use crate::session::{CompileOptions, CompileUsage, StepOutcome};

use crate::output::OutputError;
use crate::session::Session;
use run::Run;
use stages::{Compile, Validated};
use std::path::Path;
use tauguard_guards::{Bundle, TemplateError, WorkflowError};
use tauguard_llm::LlmError;

/// Why a workflow compile failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowCompileError {
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Prompt(#[from] TemplateError),
    #[error("stage {} ({}), {step} `{target}`: model call failed", .step.stage().number(), .step.stage())]
    Model {
        step: Step,
        target: String,
        #[source]
        cause: LlmError,
    },
    #[error("stage {} ({}), {step} `{target}`: no valid reply after one repair:\n{error}", .step.stage().number(), .step.stage())]
    Invalid {
        step: Step,
        target: String,
        error: String,
    },
    #[error("stage 6 (validate): the compiled workflow bundle for domain `{domain}` fails validation with {} problem(s):\n{}", .problems.len(), .problems.join("\n"))]
    InvalidBundle {
        domain: String,
        problems: Vec<String>,
    },
    #[error("the written workflow bundle does not load back")]
    Reload(#[source] WorkflowError),
}

/// Runs the six stages and writes `bundle.json` and `compile_report.json` into `out_dir`; the
/// templates are `compile/workflow/*.jinja` under the input's prompt directory. With
/// `options.known_tools` (the environment's catalogue) every check and the final validation
/// use that catalogue; without it, the model's classification.
pub async fn compile_workflow(
    input: CompileInput<'_>,
    out_dir: &Path,
    options: &CompileOptions,
) -> Result<WorkflowCompileReport, WorkflowCompileError> {
    crate::output::check_empty(out_dir, options.overwrite)?;
    let templates = prompts::load(input.prompts_dir)?;
    let mut c = Compile {
        s: Run {
            session: Session::open(input.model, &templates, options, input.domain)?,
            steps: Vec::new(),
        },
        domain: input.domain,
        policy: input.policy,
    };
    let (tools, stage1) = c.classify_tools(input.tools).await?;
    let draft = c.draft_plan(&tools).await?;
    let (plan, stage2, stage3) = c.review_plan(&tools, draft).await?;
    let (graphs, stage4) = c.write_subflows(&plan, &tools).await?;
    let (main, stage5) = c.compose_main(&plan).await?;
    let (done, stage6) = c.validate_and_map(main, graphs, &tools).await?;
    let s = c.s;
    let Validated {
        bundle,
        pruned,
        sizes,
        mapping,
    } = done;
    // Write, report, reload.
    let report = WorkflowCompileReport {
        schema: REPORT_SCHEMA.to_string(),
        domain: input.domain.to_string(),
        model: input.model.id().to_string(),
        stages: report::summarize(&s.steps, [stage1, stage2, stage3, stage4, stage5, stage6]),
        classification: tools.classification,
        classification_mismatches: tools.mismatches,
        plan,
        pruned_subflows: pruned,
        validation: ValidationSummary {
            catalog: tools.catalog_name.to_string(),
            graphs: sizes.graphs,
            nodes: sizes.nodes,
            edges: sizes.edges,
            authorization_nodes: sizes.authorization_nodes,
        },
        mapping,
        repairs: s
            .steps
            .iter()
            .map(|r| r.tally.calls.saturating_sub(1))
            .sum(),
        usage: s.session.usage.clone(),
        steps: s.steps.clone(),
        files: vec![BUNDLE_FILE.to_string(), REPORT_FILE.to_string()],
    };
    output::write(
        out_dir,
        options.overwrite,
        &pretty(&bundle),
        &pretty(&report),
    )?;
    let reloaded =
        Bundle::load(&out_dir.join(BUNDLE_FILE)).map_err(WorkflowCompileError::Reload)?;
    debug_assert_eq!(reloaded, bundle);
    Ok(report)
}

fn pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("compiler values serialize")
}
