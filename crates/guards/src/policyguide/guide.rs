//! The guide as a guard: before the agent answers each user turn one verifier generation
//! reconciles, traverses and decides; code applies the per-request updates
//! ([`super::state`]), rebuilds the enabled tool set and hands the merged remediation to the
//! agent as guidance. A mutating call no active request authorizes triggers a corrective
//! verification; if that verification authorizes it (a request the turn's verification had not
//! seen), it runs, else it is stopped; either way the region's one interception is spent
//! ([`Gate`]): the immediate retry and any other unauthorized call of the region go through,
//! so the guide intercepts exactly once per user-turn region and never deadlocks the agent.
//!
//! The verifier is a [`GuideVerifier`]: the LLM guide ([`super::llm`]) or the offline sim
//! guide ([`super::sim`]); both go through the same state code.

use super::flow::Flow;
use super::state::{Gate, GuideState, RequestUpdate};
use crate::seam::{
    Advice, Decision, Guard, GuardContext, GuardError, Guidance, ModelPrompt, Ruling,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tauguard_core::ToolCall;
use tauguard_core::record::{
    FailCause, GuideEvent, GuideTrigger, RequestCard, RequirementResult, RoleUsage,
};
use tauguard_llm::BoxFuture;

/// What one verifier generation is given.
#[derive(Debug)]
pub struct GuideRequest<'a> {
    pub ctx: &'a GuardContext<'a>,
    pub flow: &'a Flow,
    pub trigger: GuideTrigger,
    /// The request state before this generation.
    pub cards: &'a [RequestCard],
    /// The intercepted call (corrective verification only).
    pub pending: Option<&'a ToolCall>,
}

/// What one verifier generation returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuideReply {
    /// The merged remediation for the agent (`None`: nothing to say).
    pub remediation: Option<String>,
    pub updates: Vec<RequestUpdate>,
    pub usage: RoleUsage,
    /// What the reply parser already refused (e.g. a malformed update), with reasons.
    pub rejected: Vec<String>,
    pub info: Option<Value>,
    /// Why the guidance and updates are the fail mode's, not the model's; `None` when the
    /// model's.
    pub fail: Option<FailCause>,
}

/// One verifier generation: V(policy or graph, tools, history, request state) → (merged
/// remediation, per-request updates).
pub trait GuideVerifier: Send + Sync {
    fn verify<'a>(
        &'a self,
        request: GuideRequest<'a>,
    ) -> BoxFuture<'a, Result<GuideReply, GuardError>>;

    /// Whether an authorized call still falls outside what was authorized (its arguments
    /// break a condition the verifier's inputs state); the reason if so. The LLM guide
    /// authorizes by state alone.
    fn outside_authorization(&self, _ctx: &GuardContext<'_>, _call: &ToolCall) -> Option<String> {
        None
    }

    /// The largest fixed prompt of one generation (see [`ModelPrompt`]); `None` for a
    /// verifier that calls no model.
    fn model_prompt(&self) -> Option<ModelPrompt> {
        None
    }
}

/// A PolicyGuide-style guard: workflow, verifier, configuration name.
pub struct PolicyGuide {
    name: String,
    flow: Arc<Flow>,
    verifier: Box<dyn GuideVerifier>,
}

impl std::fmt::Debug for PolicyGuide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyGuide")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What the agent reads when an interception's verification said nothing.
const INTERCEPTED: &str =
    "This action is not authorized yet by the workflow; complete the required steps first.";

impl PolicyGuide {
    pub fn new(name: impl Into<String>, flow: Arc<Flow>, verifier: Box<dyn GuideVerifier>) -> Self {
        PolicyGuide {
            name: name.into(),
            flow,
            verifier,
        }
    }

    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// One generation and its application to the state: the event to record.
    async fn run(
        &self,
        ctx: &GuardContext<'_>,
        trigger: GuideTrigger,
        pending: Option<&ToolCall>,
    ) -> Result<GuideEvent, GuardError> {
        let cards = ctx.state.with(|s: &mut GuideState| s.cards.clone());
        let reply = self
            .verifier
            .verify(GuideRequest {
                ctx,
                flow: &self.flow,
                trigger,
                cards: &cards,
                pending,
            })
            .await?;
        let (requests, enabled, mut rejected) = ctx.state.with(|s: &mut GuideState| {
            let rejected = s.apply(&self.flow, reply.updates);
            (s.cards.clone(), s.enabled_tools(&self.flow), rejected)
        });
        let mut all = reply.rejected;
        all.append(&mut rejected);
        let (verdict_source, fail_reason, fail_http_status) = FailCause::event_fields(reply.fail);
        Ok(GuideEvent {
            guard: self.name.clone(),
            trigger,
            at_message: ctx.at_message,
            requests,
            enabled_tools: enabled.into_iter().collect(),
            guidance: reply.remediation.filter(|t| !t.trim().is_empty()),
            rejected: all,
            usage: reply.usage,
            verdict_source,
            fail_reason,
            fail_http_status,
            info: reply.info,
        })
    }

    async fn decide(
        &self,
        ctx: &GuardContext<'_>,
        call: &ToolCall,
    ) -> Result<Decision, GuardError> {
        let (holders, gate) = ctx
            .state
            .with(|s: &mut GuideState| (s.authorizing(&self.flow, &call.name), s.gate.clone()));
        let outside = if holders.is_empty() {
            None
        } else {
            self.verifier.outside_authorization(ctx, call)
        };
        let requirement = |met: bool, reason: String| RequirementResult {
            name: "authorized".into(),
            met,
            reason,
        };
        if !holders.is_empty() && outside.is_none() {
            let mut d = Decision::pass(vec![requirement(
                true,
                format!("authorized by request(s) {}", holders.join(", ")),
            )]);
            d.info = Some(json!({"authorized_by": holders}));
            return Ok(d);
        }
        if let Gate::Spent(intercepted) = &gate {
            let retry = *intercepted == call.name;
            let reason = if retry {
                "not authorized; let through as the retry after this user turn's interception"
            } else {
                "not authorized; let through: this user turn's one interception was made"
            };
            let mut d = Decision::pass(vec![requirement(false, reason.into())]);
            d.info = Some(json!({"gate": if retry { "retry" } else { "spent" }}));
            return Ok(d);
        }
        ctx.state
            .with(|s: &mut GuideState| s.gate = Gate::Spent(call.name.clone()));
        let event = self
            .run(ctx, GuideTrigger::Interception, Some(call))
            .await?;
        // The corrective verification may find the call's procedure complete (a request the
        // turn's verification had not seen yet): then the call runs, its verification recorded.
        let now = ctx
            .state
            .with(|s: &mut GuideState| s.authorizing(&self.flow, &call.name));
        if outside.is_none() && !now.is_empty() {
            let mut d = Decision::pass(vec![requirement(
                true,
                format!(
                    "authorized by request(s) {} after a corrective verification",
                    now.join(", ")
                ),
            )]);
            d.info = Some(json!({"authorized_by": now, "intercepted": true}));
            d.guide = Some(event);
            return Ok(d);
        }
        // The agent reads why this call falls outside its authorization, then the corrective
        // verification's guidance.
        let remediation = [outside.clone(), event.guidance.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let remediation = if remediation.trim().is_empty() {
            INTERCEPTED.to_string()
        } else {
            remediation
        };
        let reason = outside.unwrap_or_else(|| {
            format!(
                "no active request holds an authorization for `{}`",
                call.name
            )
        });
        let mut d = Decision::block(vec![requirement(false, reason)], remediation);
        d.info = Some(json!({"intercepted": true}));
        // A corrective verification that failed could authorize nothing: the block is its
        // fail mode's.
        d.fail = FailCause::of_event(
            event.verdict_source,
            event.fail_reason,
            event.fail_http_status,
        );
        d.guide = Some(event);
        Ok(d)
    }
}

impl Guard for PolicyGuide {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(self.decide(ctx, call))
    }

    fn before_agent_turn<'a>(&'a self, ctx: &'a GuardContext<'a>) -> Advice<'a> {
        Box::pin(async move {
            // A new user-turn region: the gate is armed again.
            ctx.state.with(|s: &mut GuideState| s.gate = Gate::Armed);
            let event = self.run(ctx, GuideTrigger::UserTurn, None).await?;
            Ok(Some(Guidance { event }))
        })
    }

    fn model_prompt(&self) -> Option<ModelPrompt> {
        self.verifier.model_prompt()
    }
}
