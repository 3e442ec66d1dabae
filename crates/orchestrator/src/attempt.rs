//! One simulation, start to reward: the loop, the NL judge and evaluation, retried as a whole
//! up to `max_retries` times as upstream does when a model fails. What comes out is either an
//! evaluated outcome or the error of the last attempt; the record is assembled elsewhere.

use crate::evaluate::{NlCheck, evaluate_final, nl_assertions_to_judge};
use crate::plan::{DomainPlan, RunPlan, SimIndex};
use crate::simulation::{Sampling, SimulationOutcome, SimulationSpec, run_simulation};
use tauguard_core::record::RewardInfo;
use tauguard_llm::model::ChatModel;
use tauguard_sim::agent::{AgentBehaviour, SimAgent, SimAgentSpec};
use tauguard_sim::model::{SimAgentModel, SimUserModel};
use tauguard_sim::user::SimUser;

/// Why an attempt produced no evaluated outcome.
#[derive(Debug, thiserror::Error)]
pub enum AttemptError {
    /// The loop failed (a model error, an empty message, a broken initial state).
    #[error(transparent)]
    Simulation(#[from] crate::simulation::SimulationError),
    #[error("NL judge: {0}")]
    Judge(crate::judge::JudgeError),
    #[error("evaluation: {0}")]
    Evaluation(crate::evaluate::EvalError),
}

/// The result of all attempts of one simulation.
pub struct Attempts {
    /// The evaluated outcome of the first attempt that got that far.
    pub outcome: Result<(SimulationOutcome, RewardInfo), AttemptError>,
    /// The sim agent of this simulation (`None` when the agent is a model): it labels the
    /// faults it injected.
    pub sim_agent: Option<SimAgent>,
}

/// Runs simulation `at` of `plan` until one attempt is evaluated or the retries run out.
pub async fn run_attempts(plan: &RunPlan, at: SimIndex) -> Attempts {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let task = &domain.tasks[at.task];
    let seed = plan.seeds[at.trial as usize];
    let cfg = &plan.cfg;
    let sim_agent = SimAgentModel(SimAgent::new(SimAgentSpec {
        task: task.clone(),
        mutating: domain.mutating.clone(),
        identity_reads: domain.identity.clone(),
        tempting: domain.tempting.get(&task.id).cloned(),
        prerequisite_reads: domain.planned_reads[at.task].clone(),
        profile: cfg.models.agent.faults.unwrap_or_default(),
        trial: at.trial,
        seed,
        behaviour: AgentBehaviour::of_model(&cfg.models.agent.model).unwrap_or_default(),
    }));
    let device_tools = domain
        .data
        .tool_schemas
        .user
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let sim_user = SimUserModel(SimUser::new(task, device_tools).with_behaviour(
        cfg.models.user.behaviour.unwrap_or_default(),
        at.trial,
        seed,
    ));
    let agent: &dyn ChatModel = match &plan.models.agent {
        Some(m) => m.as_ref(),
        None => &sim_agent,
    };
    let user: &dyn ChatModel = match &plan.models.user {
        Some(m) => m.as_ref(),
        None => &sim_user,
    };
    let spec = SimulationSpec {
        data: &domain.data,
        task,
        trial: at.trial,
        seed,
        agent,
        user,
        agent_sampling: Sampling {
            temperature: cfg.models.agent.temperature,
            max_tokens: cfg.models.agent.max_tokens,
        },
        user_sampling: Sampling {
            temperature: cfg.models.user.temperature,
            max_tokens: cfg.models.user.max_tokens,
        },
        agent_system_prompt: domain.agent_system_prompt.clone(),
        user_system_prompt: domain.user_system_prompts[at.task].clone(),
        max_steps: cfg.run.max_steps,
        max_errors: cfg.run.max_errors,
        guard: cell.guard.as_deref(),
    };
    let mut outcome = once(plan, domain, &spec).await;
    for _ in 0..cfg.run.max_retries {
        if outcome.is_ok() {
            break;
        }
        outcome = once(plan, domain, &spec).await;
    }
    Attempts {
        outcome,
        sim_agent: plan.models.agent.is_none().then_some(sim_agent.0),
    }
}

/// One attempt: the loop, then the judge, then the reward.
async fn once(
    plan: &RunPlan,
    domain: &DomainPlan,
    spec: &SimulationSpec<'_>,
) -> Result<(SimulationOutcome, RewardInfo), AttemptError> {
    let mut o = run_simulation(spec).await?;
    let task = spec.task;
    let nl = match (nl_assertions_to_judge(task), &plan.models.judge) {
        (None, _) => None,
        (Some(assertions), Some(judge)) => {
            let (checks, usage) = crate::judge::llm_judge(
                judge.as_ref(),
                &o.messages,
                assertions,
                spec.seed,
                spec.trial,
            )
            .await
            .map_err(AttemptError::Judge)?;
            o.judge_usage = Some(usage);
            Some(checks)
        }
        (Some(assertions), None) => Some(
            tauguard_sim::judge::sim_judge(&o.messages, assertions)
                .into_iter()
                .zip(assertions)
                .map(|((met, justification), a)| NlCheck {
                    nl_assertion: a.clone(),
                    met,
                    justification,
                })
                .collect(),
        ),
    };
    let final_env = o.final_env.take();
    let reward = evaluate_final(
        &domain.data,
        task,
        &o.messages,
        &o.termination_reason,
        nl,
        &domain.gold,
        final_env.as_ref().map(|e| e.0.as_ref()),
    )
    .map_err(AttemptError::Evaluation)?;
    Ok((o, reward))
}
