//! `tauguard evaluate`: re-scores stored simulations with tauguard's evaluator (upstream's
//! `evaluate-trajs` counterpart) and reports where the recomputed reward disagrees with the
//! stored one.
//!
//! Each simulation's trajectory is replayed on a fresh environment exactly as a record read
//! back is evaluated ([`crate::evaluate::rescore_trajectory`]). By default the replay is
//! lenient, as upstream's `evaluate-trajs` replays (`strict_replay=False`): a mutating call
//! whose replayed output differs from the recorded one keeps its mutation, the drift is
//! listed per simulation, and the simulation is scored. [`Replay::Strict`] refuses it instead. NL assertions go to the chosen
//! [`Judge`]; with [`Judge::Skip`] a simulation whose reward depends on them is skipped and
//! counted. Simulations without a stored reward (infrastructure errors, upstream's
//! `reward_info: null`), of a domain tauguard does not know, or of a task the input does not
//! hold are skipped and counted by reason, never an error for the whole input.

use crate::evaluate::{GoldCache, Replay, Trajectory, nl_assertions_to_judge, rescore_trajectory};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tauguard_core::record::SimulationRecord;
use tauguard_core::{Task, chain_text};
use tauguard_env::DomainData;
use tauguard_llm::ChatModel;

/// Two rewards agree when they differ by at most this (τ²-bench's success tolerance).
pub(crate) const TOLERANCE: f64 = 1e-6;

/// Who rules on NL assertions.
pub enum Judge {
    /// Skip simulations whose reward depends on NL assertions (`--skip-nl`).
    Skip,
    /// The offline stand-in judge (`sim/sim-judge`, a run's default).
    Sim,
    /// A model judge, as `[models.judge]` configures it in a run.
    Model(Arc<dyn ChatModel>),
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Judge::Skip => f.write_str("Skip"),
            Judge::Sim => f.write_str("Sim"),
            Judge::Model(m) => f.debug_tuple("Model").field(&m.id()).finish(),
        }
    }
}

/// Why a simulation was not re-scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// No stored reward: an infrastructure error, or upstream's `reward_info: null`.
    NoStoredReward,
    /// The reward depends on NL assertions and `--skip-nl` was given.
    NlAssertions,
    /// The domain is not one tauguard implements.
    UnknownDomain,
    /// The input holds no task with the simulation's task id.
    UnknownTask,
}

/// One simulation whose recomputed reward differs from the stored one (or could not be
/// recomputed: then `recomputed` is null and `error` says why).
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub task_id: String,
    pub trial: u32,
    pub guard: String,
    pub stored: f64,
    pub recomputed: Option<f64>,
    /// `{"stored": {component: reward}, "recomputed": {component: reward}}`.
    pub breakdown: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A replayed mutating call whose output drifted from the stored tool message.
#[derive(Debug, Clone, Serialize)]
pub struct DriftReport {
    pub task_id: String,
    pub trial: u32,
    pub guard: String,
    pub tool: String,
    pub call_id: String,
    pub recorded: String,
    pub replayed: String,
}

/// The outcome over a whole input.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EvaluationReport {
    /// `lenient` or `strict`.
    pub replay: String,
    /// Which task definitions scored the simulations, in words.
    pub tasks: String,
    pub n_simulations: usize,
    pub evaluated: usize,
    pub agree: usize,
    pub disagree: usize,
    pub skipped: usize,
    /// `skipped` by reason; unknown domains name themselves in `unknown_domains`.
    pub skipped_by: BTreeMap<SkipReason, usize>,
    pub unknown_domains: Vec<String>,
    pub disagreements: Vec<Disagreement>,
    /// Simulations with at least one drifted call (lenient replay only).
    pub drifted_simulations: usize,
    pub drifts: Vec<DriftReport>,
}

impl EvaluationReport {
    fn skip(&mut self, reason: SkipReason) {
        self.skipped += 1;
        *self.skipped_by.entry(reason).or_default() += 1;
    }

    /// Counts simulations of a domain tauguard does not implement.
    pub fn skip_unknown_domain(&mut self, domain: &str, n: usize) {
        self.n_simulations += n;
        for _ in 0..n {
            self.skip(SkipReason::UnknownDomain);
        }
        if !self.unknown_domains.iter().any(|d| d == domain) {
            self.unknown_domains.push(domain.to_string());
        }
    }
}

/// Re-scores `records` of one domain. `tasks` holds the tasks by id (an upstream file's own
/// tasks, or the data directory's for tauguard records); `data` gives the databases.
pub async fn rescore(
    records: &[SimulationRecord],
    data: &DomainData,
    tasks: &HashMap<String, Task>,
    judge: &Judge,
    replay: Replay,
    report: &mut EvaluationReport,
) {
    let gold = GoldCache::default();
    for r in records {
        report.n_simulations += 1;
        let Some(stored) = r
            .reward
            .as_ref()
            .filter(|w| !r.is_infra_error() && w.details.get("missing_reward_info").is_none())
        else {
            report.skip(SkipReason::NoStoredReward);
            continue;
        };
        let Some(task) = tasks.get(&r.task_id) else {
            report.skip(SkipReason::UnknownTask);
            continue;
        };
        let evaluated = r.termination_reason.is_evaluated();
        let assertions = nl_assertions_to_judge(task).filter(|_| evaluated);
        let nl = match (assertions, judge) {
            (None, _) => Ok(None),
            (Some(_), Judge::Skip) => {
                report.skip(SkipReason::NlAssertions);
                continue;
            }
            (Some(a), Judge::Sim) => Ok(Some(crate::judge::sim_checks(&r.messages, a))),
            (Some(a), Judge::Model(m)) => {
                crate::judge::llm_judge(m.as_ref(), &r.messages, a, r.seed, r.trial)
                    .await
                    .map(|(checks, _usage)| Some(checks))
                    .map_err(|e| chain_text(&e))
            }
        };
        let recomputed = nl.and_then(|nl| {
            let sim = Trajectory {
                data,
                task,
                messages: &r.messages,
                termination_reason: r.termination_reason,
                gold: &gold,
            };
            rescore_trajectory(sim, nl, replay).map_err(|e| chain_text(&e))
        });
        let recomputed = recomputed.map(|(w, drifts)| {
            if !drifts.is_empty() {
                report.drifted_simulations += 1;
            }
            report
                .drifts
                .extend(drifts.into_iter().map(|d| DriftReport {
                    task_id: r.task_id.clone(),
                    trial: r.trial,
                    guard: r.guard.clone(),
                    tool: d.tool,
                    call_id: d.call_id,
                    recorded: d.recorded,
                    replayed: d.replayed,
                }));
            w
        });
        report.evaluated += 1;
        let (value, breakdown, error) = match recomputed {
            Ok(w) if (w.reward - stored.reward).abs() <= TOLERANCE => {
                report.agree += 1;
                continue;
            }
            Ok(w) => (Some(w.reward), Value::Object(w.breakdown), None),
            Err(e) => (None, Value::Null, Some(e)),
        };
        report.disagree += 1;
        report.disagreements.push(Disagreement {
            task_id: r.task_id.clone(),
            trial: r.trial,
            guard: r.guard.clone(),
            stored: stored.reward,
            recomputed: value,
            breakdown: json!({"stored": Value::Object(stored.breakdown.clone()), "recomputed": breakdown}),
            error,
        });
    }
}
