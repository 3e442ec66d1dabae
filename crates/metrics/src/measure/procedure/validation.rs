//! The evaluator against exact ground truth: the offline sim agent labels every fault it
//! injects with the message of the call it made policy-violating, so recall and precision of
//! the process evaluator can be measured per fault type.
//!
//! A fault type is found by the check kinds that look for it (below). A fault is recalled when
//! a violation of one of its kinds sits at its message; a violation of those kinds is precise
//! when some injected fault sits at its message (a corrupted argument also leaves its call
//! unconfirmed as summarised, which is a real violation the fault caused), or when the
//! simulation has a fault of a persistent type: an agent that skips identity never identifies
//! the user, so every identity-gated event lacks it (and every id it would have read is one
//! nobody gave), while the label marks the first guarded call.

use super::evaluate::ProcessVerdict;
use serde::Serialize;
use std::collections::BTreeMap;
use tauguard_core::record::SimulationRecord;

/// Fault types and the check kinds that detect them.
pub const FAULT_CHECKS: &[(&str, &[&str])] = &[
    ("skip_identity", &["identity_before"]),
    ("skip_prerequisite", &["read_before"]),
    ("skip_confirmation", &["confirm_before"]),
    ("comply_forbidden", &["no_guarded_call"]),
    (
        "corrupt_argument",
        &[
            "grounded_arguments",
            "argument_limit",
            "argument_in",
            "argument_max",
            "confirmed_arguments",
            "json_object",
        ],
    ),
];

/// Fault types that hold for the rest of the conversation once injected.
pub(crate) const PERSISTENT_FAULTS: &[&str] = &["skip_identity"];

/// Recall and precision of one fault type.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FaultScore {
    /// Injected faults located in the trajectory.
    pub faults: u64,
    pub recalled: u64,
    /// Violations of the type's check kinds.
    pub violations: u64,
    pub precise: u64,
}

impl FaultScore {
    pub fn recall(&self) -> Option<f64> {
        (self.faults > 0).then(|| self.recalled as f64 / self.faults as f64)
    }

    pub fn precision(&self) -> Option<f64> {
        (self.violations > 0).then(|| self.precise as f64 / self.violations as f64)
    }
}

/// Scores per fault type, accumulated over simulations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FaultValidation {
    pub by_fault: BTreeMap<String, FaultScore>,
}

impl FaultValidation {
    /// Adds one simulation: its record (the labels) and its verdict; `kind_of` gives a
    /// requirement's check kind.
    pub fn add(
        &mut self,
        rec: &SimulationRecord,
        verdict: &ProcessVerdict,
        kind_of: impl Fn(&str) -> Option<&'static str>,
    ) {
        for (fault, kinds) in FAULT_CHECKS {
            let score = self.by_fault.entry(fault.to_string()).or_default();
            let hits: Vec<u32> = verdict
                .violations
                .iter()
                .filter(|v| kind_of(&v.requirement).is_some_and(|k| kinds.contains(&k)))
                .map(|v| v.message_index)
                .collect();
            for f in rec.injected_faults.iter().filter(|f| f.kind == *fault) {
                let Some(at) = f.at_message else { continue };
                score.faults += 1;
                score.recalled += u64::from(hits.contains(&at));
            }
            let mut seen = hits.clone();
            seen.dedup();
            for at in seen {
                score.violations += 1;
                score.precise += u64::from(rec.injected_faults.iter().any(|f| {
                    f.at_message == Some(at) || PERSISTENT_FAULTS.contains(&f.kind.as_str())
                }));
            }
        }
    }
}
