//! `report`: groups records by cell — (domain, agent model, guard) and the cell hash records
//! carry, so two configurations that differ in any setting (user model, verifier, fault
//! profile, prompts, …) are never pooled — computes every metric per group and relates each
//! group to the baseline of the same agent under the same non-guard settings. Rendering lives in `tables.rs`,
//! files and plots in `output.rs` and `plots.rs`.
//!
//! Duplicates: records with the same (run, cell, task, trial, seed) are one simulation written
//! twice (a resumed run); the last record wins, except that a scored record is never replaced
//! by an infrastructure error. Records of different runs with the same group key are pooled
//! (their trials add up).

pub(crate) mod cells;
pub(crate) mod report_groups;
pub(crate) mod report_slices;

use crate::measure::confusion::LabelOptions;
use crate::measure::pass_k::{PassK, TaskTally};
use crate::measure::registry::{Context, Measured};
use crate::measure::slices::SliceMetrics;
use crate::report::report_groups::{Grouped, dedupe, split_groups};
use crate::report::report_slices::Scored;
use crate::summary::outcome::InfraPolicy;
use crate::summary::{SimSummary, summarise};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use tauguard_core::record::SimulationRecord;

/// Options of `report`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportOptions {
    /// Infrastructure errors: excluded and counted (default) or counted as failures.
    pub infra: InfraPolicy,
    /// Violation labels of the confusion matrices.
    pub labels: LabelOptions,
    /// Guard name of the no-guard configuration deltas are taken against.
    pub baseline_guard: String,
    /// The k of the headline tables (PolicyGuard Table 2 reports Pass^4); lowered to the
    /// largest K of any group when none reaches it. A group with fewer trials shows "—".
    pub headline_k: u32,
    /// The largest k any table reports (Pass^k for k = 1..=max_k); runs with many trials per
    /// task would otherwise print one column per trial.
    pub max_k: u32,
    /// A cell where more than this share of guard verdicts or guide runs came from the fail
    /// mode is flagged (see [`crate::measure::fail_mode`]).
    pub fail_mode_threshold: f64,
}

/// The default of [`ReportOptions::max_k`].
pub const DEFAULT_MAX_K: u32 = 16;

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            infra: InfraPolicy::Exclude,
            labels: LabelOptions::default(),
            baseline_guard: "baseline".into(),
            headline_k: 4,
            max_k: DEFAULT_MAX_K,
            fail_mode_threshold: crate::measure::fail_mode::DEFAULT_FAIL_MODE_THRESHOLD,
        }
    }
}

/// Every metric of one (domain, agent model, guard) group. Serialized as one element of the
/// `report` JSON list (see the crate docs for the shape).
///
/// The registered measures are in `measures`; the fields beside it stay computed by hand
/// because the registry's one-group accumulate-and-relate does not fit them: the slices and
/// their Pass^k, deltas, reward, cost per role and process stats come out of one pass
/// (`report_slices.rs`) whose k every table and the process Pass^k share, and are flattened
/// into the group's object; floors and `pv_above_refuse_all` come from floor-agent records
/// the caller attaches after the report is made; the guide's usage, wall clock and matched
/// PolicyGuide groups are settled across all groups at once (FlowAgent matched with
/// PolicyGuide cells, wall clock kept only when some group is of the guide family, its
/// ratio to a baseline refused when the baseline is too short), see
/// [`crate::measure::guide::finish`]; the run's spending is the report's, not a group's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupReport {
    pub domain: String,
    pub agent_model: String,
    pub guard: String,
    /// The cell hash of the group's records (`None` for records without one, such as
    /// upstream imports).
    pub cell_hash: Option<String>,
    /// The settings that tell this group apart from other groups with the same domain,
    /// agent and guard (empty when the label alone is unique).
    pub cell: BTreeMap<String, Value>,
    /// The group's full cell settings (from its records), for baselines and labels.
    #[serde(skip)]
    pub full_cell: BTreeMap<String, Value>,
    /// Whether the group's cell ran τ²-bench's benchmark definition, item by item; `None`
    /// when its records carry no stamp (written before it existed, or imported).
    pub comparability: Option<tauguard_core::comparability::CellStamp>,
    /// A role of some record was played by a `sim` model: the group's numbers are no paper
    /// result (see [`crate::summary::simulated`]).
    pub simulated: bool,
    /// All tasks of the group.
    #[serde(flatten)]
    pub overall: SliceMetrics,
    /// Tasks whose gold actions contain no agent-side mutating call.
    pub pv: SliceMetrics,
    /// The other tasks.
    #[serde(rename = "mut")]
    pub mut_: SliceMetrics,
    /// Records dropped as duplicates of another record of the same simulation.
    pub duplicates: u64,
    /// Overall pass^k minus the same agent's baseline pass^k (same domain), for the k both
    /// have; `None` for the baseline itself or without a baseline.
    pub delta_vs_baseline: Option<PassK>,
    /// Mean reward over scored simulations with a reward (τ²-bench `avg_reward`).
    pub avg_reward: Option<f64>,
    /// Mean cost in US dollars per scored simulation, per role, over the scored simulations
    /// with usage of that role; `None` (JSON `null`) when one of them called a model without
    /// a price: the mean is unknown, never a mean of the priced part.
    pub cost_per_simulation: BTreeMap<String, Option<f64>>,
    /// The registered measures' values (`measure/registry.rs`), each placed in the JSON
    /// object where its measure says.
    #[serde(skip)]
    pub measures: Measured,
    /// First deviations by level and position and the trigger schedules' coverage; `None`
    /// when no simulation was process-evaluated (see [`crate::measure::process`]).
    pub process: Option<crate::measure::process::ProcessStats>,
    /// The floors of the group's domain by floor agent (see [`crate::measure::floors`]); empty when
    /// the report was made without them.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub floors: BTreeMap<String, crate::measure::floors::Floor>,
    /// Whether the group's PV Pass^1 exceeds the refuse-all floor; `None` without floors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pv_above_refuse_all: Option<bool>,
    /// Guide-side usage (PolicyGuide Table 14); `None` when no record has a guide event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guide_usage: Option<crate::measure::guide::GuideUsage>,
    /// Wall clock per simulation (PolicyGuide Table 15); `None` unless the report holds a
    /// PolicyGuide-family group (see [`crate::measure::guide::finish`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_clock: Option<crate::measure::guide::WallClock>,
    /// FlowAgent groups: the PolicyGuide groups they are matched with (PolicyGuide Table 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_policyguide: Vec<crate::measure::guide::Matched>,
    /// Scored trials and successes per task id, sorted by task id (for matched comparisons).
    #[serde(skip)]
    pub task_tallies: Vec<(String, TaskTally)>,
}

impl GroupReport {
    /// `domain / agent / guard`, followed by the distinguishing settings when there are any.
    pub fn label(&self) -> String {
        format!(
            "{} / {} / {}",
            self.domain,
            self.agent_model,
            self.guard_label()
        )
    }

    /// The guard name, followed by the distinguishing settings in brackets when there are
    /// any (`pg-checklist [verifier.mode=explicit]`); a setting this group does not record
    /// reads as its default in words (`model_errors=infrastructure (default)`), never `null`.
    pub fn guard_label(&self) -> String {
        if self.cell.is_empty() {
            return self.guard.clone();
        }
        let settings: Vec<String> = self
            .cell
            .iter()
            .map(
                |(k, v)| match (crate::report::cells::option_item(k, self), v) {
                    // A domain option reads as itself (`retrieval=grep_only`), not its stamp text.
                    (Some((name, value)), _) => format!("{name}={value}"),
                    (None, Value::String(s)) => format!("{k}={s}"),
                    // Absent from this group's settings, present in another's: its default.
                    (None, Value::Null) => {
                        format!("{k}={}", crate::report::cells::absent_setting(k))
                    }
                    (None, other) => format!("{k}={other}"),
                },
            )
            .collect();
        format!("{} [{}]", self.guard, settings.join(", "))
    }

    /// The settings a baseline must share with this group for a delta to be meaningful:
    /// everything except the guard and its verifier.
    pub(crate) fn base_identity(&self) -> String {
        let rest: BTreeMap<&String, &Value> = self
            .full_cell
            .iter()
            .filter(|(k, _)| !(k.starts_with("guard") || k.starts_with("verifier")))
            .collect();
        serde_json::to_string(&rest).expect("settings serialise")
    }
}

/// The result of `report`.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Sorted by domain, agent model, then guard with the baseline first.
    pub groups: Vec<GroupReport>,
    /// The k used by the headline tables (0 when no group has a scored task): the requested
    /// `headline_k`, or the largest K of any group when smaller.
    pub headline_k: u32,
    pub options: ReportOptions,
    /// Things a reader should know (unequal trial counts, duplicates); not part of the JSON.
    pub warnings: Vec<String>,
    /// Floors of the report's domains (see [`crate::measure::floors`]); empty without them.
    pub floors: Vec<crate::measure::floors::Floor>,
    /// Observations printed under the tables (a configuration at or below a floor).
    pub notes: Vec<String>,
    /// What every table's title says in brackets when the records are not the whole run (an
    /// incomplete merge among the inputs: the caller knows, the records alone do not).
    pub caveat: Option<String>,
    /// Every dollar the inputs' runs billed (see [`crate::measure::spending`]); `None` until
    /// [`Report::with_spending`].
    pub spending: Option<crate::measure::spending::Spending>,
    /// The level shares of the report's domains' procedure specs (`tables_process.rs`).
    pub procedure_levels: Vec<crate::measure::procedure::spec::LevelShares>,
}

fn guard_order<'a>(baseline: &'a str) -> impl Fn(&str) -> (bool, String) + 'a {
    move |g: &str| (g != baseline, g.to_string())
}

/// Every metric of one group in a single pass over its records.
fn compute_group(g: &Grouped<'_>, options: &ReportOptions) -> GroupReport {
    let n = g.n_tasks as usize;
    let mut acc = Scored::new(n);
    let mut guide_usage = crate::measure::guide::GuideUsage::default();
    let mut wall_clock = crate::measure::guide::WallClock::default();
    let mut task_names: Vec<&str> = vec![""; n];
    for &(rec, ti) in &g.records {
        task_names[ti as usize] = &*rec.task_id;
        acc.add(rec, ti, options.infra);
        guide_usage.add(rec);
        wall_clock.add(rec);
    }
    let Scored {
        slices,
        pslices,
        process,
        reward_sum,
        reward_n,
        costs,
    } = acc;
    let has_guide = g.records.iter().any(|(r, _)| r.guide().runs > 0);
    let mut task_tallies: Vec<(String, TaskTally)> = (slices[0].tasks.iter().zip(task_names))
        .filter(|(t, _)| t.n > 0)
        .map(|(t, name)| (name.to_string(), *t))
        .collect();
    task_tallies.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let [all, pv, mut_] = slices;
    let mut overall = all.finish(Some(options.max_k));
    let k = overall.pass_k.max_k();
    let (mut pv, mut mut_) = (pv.finish(Some(k)), mut_.finish(Some(k)));
    let [pall, ppv, pmut] = pslices;
    if process.simulations > 0 {
        overall.process_pass_k = Some(pall.finish(Some(k)).pass_k);
        pv.process_pass_k = (pv.n_simulations > 0).then(|| ppv.finish(Some(k)).pass_k);
        mut_.process_pass_k = (mut_.n_simulations > 0).then(|| pmut.finish(Some(k)).pass_k);
    }
    let full_cell = g
        .records
        .first()
        .map(|(r, _)| r.cell.cell.clone())
        .unwrap_or_default();
    GroupReport {
        comparability: tauguard_core::comparability::CellStamp::of(&full_cell),
        domain: g.key.0.to_string(),
        agent_model: g.key.1.to_string(),
        guard: g.key.2.to_string(),
        cell_hash: (!g.key.3.is_empty()).then(|| g.key.3.to_string()),
        cell: BTreeMap::new(),
        full_cell,
        simulated: g.records.iter().any(|(r, _)| r.cell.simulated),
        overall,
        pv,
        mut_,
        process: process.finish(),
        duplicates: g.duplicates,
        delta_vs_baseline: None,
        avg_reward: (reward_n > 0).then(|| reward_sum / reward_n as f64),
        cost_per_simulation: costs
            .into_iter()
            .map(|(role, (s, n, unpriced))| (role.to_string(), (!unpriced).then(|| s / n as f64)))
            .collect(),
        measures: Measured::of(g.records.iter().map(|(r, _)| *r), &Context { options }),
        floors: BTreeMap::new(),
        pv_above_refuse_all: None,
        guide_usage: has_guide.then_some(guide_usage),
        wall_clock: Some(wall_clock),
        matched_policyguide: Vec::new(),
        task_tallies,
    }
}

/// Computes every metric per (domain, agent model, guard) group of `records`: summarises
/// them, then [`report_summaries`].
pub fn report(records: &[SimulationRecord], options: &ReportOptions) -> Report {
    report_summaries(&summarise(records), options)
}

/// Computes every metric per (domain, agent model, guard) group of the simulations.
pub fn report_summaries(records: &[SimSummary], options: &ReportOptions) -> Report {
    let mut groups: Vec<GroupReport> = split_groups(records)
        .into_par_iter()
        .map(|(key, recs)| compute_group(&dedupe(key, recs), options))
        .collect();
    crate::report::cells::distinguish(&mut groups);
    let mut warnings = Vec::new();
    for g in &groups {
        if g.duplicates > 0 {
            warnings.push(format!(
                "{}: {} duplicate record(s) of the same simulation ignored",
                g.label(),
                g.duplicates
            ));
        }
    }
    let order = guard_order(&options.baseline_guard);
    groups.sort_by(|a, b| {
        (&a.domain, &a.agent_model, order(&a.guard), &a.cell_hash).cmp(&(
            &b.domain,
            &b.agent_model,
            order(&b.guard),
            &b.cell_hash,
        ))
    });

    // Deltas against the baseline of the same agent in the same domain under the same
    // non-guard settings (user model, judge, faults, prompts, seed, ...).
    let baselines: HashMap<(String, String, String), usize> = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.guard == options.baseline_guard)
        .map(|(i, g)| {
            (
                (g.domain.clone(), g.agent_model.clone(), g.base_identity()),
                i,
            )
        })
        .collect();
    let snapshot: Vec<(PassK, Measured)> = groups
        .iter()
        .map(|g| (g.overall.pass_k.clone(), g.measures.clone()))
        .collect();
    for g in groups.iter_mut() {
        if g.guard == options.baseline_guard {
            continue;
        }
        let Some(&bi) =
            baselines.get(&(g.domain.clone(), g.agent_model.clone(), g.base_identity()))
        else {
            continue;
        };
        let (base_pass, base_measures) = &snapshot[bi];
        g.delta_vs_baseline = Some(PassK(
            g.overall
                .pass_k
                .0
                .iter()
                .zip(&base_pass.0)
                .map(|(x, y)| x - y)
                .collect(),
        ));
        crate::measure::registry::relate(&mut g.measures, base_measures);
    }

    crate::measure::guide::finish(&mut groups, &options.baseline_guard, options.max_k);
    let cx = Context { options };
    for g in &groups {
        warnings.extend(crate::measure::registry::warnings(g, &cx));
    }
    for g in &groups {
        let (lo, hi) = (g.overall.pass_k.max_k(), g.overall.max_trials_per_task);
        // At the cap, K is the configured limit, not the fewest trials of a task.
        if lo != hi && lo < options.max_k {
            // Infrastructure errors are not scored, so they are the usual reason a task has
            // fewer trials: say so, and how to repair it.
            let cause = match g.overall.infra_errors {
                0 => String::new(),
                n => format!(
                    " ({n} infrastructure-error simulation{} not scored; rerun the run with \
                     --resume to redo them)",
                    if n == 1 { "" } else { "s" }
                ),
            };
            warnings.push(format!(
                "{}: tasks have {lo} to {hi} scored trials; Pass^k is reported for k ≤ {lo}{cause}",
                g.label()
            ));
        } else if lo == options.max_k && g.overall.min_trials_per_task > options.max_k {
            warnings.push(format!(
                "{}: Pass^k is reported for k ≤ {lo} only (--max-k {}), though every task has \
                 at least {} scored trials",
                g.label(),
                options.max_k,
                g.overall.min_trials_per_task
            ));
        }
        if let Some(s) = g.comparability.as_ref().filter(|s| !s.comparable) {
            let what: Vec<String> = s
                .deviations
                .iter()
                .map(|(item, detail)| format!("{item} ({detail})"))
                .collect();
            warnings.push(format!(
                "{}: not comparable with τ²-bench {}: {}",
                g.label(),
                tauguard_core::comparability::upstream_short(),
                what.join("; ")
            ));
        }
    }
    let headline_k = groups
        .iter()
        .filter(|g| g.overall.n_tasks > 0)
        .map(|g| g.overall.pass_k.max_k())
        .max()
        .map_or(0, |k| k.min(options.headline_k));
    Report {
        groups,
        headline_k,
        options: options.clone(),
        warnings,
        floors: Vec::new(),
        notes: Vec::new(),
        caveat: None,
        spending: None,
        procedure_levels: Vec::new(),
    }
}

impl Report {
    /// Whether any group of the report is simulated: then every table and plot made from
    /// it is labelled (see [`crate::summary::simulated`]).
    pub fn simulated(&self) -> bool {
        self.groups.iter().any(|g| g.simulated)
    }

    /// The JSON form: a list of groups (see the crate docs).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.groups).expect("report groups serialize to JSON");
        if let Value::Array(groups) = &mut v {
            for (obj, g) in groups.iter_mut().zip(&self.groups) {
                if let Value::Object(obj) = obj {
                    crate::measure::registry::splice_json(obj, g);
                }
            }
        }
        v
    }
}
