//! Building the PolicyGuide family from a project's artifacts: the frozen bundle at
//! `tasks/<domain>/workflow/bundle.json` (validated before any guide may use it), the
//! in-agent prompts under `configs/prompts/workflow/`, and the verifier the cell has.

use super::flow::Flow;
use super::guide::PolicyGuide;
use super::in_agent::{FlowAgent, SelfGuided};
use super::sim::{SimGuide, graph_text};
use super::validate::validate;
use super::workflow::Bundle;
use crate::Guard;
use crate::catalog::ToolCatalog;
use crate::factory::{GuardBuildError, GuardInputs, GuardOptions};
use crate::policyguard::Variant;
use crate::policyguard::checklist::DomainChecklists;
use crate::policyguard::prerequisites::Prerequisites;
use crate::policyguard::sim::{RuleSources, SimVerifier};
use crate::policyguard::templates::Templates;
use crate::toolguard::ToolGuard;
use std::path::PathBuf;
use std::sync::Arc;

/// Where a domain's frozen bundle lives under a project's `tasks/`.
pub fn bundle_path(tasks_dir: &std::path::Path, domain: &str) -> PathBuf {
    tasks_dir.join(domain).join("workflow").join("bundle.json")
}

/// Loads and validates a domain's frozen bundle.
pub fn load_flow(name: &str, inputs: &GuardInputs<'_>) -> Result<Flow, GuardBuildError> {
    let fail = |message: String| GuardBuildError {
        guard: name.to_string(),
        message,
    };
    let path = bundle_path(&inputs.tasks_dir, inputs.data.domain);
    let bundle = Bundle::load(&path).map_err(|e| fail(e.to_string()))?;
    let report = validate(&bundle, &ToolCatalog::of(inputs.data.def));
    if !report.is_valid() {
        let first: Vec<String> = report
            .problems
            .iter()
            .take(3)
            .map(|p| p.to_string())
            .collect();
        return Err(fail(format!(
            "{}: the workflow bundle fails validation ({} problem(s)): {}",
            path.display(),
            report.problems.len(),
            first.join("; ")
        )));
    }
    Ok(Flow::new(bundle))
}

/// `policyguide` (`raw = false`) or `policyguide-raw`: the guide with the sim verifier when
/// the cell has no verifier model (or a `sim` one).
pub fn guide(
    name: &str,
    raw: bool,
    _options: GuardOptions,
    inputs: &GuardInputs<'_>,
    sim: bool,
) -> Result<Arc<dyn Guard>, GuardBuildError> {
    let fail = |message: String| GuardBuildError {
        guard: name.to_string(),
        message,
    };
    let catalog = ToolCatalog::of(inputs.data.def);
    let flow = Arc::new(if raw {
        Flow::raw(&catalog)
    } else {
        load_flow(name, inputs)?
    });
    if !sim {
        return Err(fail(
            "the LLM guide verifier is not available in this build; use a `sim` verifier".into(),
        ));
    }
    // The sim guide's argument judge reads the guide's own text: the graph's node texts, or
    // the raw policy.
    let text = if raw {
        inputs.data.policy.to_string()
    } else {
        graph_text(&flow)
    };
    let domain = inputs.data.domain;
    let prerequisites =
        Prerequisites::load_domain(&inputs.tasks_dir, domain).map_err(|e| fail(e.to_string()))?;
    let rules = ToolGuard::load(&inputs.tasks_dir, domain).map_err(|e| fail(e.to_string()))?;
    let sources = RuleSources::of_rule_set(rules.rules());
    let judge = SimVerifier::new(
        Variant::Raw,
        false,
        prerequisites,
        DomainChecklists::default(),
    )
    .with_constraints(Arc::new(rules), sources)
    .with_policy(&text);
    let verifier = SimGuide::new(&flow, judge, catalog.mutating.clone());
    Ok(Arc::new(PolicyGuide::new(name, flow, Box::new(verifier))))
}

/// `policyguide-self` or `flowagent` (`flowagent = true`): the same frozen graph inside the
/// agent.
pub fn in_agent(
    name: &str,
    flowagent: bool,
    inputs: &GuardInputs<'_>,
) -> Result<Arc<dyn Guard>, GuardBuildError> {
    let fail = |message: String| GuardBuildError {
        guard: name.to_string(),
        message,
    };
    let flow = load_flow(name, inputs)?;
    let file = if flowagent {
        "flowagent.jinja"
    } else {
        "self.jinja"
    };
    let templates = Templates::load(&inputs.prompts_dir.join("workflow"), &[file])
        .map_err(|e| fail(e.to_string()))?;
    let text: Arc<str> = templates
        .render(file, &serde_json::json!({"graph": flow.render()}))
        .map_err(|e| fail(e.to_string()))?
        .into();
    Ok(if flowagent {
        Arc::new(FlowAgent::new(name, &flow, text))
    } else {
        Arc::new(SelfGuided::new(name, text))
    })
}
