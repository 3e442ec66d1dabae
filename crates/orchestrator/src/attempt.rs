//! One simulation, start to reward: the loop, the NL judge and evaluation, retried as a whole
//! up to `max_retries` times as upstream does when a model fails — but not when a retry would
//! fail identically (a rejected request, the harness's own errors) and not on a fatal error,
//! which ends the run. Under `model_errors = "agent"` a model's unusable output ends the
//! simulation as a scored `agent_error` / `user_error` instead, and under
//! `truncated_replies = "agent_error"` so does an agent reply cut at its token limit. What
//! comes out is an evaluated outcome or the last failure, the discarded attempts with what
//! they had done, and the simulation's HTTP tally; the record is assembled elsewhere.

use crate::config::{ModelErrors, TruncatedReplies};
use crate::evaluate::{Trajectory, evaluate_final, nl_assertions_to_judge};
use crate::judge::{JudgeError, sim_checks};
use crate::plan::{DomainPlan, RunPlan, SimIndex};
use crate::simulation::{
    Sampling, SimulationError, SimulationOutcome, SimulationSpec, run_simulation_traced,
};
use tauguard_core::record::RewardInfo;
use tauguard_core::termination::Termination;
use tauguard_llm::ChatModel;
use tauguard_llm::{CallStats, CallTally, ErrorClass, LlmError, RoleModel};
use tauguard_sim::agent::{AgentBehaviour, SimAgent, SimAgentSpec};
use tauguard_sim::attacker::SimAttacker;
use tauguard_sim::model::{SimAgentModel, SimAttackerModel, SimUserModel};
use tauguard_sim::user::SimUser;

/// Why an attempt produced no evaluated outcome.
#[derive(Debug, thiserror::Error)]
pub enum AttemptError {
    /// The loop failed (a model error, an empty message, a broken initial state).
    #[error(transparent)]
    Simulation(#[from] crate::simulation::SimulationError),
    #[error("NL judge")]
    Judge(#[source] crate::judge::JudgeError),
    #[error("evaluation")]
    Evaluation(#[source] crate::evaluate::EvalError),
}

impl AttemptError {
    /// The model error underneath, when a model call failed.
    pub fn llm(&self) -> Option<&LlmError> {
        match self {
            AttemptError::Simulation(
                SimulationError::Model { cause, .. } | SimulationError::GuardModel { cause, .. },
            )
            | AttemptError::Judge(JudgeError::Model(cause)) => Some(cause),
            _ => None,
        }
    }

    /// No later call of the run can succeed (credentials, permissions, unknown model).
    pub fn is_fatal(&self) -> bool {
        self.llm().is_some_and(LlmError::is_fatal)
    }

    /// Whether a fresh attempt might end otherwise: a model's unusable output, a transient
    /// failure that outlasted the HTTP retries or a garbled reply (τ²-bench restarts on
    /// these), an unparsable judge reply. A request the server rejected as invalid, a fatal
    /// error, and the harness's own deterministic failures would fail identically.
    pub fn restartable(&self) -> bool {
        match self {
            AttemptError::Simulation(SimulationError::EmptyMessage(_)) => true,
            AttemptError::Judge(e) if e.is_unreadable_reply() => true,
            _ => self.llm().is_some_and(|e| match e.class() {
                ErrorClass::Transient | ErrorClass::ModelOutput => true,
                ErrorClass::Permanent => matches!(e, LlmError::InvalidResponse { .. }),
                ErrorClass::Fatal => false,
            }),
        }
    }

    /// The role whose model produced unusable output (`agent`, `user`), when that is the
    /// error; a reply cut at its token limit under `truncated_replies = "agent_error"` is
    /// one.
    pub fn model_output_role(&self) -> Option<&'static str> {
        match self {
            AttemptError::Simulation(
                SimulationError::EmptyMessage(role) | SimulationError::TruncatedReply { role, .. },
            ) => Some(role),
            AttemptError::Simulation(SimulationError::Model { role, cause })
                if cause.class() == ErrorClass::ModelOutput =>
            {
                Some(role)
            }
            _ => None,
        }
    }

    /// A short stable name of the error, for records.
    pub fn kind(&self) -> &'static str {
        match self {
            AttemptError::Judge(e) if e.is_unreadable_reply() => "judge_reply",
            AttemptError::Evaluation(_) => "evaluation",
            AttemptError::Simulation(SimulationError::EmptyMessage(_)) => "empty_message",
            AttemptError::Simulation(SimulationError::TruncatedReply { .. }) => "truncated_reply",
            AttemptError::Simulation(SimulationError::InitialState(_)) => "initial_state",
            AttemptError::Simulation(SimulationError::Sync(_)) => "sync_tools",
            AttemptError::Simulation(SimulationError::Guard { .. }) => "guard",
            _ => self.llm().map_or("unknown", LlmError::kind_name),
        }
    }
}

/// An attempt that produced no evaluated outcome, with what it had done.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    pub error: AttemptError,
    /// The trajectory, guard events and usage up to the failure.
    pub partial: Box<SimulationOutcome>,
}

/// The result of all attempts of one simulation.
pub(crate) struct Attempts {
    /// The evaluated outcome of the first attempt that got that far, or the last failure.
    pub outcome: Result<(SimulationOutcome, RewardInfo), AttemptFailure>,
    /// Under `model_errors = "agent"`: the model-output error that ended the scored outcome.
    pub scored_error: Option<AttemptError>,
    /// Failed attempts before the one in `outcome`, in order.
    pub restarts: Vec<AttemptFailure>,
    /// What the model calls of every attempt did over HTTP.
    pub calls: CallStats,
    /// The sim agent of this simulation (`None` when the agent is a model): it labels the
    /// faults it injected.
    pub sim_agent: Option<SimAgent>,
}

/// Runs simulation `at` of `plan` until one attempt is evaluated or the retries run out. Its
/// model calls report to `tally`, a tally of its own (the runner reads it when the run stops
/// with the simulation in flight), and signs of an outage to the tally's watch; once that has
/// tripped, a failed attempt is not restarted.
pub(crate) async fn run_attempts(plan: &RunPlan, at: SimIndex, tally: CallTally) -> Attempts {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let task = &domain.tasks[at.task];
    let seed = cell.seeds[at.trial as usize];
    let cfg = &plan.cfg;
    let agent_plan = &plan.agents[cell.agent];
    let agent_section = &agent_plan.section;
    let sim_agent = SimAgentModel(sim_agent(plan, at, seed));
    let sim_user = sim_user(plan, at, seed);
    let agent: &dyn ChatModel = match &agent_plan.model {
        RoleModel::Built(m) => m.as_ref(),
        RoleModel::Sim => &sim_agent,
    };
    let user: &dyn ChatModel = match &plan.models.user {
        RoleModel::Built(m) => m.as_ref(),
        RoleModel::Sim => sim_user.as_ref(),
    };
    let spec = SimulationSpec {
        data: &domain.data,
        task,
        trial: at.trial,
        seed,
        agent,
        user,
        agent_sampling: Sampling {
            temperature: crate::comparability::default_temperature(agent_section),
            max_tokens: agent_section.max_tokens,
            truncated: cfg.run.truncated_replies,
        },
        user_sampling: Sampling {
            temperature: crate::comparability::default_temperature(&cfg.models.user),
            max_tokens: cfg.models.user.max_tokens,
            truncated: TruncatedReplies::Record,
        },
        // A domain may give a task its own policy (banking_knowledge's golden_retrieval): the
        // cell's prompt embeds the domain policy once, which the task's policy replaces.
        agent_system_prompt: match domain.data.base.task_policy(task) {
            Some(policy) => cell
                .agent_system_prompt
                .replacen(domain.data.policy.as_str(), &policy, 1)
                .into(),
            None => cell.agent_system_prompt.clone(),
        },
        user_system_prompt: domain.user_system_prompts[at.task].clone(),
        max_steps: cell.max_steps,
        max_errors: cfg.run.max_errors,
        guard: cell.guard.as_deref(),
        embedder: plan.models.embeddings.as_deref(),
    };
    // Once the run's outage watch has tripped the run is stopping: no restart.
    let stopping = {
        let watch = tally.watch().cloned();
        move || watch.as_ref().is_some_and(|w| w.trip().is_some())
    };
    let mut restarts = Vec::new();
    let mut scored_error = None;
    let mut outcome = tally.scope(once(plan, domain, &spec)).await;
    loop {
        let failure = match outcome {
            Ok(_) => break,
            Err(f) => f,
        };
        // Scored at once: unusable output under `model_errors = "agent"`, and a cut reply,
        // which only ends an attempt under `truncated_replies = "agent_error"`.
        let cut = matches!(
            failure.error,
            AttemptError::Simulation(SimulationError::TruncatedReply { .. })
        );
        if let (ModelErrors::Agent, _) | (_, true) = (cfg.run.model_errors, cut)
            && let Some(role) = failure.error.model_output_role()
        {
            let mut o = *failure.partial;
            o.termination_reason =
                Termination::role_error(role).unwrap_or(Termination::UnexpectedError);
            outcome = evaluate_final(trajectory(domain, task, &o), None, None)
                .map(|reward| (o, reward))
                .map_err(|e| AttemptFailure {
                    error: AttemptError::Evaluation(e),
                    partial: Box::default(),
                });
            scored_error = Some(failure.error);
            break;
        }
        if restarts.len() as u32 >= cfg.run.max_retries
            || failure.error.is_fatal()
            || !failure.error.restartable()
            || stopping()
        {
            outcome = Err(failure);
            break;
        }
        restarts.push(failure);
        outcome = tally.scope(once(plan, domain, &spec)).await;
    }
    Attempts {
        outcome,
        scored_error,
        restarts,
        calls: tally.stats(),
        sim_agent: agent_plan.model.is_sim().then_some(sim_agent.0),
    }
}

/// The sim agent of simulation `at`: its task, the domain's tool facts and the agent's
/// fault profile and behaviour (used when the agent is not a model).
fn sim_agent(plan: &RunPlan, at: SimIndex, seed: u64) -> SimAgent {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let task = &domain.tasks[at.task];
    let agent_section = &plan.agents[cell.agent].section;
    SimAgent::new(SimAgentSpec {
        task: task.clone(),
        mutating: domain.mutating.clone(),
        identity_reads: domain.identity.clone(),
        tempting: domain.tempting.get(&task.id).cloned(),
        prerequisite_reads: domain.planned_reads[at.task].clone(),
        lookups: domain.lookups.clone(),
        device_workflow: domain.device_workflow.clone(),
        profile: agent_section.faults.unwrap_or_default(),
        trial: at.trial,
        seed,
        behaviour: AgentBehaviour::of_model(&agent_section.model).unwrap_or_default(),
    })
}

/// The sim user of simulation `at` (used when the user simulator is not a model). An attack
/// task's sim user is the adversarial one, escalating through its strategy.
fn sim_user(plan: &RunPlan, at: SimIndex, seed: u64) -> Box<dyn ChatModel> {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let task = &domain.tasks[at.task];
    let cfg = &plan.cfg;
    let device_tools = domain
        .data
        .tool_schemas
        .user
        .iter()
        .map(|t| t.name.clone())
        .collect();
    match domain.attacks.get(&task.id) {
        Some(a) => Box::new(SimAttackerModel(
            SimAttacker::new(task, device_tools, &a.spec.strategy)
                .expect("strategies are checked when the task set loads"),
        )),
        None => Box::new(SimUserModel(
            SimUser::new(task, device_tools).with_behaviour(
                cfg.models.user.behaviour.unwrap_or_default(),
                at.trial,
                seed,
            ),
        )),
    }
}

/// One attempt: the loop, then the judge, then the reward.
async fn once(
    plan: &RunPlan,
    domain: &DomainPlan,
    spec: &SimulationSpec<'_>,
) -> Result<(SimulationOutcome, RewardInfo), AttemptFailure> {
    let mut o = run_simulation_traced(spec)
        .await
        .map_err(|f| AttemptFailure {
            error: AttemptError::Simulation(f.error),
            partial: f.partial,
        })?;
    let task = spec.task;
    let nl = match (nl_assertions_to_judge(task), &plan.models.judge) {
        (None, _) => None,
        (Some(assertions), RoleModel::Built(judge)) => {
            match crate::judge::llm_judge(
                judge.as_ref(),
                &o.messages,
                assertions,
                spec.seed,
                spec.trial,
            )
            .await
            {
                Ok((checks, usage)) => {
                    o.judge_usage = Some(usage);
                    Some(checks)
                }
                Err(e) => {
                    o.final_env = None;
                    return Err(AttemptFailure {
                        error: AttemptError::Judge(e),
                        partial: Box::new(o),
                    });
                }
            }
        }
        (Some(assertions), RoleModel::Sim) => Some(sim_checks(&o.messages, assertions)),
    };
    let final_env = o.final_env.take();
    match evaluate_final(
        trajectory(domain, task, &o),
        nl,
        final_env.as_ref().map(|e| e.0.as_ref()),
    ) {
        Ok(reward) => Ok((o, reward)),
        Err(e) => Err(AttemptFailure {
            error: AttemptError::Evaluation(e),
            partial: Box::new(o),
        }),
    }
}

/// What evaluation reads of an attempt's outcome.
fn trajectory<'a>(
    domain: &'a DomainPlan,
    task: &'a tauguard_core::Task,
    o: &'a SimulationOutcome,
) -> Trajectory<'a> {
    Trajectory {
        data: &domain.data,
        task,
        messages: &o.messages,
        termination_reason: o.termination_reason,
        gold: &domain.gold,
    }
}
