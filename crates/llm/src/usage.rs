//! Per-role accounting of model calls: sums responses into `tauguard_core`'s `RoleUsage`
//! (calls, tokens, cost, latency, cache hits, replies cut at the token limit) for a simulation
//! record.
//!
//! Cost is `None` for a role as soon as one of its calls had no price, so an unknown price
//! never turns into a silently low total.

use crate::model::ChatResponse;
use std::collections::BTreeMap;
use tauguard_core::record::RoleUsage;

/// Sums usage per role (`agent`, `user`, `judge`, `guard`, ...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelUsageTracker {
    roles: BTreeMap<String, RoleUsage>,
}

impl ModelUsageTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one response to `role`.
    pub fn record(&mut self, role: &str, response: &ChatResponse) {
        add_response(self.roles.entry(role.to_string()).or_default(), response);
    }

    /// Adds already-summed usage (e.g. a guard's) to `role`.
    pub fn add(&mut self, role: &str, usage: &RoleUsage) {
        combine(self.roles.entry(role.to_string()).or_default(), usage);
    }

    pub fn get(&self, role: &str) -> Option<&RoleUsage> {
        self.roles.get(role)
    }

    pub fn roles(&self) -> &BTreeMap<String, RoleUsage> {
        &self.roles
    }

    /// The map a `SimulationRecord.usage` holds.
    pub fn into_roles(self) -> BTreeMap<String, RoleUsage> {
        self.roles
    }

    /// Every role summed.
    pub fn total(&self) -> RoleUsage {
        let mut total = RoleUsage::default();
        for usage in self.roles.values() {
            combine(&mut total, usage);
        }
        total
    }
}

/// Adds one response to `into`.
pub fn add_response(into: &mut RoleUsage, response: &ChatResponse) {
    let one = RoleUsage {
        calls: 1,
        usage: response.usage,
        cost: response.cost,
        latency_seconds: response.latency.as_secs_f64(),
        cache_hits: u64::from(response.cache_hit),
        original_latency_seconds: response.original_latency_seconds.unwrap_or(0.0),
        truncated: u64::from(response.truncated()),
        truncation_retries: 0,
    };
    combine(into, &one);
}

/// Adds the unusable reply of a model-output error: billed, so it counts as a call with its
/// tokens and cost, and as truncated when the token limit cut it. Nothing for other errors.
pub fn add_unusable(into: &mut RoleUsage, error: &crate::LlmError) {
    if let Some(spent) = error.spent() {
        combine(
            into,
            &RoleUsage {
                calls: 1,
                usage: spent.usage,
                cost: spent.cost,
                truncated: u64::from(error.truncated()),
                ..RoleUsage::default()
            },
        );
    }
}

/// Adds `other` to `into`; cost stays known only while every call had a price.
pub(crate) fn combine(into: &mut RoleUsage, other: &RoleUsage) {
    if other.calls == 0 {
        return;
    }
    into.cost = if into.calls == 0 {
        other.cost
    } else {
        into.cost.zip(other.cost).map(|(a, b)| a + b)
    };
    into.add_counts(other);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tauguard_core::message::Usage;

    fn response(cost: Option<f64>, hit: bool) -> ChatResponse {
        ChatResponse {
            content: Some("ok".into()),
            tool_calls: Vec::new(),
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                cached_prompt_tokens: 4,
            },
            cost,
            latency: Duration::from_millis(500),
            original_latency_seconds: None,
            cache_hit: hit,
            attempts: 1,
            finish_reason: None,
            provider_model: None,
        }
    }

    #[test]
    fn sums_per_role_and_unknown_price_poisons_cost() {
        let mut t = ModelUsageTracker::new();
        t.record("agent", &response(Some(0.5), false));
        t.record("agent", &response(Some(0.25), true));
        t.record("user", &response(Some(0.1), false));
        t.record("user", &response(None, false));
        t.record("user", &response(Some(0.1), false));
        let agent = t.get("agent").expect("agent");
        assert_eq!(agent.calls, 2);
        assert_eq!(agent.cost, Some(0.75));
        assert_eq!(agent.cache_hits, 1);
        assert_eq!(agent.usage.cached_prompt_tokens, 8);
        assert!((agent.latency_seconds - 1.0).abs() < 1e-9);
        assert_eq!(t.get("user").and_then(|u| u.cost), None);
        let total = t.total();
        assert_eq!(total.calls, 5);
        assert_eq!(total.cost, None);
    }
}
