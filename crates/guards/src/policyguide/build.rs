//! Building the PolicyGuide family from a project's artifacts: the frozen bundle at
//! `tasks/<domain>/workflow/bundle.json` (validated before any guide may use it, see
//! [`super::frozen`]), the in-agent prompts under `configs/prompts/workflow/`, and the
//! verifier the cell has — the LLM guide for a model, the offline guide for `sim`.

use super::flow::Flow;
use super::frozen::load_flow_file;
use super::guide::PolicyGuide;
use super::in_agent::{FlowAgent, SelfGuided};
use super::llm::{GuideKnowledge, LlmGuideSetup, build_llm_guide};
use super::sim::{SimGuide, graph_text};
use crate::Guard;
use crate::catalog::ToolCatalog;
use crate::factory::{BuildCause, GuardBuildError, GuardInputs, GuardOptions};
use crate::policyguard::checklist::DomainChecklists;
use crate::policyguard::prerequisites::Prerequisites;
use crate::policyguard::sim::{RuleSources, SimVerifier};
use crate::policyguard::templates::Templates;
use crate::policyguard::{Sampling, Variant};
use crate::toolguard::ToolGuard;
use std::sync::Arc;
use tauguard_llm::RoleModel;

/// `policyguide` (`raw = false`) or `policyguide-raw`: the LLM guide when the cell's verifier
/// is a built model, the offline guide for the `sim` family's.
pub(crate) fn guide(
    name: &str,
    raw: bool,
    options: GuardOptions,
    inputs: &GuardInputs<'_>,
) -> Result<Arc<dyn Guard>, GuardBuildError> {
    let fail = |cause: BuildCause| GuardBuildError::new(name, cause);
    let catalog = ToolCatalog::of(inputs.data.def);
    let flow = Arc::new(if raw {
        Flow::raw(&catalog)
    } else {
        load_flow_file(&inputs.bundle_path(), &catalog).map_err(|e| fail(e.into()))?
    });
    if let RoleModel::Built(model) = inputs.verifier.clone() {
        let knowledge = if raw {
            GuideKnowledge::RawPolicy
        } else {
            GuideKnowledge::Graph(flow)
        };
        let setup = LlmGuideSetup {
            policy: inputs.data.policy.to_string(),
            catalog,
            prompts_dir: inputs.prompts_dir.clone(),
            sampling: Sampling {
                max_tokens: Some(options.guide_token_limit()),
                ..Sampling::default()
            },
            fail_mode: options.fail_mode,
        };
        return build_llm_guide(name, knowledge, model, &setup);
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
        Prerequisites::load_domain(&inputs.tasks_dir, domain).map_err(|e| fail(e.into()))?;
    let rules = ToolGuard::load(&inputs.tasks_dir, domain).map_err(|e| fail(e.into()))?;
    let sources = RuleSources::of_rule_set(rules.rules());
    let judge = SimVerifier::new(
        Variant::Raw,
        false,
        prerequisites,
        DomainChecklists::default(),
    )
    .with_constraints(Arc::new(rules), sources)
    .with_policy(&text);
    let verifier = SimGuide::new(&flow, judge, &catalog);
    Ok(Arc::new(PolicyGuide::new(name, flow, Box::new(verifier))))
}

/// `policyguide-self` or `flowagent` (`flowagent = true`): the same frozen graph inside the
/// agent.
pub(crate) fn in_agent(
    name: &str,
    flowagent: bool,
    inputs: &GuardInputs<'_>,
) -> Result<Arc<dyn Guard>, GuardBuildError> {
    let fail = |cause: BuildCause| GuardBuildError::new(name, cause);
    let catalog = ToolCatalog::of(inputs.data.def);
    let flow = load_flow_file(&inputs.bundle_path(), &catalog).map_err(|e| fail(e.into()))?;
    let file = if flowagent {
        "flowagent.jinja"
    } else {
        "self.jinja"
    };
    let templates = Templates::load(&inputs.prompts_dir.join("workflow"), &[file])
        .map_err(|e| fail(e.into()))?;
    let text: Arc<str> = templates
        .render(file, &serde_json::json!({"graph": flow.render()}))
        .map_err(|e| fail(e.into()))?
        .into();
    Ok(if flowagent {
        Arc::new(FlowAgent::new(name, &flow, &catalog.read_only, text))
    } else {
        Arc::new(SelfGuided::new(name, text))
    })
}
