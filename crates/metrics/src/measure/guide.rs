//! The PolicyGuide paper's cost and controller metrics, per group, from records alone:
//!
//! - **Guide-side usage** (PolicyGuide Table 14, "guide-side model usage … costs exclude the
//!   actor and user simulator"): [`GuideUsage`].
//! - **Wall clock per task** (PolicyGuide Table 15, "mean end-to-end wall-clock time per
//!   task"; the paper reports the guide at 5.45–5.78× ReAct): [`WallClock`].
//! - **Matched controller comparison** (PolicyGuide Table 3, FlowAgent vs PolicyGuide on the
//!   same frozen graph and the same tasks): [`Matched`].
//!
//! Which guard configurations belong to the PolicyGuide family is [`GUIDE_FAMILY`]: metrics
//! may not import the guards crate, so the names are repeated here, as the guards' factory
//! spells them. Infrastructure-error simulations are excluded from usage and wall clock (as
//! from turns and traces): they are no completed task.

use crate::input::lean::Lean;
use crate::measure::pass_k::{PassK, TaskTally, pass_k_curve};
use crate::report::GroupReport;
use crate::summary::{GuideTotals, SimSummary};
use serde::Serialize;
use std::collections::HashMap;

/// The guide itself.
pub(crate) const POLICYGUIDE: &str = "policyguide";
/// RAW ablation: the raw policy in place of the workflow graph (PolicyGuide Table 2).
pub(crate) const POLICYGUIDE_RAW: &str = "policyguide-raw";
/// SELF ablation: the graph handed to the agent, no external verifier (PolicyGuide Table 2).
pub(crate) const POLICYGUIDE_SELF: &str = "policyguide-self";
/// The same frozen graph compiled into an in-agent controller (PolicyGuide Table 3).
pub(crate) const FLOWAGENT: &str = "flowagent";
/// Guard configurations of the PolicyGuide paper beyond the PolicyGuard ones; a report
/// holding any of them (or any guide event) gets Table 15.
pub(crate) const GUIDE_FAMILY: [&str; 4] =
    [POLICYGUIDE, POLICYGUIDE_RAW, POLICYGUIDE_SELF, FLOWAGENT];

/// Guide-side model usage of one group (PolicyGuide Table 14), summed over its simulations
/// (infrastructure errors excluded, whatever the report's infra policy). What is counted, per
/// simulation: the usage of every guide event (the runs before each user turn and the
/// corrective verifications at intercepted calls — both are guide events) plus the usage the
/// same guard reports on its guard events (decisions at mutating calls). That is the sum the
/// orchestrator writes as the record's `guard` usage; a corrective verification is one guide
/// event and is counted once. Usage of discarded
/// attempts (`attempts.discarded`) is not counted.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GuideUsage {
    /// Simulations counted (every one of the group but infrastructure errors, with guide
    /// events or not).
    pub simulations: u64,
    /// Guide events (guide runs).
    pub runs: u64,
    /// Model calls.
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the provider served from its prefix cache.
    pub cached_prompt_tokens: u64,
    /// US dollars; `None` once a call had no price (unknown, never taken as 0).
    pub cost: Option<f64>,
}

/// What one simulation adds to [`GuideUsage`]: the usage of every guide event and of the
/// same guard's guard events, in that order; each priced cost is kept so a group adds the
/// same floats in the same order.
pub(crate) fn guide_totals(rec: &Lean<'_>) -> GuideTotals {
    let mut t = GuideTotals {
        runs: rec.guide_events.len() as u32,
        ..GuideTotals::default()
    };
    let mut costs = Vec::new();
    let guard = rec.guard_events.iter().filter(|e| e.guard == rec.guard);
    for u in rec
        .guide_events
        .iter()
        .map(|e| &e.usage)
        .chain(guard.map(|e| &e.usage))
    {
        t.calls += u.calls;
        t.prompt_tokens += u.usage.prompt_tokens;
        t.completion_tokens += u.usage.completion_tokens;
        t.cached_prompt_tokens += u.usage.cached_prompt_tokens;
        match u.cost {
            Some(c) => costs.push(c),
            // An unpriced item without calls costs nothing; with calls, the cost is unknown.
            None if u.calls == 0 => {}
            None => t.unpriced = true,
        }
    }
    t.costs = costs;
    t.fail_reasons = crate::measure::fail_mode::guide_fail_reasons(rec);
    t
}

impl GuideUsage {
    /// Adds one simulation.
    pub fn add(&mut self, rec: &SimSummary) {
        if rec.is_infra_error() {
            return;
        }
        if self.simulations == 0 {
            self.cost = Some(0.0);
        }
        self.simulations += 1;
        let g = rec.guide();
        self.runs += u64::from(g.runs);
        self.calls += g.calls;
        self.prompt_tokens += g.prompt_tokens;
        self.completion_tokens += g.completion_tokens;
        self.cached_prompt_tokens += g.cached_prompt_tokens;
        self.cost = match self.cost {
            Some(_) if g.unpriced => None,
            Some(mut a) => {
                for c in &g.costs {
                    a += c;
                }
                Some(a)
            }
            None => None,
        };
    }

    fn per_simulation(&self, x: f64) -> Option<f64> {
        (self.simulations > 0).then(|| x / self.simulations as f64)
    }

    /// Guide runs per simulation.
    pub fn runs_per_simulation(&self) -> Option<f64> {
        self.per_simulation(self.runs as f64)
    }

    /// Guide model calls per simulation.
    pub fn calls_per_simulation(&self) -> Option<f64> {
        self.per_simulation(self.calls as f64)
    }

    pub fn prompt_tokens_per_simulation(&self) -> Option<f64> {
        self.per_simulation(self.prompt_tokens as f64)
    }

    pub fn completion_tokens_per_simulation(&self) -> Option<f64> {
        self.per_simulation(self.completion_tokens as f64)
    }

    /// Prefix-cache hit rate (PolicyGuide Table 14; the paper reports 85.8–88.1%): cached
    /// prompt tokens / prompt tokens over the guide's calls. `None` without prompt tokens, and
    /// when no call reported a cached token: a record cannot tell a provider that reports no
    /// caching from a 0% hit rate, so neither is shown as 0.
    pub fn prefix_cache_hit_rate(&self) -> Option<f64> {
        (self.prompt_tokens > 0 && self.cached_prompt_tokens > 0)
            .then(|| self.cached_prompt_tokens as f64 / self.prompt_tokens as f64)
    }

    /// Guide cost in US dollars per simulation; `None` when any counted call was unpriced.
    pub fn cost_per_simulation(&self) -> Option<f64> {
        self.cost.and_then(|c| self.per_simulation(c))
    }
}

impl Serialize for GuideUsage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out {
            simulations: u64,
            runs: u64,
            calls: u64,
            prompt_tokens: u64,
            completion_tokens: u64,
            cached_prompt_tokens: u64,
            cost: Option<f64>,
            calls_per_simulation: Option<f64>,
            prefix_cache_hit_rate: Option<f64>,
            cost_per_simulation: Option<f64>,
        }
        Out {
            simulations: self.simulations,
            runs: self.runs,
            calls: self.calls,
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            cached_prompt_tokens: self.cached_prompt_tokens,
            cost: self.cost,
            calls_per_simulation: self.calls_per_simulation(),
            prefix_cache_hit_rate: self.prefix_cache_hit_rate(),
            cost_per_simulation: self.cost_per_simulation(),
        }
        .serialize(s)
    }
}

/// Wall clock of one group (PolicyGuide Table 15): mean `wall_seconds` per simulation
/// (infrastructure errors excluded) and its ratio to the same agent's baseline (same domain,
/// same non-guard settings).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct WallClock {
    pub simulations: u64,
    pub mean_seconds: Option<f64>,
    /// `mean_seconds` / the baseline's; `None` for the baseline, without one, or when the
    /// baseline's mean is below [`MIN_BASELINE_SECONDS`] (then `baseline_too_short`).
    pub ratio_vs_baseline: Option<f64>,
    /// The baseline exists but its mean wall clock is too short to divide by: a ratio to a
    /// near-zero mean (offline models finish in milliseconds) is noise, not a slowdown.
    #[serde(skip)]
    pub baseline_too_short: bool,
    #[serde(skip)]
    total: f64,
}

/// The smallest baseline mean wall clock a ratio is taken against: half the 0.1 s Table 15
/// prints, so a baseline shown as "0.0 s" never yields a ratio.
pub(crate) const MIN_BASELINE_SECONDS: f64 = 0.05;

impl WallClock {
    pub fn add(&mut self, rec: &SimSummary) {
        if !rec.is_infra_error() {
            self.simulations += 1;
            self.total += rec.wall_seconds;
            self.mean_seconds = Some(self.total / self.simulations as f64);
        }
    }
}

/// FlowAgent against a PolicyGuide group of the same domain, agent and non-guard settings,
/// on the tasks both ran (PolicyGuide Table 3 compares them on one 40-task split; records
/// carry no split name, so the split is the shared task set).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matched {
    /// The PolicyGuide group's guard label.
    pub policyguide: String,
    pub flowagent_tasks: u64,
    pub policyguide_tasks: u64,
    pub shared_tasks: u64,
    /// Pass^k of each side over the shared tasks, k up to the fewest trials of either side.
    pub flowagent_pass_k: PassK,
    pub policyguide_pass_k: PassK,
}

impl Matched {
    /// PolicyGuide minus FlowAgent Pass^k on the shared tasks.
    pub fn difference(&self, k: u32) -> Option<f64> {
        Some(self.policyguide_pass_k.get(k)? - self.flowagent_pass_k.get(k)?)
    }
}

fn matched(f: &GroupReport, p: &GroupReport, max_k: u32) -> Matched {
    let theirs: HashMap<&str, TaskTally> = p
        .task_tallies
        .iter()
        .map(|(t, n)| (t.as_str(), *n))
        .collect();
    let (mut fa, mut pg) = (Vec::new(), Vec::new());
    for (task, tally) in &f.task_tallies {
        if let Some(other) = theirs.get(task.as_str()) {
            fa.push(*tally);
            pg.push(*other);
        }
    }
    let k = fa
        .iter()
        .chain(&pg)
        .map(|t| t.n)
        .min()
        .unwrap_or(0)
        .min(max_k);
    Matched {
        policyguide: p.guard_label(),
        flowagent_tasks: f.task_tallies.len() as u64,
        policyguide_tasks: p.task_tallies.len() as u64,
        shared_tasks: fa.len() as u64,
        flowagent_pass_k: PassK(pass_k_curve(&fa, k)),
        policyguide_pass_k: PassK(pass_k_curve(&pg, k)),
    }
}

/// After grouping: pairs each FlowAgent group with the PolicyGuide groups of its domain,
/// agent and non-guard settings; keeps wall clock only when the report holds a
/// PolicyGuide-family group (so PolicyGuard-only reports keep their JSON) and relates it to
/// the baseline's.
pub(crate) fn finish(groups: &mut [GroupReport], baseline_guard: &str, max_k: u32) {
    let identity: Vec<(String, String, String)> = groups
        .iter()
        .map(|g| (g.domain.clone(), g.agent_model.clone(), g.base_identity()))
        .collect();
    let mut pairs: Vec<(usize, Matched)> = Vec::new();
    for (i, f) in groups.iter().enumerate() {
        if f.guard != FLOWAGENT {
            continue;
        }
        for (j, p) in groups.iter().enumerate() {
            if p.guard == POLICYGUIDE && identity[j] == identity[i] {
                pairs.push((i, matched(f, p, max_k)));
            }
        }
    }
    for (i, m) in pairs {
        groups[i].matched_policyguide.push(m);
    }
    let family = groups
        .iter()
        .any(|g| GUIDE_FAMILY.contains(&g.guard.as_str()) || g.guide_usage.is_some());
    if !family {
        for g in groups.iter_mut() {
            g.wall_clock = None;
        }
        return;
    }
    let baseline: HashMap<&(String, String, String), f64> = groups
        .iter()
        .zip(&identity)
        .filter(|(g, _)| g.guard == baseline_guard)
        .filter_map(|(g, id)| Some((id, g.wall_clock?.mean_seconds?)))
        .collect();
    for (g, id) in groups.iter_mut().zip(&identity) {
        if g.guard == baseline_guard {
            continue;
        }
        if let (Some(w), Some(&base)) = (g.wall_clock.as_mut(), baseline.get(id)) {
            w.baseline_too_short = base < MIN_BASELINE_SECONDS;
            w.ratio_vs_baseline = w
                .mean_seconds
                .filter(|_| !w.baseline_too_short)
                .map(|m| m / base);
        }
    }
}
