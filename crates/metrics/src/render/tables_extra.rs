//! Three tables beside the headline ones:
//! - where each cell's guard artifacts came from (the records' `artifacts.origin` cell
//!   setting, from `tasks/<domain>/provenance.toml`): hand-written or compiled, per kind —
//!   a number is only comparable with a paper's when one knows whose artifacts produced it;
//! - the PolicyGuard cost table: mean cost per trial (scored simulation) by role, their total,
//!   and the total's difference from the same agent's baseline (same domain, same non-guard
//!   settings, as every Δ of the report);
//! - per-task outcomes: successes of n scored trials per task and cell — task × cell in
//!   Markdown and LaTeX, one row per (cell, task) in CSV (`task_outcomes_long`).

use crate::measure::registry::DOMAIN;
use crate::render::columns as col;
use crate::render::table::{Cell, Table};
use crate::render::tables::{key_cells, keyed};
use crate::report::{GroupReport, Report};
use std::collections::{BTreeMap, BTreeSet};

/// The baseline group of `g` (same domain, agent and non-guard settings), if any.
fn baseline_of<'a>(r: &'a Report, g: &GroupReport) -> Option<&'a GroupReport> {
    r.groups.iter().find(|b| {
        b.guard == r.options.baseline_guard
            && b.domain == g.domain
            && b.agent_model == g.agent_model
            && b.base_identity() == g.base_identity()
    })
}

/// Sum of the per-role mean costs: `None` when no role has a cost, `Some(None)` when some
/// role's is unknown (a model without a price), so the total is too.
fn total(g: &GroupReport) -> Option<Option<f64>> {
    (!g.cost_per_simulation.is_empty()).then(|| g.cost_per_simulation.values().copied().sum())
}

/// PolicyGuard's cost table; `None` when no group reports a cost.
pub(crate) fn cost_table(r: &Report) -> Option<Table> {
    let roles: BTreeSet<&str> = r
        .groups
        .iter()
        .flat_map(|g| g.cost_per_simulation.keys().map(String::as_str))
        .collect();
    if roles.is_empty() {
        return None;
    }
    let mut t = keyed(
        "policyguard_cost",
        "PolicyGuard cost table: mean cost per trial by role (US dollars), Δ vs same-agent baseline",
        &[],
    );
    for role in &roles {
        t.push_column_for(col::ROLE_COST, role);
    }
    t.push_column(col::TOTAL_COST);
    t.push_column(col::DELTA_TOTAL_COST);
    for g in &r.groups {
        let mut row = key_cells(g);
        row.extend(
            roles
                .iter()
                .map(|role| Cell::cost(g.cost_per_simulation.get(*role).copied(), 4)),
        );
        let own = total(g);
        row.push(Cell::cost(own, 4));
        // Unknown when either total is; missing without a baseline or a cost.
        let delta = (g.guard != r.options.baseline_guard)
            .then(|| baseline_of(r, g).and_then(total).zip(own))
            .flatten()
            .map(|(b, o)| b.zip(o).map(|(b, o)| o - b));
        row.push(match delta {
            None => Cell::Missing,
            Some(None) => Cell::Unknown,
            Some(Some(d)) => Cell::Signed(d, 4),
        });
        t.rows.push(row);
    }
    t.notes.push(
        "A role's cost is its mean over the scored simulations with usage of that role; unknown \
         when one of them called a model without a price (a sim model's 0 is a real 0). Total \
         sums the roles, unknown when one is. Δ: Total minus the baseline's Total for the same \
         agent, domain and non-guard settings."
            .into(),
    );
    Some(t)
}

/// Per-task outcomes, task × cell: `c/n` per cell (Markdown and LaTeX).
pub(crate) fn task_outcomes_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.task_tallies.is_empty()) {
        return None;
    }
    let mut t = Table::new(
        "task_outcomes",
        "Per-task outcomes: successes / scored trials per task and cell",
        &[],
    );
    let several = r
        .groups
        .iter()
        .map(|g| &g.domain)
        .collect::<BTreeSet<_>>()
        .len()
        > 1;
    let cell_header = |g: &GroupReport| {
        if several {
            g.label()
        } else {
            format!("{} / {}", g.agent_model, g.guard_label())
        }
    };
    t.push_column(DOMAIN);
    t.push_column(col::TASK);
    for g in &r.groups {
        let header = cell_header(g);
        let declared = col::cell_outcomes(&header);
        t.push_declared(header, declared);
    }
    let mut tasks: BTreeMap<(&str, &str), Vec<Cell>> = BTreeMap::new();
    for (gi, g) in r.groups.iter().enumerate() {
        for (task, tally) in &g.task_tallies {
            let row = tasks
                .entry((g.domain.as_str(), task.as_str()))
                .or_insert_with(|| vec![Cell::Missing; r.groups.len()]);
            row[gi] = Cell::Text(format!("{}/{}", tally.c, tally.n));
        }
    }
    for ((domain, task), cells) in tasks {
        let mut row = vec![Cell::Text(domain.into()), Cell::Text(task.into())];
        row.extend(cells);
        t.rows.push(row);
    }
    t.notes.push(
        "c/n: successful / scored simulations of the task in the cell; — where the cell did not \
         run the task. The CSV (task_outcomes_long.csv) has one row per cell and task."
            .into(),
    );
    Some(t)
}

/// Per-task outcomes in long form: one row per (cell, task) — the CSV of
/// [`task_outcomes_table`].
pub(crate) fn task_outcomes_long(r: &Report) -> Table {
    let mut t = keyed(
        "task_outcomes_long",
        "Per-task outcomes, one row per cell and task",
        &col::TASK_OUTCOMES,
    );
    for g in &r.groups {
        for (task, tally) in &g.task_tallies {
            let mut row = key_cells(g);
            row.extend([
                Cell::Text(g.cell_hash.clone().unwrap_or_default()),
                Cell::Text(task.clone()),
                Cell::Int(u64::from(tally.n)),
                Cell::Int(u64::from(tally.c)),
                Cell::opt_rate((tally.n > 0).then(|| f64::from(tally.c) / f64::from(tally.n))),
            ]);
            t.rows.push(row);
        }
    }
    t
}

/// The origin of each cell's guard artifacts; `None` when no group's records carry one.
pub(crate) fn artifacts_origin_table(r: &Report) -> Option<Table> {
    let origin = |g: &GroupReport| {
        g.full_cell
            .get("artifacts.origin")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    if r.groups.iter().all(|g| origin(g).is_none()) {
        return None;
    }
    let mut t = keyed(
        "artifacts_origin",
        "Guard artifacts: where each cell's came from",
        &[col::ARTIFACTS_ORIGIN],
    );
    let text = |g: &GroupReport, k: &str| {
        g.full_cell
            .get(k)
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    // A compiled set's directory and full origin, when some cell ran on one.
    let any_set = r.groups.iter().any(|g| text(g, "artifacts.set").is_some());
    if any_set {
        for c in col::ARTIFACT_SET {
            t.push_column(c);
        }
    }
    for g in &r.groups {
        let mut row = key_cells(g);
        row.push(origin(g).map_or(Cell::Missing, Cell::Text));
        if any_set {
            row.push(Cell::Text(
                text(g, "artifacts.set").unwrap_or_else(|| "frozen".into()),
            ));
            row.push(text(g, "artifacts.compiled").map_or(Cell::Missing, Cell::Text));
        }
        t.rows.push(row);
    }
    t.notes.push(
        "Per kind of artifact (checklists, general rules, ToolGuard rules, workflow, \
         prerequisites, call-NMR oracle): hand-written, or compiled:<model>, as the domain's \
         tasks/<domain>/provenance.toml states; — for records written before it was kept."
            .into(),
    );
    if any_set {
        t.notes.push(
            "Artifact set: frozen (tasks/<domain>/), or the compiled set's directory ([guard] \
             artifacts); Compiled: its origin per kind, from the provenance.toml `tauguard \
             compile` wrote (compiler, model, date, compile report)."
                .into(),
        );
    }
    Some(t)
}
