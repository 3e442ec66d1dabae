//! The PV / Mut slices of PolicyGuard (Table 2: airline 24 PV / 26 Mut) and the pass-rate
//! block reported overall and per slice: task and simulation counts, infrastructure errors,
//! Pass^k, P4/P1 and per-trial Pass^1.
//!
//! A record's slice is `SimulationRecord::slice`; imported τ²-bench results get it from the
//! task's gold actions (`domains.rs`).

use crate::measure::pass_k::{PassK, TaskTally, TrialPass1, p4_p1, pass_k_curve};
use serde::Serialize;

/// The pass-rate block of one set of simulations (a group or one of its slices).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct SliceMetrics {
    /// Tasks with at least one scored simulation.
    pub n_tasks: u64,
    /// Scored simulations (infrastructure errors included only under `InfraPolicy::AsFailure`).
    pub n_simulations: u64,
    /// Infrastructure-error simulations seen.
    pub infra_errors: u64,
    /// Pass^k for k = 1..K (τ²-bench §8), K = the group's smallest trial count per task.
    pub pass_k: PassK,
    /// Process-valid Pass^k, shaped like `pass_k`: a trial succeeds when its outcome passes
    /// and it is process-valid (`crate::measure::process`); `null` when no simulation of the block was
    /// process-evaluated (no procedure spec for the domain).
    pub process_pass_k: Option<PassK>,
    /// Pass^4 / Pass^1 (PolicyGuide Table 10), when K ≥ 4.
    pub p4_p1: Option<f64>,
    pub pass1_per_trial: TrialPass1,
    /// Largest scored-trial count of any task (K is the smallest); not serialized.
    #[serde(skip)]
    pub max_trials_per_task: u32,
    /// Smallest scored-trial count of any task: K unless `--max-k` capped it; not serialized.
    #[serde(skip)]
    pub min_trials_per_task: u32,
}

impl SliceMetrics {
    /// Assembles the block from per-task tallies (tasks with n = 0 are ignored) and per-trial
    /// Pass^1. `max_k` caps K (a slice uses its group's K so the three blocks have the same
    /// shape); `None` = the smallest trial count per task.
    pub fn assemble(
        tasks: &[TaskTally],
        pass1_per_trial: TrialPass1,
        simulations: u64,
        infra_errors: u64,
        max_k: Option<u32>,
    ) -> SliceMetrics {
        let scored: Vec<TaskTally> = tasks.iter().copied().filter(|t| t.n > 0).collect();
        let min_n = scored.iter().map(|t| t.n).min().unwrap_or(0);
        let k = max_k.map_or(min_n, |cap| cap.min(min_n));
        let curve = pass_k_curve(&scored, k);
        SliceMetrics {
            n_tasks: scored.len() as u64,
            n_simulations: simulations,
            infra_errors,
            p4_p1: p4_p1(&curve),
            pass_k: PassK(curve),
            process_pass_k: None,
            pass1_per_trial,
            max_trials_per_task: scored.iter().map(|t| t.n).max().unwrap_or(0),
            min_trials_per_task: min_n,
        }
    }
}
