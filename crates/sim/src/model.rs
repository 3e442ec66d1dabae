//! Adapters from the sim models to `tauguard-llm`'s `ChatModel`, so the orchestrator drives
//! them exactly like provider models. Tool-call ids are derived from the conversation length,
//! so reruns produce identical records.

use crate::SimTurn;
use crate::agent::SimAgent;
use crate::user::SimUser;
use std::time::Duration;
use tauguard_core::ToolCall;
use tauguard_core::message::Usage;
use tauguard_llm::LlmError;
use tauguard_llm::{BoxFuture, ChatModel, ChatRequest, ChatResponse};

fn response(turn: SimTurn, prefix: &str, view_len: usize) -> ChatResponse {
    let (content, tool_calls) = match turn {
        SimTurn::Say(text) => (Some(text), Vec::new()),
        SimTurn::Call { name, arguments } => (
            None,
            vec![ToolCall {
                id: format!("{prefix}-{view_len}"),
                name,
                arguments,
                requestor: Default::default(),
            }],
        ),
    };
    ChatResponse {
        content,
        tool_calls,
        usage: Usage::default(),
        cost: Some(0.0),
        latency: Duration::ZERO,
        original_latency_seconds: None,
        cache_hit: false,
        attempts: 0,
        finish_reason: Some("stop".into()),
        provider_model: None,
    }
}

/// A sim party as a chat model: `$model` wraps `$party`, answers as `id` and names its
/// tool calls `$prefix-<conversation length>`. The three parties differ in nothing else.
macro_rules! sim_chat_model {
    ($(#[$doc:meta])* $model:ident($party:ty), $id:literal, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $model(pub $party);

        impl ChatModel for $model {
            fn id(&self) -> &str {
                $id
            }

            fn complete<'a>(
                &'a self,
                req: &'a ChatRequest,
            ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
                let turn = self.0.respond(&req.messages);
                Box::pin(async move { Ok(response(turn, $prefix, req.messages.len())) })
            }
        }
    };
}

sim_chat_model!(
    /// `sim-agent` as a chat model.
    SimAgentModel(SimAgent),
    "sim/sim-agent",
    "sim-agent"
);
sim_chat_model!(
    /// The adversarial `sim-user` of attack tasks as a chat model.
    SimAttackerModel(crate::attacker::SimAttacker),
    "sim/sim-user",
    "sim-user"
);
sim_chat_model!(
    /// `sim-user` as a chat model.
    SimUserModel(SimUser),
    "sim/sim-user",
    "sim-user"
);
