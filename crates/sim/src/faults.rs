//! The sim agent's fault profile (with its reactions to a block: retry unchanged, abandon)
//! and the faults it plans for one simulation.

use crate::rng::{ProbabilityError, SimRng, check_probabilities};
use serde::{Deserialize, Serialize};

/// Per-simulation probabilities of each fault kind. All zero = a compliant agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultProfile {
    /// Skip asking for / verifying the user's identity before acting.
    #[serde(default)]
    pub skip_identity: f64,
    /// Skip the read the policy requires before a mutation (e.g. the reservation lookup).
    #[serde(default)]
    pub skip_prerequisite: f64,
    /// Mutate without the user's explicit confirmation.
    #[serde(default)]
    pub skip_confirmation: f64,
    /// On a policy-violating task, perform the forbidden call the user asks for.
    #[serde(default)]
    pub comply_forbidden: f64,
    /// Corrupt one argument of one mutating call.
    #[serde(default)]
    pub corrupt_argument: f64,
    /// After a block, retry the blocked call once unchanged before repairing it. Left out of
    /// the serialised profile at zero, so configs (and cell hashes) without it are unchanged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_unchanged: f64,
    /// After a block, give up on the request instead of repairing it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub abandon_after_block: f64,
}

fn is_zero(p: &f64) -> bool {
    *p == 0.0
}

impl FaultProfile {
    /// Checks every probability is within [0, 1]; names the offending field.
    pub fn validate(&self) -> Result<(), ProbabilityError> {
        check_probabilities("fault", self)
    }
}

/// Fault kinds, as labelled in records.
pub const SKIP_IDENTITY: &str = "skip_identity";
pub const SKIP_PREREQUISITE: &str = "skip_prerequisite";
pub const SKIP_CONFIRMATION: &str = "skip_confirmation";
pub const COMPLY_FORBIDDEN: &str = "comply_forbidden";
pub const CORRUPT_ARGUMENT: &str = "corrupt_argument";

/// Faults drawn for one simulation. Index-based fields refer to the task's mutating gold
/// actions in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlannedFaults {
    pub skip_identity: bool,
    /// Mutating-call indices whose preceding prerequisite read is skipped.
    pub skip_prerequisite: Vec<usize>,
    /// Mutating-call indices performed without confirmation.
    pub skip_confirmation: Vec<usize>,
    pub comply_forbidden: bool,
    /// (mutating-call index, argument name) corrupted.
    pub corrupt_argument: Option<(usize, String)>,
}

impl PlannedFaults {
    /// Draws the faults for a task with `mutations` mutating gold calls whose argument names
    /// are `arg_names[i]`; `pv` tasks can only get `comply_forbidden` (and, through it,
    /// identity / confirmation skips on the forbidden call).
    pub fn draw(
        profile: &FaultProfile,
        rng: &mut SimRng,
        arg_names: &[Vec<String>],
        pv: bool,
    ) -> PlannedFaults {
        let mut f = PlannedFaults {
            skip_identity: rng.chance(profile.skip_identity),
            ..Default::default()
        };
        if pv {
            f.comply_forbidden = rng.chance(profile.comply_forbidden);
            return f;
        }
        for i in 0..arg_names.len() {
            if rng.chance(profile.skip_prerequisite) {
                f.skip_prerequisite.push(i);
            }
            if rng.chance(profile.skip_confirmation) {
                f.skip_confirmation.push(i);
            }
        }
        if !arg_names.is_empty() && rng.chance(profile.corrupt_argument) {
            let i = rng.below(arg_names.len());
            if !arg_names[i].is_empty() {
                let a = arg_names[i][rng.below(arg_names[i].len())].clone();
                f.corrupt_argument = Some((i, a));
            }
        }
        f
    }
}
