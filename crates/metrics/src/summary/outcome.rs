//! Whether a simulation counts, and as what: the single place that applies τ²-bench's success
//! rule and the infrastructure-error policy (semantics notes §8).

use serde::{Deserialize, Serialize};

/// How infrastructure-error simulations (`SimulationRecord::is_infra_error`) enter metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InfraPolicy {
    /// Dropped before every metric and only counted (τ²-bench §8, `infra_error_count`).
    #[default]
    Exclude,
    /// Kept as failed simulations.
    AsFailure,
}

/// `None` when the simulation is excluded, else whether it succeeded (reward within 1e-6 of 1,
/// τ²-bench §8 `is_successful`), from its infrastructure-error flag and success.
pub(crate) fn scored_as(infra_error: bool, succeeded: bool, policy: InfraPolicy) -> Option<bool> {
    if infra_error {
        match policy {
            InfraPolicy::Exclude => None,
            InfraPolicy::AsFailure => Some(false),
        }
    } else {
        Some(succeeded)
    }
}
