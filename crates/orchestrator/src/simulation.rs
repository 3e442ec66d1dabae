//! One simulation: the half-duplex loop of §6.3–§6.4 — greeting, user and agent turns, tool
//! execution, step and error limits, stop tokens — producing the trajectory to evaluate.

use crate::config::TruncatedReplies;
use crate::party::{CutReply, Party};
use crate::views::Conversation;
use std::sync::Arc;
use tauguard_core::message::{Message, ParticipantMessage, ToolMessage};
use tauguard_core::record::{CallAttempt, FailCause, GuardEvent, GuideEvent, RoleUsage, Verdict};
use tauguard_core::termination::Termination;
use tauguard_core::{Requestor, Task, ToolKind};
use tauguard_env::{DomainData, Environment};
use tauguard_guards::{Guard, GuardContext, GuardError, GuardState};
use tauguard_llm::model::ChatModel;

/// The assistant's fixed opening message when a task has no message history.
pub const GREETING: &str = "Hi! How can I help you today?";
/// User-side stop tokens (substring, case-sensitive).
pub const STOP_TOKENS: &[&str] = &["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"];

/// Sampling settings of one role, and what its replies cut at the token limit are.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// `[run] truncated_replies` for the agent; the user simulator's cut replies are recorded.
    pub truncated: TruncatedReplies,
}

/// Everything one simulation needs.
pub struct SimulationSpec<'a> {
    pub data: &'a DomainData,
    pub task: &'a Task,
    pub trial: u32,
    pub seed: u64,
    pub agent: &'a dyn ChatModel,
    pub user: &'a dyn ChatModel,
    pub agent_sampling: Sampling,
    pub user_sampling: Sampling,
    /// Built once per domain and task by the caller and shared by their simulations.
    pub agent_system_prompt: Arc<str>,
    pub user_system_prompt: Arc<str>,
    pub max_steps: u32,
    pub max_errors: u32,
    /// The guard every mutating agent call goes through; `None` = baseline.
    pub guard: Option<&'a dyn Guard>,
}

/// A finished simulation, before evaluation.
#[derive(Debug, Clone, Default)]
pub struct SimulationOutcome {
    /// The trajectory: executed calls only. A guard-blocked call and its remediation are
    /// not in it (they are in `guard_events`), as if the call never happened (PolicyGuard).
    pub messages: Vec<Message>,
    /// The agent's view as it ended (system prompt excluded), kept only when a guard blocked
    /// a call: there it differs from `messages` by the blocked calls and the remediations the
    /// agent read in their place. Attempts are labelled (injected faults, missing
    /// prerequisites) on this view, or on `messages` when it is `None`, so a blocked call is
    /// labelled too and every call is judged on the history the agent had.
    pub agent_view: Option<Vec<Message>>,
    pub termination_reason: Termination,
    pub agent_usage: RoleUsage,
    pub user_usage: RoleUsage,
    pub call_attempts: Vec<CallAttempt>,
    pub guard_events: Vec<GuardEvent>,
    /// Turn-boundary guide runs and corrective verifications, in order.
    pub guide_events: Vec<GuideEvent>,
    /// Filled by the caller when an NL judge model ran.
    pub judge_usage: Option<RoleUsage>,
    pub agent_turns: u32,
    pub user_turns: u32,
    /// The environment as the simulation left it.
    pub final_env: Option<FinalEnv>,
}

/// A finished simulation's environment. Its state is what replaying the trajectory's
/// executed mutating calls onto the initial state rebuilds (the environments are
/// deterministic and read-only tools change nothing), so evaluation can start from it
/// instead of replaying (see [`crate::evaluate::evaluate_final`]).
pub struct FinalEnv(pub Box<dyn Environment>);

impl Clone for FinalEnv {
    fn clone(&self) -> Self {
        FinalEnv(self.0.snapshot())
    }
}

impl std::fmt::Debug for FinalEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FinalEnv({})", self.0.domain())
    }
}

/// Why a simulation attempt failed (upstream restarts the whole simulation on these).
#[derive(Debug, thiserror::Error)]
pub enum SimulationError {
    #[error("{role} model: {cause}")]
    Model {
        role: &'static str,
        cause: tauguard_llm::error::LlmError,
    },
    #[error("{0} model returned a message with neither content nor tool calls")]
    EmptyMessage(&'static str),
    /// A reply cut at its token limit, under `truncated_replies = "agent_error"`.
    #[error("{role} model: {reply}")]
    TruncatedReply {
        role: &'static str,
        reply: Box<CutReply>,
    },
    #[error("initial state: {0}")]
    InitialState(tauguard_env::initial_state::InitialStateError),
    #[error("sync_tools: {0}")]
    Sync(String),
    #[error("guard `{guard}`: {message}")]
    Guard { guard: String, message: String },
    /// The guard's verifier model failed fatally (credentials, unknown model); other verifier
    /// failures are fail-mode decisions, not errors.
    #[error("guard `{guard}`: verifier model: {cause}")]
    GuardModel {
        guard: String,
        cause: tauguard_llm::error::LlmError,
    },
}

/// A failed simulation attempt and what it had done until then: the trajectory so far, guard
/// events, usage (an unusable reply's billed tokens included); no final environment.
#[derive(Debug)]
pub struct SimulationFailure {
    pub error: SimulationError,
    pub partial: Box<SimulationOutcome>,
}

// By hand rather than `#[from]`: the message already quotes the cause, so it is not exposed
// again as the error's source (see ARCHITECTURE.md, Errors).
impl From<tauguard_env::initial_state::InitialStateError> for SimulationError {
    fn from(e: tauguard_env::initial_state::InitialStateError) -> Self {
        SimulationError::InitialState(e)
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Next {
    User,
    Agent,
    Env(Requestor),
}

/// The message timestamp: Unix seconds and microseconds, `secs.micros`.
pub(crate) fn now_timestamp() -> String {
    timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

/// Every message takes a timestamp, so it is written with `itoa` rather than the formatting
/// machinery, which cost several per cent of the harness CPU under load.
fn timestamp(since_epoch: std::time::Duration) -> String {
    let (mut secs, mut micros) = (itoa::Buffer::new(), itoa::Buffer::new());
    let secs = secs.format(since_epoch.as_secs());
    let micros = micros.format(since_epoch.subsec_micros());
    let mut s = String::with_capacity(secs.len() + 7);
    s.push_str(secs);
    s.push('.');
    s.extend(std::iter::repeat_n('0', 6 - micros.len()));
    s.push_str(micros);
    s
}

/// Runs one simulation to its end. Model failures and empty messages are errors (the caller
/// retries the whole simulation); everything else ends with a termination reason.
pub async fn run_simulation(
    spec: &SimulationSpec<'_>,
) -> Result<SimulationOutcome, SimulationError> {
    run_simulation_traced(spec).await.map_err(|f| f.error)
}

/// [`run_simulation`], keeping what a failed attempt had done.
pub async fn run_simulation_traced(
    spec: &SimulationSpec<'_>,
) -> Result<SimulationOutcome, SimulationFailure> {
    let mut out = SimulationOutcome::default();
    let mut env: Box<dyn Environment> = spec.data.task_env(spec.task);
    if let Err(e) = tauguard_env::initial_state::apply_initial_state(
        env.as_mut(),
        spec.task.initial_state.as_ref(),
    ) {
        return Err(SimulationFailure {
            error: e.into(),
            partial: Box::new(out),
        });
    }
    let history = spec
        .task
        .initial_state
        .as_ref()
        .and_then(|s| s.message_history.clone())
        .unwrap_or_default();
    // Route from the last message of the given history; without one, the agent greets.
    let mut next = match history.last() {
        None => Next::User,
        Some(Message::Assistant(a)) if a.is_tool_call() => Next::Env(Requestor::Assistant),
        Some(Message::User(u)) if u.is_tool_call() => Next::Env(Requestor::User),
        Some(Message::Assistant(_)) => Next::User,
        Some(Message::Tool(t)) if t.requestor == Requestor::User => Next::User,
        _ => Next::Agent,
    };
    let greet = history.is_empty();
    // A user turn the agent has not answered yet: a guide runs before the agent does.
    let mut turn_open = matches!(history.last(), Some(Message::User(u)) if !u.is_tool_call());
    // Trajectory positions below this hold the task's given history.
    let mut from_history = history.len();
    let mut conv = Conversation::new(&spec.agent_system_prompt, &spec.user_system_prompt, history);
    if greet {
        conv.push(Message::Assistant(ParticipantMessage {
            content: Some(GREETING.into()),
            cost: Some(0.0),
            timestamp: Some(now_timestamp()),
            ..Default::default()
        }));
    }
    let assistant_tools = spec.data.tool_schemas.assistant.clone();
    let user_tools = crate::plan_domain::task_user_tools(spec.data, spec.task);
    let mut user = Party::new("user", spec.user, &spec.user_sampling, user_tools, spec);
    let mut agent = Party::new(
        "agent",
        spec.agent,
        &spec.agent_sampling,
        assistant_tools,
        spec,
    );
    let (mut steps, mut errors) = (0u32, 0u32);
    let guard_state = GuardState::new();
    let mut done: Option<Termination> = None;
    let failure = 'sim: loop {
        match next {
            Next::User => {
                let mut msg = match user.ask(&conv.user, &mut out.user_usage).await {
                    Ok(m) => m,
                    Err(e) => break 'sim Some(e),
                };
                if let Some(calls) = msg.tool_calls.as_mut() {
                    for c in calls.iter_mut() {
                        c.requestor = Requestor::User;
                    }
                }
                out.user_turns += 1;
                let is_call = msg.is_tool_call();
                let stop = !is_call
                    && msg
                        .content
                        .as_deref()
                        .is_some_and(|c| STOP_TOKENS.iter().any(|t| c.contains(t)));
                conv.push(Message::User(msg));
                if stop {
                    done = Some(Termination::UserStop);
                }
                turn_open = !is_call && !stop;
                next = if is_call {
                    Next::Env(Requestor::User)
                } else {
                    Next::Agent
                };
            }
            Next::Agent => {
                if let (true, Some(guard)) = (std::mem::take(&mut turn_open), spec.guard) {
                    let history = conv.agent.clone();
                    let at = conv.len();
                    let ctx = guard_context(spec, &history, env.as_ref(), &guard_state, at);
                    match guard.before_agent_turn(&ctx).await {
                        Ok(None) => {}
                        Ok(Some(g)) => {
                            if let Some(text) = g.text() {
                                conv.push_guidance(text);
                            }
                            out.guide_events.push(g.event);
                        }
                        Err(e) => break 'sim Some(guard_failure(guard, e)),
                    }
                }
                let msg = match agent.ask(&conv.agent, &mut out.agent_usage).await {
                    Ok(m) => m,
                    Err(e) => break 'sim Some(e),
                };
                out.agent_turns += 1;
                let is_call = msg.is_tool_call();
                conv.push(Message::Assistant(msg));
                next = if is_call {
                    Next::Env(Requestor::Assistant)
                } else {
                    Next::User
                };
            }
            Next::Env(side) => {
                // Calls are read in place; each result is appended once its call is done with.
                let last = conv.last_idx().unwrap_or(0);
                let n = conv.last().map_or(0, |m| m.tool_calls().len());
                let mut blocked_ids: Vec<String> = Vec::new();
                let first_event = out.guard_events.len();
                for k in 0..n {
                    let call = &conv.at(last).tool_calls()[k];
                    let mutating = side == Requestor::Assistant
                        && env.tool_kind(side, &call.name) == Some(ToolKind::Write);
                    // The guard seam: every mutating agent call is judged before it runs.
                    let judge = spec.guard.filter(|g| mutating && g.judges_calls());
                    let decision = match judge {
                        Some(guard) => {
                            let history = conv.agent.clone();
                            let at = conv.len();
                            let ctx = guard_context(spec, &history, env.as_ref(), &guard_state, at);
                            let mut d = match guard.on_mutating_call(&ctx, call).await {
                                Ok(d) => d,
                                Err(e) => break 'sim Some(guard_failure(guard, e)),
                            };
                            out.guide_events.extend(d.guide.take());
                            Some((guard.name().to_string(), d))
                        }
                        _ => None,
                    };
                    let blocked = decision
                        .as_ref()
                        .is_some_and(|(_, d)| d.verdict == Verdict::Block);
                    let (content, error) = if blocked {
                        let remediation =
                            decision.as_ref().and_then(|(_, d)| d.remediation.clone());
                        (
                            remediation.unwrap_or_else(|| {
                                "This action was blocked by the policy guard.".into()
                            }),
                            true,
                        )
                    } else {
                        env.execute(side, &call.name, &call.arguments)
                    };
                    if mutating {
                        out.call_attempts.push(CallAttempt {
                            call_id: call.id.clone(),
                            tool: call.name.clone(),
                            requestor: side,
                            verdict: decision.as_ref().map(|(_, d)| d.verdict),
                            executed: !blocked,
                            faults: Vec::new(),
                            missing_prerequisites: None,
                        });
                    }
                    if let Some((guard, d)) = decision {
                        let (verdict_source, fail_reason, fail_http_status) =
                            FailCause::event_fields(d.fail);
                        out.guard_events.push(GuardEvent {
                            guard,
                            call_id: call.id.clone(),
                            tool: call.name.clone(),
                            arguments: call.arguments.clone(),
                            attempt_idx: out.call_attempts.len() as u32 - 1,
                            at_message: None,
                            verdict: d.verdict,
                            requirements: d.requirements,
                            remediation: d.remediation,
                            executed: !blocked,
                            usage: d.usage,
                            verdict_source,
                            fail_reason,
                            fail_http_status,
                            info: d.info,
                        });
                    }
                    // Blocked calls are not environment errors: they do not count toward max_errors.
                    errors += u32::from(error && !blocked);
                    let result = ToolMessage {
                        id: call.id.clone(),
                        content,
                        requestor: side,
                        error,
                        turn_idx: None,
                        timestamp: Some(now_timestamp()),
                        guard_blocked: blocked,
                    };
                    if blocked {
                        blocked_ids.push(result.id.clone());
                        conv.push_remediation(result);
                    } else {
                        conv.push(Message::Tool(result));
                    }
                }
                // The blocked calls leave the trajectory (the agent's view keeps them with
                // their remediations); a message that made only blocked calls and said nothing
                // was never a turn of the trajectory.
                let ids: Vec<&str> = blocked_ids.iter().map(String::as_str).collect();
                let removed = conv.cut_blocked_calls(last, &ids);
                // The judged calls sit after their message, or where it was when it left.
                let at = if removed { last } else { last + 1 } as u32;
                for e in &mut out.guard_events[first_event..] {
                    e.at_message = Some(at);
                }
                if removed {
                    // A message of the given history was never one of this simulation's turns.
                    if last < from_history {
                        from_history -= 1;
                    } else {
                        out.agent_turns -= 1;
                    }
                }
                next = if side == Requestor::User {
                    Next::User
                } else {
                    Next::Agent
                };
            }
        }
        steps += 1;
        if let Err(e) = env.sync_tools() {
            break 'sim Some(SimulationError::Sync(e.qualified()));
        }
        if matches!(next, Next::Env(_)) {
            continue;
        }
        if steps >= spec.max_steps {
            done = Some(Termination::MaxSteps);
        }
        if errors >= spec.max_errors {
            done = Some(Termination::TooManyErrors);
        }
        if let Some(reason) = done.take() {
            out.termination_reason = reason;
            break None;
        }
    };
    if let Some(guard) = spec.guard {
        let error = failure.as_ref().map(|e| e.to_string());
        let end = tauguard_guards::SessionEnd {
            termination_reason: match &failure {
                Some(_) => Termination::InfrastructureError,
                None => out.termination_reason,
            },
            error: error.as_deref(),
        };
        guard.end_session(&guard_state, &end);
    }
    (out.messages, out.agent_view) = conv.into_trajectory();
    for (i, m) in out.messages.iter_mut().enumerate() {
        set_turn_idx(m, i as u32);
    }
    if let Some(error) = failure {
        return Err(SimulationFailure {
            error,
            partial: Box::new(out),
        });
    }
    out.final_env = Some(FinalEnv(env));
    Ok(out)
}

/// What a guard hook is shown: the agent's view so far, the live environment, the guard's
/// state for this simulation, and how many trajectory messages came before.
fn guard_context<'a>(
    spec: &'a SimulationSpec<'_>,
    history: &'a [Message],
    env: &'a dyn Environment,
    state: &'a GuardState,
    at_message: usize,
) -> GuardContext<'a> {
    GuardContext {
        domain: spec.data.domain,
        policy: &spec.data.policy,
        task_id: &spec.task.id,
        trial: spec.trial,
        seed: spec.seed,
        history,
        env,
        state,
        at_message: at_message as u32,
    }
}

/// A guard hook's failure as the simulation error it ends the attempt with.
fn guard_failure(guard: &dyn Guard, e: GuardError) -> SimulationError {
    match e {
        GuardError::Model(cause) => SimulationError::GuardModel {
            guard: guard.name().to_string(),
            cause,
        },
        e => SimulationError::Guard {
            guard: guard.name().to_string(),
            message: e.to_string(),
        },
    }
}

fn set_turn_idx(m: &mut Message, i: u32) {
    match m {
        Message::User(p) | Message::Assistant(p) => p.turn_idx = Some(i),
        Message::Tool(t) => t.turn_idx = Some(i),
        Message::System { .. } => {}
    }
}

#[cfg(test)]
#[path = "simulation_tests.rs"]
mod tests;
