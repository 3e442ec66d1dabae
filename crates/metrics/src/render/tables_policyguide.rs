//! The PolicyGuide paper's tables beyond the PolicyGuard ones, built from a `Report` (the
//! rest, and `Report::tables`, are in `tables.rs`):
//!
//! - Table 1: Pass^1 and Pass^4 per domain, with the unweighted mean over domains.
//! - Table 2: workflow ablations (guide, RAW, SELF, ReAct), Pass^4, configurations × domains.
//! - Table 3: the matched controller comparison, FlowAgent vs PolicyGuide on shared tasks.
//! - Table 14: guide-side model usage per simulation, with the runs the fail mode answered.
//! - Table 15: wall clock per simulation and its ratio to the same agent's baseline.
//!
//! Tables 2, 3, 14 and 15 exist only when records of their configurations (or guide events)
//! do, and Table 1's mean rows only when a report spans several domains, so reports of
//! PolicyGuard configurations on one domain print what they always printed. The metrics
//! themselves are defined in `guide.rs` (usage, wall clock, matched comparison) and
//! `pass_k.rs`.

use crate::measure::guide::{FLOWAGENT, POLICYGUIDE, POLICYGUIDE_RAW, POLICYGUIDE_SELF};
use crate::measure::registry::{AGENT, GUARD};
use crate::render::columns as fixed;
use crate::render::columns_views as col;
use crate::render::table::{Cell, Table};
use crate::render::tables::{key_cells, keyed, pk, rate_at};
use crate::report::{GroupReport, Report};
use std::collections::{BTreeMap, BTreeSet};

/// The six values of a Table 1 row: Pass^1 then Pass^k, each overall / PV / Mut.
fn table1_values(g: &GroupReport, k: u32) -> [Option<f64>; 6] {
    let at = |s: &crate::measure::slices::SliceMetrics, kk: u32| s.pass_k.get(kk);
    [
        at(&g.overall, 1),
        at(&g.pv, 1),
        at(&g.mut_, 1),
        at(&g.overall, k),
        at(&g.pv, k),
        at(&g.mut_, k),
    ]
}

/// An agent × guard label and its one group in each domain, in domain order.
type AcrossDomains<'a> = ((&'a str, String), Vec<&'a GroupReport>);

/// Agent × guard label → the one group of each domain, for the pairs present exactly once in
/// every domain of the report, in the report's order; empty with fewer than two domains.
fn across_domains(r: &Report) -> (usize, Vec<AcrossDomains<'_>>) {
    let domains: BTreeSet<&str> = r.groups.iter().map(|g| g.domain.as_str()).collect();
    if domains.len() < 2 {
        return (domains.len(), Vec::new());
    }
    let mut order: Vec<(&str, String)> = Vec::new();
    let mut by: BTreeMap<(&str, String), BTreeMap<&str, Vec<&GroupReport>>> = BTreeMap::new();
    for g in &r.groups {
        let key = (g.agent_model.as_str(), g.guard_label());
        if !by.contains_key(&key) {
            order.push(key.clone());
        }
        let e = by.entry(key).or_default();
        e.entry(g.domain.as_str()).or_default().push(g);
    }
    let rows = order
        .into_iter()
        .filter_map(|key| {
            let per = &by[&key];
            let complete = per.len() == domains.len() && per.values().all(|v| v.len() == 1);
            complete.then(|| (key.clone(), per.values().map(|v| v[0]).collect()))
        })
        .collect();
    (domains.len(), rows)
}

/// PolicyGuide Table 1 ("main results on the base splits"): Pass^1 and Pass^4, overall / PV /
/// Mut, one row per group. A report over several domains adds the paper's cross-domain mean
/// ("mean over 3 domains 0.42 (ReAct) → 0.62"): per agent × guard, the unweighted mean over
/// domains of each per-domain value (every domain weighs the same, whatever its task count),
/// only for an agent × guard present in every domain of the report; a value missing in any
/// domain leaves the mean missing.
pub fn policyguide_table1(r: &Report) -> Table {
    let k = r.headline_k;
    let mut t = keyed(
        "policyguide_table1",
        format!("PolicyGuide Table 1: Pass^1 and {} per domain", pk(k)),
        &[],
    );
    for kk in [1, k] {
        for c in col::TABLE1 {
            t.push_column_for(c, &kk.to_string());
        }
    }
    for g in &r.groups {
        let mut row = key_cells(g);
        row.extend(table1_values(g, k).map(Cell::opt_rate));
        t.rows.push(row);
    }
    let (n, means) = across_domains(r);
    for ((agent, label), groups) in &means {
        let mut row = vec![
            Cell::Text(format!("unweighted mean over {n} domains")),
            Cell::Text(agent.to_string()),
            Cell::Text(label.clone()),
        ];
        let values: Vec<[Option<f64>; 6]> = groups.iter().map(|g| table1_values(g, k)).collect();
        row.extend((0..6).map(|i| {
            let col: Option<Vec<f64>> = values.iter().map(|v| v[i]).collect();
            Cell::opt_rate(col.map(|c| c.iter().sum::<f64>() / c.len() as f64))
        }));
        t.rows.push(row);
    }
    if !means.is_empty() {
        t.notes.push(format!(
            "Mean rows: the unweighted mean over the report's {n} domains of each per-domain \
             value, for agent × guard configurations present in every domain."
        ));
    }
    t
}

/// The paper's name of a Table 2 configuration.
fn ablation_name(guard: &str, baseline: &str) -> Option<&'static str> {
    match guard {
        g if g == baseline => Some("ReAct"),
        POLICYGUIDE_RAW => Some("RAW"),
        POLICYGUIDE_SELF => Some("SELF"),
        POLICYGUIDE => Some("PolicyGuide"),
        _ => None,
    }
}

/// PolicyGuide Table 2 (workflow ablations): Pass^4 of the guide, RAW (raw policy in place of
/// the graph), SELF (graph given to the agent, no external verifier) and the ReAct baseline
/// when present. Laid out as the paper's: one row per agent × configuration, one column per
/// domain holding an ablation. `None` without `policyguide-raw` or `policyguide-self` records.
pub fn ablation_table(r: &Report) -> Option<Table> {
    let baseline = r.options.baseline_guard.as_str();
    let is_ablation = |g: &GroupReport| [POLICYGUIDE_RAW, POLICYGUIDE_SELF].contains(&&*g.guard);
    let domains: BTreeSet<&str> = r
        .groups
        .iter()
        .filter(|g| is_ablation(g))
        .map(|g| g.domain.as_str())
        .collect();
    if domains.is_empty() {
        return None;
    }
    let k = r.headline_k;
    let mut t = Table::new(
        "policyguide_table2",
        format!(
            "PolicyGuide Table 2: workflow ablations, {} per domain",
            pk(k)
        ),
        &[],
    );
    for c in [AGENT, col::CONFIGURATION, GUARD] {
        t.push_column(c);
    }
    for d in &domains {
        t.push_declared(format!("{d} {}", pk(k)), col::domain_pass(d, k));
    }
    let mut agents: Vec<&str> = Vec::new();
    for g in r.groups.iter().filter(|g| is_ablation(g)) {
        if !agents.contains(&g.agent_model.as_str()) {
            agents.push(&g.agent_model);
        }
    }
    for agent in agents {
        for config in [baseline, POLICYGUIDE_RAW, POLICYGUIDE_SELF, POLICYGUIDE] {
            let members: Vec<&GroupReport> = r
                .groups
                .iter()
                .filter(|g| g.agent_model == agent && g.guard == config)
                .filter(|g| domains.contains(g.domain.as_str()))
                .collect();
            let mut labels: Vec<String> = Vec::new();
            for g in &members {
                if !labels.contains(&g.guard_label()) {
                    labels.push(g.guard_label());
                }
            }
            for label in labels {
                let mut row = vec![
                    Cell::Text(agent.to_string()),
                    Cell::Text(ablation_name(config, baseline).unwrap_or(config).into()),
                    Cell::Text(label.clone()),
                ];
                row.extend(domains.iter().map(|d| {
                    members
                        .iter()
                        .find(|g| g.domain == *d && g.guard_label() == label)
                        .map_or(Cell::Missing, |g| rate_at(&g.overall.pass_k, k))
                }));
                t.rows.push(row);
            }
        }
    }
    t.notes.push(
        "RAW: the raw policy in place of the workflow graph; SELF: the graph given to the agent, \
         no external verifier or request state. Each cell is over the tasks that configuration \
         ran in that domain (the paper: airline base split, retail and telecom 40-task test \
         splits); the Summary gives task counts."
            .into(),
    );
    Some(t)
}

/// PolicyGuide Table 3 (matched workflow-controller comparison): FlowAgent (the frozen graph
/// compiled into an in-agent controller) against PolicyGuide of the same domain, agent and
/// non-guard settings, Pass^1 and Pass^4 on the tasks both ran, and PolicyGuide − FlowAgent.
/// `None` without `flowagent` records.
pub fn controller_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.guard != FLOWAGENT) {
        return None;
    }
    let k = r.headline_k;
    let mut t = keyed(
        "policyguide_table3",
        "PolicyGuide Table 3: matched controller comparison, FlowAgent vs PolicyGuide on shared \
         tasks",
        &[],
    );
    for c in col::TABLE3_TASKS {
        t.push_column(c);
    }
    for kk in [1, k] {
        for c in col::TABLE3_PASS {
            t.push_column_for(c, &kk.to_string());
        }
    }
    for g in r.groups.iter().filter(|g| g.guard == FLOWAGENT) {
        if g.matched_policyguide.is_empty() {
            let mut row = key_cells(g);
            row.extend([Cell::Missing, Cell::Int(g.task_tallies.len() as u64)]);
            row.extend(std::iter::repeat_n(Cell::Missing, 8));
            t.rows.push(row);
        }
        for m in &g.matched_policyguide {
            let mut row = key_cells(g);
            row.extend([
                Cell::Text(m.policyguide.clone()),
                Cell::Int(m.flowagent_tasks),
                Cell::Int(m.policyguide_tasks),
                Cell::Int(m.shared_tasks),
            ]);
            for kk in [1, k] {
                row.extend([
                    rate_at(&m.flowagent_pass_k, kk),
                    rate_at(&m.policyguide_pass_k, kk),
                    Cell::opt_delta(m.difference(kk)),
                ]);
            }
            t.rows.push(row);
        }
    }
    t.notes.push(
        "Both sides are scored on the tasks both ran (records name no split; the paper's is the \
         40-task telecom test split); Δ = PolicyGuide − FlowAgent. A FlowAgent group without a \
         PolicyGuide group of the same settings shows —."
            .into(),
    );
    Some(t)
}

/// PolicyGuide Table 14 (guide-side model usage per task): see [`crate::measure::guide::GuideUsage`]
/// for what is counted. `None` when no group has guide events.
pub fn guide_usage_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.guide_usage.is_none()) {
        return None;
    }
    let mut t = keyed(
        "policyguide_table14",
        "PolicyGuide Table 14: guide-side model usage per simulation",
        &[fixed::N_SIMULATIONS],
    );
    for c in fixed::GUIDE_USAGE.iter().chain(&col::TABLE14_FAIL_MODE) {
        t.push_column(*c);
    }
    for g in &r.groups {
        let Some(u) = &g.guide_usage else { continue };
        let counts = g
            .measures
            .get::<crate::measure::guide_fail_mode::GuideFailMode>()
            .flatten();
        let f = counts.as_ref();
        let mut row = key_cells(g);
        row.extend([
            Cell::Int(u.simulations),
            Cell::opt_num(u.runs_per_simulation(), 2),
            Cell::opt_num(u.calls_per_simulation(), 2),
            Cell::opt_num(u.prompt_tokens_per_simulation(), 0),
            Cell::opt_num(u.completion_tokens_per_simulation(), 0),
            Cell::opt_pct(u.prefix_cache_hit_rate()),
            // Unknown, not missing, when a guide call had no price.
            Cell::cost(Some(u.cost_per_simulation()), 3),
            Cell::Int(f.map_or(0, |f| f.fail_mode)),
            Cell::opt_pct(f.and_then(|f| f.share())),
        ]);
        t.rows.push(row);
    }
    t.notes.push(
        "Counted per simulation (infrastructure errors excluded): every guide event (runs \
         before user turns and corrective verifications at intercepted calls) plus the same \
         guard's decisions at mutating calls — the record's guard usage; agent and user \
         simulator excluded. Prefix-cache hit = cached / prompt tokens (— when the provider \
         reported no cached tokens); cost unknown when a call had no price. Fail-mode = guide runs \
         whose guidance came from the fail mode because the model gave none (an unparseable or \
         cut reply, an HTTP error, a context overflow: a failed call counts no call, so a guide \
         that never answered shows few calls); Fail-mode% = fail-mode / guide runs."
            .into(),
    );
    Some(t)
}

/// PolicyGuide Table 15 (mean end-to-end wall clock per task): see
/// [`crate::measure::guide::WallClock`]. `None` unless the report holds a PolicyGuide-family group.
pub fn wall_clock_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.wall_clock.is_none()) {
        return None;
    }
    let mut title = "PolicyGuide Table 15: mean wall clock per simulation, ratio to the same \
                     agent's baseline"
        .to_string();
    if r.simulated() {
        title.push_str(" — simulated groups' wall clock is not comparable to model runs");
    }
    let t = keyed(
        "policyguide_table15",
        title,
        &[
            fixed::N_SIMULATIONS,
            col::WALL_SECONDS,
            fixed::WALL_RATIO,
            fixed::SIMULATED,
        ],
    );
    let mut t = t;
    for g in &r.groups {
        let Some(w) = &g.wall_clock else { continue };
        let mut row = key_cells(g);
        row.extend([
            Cell::Int(w.simulations),
            Cell::opt_num(w.mean_seconds, 1),
            Cell::opt_num(w.ratio_vs_baseline, 2),
            Cell::Text(if g.simulated { "yes" } else { "no" }.into()),
        ]);
        t.rows.push(row);
    }
    t.notes.push(
        "Ratio: mean wall clock over the same agent's baseline in the same domain with the same \
         non-guard settings (the paper: guide 5.45–5.78× ReAct)."
            .into(),
    );
    if r.groups
        .iter()
        .any(|g| g.wall_clock.is_some_and(|w| w.baseline_too_short))
    {
        t.notes.push(format!(
            "— in × baseline: the baseline's mean wall clock is under {} s, too short to \
             divide by (a ratio to it would be noise, not a slowdown).",
            crate::measure::guide::MIN_BASELINE_SECONDS
        ));
    }
    Some(t)
}

/// Columns of the flat per-group CSV for these metrics, present only when their data is.
pub(crate) fn group_columns(r: &Report) -> (Vec<crate::measure::registry::Column>, Vec<Vec<Cell>>) {
    let usage = r.groups.iter().any(|g| g.guide_usage.is_some());
    let wall = r.groups.iter().any(|g| g.wall_clock.is_some());
    let mut h = Vec::new();
    if usage {
        h.extend(fixed::GUIDE_USAGE.map(fixed::snake));
    }
    if wall {
        h.extend([fixed::WALL_SECONDS_MEAN, fixed::snake(fixed::WALL_RATIO)]);
    }
    let rows = r
        .groups
        .iter()
        .map(|g| {
            let mut row = Vec::new();
            if usage {
                let u = g.guide_usage.as_ref();
                row.extend(
                    [
                        u.and_then(|u| u.runs_per_simulation()),
                        u.and_then(|u| u.calls_per_simulation()),
                        u.and_then(|u| u.prompt_tokens_per_simulation()),
                        u.and_then(|u| u.completion_tokens_per_simulation()),
                        u.and_then(|u| u.prefix_cache_hit_rate()),
                        u.and_then(|u| u.cost_per_simulation()),
                    ]
                    .map(Cell::opt_rate),
                );
            }
            if wall {
                let w = g.wall_clock.as_ref();
                row.push(Cell::opt_rate(w.and_then(|w| w.mean_seconds)));
                row.push(Cell::opt_rate(w.and_then(|w| w.ratio_vs_baseline)));
            }
            row
        })
        .collect();
    (h, rows)
}
