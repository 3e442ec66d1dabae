//! The offline workflow compiler (PolicyGuide's six-stage pipeline): a domain's policy and
//! agent tools in, a workflow bundle ([`crate::policyguide::workflow`], schema 1) out.
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
//!    [`crate::policyguide::validate`] (an invalid bundle fails the compile with the
//!    validator's report), and a mapping review ([`mapping`]) goes to the report.
//!
//! Every reply is extracted robustly (code fences, prose) and validated; an invalid reply gets
//! one repair turn quoting the errors ([`session`]). The plan, the subflows and the
//! classification fail the compile when still invalid; the reviews, the wording and the
//! mapping keep the previous version instead. Nothing is written unless the bundle is valid:
//! then `bundle.json` and `compile_report.json` ([`report`]) go into the output directory.

mod compose;
mod mapping;
mod output;
mod plan;
mod prompts;
mod report;
mod session;
mod subflow;
mod tools;

pub use compose::{NodeText, Wording};
pub use plan::{Coverage, DENY_LABEL, Plan, PlannedSubflow, RequestType};
pub use report::{
    BUNDLE_FILE, MappingReview, PolicyMapping, REPORT_FILE, REPORT_SCHEMA, Stage, StageSummary,
    Step, StepOutcome, StepRecord, ValidationSummary, WorkflowCompileReport,
};

use crate::policyguard::compile::CompileOptions;
use crate::policyguard::compile::classify::{mismatches, parse_classification};
use crate::policyguard::templates::TemplateError;
use crate::policyguide::validate::validate;
use crate::policyguide::workflow::{Bundle, Graph, SCHEMA_VERSION, WorkflowError};
use serde_json::json;
use session::Session;
use std::path::{Path, PathBuf};
use tauguard_core::ToolSpec;
use tauguard_llm::error::LlmError;
use tauguard_llm::model::ChatModel;
use tools::ToolView;

/// Why a workflow compile failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowCompileError {
    #[error("output directory {} is not empty; choose a new directory or allow overwriting", .0.display())]
    OutputNotEmpty(PathBuf),
    #[error(transparent)]
    Prompt(#[from] TemplateError),
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("stage {} ({}), {step} `{target}`: model call failed: {cause}", .step.stage().number(), .step.stage())]
    Model {
        step: Step,
        target: String,
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
    #[error("the written workflow bundle does not load back: {0}")]
    Reload(WorkflowError),
}

/// Runs the six stages and writes `bundle.json` and `compile_report.json` into `out_dir`.
/// `tools` are the agent-side tools of `domain`; `policy` is the text the agent sees;
/// `prompts_dir` holds `compile/workflow/*.jinja` (normally `configs/prompts`). With
/// `options.known_tools` (the environment's catalogue) every check and the final validation
/// use that catalogue; without it, the model's classification.
pub async fn compile_workflow(
    model: &dyn ChatModel,
    policy: &str,
    tools: &[ToolSpec],
    domain: &str,
    prompts_dir: &Path,
    out_dir: &Path,
    options: &CompileOptions,
) -> Result<WorkflowCompileReport, WorkflowCompileError> {
    output::check(out_dir, options.overwrite)?;
    let templates = prompts::load(prompts_dir)?;
    let system = templates.render(prompts::SYSTEM, &json!({ "domain": domain }))?;
    let mut s = Session {
        model,
        prompts: &templates,
        options,
        system,
        usage: Default::default(),
        steps: Vec::new(),
    };

    // Stage 1: tools.
    let views: Vec<ToolView> = tools.iter().map(|t| ToolView::of(t, None)).collect();
    let user = templates.render(
        prompts::TOOLS,
        &json!({ "domain": domain, "policy": policy, "tools": views }),
    )?;
    let classification = s
        .ask(Step::Classify, "tools", user, |r| {
            parse_classification(r, domain, tools)
        })
        .await?
        .expect("classification never falls back");
    let known = options.known_tools.as_ref();
    let classification_mismatches = known
        .map(|k| mismatches(&classification, k))
        .unwrap_or_default();
    let (catalog, catalog_name) = tools::effective_catalog(&classification, known);
    let views: Vec<ToolView> = tools
        .iter()
        .map(|t| ToolView::of(t, Some(&catalog)))
        .collect();
    let stage1 = format!(
        "{} agent tools: {} mutating, {} read-only, {} other (checked against the {catalog_name} catalogue; {} classification mismatch(es))",
        tools.len(),
        classification.mutating.len(),
        classification.read_only.len(),
        classification.other.len(),
        classification_mismatches.len()
    );

    // Stage 2: plan.
    let base = json!({
        "domain": domain, "policy": policy, "tools": views, "deny_label": DENY_LABEL,
    });
    let user = templates.render(prompts::PLAN, &base)?;
    let draft = s
        .ask(Step::Plan, "plan", user, |r| plan::parse(r, &catalog))
        .await?
        .expect("the plan never falls back");

    // Stage 3: plan review.
    let mut vars = base.clone();
    vars["draft"] = pretty(&draft).into();
    let user = templates.render(prompts::PLAN_REVIEW, &vars)?;
    let reviewed = s
        .ask(Step::PlanReview, "plan", user, |r| plan::parse(r, &catalog))
        .await?;
    let plan = settle(&mut s, reviewed, draft);
    let stage2 = format!(
        "{} request types, {} subflows ({} shared), {} mutating tools covered, {} gap(s)",
        plan.request_types.len(),
        plan.subflows.len(),
        plan.shared().count(),
        plan.coverage.len(),
        plan.gaps.len()
    );
    let stage3 = review_result(&s, "the plan");

    // Stage 4: subflows.
    let mut graphs: Vec<Graph> = Vec::new();
    for planned in &plan.subflows {
        let runs: Vec<&PlannedSubflow> = planned
            .runs
            .iter()
            .filter_map(|r| plan.subflow(r))
            .collect();
        let subflow_tools: Vec<&ToolView> = views
            .iter()
            .filter(|v| planned.tools.contains(&v.name))
            .collect();
        let request_types: Vec<&RequestType> = plan
            .request_types
            .iter()
            .filter(|r| r.subflow == planned.id)
            .collect();
        let mut vars = json!({
            "domain": domain, "policy": policy, "tools": views, "subflow": planned,
            "runs": runs, "subflow_tools": subflow_tools, "request_types": request_types,
        });
        let user = templates.render(prompts::SUBFLOW, &vars)?;
        let check = |r: &str| subflow::parse(r, planned, &plan, &catalog);
        let draft = s
            .ask(Step::Subflow, &planned.id, user, check)
            .await?
            .expect("a subflow never falls back");
        vars["draft"] = pretty(&draft).into();
        let user = templates.render(prompts::BRANCH_REVIEW, &vars)?;
        let reviewed = s.ask(Step::BranchReview, &planned.id, user, check).await?;
        graphs.push(settle(&mut s, reviewed, draft));
    }
    let of_step = |step: Step| s.steps.iter().filter(move |r| r.step == step);
    let stage4 = format!(
        "{} subflows written ({} repaired), {} changed by their branch review, {} reviews kept the draft",
        graphs.len(),
        of_step(Step::Subflow)
            .filter(|r| r.outcome == StepOutcome::Repaired)
            .count(),
        of_step(Step::BranchReview)
            .filter(|r| r.changed == Some(true))
            .count(),
        of_step(Step::BranchReview)
            .filter(|r| r.outcome == StepOutcome::KeptPrevious)
            .count(),
    );

    // Stage 5: compose.
    let user = templates.render(
        prompts::COMPOSE,
        &json!({
            "domain": domain, "policy": policy, "request_types": plan.request_types,
            "identify": plan.identify, "deny_label": DENY_LABEL,
        }),
    )?;
    let wording = s
        .ask(Step::Compose, "main", user, compose::parse_wording)
        .await?;
    let worded_by = if wording.is_some() {
        "the model"
    } else {
        "the compiler's defaults (the model's stayed invalid)"
    };
    let wording = wording.unwrap_or_else(|| Wording::default_for(&plan));
    let main = compose::main_graph(&plan, &wording, &format!("{domain} requests"));
    let stage5 = format!(
        "main graph: {} nodes, {} request branches and the refusal branch{}; classifier worded by {worded_by}",
        main.nodes.len(),
        plan.request_types.len(),
        plan.identify
            .as_deref()
            .map(|i| format!(", identify subflow `{i}`"))
            .unwrap_or_default()
    );

    // Stage 6: prune, validate, map.
    let (subflows, pruned) = compose::prune(&main, graphs);
    let bundle = Bundle {
        schema: SCHEMA_VERSION,
        domain: domain.to_string(),
        main,
        subflows,
    };
    let verdict = validate(&bundle, &catalog);
    if !verdict.is_valid() {
        return Err(WorkflowCompileError::InvalidBundle {
            domain: domain.to_string(),
            problems: verdict.problems.iter().map(|p| p.to_string()).collect(),
        });
    }
    let user = templates.render(
        prompts::MAPPING,
        &json!({ "domain": domain, "policy": policy, "outline": mapping::outline(&bundle) }),
    )?;
    let mapping = s
        .ask(Step::Mapping, "bundle", user, |r| {
            mapping::parse(r, &bundle)
        })
        .await?;
    let sizes = verdict.sizes;
    let stage6 = format!(
        "valid against the {catalog_name} catalogue: {sizes}; pruned {}; mapping review: {}",
        if pruned.is_empty() {
            "nothing".to_string()
        } else {
            pruned.join(", ")
        },
        match &mapping {
            Some(m) => format!(
                "{} statements mapped, {} unmapped, {} unsupported nodes",
                m.mappings.len(),
                m.unmapped_policy.len(),
                m.unsupported_nodes.len()
            ),
            None => "no valid answer".to_string(),
        }
    );

    // Write, report, reload.
    let report = WorkflowCompileReport {
        schema: REPORT_SCHEMA.to_string(),
        domain: domain.to_string(),
        model: model.id().to_string(),
        stages: report::summarize(&s.steps, [stage1, stage2, stage3, stage4, stage5, stage6]),
        classification,
        classification_mismatches,
        plan,
        pruned_subflows: pruned,
        validation: ValidationSummary {
            catalog: catalog_name.to_string(),
            graphs: sizes.graphs,
            nodes: sizes.nodes,
            edges: sizes.edges,
            authorization_nodes: sizes.authorization_nodes,
        },
        mapping,
        repairs: s.steps.iter().map(|r| r.calls.saturating_sub(1)).sum(),
        usage: s.usage.clone(),
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

/// The reviewed version, or the draft when the review stayed invalid; records on the review
/// step whether it changed anything.
fn settle<T: PartialEq>(s: &mut Session<'_>, reviewed: Option<T>, draft: T) -> T {
    match reviewed {
        Some(r) => {
            s.mark_changed(r != draft);
            r
        }
        None => {
            s.mark_changed(false);
            draft
        }
    }
}

/// Stage 3's result in words, from its one review step.
fn review_result(s: &Session<'_>, what: &str) -> String {
    match s.steps.last() {
        Some(r) if r.outcome == StepOutcome::KeptPrevious => {
            format!("the review stayed invalid; {what} as drafted was kept")
        }
        Some(r) if r.changed == Some(true) => format!("the review changed {what}"),
        _ => format!("the review left {what} unchanged"),
    }
}
