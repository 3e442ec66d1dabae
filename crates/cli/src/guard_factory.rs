//! Wiring of grid guard names to guard objects: `toolguard`, `pg-*` (with `-strict`),
//! `hybrid` (ToolGuard rules first, then the `pg-checklist` verifier).
//!
//! Verifiers are LLM verifiers when the run has a verifier model (paired with the agent by
//! default) and the offline sim verifier when it is `sim`. The sim verifier cannot read a
//! policy, so it is given the ToolGuard rule set as its argument-level knowledge.

use std::path::PathBuf;
use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_env::DomainData;
use tauguard_guards::Guard;
use tauguard_guards::checklist::{DomainToolInfo, load_domain_checklists};
use tauguard_guards::hybrid::Hybrid;
use tauguard_guards::policyguard::{FailMode, PolicyGuardSetup, build_policyguard, is_sim_model};
use tauguard_guards::toolguard::ToolGuard;
use tauguard_llm::model::ChatModel;
use tauguard_orchestrator::config::RunConfig;
use tauguard_orchestrator::runner::GuardFactory;

/// The factory the runner calls once per grid configuration.
pub fn guard_factory(project: PathBuf) -> Arc<GuardFactory> {
    Arc::new(
        move |name: &str,
              cfg: &RunConfig,
              data: &DomainData,
              verifier: Option<Arc<dyn ChatModel>>| {
            build(&project, name, cfg, data, verifier)
        },
    )
}

fn build(
    project: &std::path::Path,
    name: &str,
    cfg: &RunConfig,
    data: &DomainData,
    verifier: Option<Arc<dyn ChatModel>>,
) -> Result<Option<Arc<dyn Guard>>, String> {
    let tasks = project.join("tasks");
    let domain = data.domain;
    let toolguard = || -> Result<Arc<dyn Guard>, String> {
        Ok(Arc::new(
            ToolGuard::load(&tasks, domain).map_err(|e| e.to_string())?,
        ))
    };
    let sim = verifier.as_ref().is_none_or(|m| is_sim_model(m.as_ref()));
    let policyguard = |variant: &str| -> Result<Arc<dyn Guard>, String> {
        let probe = data.fresh_env();
        let info = DomainToolInfo::from_toolkit(domain, probe.toolkit(Requestor::Assistant));
        let checklists = load_domain_checklists(&tasks.join(domain).join("checklist"), &info)
            .map_err(|e| e.to_string())?;
        let fail_mode = match cfg.guard.fail_mode.as_deref() {
            Some("open") => FailMode::Open,
            _ => FailMode::Closed,
        };
        let mut setup = PolicyGuardSetup::new(domain, project.join("configs/prompts"))
            .with_checklists(checklists)
            .with_policy(data.policy.clone())
            .with_fail_mode(fail_mode)
            .load_prerequisites(&tasks)
            .map_err(|e| e.to_string())?;
        if sim {
            setup = setup.with_constraints(toolguard()?);
        }
        build_policyguard(variant, cfg.guard.strict, verifier.clone(), &setup)
            .map_err(|e| e.to_string())
    };
    Ok(Some(match name {
        "toolguard" => toolguard()?,
        "hybrid" => Arc::new(Hybrid::new(toolguard()?, policyguard("pg-checklist")?)),
        pg if pg.starts_with("pg-") => policyguard(pg)?,
        other => {
            return Err(format!(
                "unknown guard configuration `{other}` (known: baseline, toolguard, hybrid, pg-raw, pg-raw-traj, \
                 pg-checklist, pg-checklist-only, and -strict on the checklist variants)"
            ));
        }
    }))
}
