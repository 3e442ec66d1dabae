//! The hybrid guard (beyond the papers): a deterministic constraint layer first (typically
//! [`crate::toolguard::ToolGuard`]), the LLM procedural verifier (a PolicyGuard
//! configuration) only for calls that pass it.
//!
//! * Constraint layer BLOCKs → its decision is returned as is; the verifier is not called
//!   (one verifier call saved).
//! * Constraint layer PASSes → the verifier decides; the requirement lists are merged
//!   (constraint results first) and the usage is the sum of both layers'.
//!
//! Every decision carries `info.verifier_called` (plus each layer's own `info` under
//! `constraint` / `verifier`), so records show which calls reached the verifier;
//! [`Hybrid::verifier_calls_saved`] counts the saved calls over the guard's lifetime.

use crate::seam::{Advice, Decision, Guard, GuardContext, GuardError, ModelPrompt, Ruling};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tauguard_core::ToolCall;
use tauguard_core::record::{RoleUsage, Verdict};

pub struct Hybrid {
    name: String,
    constraint: Arc<dyn Guard>,
    verifier: Arc<dyn Guard>,
    decisions: AtomicU64,
    saved: AtomicU64,
}

impl std::fmt::Debug for Hybrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hybrid")
            .field("name", &self.name)
            .field("constraint", &self.constraint.name())
            .field("verifier", &self.verifier.name())
            .field("decisions", &self.decisions())
            .field("verifier_calls_saved", &self.verifier_calls_saved())
            .finish()
    }
}

impl Hybrid {
    /// Named `hybrid`.
    pub fn new(constraint: Arc<dyn Guard>, verifier: Arc<dyn Guard>) -> Hybrid {
        Hybrid {
            name: "hybrid".into(),
            constraint,
            verifier,
            decisions: AtomicU64::new(0),
            saved: AtomicU64::new(0),
        }
    }

    /// Overrides the configuration name recorded for this guard.
    pub fn with_name(mut self, name: impl Into<String>) -> Hybrid {
        self.name = name.into();
        self
    }

    pub fn constraint(&self) -> &Arc<dyn Guard> {
        &self.constraint
    }

    pub fn verifier(&self) -> &Arc<dyn Guard> {
        &self.verifier
    }

    /// Verifier calls avoided because the constraint layer blocked first.
    pub fn verifier_calls_saved(&self) -> u64 {
        self.saved.load(Ordering::Relaxed)
    }

    /// Decisions made (constraint-layer errors excluded).
    pub fn decisions(&self) -> u64 {
        self.decisions.load(Ordering::Relaxed)
    }

    async fn decide(
        &self,
        ctx: &GuardContext<'_>,
        call: &ToolCall,
    ) -> Result<Decision, GuardError> {
        let first = self.constraint.on_mutating_call(ctx, call).await?;
        self.decisions.fetch_add(1, Ordering::Relaxed);
        if first.verdict == Verdict::Block {
            self.saved.fetch_add(1, Ordering::Relaxed);
            let info = layer_info(false, self.constraint.name(), first.info.clone(), None);
            return Ok(Decision {
                info: Some(info),
                ..first
            });
        }
        let second = self.verifier.on_mutating_call(ctx, call).await?;
        let mut requirements = first.requirements;
        requirements.extend(second.requirements);
        let info = layer_info(
            true,
            self.constraint.name(),
            first.info,
            Some((self.verifier.name(), second.info)),
        );
        Ok(Decision {
            verdict: second.verdict,
            requirements,
            remediation: second.remediation,
            usage: add_usage(first.usage, second.usage),
            info: Some(info),
            guide: None,
            fail: second.fail,
        })
    }
}

fn layer_info(
    verifier_called: bool,
    constraint: &str,
    constraint_info: Option<Value>,
    verifier: Option<(&str, Option<Value>)>,
) -> Value {
    let mut o = Map::new();
    o.insert("verifier_called".into(), json!(verifier_called));
    o.insert("constraint_guard".into(), json!(constraint));
    o.insert("constraint".into(), constraint_info.unwrap_or(Value::Null));
    if let Some((name, info)) = verifier {
        o.insert("verifier_guard".into(), json!(name));
        o.insert("verifier".into(), info.unwrap_or(Value::Null));
    }
    Value::Object(o)
}

fn add_usage(a: RoleUsage, b: RoleUsage) -> RoleUsage {
    let cost = match (a.cost, b.cost) {
        (Some(x), Some(y)) => Some(x + y),
        // An unknown price on a layer that made calls makes the total unknown.
        (None, _) if a.calls > 0 => None,
        (_, None) if b.calls > 0 => None,
        (x, y) => x.or(y),
    };
    let mut usage = a.usage;
    usage.prompt_tokens += b.usage.prompt_tokens;
    usage.completion_tokens += b.usage.completion_tokens;
    usage.cached_prompt_tokens += b.usage.cached_prompt_tokens;
    RoleUsage {
        calls: a.calls + b.calls,
        usage,
        cost,
        latency_seconds: a.latency_seconds + b.latency_seconds,
        cache_hits: a.cache_hits + b.cache_hits,
        original_latency_seconds: a.original_latency_seconds + b.original_latency_seconds,
        truncated: a.truncated + b.truncated,
        truncation_retries: a.truncation_retries + b.truncation_retries,
    }
}

impl Guard for Hybrid {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(self.decide(ctx, call))
    }

    /// Turn-level guidance comes from the verifier (the constraint layer has none to give).
    fn before_agent_turn<'a>(&'a self, ctx: &'a GuardContext<'a>) -> Advice<'a> {
        self.verifier.before_agent_turn(ctx)
    }

    /// The verifier layer's: the constraint layer calls no model.
    fn model_prompt(&self) -> Option<ModelPrompt> {
        self.verifier.model_prompt()
    }
}
