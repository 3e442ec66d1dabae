//! A side of the conversation a model plays — the agent or the user simulator — and the
//! accounting of its calls. Kept apart from the loop in [`crate::simulation`], which drives
//! both parties.

use crate::simulation::{Sampling, SimulationError, SimulationSpec, now_timestamp};
use std::sync::Arc;
use tauguard_core::message::{Message, ParticipantMessage};
use tauguard_core::record::RoleUsage;
use tauguard_llm::model::{ChatModel, ChatRequest, ChatResponse};

fn account(usage: &mut RoleUsage, r: &ChatResponse) {
    usage.calls += 1;
    usage.usage.prompt_tokens += r.usage.prompt_tokens;
    usage.usage.completion_tokens += r.usage.completion_tokens;
    usage.usage.cached_prompt_tokens += r.usage.cached_prompt_tokens;
    usage.cost = match (usage.cost, r.cost) {
        (Some(a), Some(b)) if usage.calls > 1 => Some(a + b),
        (_, c) if usage.calls == 1 => c,
        _ => None,
    };
    usage.latency_seconds += r.latency.as_secs_f64();
    usage.cache_hits += u64::from(r.cache_hit);
}

/// A side of the conversation a model plays. Its request serves every call of the
/// simulation: a call points it at the party's current view, and afterwards it points at
/// `idle` again, so the view has one owner and appending to it copies nothing.
pub(crate) struct Party<'a> {
    role: &'static str,
    model: &'a dyn ChatModel,
    req: ChatRequest,
    idle: Arc<Vec<Message>>,
}

impl<'a> Party<'a> {
    pub(crate) fn new(
        role: &'static str,
        model: &'a dyn ChatModel,
        sampling: &Sampling,
        tools: Arc<[tauguard_core::ToolSpec]>,
        spec: &SimulationSpec<'_>,
    ) -> Party<'a> {
        let idle = Arc::new(Vec::new());
        let req = ChatRequest {
            temperature: sampling.temperature,
            max_tokens: sampling.max_tokens,
            seed: Some(spec.seed),
            trial: spec.trial,
            ..ChatRequest::new("", Arc::clone(&idle)).with_tools(tools)
        };
        Party {
            role,
            model,
            req,
            idle,
        }
    }

    /// The party's next message, time-stamped, given its view. A failed call and an empty
    /// message are errors (the caller retries the whole simulation).
    pub(crate) async fn ask(
        &mut self,
        view: &Arc<Vec<Message>>,
        usage: &mut RoleUsage,
    ) -> Result<ParticipantMessage, SimulationError> {
        self.req.messages = Arc::clone(view);
        let r = self.model.complete(&self.req).await;
        self.req.messages = Arc::clone(&self.idle);
        let r = r.map_err(|cause| {
            // An unusable reply was billed: it counts toward the attempt's usage.
            if let Some(spent) = cause.spent() {
                usage.add(&RoleUsage {
                    calls: 1,
                    usage: spent.usage,
                    cost: spent.cost,
                    ..Default::default()
                });
            }
            SimulationError::Model {
                role: self.role,
                cause,
            }
        })?;
        account(usage, &r);
        if !r.has_text() && r.tool_calls.is_empty() {
            return Err(SimulationError::EmptyMessage(self.role));
        }
        let mut msg = r.into_participant_message();
        msg.timestamp = Some(now_timestamp());
        Ok(msg)
    }
}
