//! One simulation: the half-duplex loop of §6.3–§6.4 — greeting, user and agent turns, tool
//! execution, step and error limits, stop tokens — producing the trajectory to evaluate.

mod turns;

use crate::config::TruncatedReplies;
use crate::party::CutReply;
use std::sync::Arc;
use tauguard_core::Task;
use tauguard_core::message::Message;
use tauguard_core::record::{CallAttempt, GuardEvent, GuideEvent, RoleUsage};
use tauguard_core::termination::Termination;
use tauguard_env::{DomainData, Environment};
use tauguard_guards::Guard;
use tauguard_llm::ChatModel;

/// The assistant's fixed opening message when a task has no message history.
pub(crate) const GREETING: &str = "Hi! How can I help you today?";
/// User-side stop tokens (substring, case-sensitive).
pub(crate) const STOP_TOKENS: &[&str] = &["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"];

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
    /// Embeds the queries of a domain whose retrieval embeds (see [`crate::embeddings`]).
    pub embedder: Option<&'a dyn tauguard_llm::EmbeddingModel>,
}

impl std::fmt::Debug for SimulationSpec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulationSpec")
            .field("domain", &self.data.domain)
            .field("task", &self.task.id)
            .field("trial", &self.trial)
            .field("seed", &self.seed)
            .field("agent", &self.agent.id())
            .field("user", &self.user.id())
            .field("guard", &self.guard.map(|g| g.name()))
            .finish_non_exhaustive()
    }
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
    /// The queries embedded for the agent's tool calls, when any were.
    pub embeddings_usage: Option<RoleUsage>,
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
    #[error("{role} model")]
    Model {
        role: &'static str,
        #[source]
        cause: tauguard_llm::LlmError,
    },
    #[error("{0} model returned a message with neither content nor tool calls")]
    EmptyMessage(&'static str),
    /// A reply cut at its token limit, under `truncated_replies = "agent_error"`.
    #[error("{role} model: {reply}")]
    TruncatedReply {
        role: &'static str,
        reply: Box<CutReply>,
    },
    #[error("initial state")]
    InitialState(#[from] tauguard_env::InitialStateError),
    /// Syncing the environment's tools after a step failed. The tool error displays as
    /// Python's `str(e)`, so the exception class is named here, before it.
    #[error("sync_tools: {}", .0.class)]
    Sync(#[source] tauguard_env::ToolError),
    #[error("guard `{guard}`")]
    Guard {
        guard: String,
        #[source]
        cause: tauguard_guards::GuardError,
    },
    /// The guard's verifier model failed fatally (credentials, unknown model); other verifier
    /// failures are fail-mode decisions, not errors.
    #[error("guard `{guard}`: verifier model")]
    GuardModel {
        guard: String,
        #[source]
        cause: tauguard_llm::LlmError,
    },
}

/// A failed simulation attempt and what it had done until then: the trajectory so far, guard
/// events, usage (an unusable reply's billed tokens included); no final environment.
#[derive(Debug)]
pub(crate) struct SimulationFailure {
    pub error: SimulationError,
    pub partial: Box<SimulationOutcome>,
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
pub(crate) async fn run_simulation_traced(
    spec: &SimulationSpec<'_>,
) -> Result<SimulationOutcome, SimulationFailure> {
    let mut sim = turns::Sim::start(spec).map_err(|e| SimulationFailure {
        error: e.into(),
        partial: Box::default(),
    })?;
    let failure = sim.run().await;
    sim.finish(failure).map_err(|f| *f)
}

#[cfg(test)]
mod tests;
