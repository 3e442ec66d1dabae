//! The papers' table layouts built from a `Report`, and `Report::render`.
//!
//! - PolicyGuard Table 2: Pass^4 overall / PV / Mut and Δ vs the same agent's baseline.
//! - PolicyGuide Table 1: Pass^1 and Pass^4, overall / PV / Mut, per domain.
//! - PolicyGuide Table 10: Pass^k for every k, P4/P1, per-trial Pass^1 mean and std.
//! - PolicyGuide Tables 2, 3, 14 and 15 (ablations, matched controllers, guide usage, wall
//!   clock) and Table 1 with its cross-domain mean: `tables_policyguide.rs`, when present.
//! - PolicyGuard's cost table and per-task outcomes: `tables_extra.rs`.
//! - A summary (counts, reward, cost) and, for `--format csv`, one flat row per group (its
//!   last column, `simulated`, says whether a `sim` model played a role in the group).
//! - The registered measures' tables (`measure/registry.rs`), each placed where its measure
//!   says: PolicyGuard Table 7 (per-call verdict confusion, verdict and runtime views, with
//!   the fail-mode verdicts among them), Table 8 (turns), Table 9 / PolicyGuide Table 17 (call-NMR),
//!   PolicyGuide Table 5 (ordered traces), PolicyGuide Figure 6 as a table (attacks), cut
//!   replies per role, the offline verifier's inputs, read-only calls.
//!
//! When any group is simulated, every table title carries [`crate::summary::simulated::SIMULATED_LABEL`].
//!
//! "Pass^4" means Pass^k at `Report::headline_k` (4 unless no group has four trials per task);
//! a group whose tasks have fewer trials shows "—" there (and the report warns).

use crate::measure::registry::{Column, DOMAIN, KEY_COLUMNS};
use crate::render::columns as col;
use crate::render::table::{Cell, Format, Table};
pub use crate::render::tables_policyguide::{
    ablation_table, controller_table, guide_usage_table, policyguide_table1, wall_clock_table,
};
use crate::report::{GroupReport, Report};
use crate::summary::simulated::titled;

pub(crate) fn key_cells(g: &GroupReport) -> Vec<Cell> {
    vec![
        Cell::Text(g.domain.clone()),
        Cell::Text(g.agent_model.clone()),
        Cell::Text(g.guard_label()),
    ]
}

/// An empty table with the key columns and `extra`, each declared.
pub(crate) fn keyed(id: &'static str, title: impl Into<String>, extra: &[Column]) -> Table {
    let mut t = Table::declared(id, title, &KEY_COLUMNS);
    for c in extra {
        t.push_column(*c);
    }
    t
}

pub(crate) fn pk(k: u32) -> String {
    format!("Pass^{k}")
}

pub(crate) fn rate_at(pass_k: &crate::measure::pass_k::PassK, k: u32) -> Cell {
    Cell::opt_rate(pass_k.get(k))
}

/// The floors of every domain (see `crate::measure::floors`), with the notes on configurations that do
/// not exceed them; `None` when the report has no floors.
fn floors_table(r: &Report) -> Option<Table> {
    if r.floors.is_empty() {
        return None;
    }
    let [overall, pv, mut_] = col::FLOOR_PASS;
    let mut t = Table::declared(
        "floors",
        "Floors: trivial agents on the same tasks (Pass^1 = Pass^k: deterministic)",
        &[DOMAIN, col::FLOOR_AGENT, col::N_TASKS, overall, pv, mut_],
    );
    let process = r.floors.iter().any(|f| f.process_overall.is_some());
    if process {
        for c in col::FLOOR_VALID {
            t.push_column(c);
        }
    }
    for (domain, floors) in crate::measure::floors::by_domain(&r.floors) {
        for f in floors {
            let mut row = vec![
                Cell::Text(domain.to_string()),
                Cell::Text(f.agent.clone()),
                Cell::Int(f.n_tasks),
                Cell::opt_rate(f.overall),
                Cell::opt_rate(f.pv),
                Cell::opt_rate(f.mut_),
            ];
            if process {
                row.extend([f.process_overall, f.process_pv, f.process_mut].map(Cell::opt_rate));
            }
            t.rows.push(row);
        }
    }
    t.notes.push(
        "refuse-all never mutates; gold-no-procedure performs the gold mutations with no \
         identity check, reads or confirmation. A PV score at or below refuse-all's is what \
         blocking alone gives."
            .into(),
    );
    t.notes.extend(r.notes.iter().cloned());
    Some(t)
}

/// PolicyGuard Table 2.
pub(crate) fn policyguard_table2(r: &Report) -> Table {
    let k = r.headline_k;
    let [overall, pv, mut_, delta] = col::HEADLINE;
    let mut t = keyed(
        "policyguard_table2",
        format!(
            "PolicyGuard Table 2: {} overall / PV / Mut, Δ vs same-agent baseline",
            pk(k)
        ),
        &[
            col::N_TASKS,
            col::PV_N_TASKS,
            col::MUT_N_TASKS,
            overall,
            pv,
            mut_,
            delta,
        ],
    );
    for g in &r.groups {
        let mut row = key_cells(g);
        row.extend([
            Cell::Int(g.overall.n_tasks),
            Cell::Int(g.pv.n_tasks),
            Cell::Int(g.mut_.n_tasks),
            rate_at(&g.overall.pass_k, k),
            rate_at(&g.pv.pass_k, k),
            rate_at(&g.mut_.pass_k, k),
            Cell::opt_delta(g.delta_vs_baseline.as_ref().and_then(|d| d.get(k))),
        ]);
        t.rows.push(row);
    }
    t
}

/// PolicyGuide Table 10: the Pass^k curve.
pub fn pass_k_table(r: &Report) -> Table {
    let max_k = r
        .groups
        .iter()
        .map(|g| g.overall.pass_k.max_k())
        .max()
        .unwrap_or(0);
    let mut t = keyed("pass_k", "PolicyGuide Table 10: Pass^k breakdown", &[]);
    for k in 1..=max_k {
        t.push_column_for(col::PASS_K, &k.to_string());
    }
    t.push_column(col::P4_P1_RATIO);
    t.push_column_for(col::PASS_K_PER_TRIAL, "1");
    for g in &r.groups {
        let mut row = key_cells(g);
        row.extend((1..=max_k).map(|k| rate_at(&g.overall.pass_k, k)));
        row.push(Cell::opt_num(g.overall.p4_p1, 2));
        let t1 = &g.overall.pass1_per_trial;
        row.push(t1.mean.map_or(Cell::Missing, |m| Cell::MeanStd(m, t1.std)));
        t.rows.push(row);
    }
    t.notes
        .push("Per-trial Pass^1: mean ± sample standard deviation (ddof = 1) over trials.".into());
    let cap = r.options.max_k;
    if let Some(most) = r
        .groups
        .iter()
        .filter(|g| g.overall.min_trials_per_task > cap)
        .map(|g| g.overall.max_trials_per_task)
        .max()
    {
        t.notes.push(format!(
            "Pass^k is shown for k ≤ {cap} only (--max-k {cap}); tasks have up to {most} \
             scored trials."
        ));
    }
    t
}

/// Counts, reward and cost per group.
pub(crate) fn summary_table(r: &Report) -> Table {
    let t = keyed(
        "summary",
        "Summary",
        &[
            col::N_TASKS,
            col::N_SIMULATIONS,
            col::INFRA_ERRORS,
            col::DUPLICATES,
            col::AVG_REWARD,
            col::AGENT_COST_USD,
            col::GUARD_COST_USD,
        ],
    );
    let mut t = t;
    for g in &r.groups {
        let mut row = key_cells(g);
        row.extend([
            Cell::Int(g.overall.n_tasks),
            Cell::Int(g.overall.n_simulations),
            Cell::Int(g.overall.infra_errors),
            Cell::Int(g.duplicates),
            Cell::opt_rate(g.avg_reward),
            Cell::cost(g.cost_per_simulation.get("agent").copied(), 3),
            Cell::cost(g.cost_per_simulation.get("guard").copied(), 3),
        ]);
        t.rows.push(row);
    }
    let infra: u64 = r.groups.iter().map(|g| g.overall.infra_errors).sum();
    if infra > 0 {
        t.notes.push(format!(
            "{infra} infrastructure-error simulation(s) {}.",
            match r.options.infra {
                crate::summary::outcome::InfraPolicy::Exclude => "excluded from every metric",
                crate::summary::outcome::InfraPolicy::AsFailure => "counted as failures",
            }
        ));
    }
    t
}

/// The scalar columns of the groups table after the Pass^k ones, in the order their cells
/// are written.
const SCALAR_COLUMNS: [Column; 8] = [
    col::snake(col::PV_N_TASKS),
    col::snake(col::MUT_N_TASKS),
    col::snake(col::P4_P1_RATIO),
    col::PASS1_TRIAL_MEAN,
    col::PASS1_TRIAL_STD,
    col::snake(col::AVG_REWARD),
    col::snake(col::AGENT_COST_USD),
    col::snake(col::GUARD_COST_USD),
];

/// One flat row per group with every scalar metric (the CSV form of `report`).
pub(crate) fn groups_table(r: &Report) -> Table {
    let max_k = r
        .groups
        .iter()
        .map(|g| g.overall.pass_k.max_k())
        .max()
        .unwrap_or(0);
    let counts = [
        col::N_TASKS,
        col::N_SIMULATIONS,
        col::INFRA_ERRORS,
        col::DUPLICATES,
    ];
    let fixed: Vec<Column> = (KEY_COLUMNS.iter().chain(&counts))
        .map(|c| col::snake(*c))
        .collect();
    let mut t = Table::declared(
        "groups",
        r.caveated(titled("Groups", r.simulated())),
        &fixed,
    );
    let pass = Column {
        header: col::PASS_K.name,
        ..col::PASS_K
    };
    for c in [pass, col::PV_PASS_K, col::MUT_PASS_K, col::DELTA_PASS_K] {
        for k in 1..=max_k {
            t.push_column_for(c, &k.to_string());
        }
    }
    for c in SCALAR_COLUMNS {
        t.push_column(c);
    }
    let (guide_columns, guide_rows) = crate::render::tables_policyguide::group_columns(r);
    for c in guide_columns {
        t.push_column(c);
    }
    t.push_column(col::snake(col::SIMULATED));
    // Fractions stay fractions here: Rate keeps 6 decimals in CSV.
    let frac = Cell::opt_rate;
    for (g, guide) in r.groups.iter().zip(guide_rows) {
        let mut row = key_cells(g);
        row.extend([
            Cell::Int(g.overall.n_tasks),
            Cell::Int(g.overall.n_simulations),
            Cell::Int(g.overall.infra_errors),
            Cell::Int(g.duplicates),
        ]);
        for s in [&g.overall, &g.pv, &g.mut_] {
            row.extend((1..=max_k).map(|k| frac(s.pass_k.get(k))));
        }
        row.extend((1..=max_k).map(|k| frac(g.delta_vs_baseline.as_ref().and_then(|d| d.get(k)))));
        row.extend([
            Cell::Int(g.pv.n_tasks),
            Cell::Int(g.mut_.n_tasks),
            frac(g.overall.p4_p1),
            frac(g.overall.pass1_per_trial.mean),
            frac(g.overall.pass1_per_trial.std),
            frac(g.avg_reward),
            Cell::cost(g.cost_per_simulation.get("agent").copied(), 6),
            Cell::cost(g.cost_per_simulation.get("guard").copied(), 6),
        ]);
        row.extend(guide);
        row.push(Cell::Text(g.simulated.to_string()));
        t.rows.push(row);
    }
    crate::measure::registry::splice_group_columns(&mut t, r);
    t
}

impl Report {
    /// Every table of the report, in print order.
    pub fn tables(&self) -> Vec<Table> {
        use crate::render::{tables_comparability, tables_extra, tables_process};
        let one = |t: Table| vec![t];
        // Each fixed table under its id, printed or not: the registered measures' tables go
        // after the one their place names.
        let mut slots: Vec<(&'static str, Vec<Table>)> = vec![
            ("summary", one(summary_table(self))),
            ("policyguard_table2", one(policyguard_table2(self))),
            ("policyguide_table1", one(policyguide_table1(self))),
            (
                "policyguide_table2",
                ablation_table(self).into_iter().collect(),
            ),
            (
                "policyguide_table3",
                controller_table(self).into_iter().collect(),
            ),
            ("pass_k", one(pass_k_table(self))),
            (
                "process_pass_k",
                tables_process::process_pass_k_table(self)
                    .into_iter()
                    .collect(),
            ),
            (
                "first_deviations",
                tables_process::first_deviation_table(self)
                    .into_iter()
                    .collect(),
            ),
            (
                "procedure_levels",
                tables_process::procedure_levels_table(self)
                    .into_iter()
                    .collect(),
            ),
            (
                "policyguide_table14",
                guide_usage_table(self).into_iter().collect(),
            ),
            (
                "policyguide_table15",
                wall_clock_table(self).into_iter().collect(),
            ),
            (
                "policyguard_cost",
                tables_extra::cost_table(self).into_iter().collect(),
            ),
            (
                "spending",
                crate::measure::spending::spending_table(self)
                    .into_iter()
                    .collect(),
            ),
            (
                "artifacts_origin",
                tables_extra::artifacts_origin_table(self)
                    .into_iter()
                    .collect(),
            ),
            ("floors", floors_table(self).into_iter().collect()),
            (
                "comparability",
                tables_comparability::comparability_table(self)
                    .into_iter()
                    .collect(),
            ),
            (
                "task_outcomes",
                tables_extra::task_outcomes_table(self)
                    .into_iter()
                    .collect(),
            ),
        ];
        crate::measure::registry::splice_tables(&mut slots, self);
        let mut out: Vec<Table> = slots.into_iter().flat_map(|(_, t)| t).collect();
        for t in &mut out {
            t.title = self.caveated(titled(&t.title, self.simulated()));
        }
        out
    }

    /// `title`, with the report's caveat in brackets when it has one.
    pub(crate) fn caveated(&self, title: String) -> String {
        match &self.caveat {
            Some(c) => format!("{title} [{c}]"),
            None => title,
        }
    }

    /// The report in one format: Markdown and LaTeX print every table; CSV prints one flat
    /// row per group (`groups_table`); JSON prints `to_json` pretty-printed.
    pub fn render(&self, format: Format) -> String {
        if self.groups.is_empty() && matches!(format, Format::Md | Format::Latex) {
            return match format {
                Format::Md => "## tauguard report\n\nno simulation records\n".into(),
                _ => "% tauguard report: no simulation records\n".into(),
            };
        }
        match format {
            Format::Md => {
                let mut s = String::from("## tauguard report\n\n");
                for w in &self.warnings {
                    s.push_str(&format!("> warning: {w}\n"));
                }
                if !self.warnings.is_empty() {
                    s.push('\n');
                }
                let tables: Vec<String> = self.tables().iter().map(Table::to_markdown).collect();
                s.push_str(&tables.join("\n"));
                s
            }
            Format::Latex => {
                let tables: Vec<String> = self.tables().iter().map(Table::to_latex).collect();
                tables.join("\n")
            }
            Format::Csv => groups_table(self).to_csv(),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(&self.to_json())
                    .expect("JSON values always serialize");
                s.push('\n');
                s
            }
        }
    }
}
