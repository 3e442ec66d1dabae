//! The simulation loop, one function per job: routing from the given history, the user and
//! agent turns, the guard seam on mutating calls, the bookkeeping of blocked calls, and the
//! fix-ups of the finished trajectory.

use super::{
    FinalEnv, GREETING, STOP_TOKENS, SimulationError, SimulationFailure, SimulationOutcome,
    SimulationSpec, now_timestamp,
};
use crate::party::Party;
use crate::views::Conversation;
use tauguard_core::message::{Message, ParticipantMessage, ToolCall, ToolMessage};
use tauguard_core::record::{CallAttempt, FailCause, GuardEvent, Verdict};
use tauguard_core::termination::Termination;
use tauguard_core::{Requestor, ToolKind, chain_text};
use tauguard_env::Environment;
use tauguard_env::InitialStateError;
use tauguard_guards::{Decision, Guard, GuardContext, GuardError, GuardState};

/// Whose move it is.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Next {
    User,
    Agent,
    Env(Requestor),
}

/// One simulation in flight: the environment, the conversation, the two parties and the
/// counters the limits are checked against.
pub(super) struct Sim<'s, 'a> {
    spec: &'s SimulationSpec<'a>,
    env: Box<dyn Environment>,
    conv: Conversation,
    out: SimulationOutcome,
    user: Party<'a>,
    agent: Party<'a>,
    guard_state: GuardState,
    next: Next,
    steps: u32,
    errors: u32,
    done: Option<Termination>,
    /// A user turn the agent has not answered yet: a guide runs before the agent does.
    turn_open: bool,
    /// Trajectory positions below this hold the task's given history.
    from_history: usize,
}

/// Routes from the last message of the given history; without one, the agent greets and the
/// user speaks next.
fn route_from_history(history: &[Message]) -> Next {
    match history.last() {
        None => Next::User,
        Some(Message::Assistant(a)) if a.is_tool_call() => Next::Env(Requestor::Assistant),
        Some(Message::User(u)) if u.is_tool_call() => Next::Env(Requestor::User),
        Some(Message::Assistant(_)) => Next::User,
        Some(Message::Tool(t)) if t.requestor == Requestor::User => Next::User,
        _ => Next::Agent,
    }
}

impl<'s, 'a> Sim<'s, 'a> {
    /// The environment in the task's initial state and the conversation opened on its
    /// history (or on the greeting).
    pub(super) fn start(spec: &'s SimulationSpec<'a>) -> Result<Self, InitialStateError> {
        let out = SimulationOutcome::default();
        let mut env: Box<dyn Environment> = spec.data.task_env(spec.task);
        tauguard_env::apply_initial_state(env.as_mut(), spec.task.initial_state.as_ref())?;
        let history = spec
            .task
            .initial_state
            .as_ref()
            .and_then(|s| s.message_history.clone())
            .unwrap_or_default();
        let next = route_from_history(&history);
        let greet = history.is_empty();
        let turn_open = matches!(history.last(), Some(Message::User(u)) if !u.is_tool_call());
        let from_history = history.len();
        let mut conv =
            Conversation::new(&spec.agent_system_prompt, &spec.user_system_prompt, history);
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
        let user = Party::new("user", spec.user, &spec.user_sampling, user_tools, spec);
        let agent = Party::new(
            "agent",
            spec.agent,
            &spec.agent_sampling,
            assistant_tools,
            spec,
        );
        Ok(Sim {
            spec,
            env,
            conv,
            out,
            user,
            agent,
            guard_state: GuardState::new(),
            next,
            steps: 0,
            errors: 0,
            done: None,
            turn_open,
            from_history,
        })
    }

    /// Plays moves until a stop or a limit; the error that ended the attempt, if one did.
    pub(super) async fn run(&mut self) -> Option<SimulationError> {
        loop {
            let moved = match self.next {
                Next::User => self.user_turn().await,
                Next::Agent => self.agent_turn().await,
                Next::Env(side) => self.env_turn(side).await,
            };
            if let Err(e) = moved {
                return Some(e);
            }
            match self.after_step() {
                Err(e) => return Some(e),
                Ok(true) => return None,
                Ok(false) => {}
            }
        }
    }

    /// Counts the step, syncs the tools, and checks the limits once the tool results are
    /// in; whether the simulation has ended.
    fn after_step(&mut self) -> Result<bool, SimulationError> {
        self.steps += 1;
        self.env.sync_tools().map_err(SimulationError::Sync)?;
        if matches!(self.next, Next::Env(_)) {
            return Ok(false);
        }
        if self.steps >= self.spec.max_steps {
            self.done = Some(Termination::MaxSteps);
        }
        if self.errors >= self.spec.max_errors {
            self.done = Some(Termination::TooManyErrors);
        }
        if let Some(reason) = self.done.take() {
            self.out.termination_reason = reason;
            return Ok(true);
        }
        Ok(false)
    }

    /// The user simulator's move: a message (a stop token ends the simulation after it) or
    /// tool calls of its own.
    async fn user_turn(&mut self) -> Result<(), SimulationError> {
        let mut msg = self
            .user
            .ask(&self.conv.user, &mut self.out.user_usage)
            .await?;
        if let Some(calls) = msg.tool_calls.as_mut() {
            for c in calls.iter_mut() {
                c.requestor = Requestor::User;
            }
        }
        self.out.user_turns += 1;
        let is_call = msg.is_tool_call();
        let stop = !is_call
            && msg
                .content
                .as_deref()
                .is_some_and(|c| STOP_TOKENS.iter().any(|t| c.contains(t)));
        self.conv.push(Message::User(msg));
        if stop {
            self.done = Some(Termination::UserStop);
        }
        self.turn_open = !is_call && !stop;
        self.next = if is_call {
            Next::Env(Requestor::User)
        } else {
            Next::Agent
        };
        Ok(())
    }

    /// The agent's move, after the guide has had its say on an unanswered user turn.
    async fn agent_turn(&mut self) -> Result<(), SimulationError> {
        if let (true, Some(guard)) = (std::mem::take(&mut self.turn_open), self.spec.guard) {
            self.guide_before_turn(guard).await?;
        }
        let msg = self
            .agent
            .ask(&self.conv.agent, &mut self.out.agent_usage)
            .await?;
        self.out.agent_turns += 1;
        let is_call = msg.is_tool_call();
        self.conv.push(Message::Assistant(msg));
        self.next = if is_call {
            Next::Env(Requestor::Assistant)
        } else {
            Next::User
        };
        Ok(())
    }

    /// The guard's turn-boundary hook: guidance it gives is put in the agent's view.
    async fn guide_before_turn(&mut self, guard: &dyn Guard) -> Result<(), SimulationError> {
        let history = self.conv.agent.clone();
        let at = self.conv.len();
        let ctx = guard_context(
            self.spec,
            &history,
            self.env.as_ref(),
            &self.guard_state,
            at,
        );
        match guard.before_agent_turn(&ctx).await {
            Ok(None) => {}
            Ok(Some(g)) => {
                if let Some(text) = g.text() {
                    self.conv.push_guidance(text);
                }
                self.out.guide_events.push(g.event);
            }
            Err(e) => return Err(guard_failure(guard, e)),
        }
        Ok(())
    }

    /// Runs (or, on a block, answers with the remediation) each call of the last message.
    /// Calls are read in place; each result is appended once its call is done with.
    async fn env_turn(&mut self, side: Requestor) -> Result<(), SimulationError> {
        let last = self.conv.last_idx().unwrap_or(0);
        let n = self.conv.last().map_or(0, |m| m.tool_calls().len());
        let mut blocked_ids: Vec<String> = Vec::new();
        let first_event = self.out.guard_events.len();
        for k in 0..n {
            if let Some(id) = self.handle_call(side, last, k).await? {
                blocked_ids.push(id);
            }
        }
        self.drop_blocked_calls(last, first_event, &blocked_ids);
        self.next = if side == Requestor::User {
            Next::User
        } else {
            Next::Agent
        };
        Ok(())
    }

    /// One call of message `last`: the guard seam, then execution or the remediation, with
    /// its attempt and guard event recorded; the call's id when it was blocked.
    async fn handle_call(
        &mut self,
        side: Requestor,
        last: usize,
        k: usize,
    ) -> Result<Option<String>, SimulationError> {
        let call = &self.conv.at(last).tool_calls()[k];
        let mutating = side == Requestor::Assistant
            && self.env.tool_kind(side, &call.name) == Some(ToolKind::Write);
        // The guard seam: every mutating agent call is judged before it runs.
        let decision = match self.spec.guard.filter(|g| mutating && g.judges_calls()) {
            Some(guard) => {
                let history = self.conv.agent.clone();
                let ctx = guard_context(
                    self.spec,
                    &history,
                    self.env.as_ref(),
                    &self.guard_state,
                    self.conv.len(),
                );
                let mut d = guard
                    .on_mutating_call(&ctx, call)
                    .await
                    .map_err(|e| guard_failure(guard, e))?;
                self.out.guide_events.extend(d.guide.take());
                Some((guard.name().to_string(), d))
            }
            None => None,
        };
        let blocked = decision
            .as_ref()
            .is_some_and(|(_, d)| d.verdict == Verdict::Block);
        let (content, error) = if blocked {
            let remediation = decision.as_ref().and_then(|(_, d)| d.remediation.clone());
            (
                remediation
                    .unwrap_or_else(|| "This action was blocked by the policy guard.".into()),
                true,
            )
        } else {
            let embedded = crate::embeddings::prefetch_query(
                self.spec.data,
                self.spec.embedder,
                side,
                &call.name,
                &call.arguments,
            )
            .await
            .map_err(|cause| SimulationError::Model {
                role: "embeddings",
                cause,
            })?;
            if let Some(e) = embedded {
                let usage = self.out.embeddings_usage.get_or_insert_default();
                crate::embeddings::add(usage, &e);
            }
            self.env.execute(side, &call.name, &call.arguments)
        };
        if mutating {
            let verdict = decision.as_ref().map(|(_, d)| d.verdict);
            self.out
                .call_attempts
                .push(call_attempt(call, side, verdict, blocked));
        }
        if let Some((guard, d)) = decision {
            let attempt_idx = self.out.call_attempts.len() as u32 - 1;
            self.out
                .guard_events
                .push(guard_event(guard, call, d, attempt_idx, blocked));
        }
        // Blocked calls are not environment errors: they do not count toward max_errors.
        self.errors += u32::from(error && !blocked);
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
            let id = result.id.clone();
            self.conv.push_remediation(result);
            Ok(Some(id))
        } else {
            self.conv.push(Message::Tool(result));
            Ok(None)
        }
    }

    /// The blocked calls leave the trajectory (the agent's view keeps them with their
    /// remediations); a message that made only blocked calls and said nothing was never a
    /// turn of the trajectory. The judged calls sit after their message, or where it was
    /// when it left.
    fn drop_blocked_calls(&mut self, last: usize, first_event: usize, blocked_ids: &[String]) {
        let ids: Vec<&str> = blocked_ids.iter().map(String::as_str).collect();
        let removed = self.conv.cut_blocked_calls(last, &ids);
        let at = if removed { last } else { last + 1 } as u32;
        for e in &mut self.out.guard_events[first_event..] {
            e.at_message = Some(at);
        }
        if removed {
            // A message of the given history was never one of this simulation's turns.
            if last < self.from_history {
                self.from_history -= 1;
            } else {
                self.out.agent_turns -= 1;
            }
        }
    }

    /// Tells the guard the session ended, numbers the trajectory's turns, and hands back
    /// the outcome (or the failure with what the attempt had done).
    pub(super) fn finish(
        self,
        failure: Option<SimulationError>,
    ) -> Result<SimulationOutcome, Box<SimulationFailure>> {
        let Sim {
            spec,
            env,
            conv,
            mut out,
            guard_state,
            ..
        } = self;
        if let Some(guard) = spec.guard {
            let error = failure.as_ref().map(|e| chain_text(e));
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
            return Err(Box::new(SimulationFailure {
                error,
                partial: Box::new(out),
            }));
        }
        out.final_env = Some(FinalEnv(env));
        Ok(out)
    }
}

/// The attempt record of a mutating call.
fn call_attempt(
    call: &ToolCall,
    side: Requestor,
    verdict: Option<Verdict>,
    blocked: bool,
) -> CallAttempt {
    CallAttempt {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        requestor: side,
        verdict,
        executed: !blocked,
        faults: Vec::new(),
        missing_prerequisites: None,
    }
}

/// The guard event of a judged call; its position is set once the turn's calls are done.
fn guard_event(
    guard: String,
    call: &ToolCall,
    d: Decision,
    attempt_idx: u32,
    blocked: bool,
) -> GuardEvent {
    let (verdict_source, fail_reason, fail_http_status) = FailCause::event_fields(d.fail);
    GuardEvent {
        guard,
        call_id: call.id.clone(),
        tool: call.name.clone(),
        arguments: call.arguments.clone(),
        attempt_idx,
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
    }
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
        cause => SimulationError::Guard {
            guard: guard.name().to_string(),
            cause,
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
