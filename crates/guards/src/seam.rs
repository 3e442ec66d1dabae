//! The guard seam: the trait every guard implements and what it is shown.

use serde_json::{Map, Value};
use std::any::Any;
use std::sync::{Arc, Mutex};
use tauguard_core::record::{FailCause, GuideEvent, RequirementResult, RoleUsage, Verdict};
use tauguard_core::termination::Termination;
use tauguard_core::{Message, Requestor, ToolCall, ToolKind};
use tauguard_env::{Environment, ToolError};
use tauguard_llm::BoxFuture;

/// What a guard sees when it decides.
pub struct GuardContext<'a> {
    pub domain: &'a str,
    /// The domain policy text, as the agent's system prompt embeds it.
    pub policy: &'a str,
    pub task_id: &'a str,
    pub trial: u32,
    pub seed: u64,
    /// The conversation as the agent sees it, up to and including the assistant message that
    /// carries the pending call (blocked exchanges included, with their remediations).
    pub history: &'a [Message],
    /// The environment in its current state, for read-only lookups.
    pub env: &'a dyn Environment,
    /// The guard's own state for this simulation (request cards, graph positions, gates).
    pub state: &'a GuardState,
    /// Trajectory messages so far (where a guide event sits).
    pub at_message: u32,
}

impl std::fmt::Debug for GuardContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardContext")
            .field("domain", &self.domain)
            .field("task_id", &self.task_id)
            .field("trial", &self.trial)
            .field("seed", &self.seed)
            .field("history", &self.history.len())
            .field("at_message", &self.at_message)
            .finish_non_exhaustive()
    }
}

/// A guard's per-simulation state. Guards are shared across simulations, so the orchestrator
/// owns one of these per simulation and hands it to every hook; a guard keeps whatever type
/// it needs in it.
#[derive(Default)]
pub struct GuardState(Mutex<Option<Box<dyn Any + Send>>>);

/// Opaque: the state's type is the guard's.
impl std::fmt::Debug for GuardState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardState").finish_non_exhaustive()
    }
}

impl GuardState {
    pub const fn new() -> GuardState {
        GuardState(Mutex::new(None))
    }

    /// Runs `f` on the state of type `T`, starting from `T::default()` on first use. Hooks
    /// are async, so `f` is synchronous: no lock is held across an await. A state of another
    /// type (a guard changed its state type mid-simulation) is replaced by a fresh `T`.
    pub fn with<T: Default + Send + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !slot.as_ref().is_some_and(|b| b.is::<T>()) {
            *slot = Some(Box::new(T::default()));
        }
        let state = slot
            .as_mut()
            .and_then(|b| b.downcast_mut::<T>())
            .expect("the slot was just filled with a T");
        f(state)
    }
}

impl GuardContext<'_> {
    /// Runs a read-only tool on a copy of the current state (the live state is untouched).
    /// Refuses mutating tools.
    pub fn lookup(&self, tool: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
        match self.env.tool_kind(Requestor::Assistant, tool) {
            Some(ToolKind::Write) => {
                return Err(ToolError::value(format!(
                    "guard lookups are read-only; `{tool}` mutates state"
                )));
            }
            None => return Err(ToolError::value(format!("Tool '{tool}' not found."))),
            _ => {}
        }
        let mut copy = self.env.snapshot();
        Ok(copy.dispatch(Requestor::Assistant, tool, args)?.into_json())
    }
}

/// A guard's decision on one pending mutating call.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    /// Per-requirement MET / NOT MET with reasons.
    pub requirements: Vec<RequirementResult>,
    /// 1–3 sentences for the agent on BLOCK.
    pub remediation: Option<String>,
    /// Verifier model usage (empty for rule-based guards).
    pub usage: RoleUsage,
    /// Diagnostics: parse repairs, fail-open / fail-closed decisions, rules evaluated, ...
    pub info: Option<Value>,
    /// A guide's corrective verification run on this call (an intercepted call), recorded
    /// beside the guide's turn-boundary runs.
    pub guide: Option<GuideEvent>,
    /// Why the verdict came from the fail mode, not a judgement; `None` when judged. The
    /// record's event carries it as typed fields, so metrics can tell the two apart.
    pub fail: Option<FailCause>,
}

impl Decision {
    pub fn pass(requirements: Vec<RequirementResult>) -> Decision {
        Decision {
            verdict: Verdict::Pass,
            requirements,
            remediation: None,
            usage: RoleUsage::default(),
            info: None,
            guide: None,
            fail: None,
        }
    }

    /// This decision as the hook's future, for a guard that decides without awaiting anything
    /// (rules, floors, test stand-ins): the decision is made before the future is polled.
    pub fn into_ruling<'a>(self) -> Ruling<'a> {
        Box::pin(std::future::ready(Ok(self)))
    }

    pub fn block(requirements: Vec<RequirementResult>, remediation: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Block,
            requirements,
            remediation: Some(remediation.into()),
            usage: RoleUsage::default(),
            info: None,
            guide: None,
            fail: None,
        }
    }
}

/// What a guide did before the agent answers a user turn: the event to record (request
/// state, enabled tools, usage) and the guidance text the agent reads, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Guidance {
    pub event: GuideEvent,
}

impl Guidance {
    /// The text the agent reads before acting, if the guide had something to say.
    pub fn text(&self) -> Option<&str> {
        self.event
            .guidance
            .as_deref()
            .filter(|t| !t.trim().is_empty())
    }
}

/// The largest fixed prompt a guard sends its model: the system message and the request as
/// rendered over an empty conversation. At run time the conversation is added to the
/// request, so this is the floor of every call's size, and the one part known before a run:
/// the dry run measures it against the model's context window and `run --check` sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPrompt {
    pub system: String,
    pub request: String,
}

impl ModelPrompt {
    /// Bytes of UTF-8 text sent (the prompts are nearly all ASCII, so also characters).
    pub fn chars(&self) -> usize {
        self.system.len() + self.request.len()
    }
}

/// How a simulation attempt ended, as a guard is told at its end.
#[derive(Debug, Clone, Copy)]
pub struct SessionEnd<'a> {
    /// The termination reason (`user_stop`, `max_steps`, ...), or `infrastructure_error`.
    pub termination_reason: Termination,
    /// The error that ended the attempt, when one did.
    pub error: Option<&'a str>,
}

/// Why a guard hook could not decide (a fail-mode decision is not an error).
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A verifier-model failure the fail mode does not cover (credentials, unknown model).
    #[error("verifier model")]
    Model(#[from] tauguard_llm::LlmError),
    /// A verifier or guide prompt failed to render.
    #[error(transparent)]
    Prompt(#[from] crate::policyguard::templates::TemplateError),
}

/// A guard's ruling on a pending mutating call, as [`Guard::on_mutating_call`] returns it: the
/// trait and every guard name the hook's future once, so their signatures cannot drift apart.
pub type Ruling<'a> = BoxFuture<'a, Result<Decision, GuardError>>;

/// What [`Guard::before_agent_turn`] returns: the guidance, if any, once the guide has decided.
pub type Advice<'a> = BoxFuture<'a, Result<Option<Guidance>, GuardError>>;

/// A runtime guard. Object-safe; shared across simulations (`Arc<dyn Guard>`), so any state a
/// guard keeps per simulation lives in what the orchestrator hands it.
pub trait Guard: Send + Sync {
    /// Configuration name as it appears in records (`toolguard`, `pg-checklist`, ...).
    fn name(&self) -> &str;

    /// Decides on a pending mutating call. An `Err` is an infrastructure failure of the guard
    /// (e.g. the verifier model is unreachable after retries), not a verdict.
    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a>;

    /// Optional guidance before the agent answers a user turn (PolicyGuide-style guards).
    fn before_agent_turn<'a>(&'a self, _ctx: &'a GuardContext<'a>) -> Advice<'a> {
        Box::pin(async { Ok(None) })
    }

    /// Whether mutating calls go through [`Guard::on_mutating_call`]. A configuration that
    /// only hands the agent instructions judges none, and records no verdicts.
    fn judges_calls(&self) -> bool {
        true
    }

    /// Text appended to the agent's system prompt (a guard configuration that hands the
    /// workflow to the agent itself). Part of the prompt, so part of the cell's provenance.
    fn agent_instructions(&self) -> Option<Arc<str>> {
        None
    }

    /// The largest fixed prompt the guard sends its model (see [`ModelPrompt`]); `None` for
    /// a guard that calls no model. Implemented where the prompt is rendered, so what is
    /// measured is what is sent.
    fn model_prompt(&self) -> Option<ModelPrompt> {
        None
    }

    /// The simulation attempt whose state this is has ended (a guard that learns or logs
    /// across simulations, e.g. an external one, is told the outcome).
    fn end_session(&self, _state: &GuardState, _end: &SessionEnd<'_>) {}
}
