//! The process view's tables (definitions in `crate::measure::process`, `docs/process-validity.md`):
//! process-valid Pass^k beside outcome Pass^k, overall / PV / Mut; and the first deviations by
//! level and by position relative to the guarded calls, with the share each guard trigger
//! schedule could have seen (the intervention coverage of PolicyGuide Theorem 1). Printed
//! only when some group was process-evaluated. And the requirement levels of the domains'
//! procedure specs beside the papers' partitions of the same policies.

use crate::measure::procedure::ProcedureBook;
use crate::measure::procedure::spec::{Level, LevelShares};
use crate::measure::process::SCHEDULES;
use crate::render::table::{Cell, Table};
use crate::render::tables::{headers, key_cells, pk, rate_at};
use crate::report::Report;

/// Outcome and process-valid Pass^k at the headline k, per slice.
pub(crate) fn process_pass_k_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.process.is_none()) {
        return None;
    }
    let k = r.headline_k;
    let p = pk(k);
    let mut t = Table::new(
        "process_pass_k",
        format!("Process-valid {p} beside outcome {p}"),
        &[],
    );
    let cols: Vec<String> = ["Overall", "PV", "Mut"]
        .iter()
        .flat_map(|s| [format!("{s} {p}"), format!("{s} valid {p}")])
        .chain(["Process-valid sims".to_string()])
        .collect();
    t.headers = headers(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    for g in r.groups.iter().filter(|g| g.process.is_some()) {
        let mut row = key_cells(g);
        for s in [&g.overall, &g.pv, &g.mut_] {
            row.push(rate_at(&s.pass_k, k));
            row.push(match &s.process_pass_k {
                Some(pp) => rate_at(pp, k),
                None => Cell::Missing,
            });
        }
        row.push(Cell::opt_rate(
            g.process.as_ref().and_then(|p| p.valid_rate()),
        ));
        t.rows.push(row);
    }
    t.notes.push(format!(
        "Valid {p}: a trial succeeds when its outcome passes and it broke no requirement of the \
         domain's procedure spec (tasks/<domain>/procedure.toml) its judges could decide; \
         see docs/process-validity.md."
    ));
    if !r.floors.is_empty() {
        t.notes
            .push("The floors table shows both views for the trivial agents.".into());
    }
    Some(t)
}

/// First deviations by level and position, and each trigger schedule's coverage.
pub(crate) fn first_deviation_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.process.is_none()) {
        return None;
    }
    let mut t = Table::new(
        "first_deviations",
        "First deviations by level and position; intervention coverage per trigger schedule",
        &[],
    );
    let mut cols: Vec<String> = [
        "Sims",
        "Deviated",
        "A",
        "P",
        "W",
        "Inside guarded call",
        "Before first guarded call",
        "Outside guarded calls",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cols.extend(SCHEDULES.iter().map(|s| format!("Coverage: {}", s.name)));
    t.headers = headers(&cols.iter().map(String::as_str).collect::<Vec<_>>());
    for g in &r.groups {
        let Some(p) = &g.process else { continue };
        let mut row = key_cells(g);
        row.push(Cell::Int(p.simulations));
        row.push(Cell::Int(p.deviated));
        for key in ["A", "P", "W"] {
            row.push(Cell::Int(p.by_level.get(key).copied().unwrap_or(0)));
        }
        for key in [
            "inside_guarded_call",
            "before_first_guarded_call",
            "outside_guarded_calls",
        ] {
            row.push(Cell::Int(p.by_position.get(key).copied().unwrap_or(0)));
        }
        for c in &p.coverage {
            row.push(Cell::opt_pct(c.share));
        }
        t.rows.push(row);
    }
    for s in SCHEDULES {
        t.notes
            .push(format!("Coverage {}: triggers of {}.", s.name, s.guards));
    }
    t.notes.push(
        "Coverage = share of first deviations at an event the schedule's triggers fire on; a \
         guard can keep a trajectory process-valid only where it is 100% (PolicyGuide Theorem 1)."
            .into(),
    );
    Some(t)
}

/// The papers' partitions of a domain's policy into atomic requirements by level: PolicyGuard
/// Table 11 (airline: 43 requirements, 29 process-level, 14 argument-level) and PolicyGuide
/// Table 6 (A / P / W, where W splits PolicyGuard's process-level class, so their process
/// share is P + W). Shares as the papers print them.
#[derive(Debug)]
pub(crate) struct PublishedLevels {
    pub domain: &'static str,
    pub requirements: Option<u64>,
    pub argument: Option<u64>,
    /// P + W share of the requirements.
    pub process_share: &'static str,
    pub workflow_share: &'static str,
    pub source: &'static str,
}

pub(crate) const PUBLISHED_LEVELS: &[PublishedLevels] = &[
    PublishedLevels {
        domain: "airline",
        requirements: Some(43),
        argument: Some(14),
        process_share: "67.4%",
        workflow_share: "4.7%",
        source: "PolicyGuard Table 11; PolicyGuide Table 6",
    },
    PublishedLevels {
        domain: "retail",
        requirements: None,
        argument: None,
        process_share: "~100%",
        workflow_share: "3.6%",
        source: "PolicyGuide Table 6",
    },
    PublishedLevels {
        domain: "telecom",
        requirements: None,
        argument: None,
        process_share: "98.0%",
        workflow_share: "54.0%",
        source: "PolicyGuide Table 6",
    },
];

impl Report {
    /// Keeps the level shares of the specs of the report's domains, for
    /// [`procedure_levels_table`].
    pub fn with_procedure_levels(mut self, book: &ProcedureBook) -> Report {
        let mut domains: Vec<&str> = self.groups.iter().map(|g| g.domain.as_str()).collect();
        domains.sort();
        domains.dedup();
        self.procedure_levels = domains
            .into_iter()
            .filter_map(|d| book.get(d).map(LevelShares::of))
            .collect();
        self
    }
}

/// Our specs' requirement levels beside the papers' partitions of the same policies.
pub(crate) fn procedure_levels_table(r: &Report) -> Option<Table> {
    if r.procedure_levels.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "procedure_levels",
        "Requirement levels of the procedure specs beside the papers' (PolicyGuard Table 11, \
         PolicyGuide Table 6)",
        &[
            "Domain",
            "Requirements",
            "A",
            "P",
            "W",
            "P+W share",
            "W share",
            "Published requirements",
            "Published A",
            "Published P+W share",
            "Published W share",
            "Source",
        ],
    );
    for s in &r.procedure_levels {
        let n = |l: Level| s.counts.get(&l).copied().unwrap_or(0) as u64;
        let published = PUBLISHED_LEVELS.iter().find(|p| p.domain == s.domain);
        let text = |f: fn(&PublishedLevels) -> &'static str| {
            published.map_or(Cell::Missing, |p| Cell::Text(f(p).into()))
        };
        let int = |f: fn(&PublishedLevels) -> Option<u64>| {
            published.and_then(f).map_or(Cell::Missing, Cell::Int)
        };
        t.rows.push(vec![
            Cell::Text(s.domain.clone()),
            Cell::Int(s.requirements as u64),
            Cell::Int(n(Level::A)),
            Cell::Int(n(Level::P)),
            Cell::Int(n(Level::W)),
            Cell::Pct(s.share(Level::P) + s.share(Level::W)),
            Cell::Pct(s.share(Level::W)),
            int(|p| p.requirements),
            int(|p| p.argument),
            text(|p| p.process_share),
            text(|p| p.workflow_share),
            text(|p| p.source),
        ]);
    }
    t.notes.push(
        "Ours count the requirements of tasks/<domain>/procedure.toml. The papers' P+W (their \
         process-level class) counts every requirement that names a step; ours gives a check on \
         argument values level A even where the policy states it as a step (an id grounded in \
         what the user or a tool gave, a call matching the summary confirmed, a list limit), \
         and splits compound passages into several requirements, so the shares are not \
         comparable one to one (docs/process-validity.md)."
            .into(),
    );
    Some(t)
}

/// Tidy-CSV name, unit and meaning of the process tables' columns (see `csv_tidy.rs`);
/// `header` has its k generalised (`Overall Pass^k`), `k` is the k.
pub(crate) fn describe(
    table: &str,
    header: &str,
    k: &str,
) -> Option<(String, &'static str, String)> {
    let d = |name: String, unit: &'static str, meaning: String| Some((name, unit, meaning));
    let valid = "a trial succeeds when its outcome passes and it is process-valid \
                 (docs/process-validity.md)";
    match (table, header) {
        ("process_pass_k", h) if h.ends_with(" valid Pass^k") => {
            let slice = h.trim_end_matches(" valid Pass^k").to_lowercase();
            d(
                format!("process_pass_{k}_{slice}"),
                "fraction",
                format!("process-valid Pass^{k} on {slice} tasks: {valid}"),
            )
        }
        ("process_pass_k", h) if h.ends_with(" Pass^k") => {
            let slice = h.trim_end_matches(" Pass^k").to_lowercase();
            d(
                format!("pass_{k}_{slice}"),
                "fraction",
                format!("outcome Pass^{k} on {slice} tasks (τ²-bench §8)"),
            )
        }
        ("process_pass_k", "Process-valid sims") => d(
            "process_valid_rate".into(),
            "fraction",
            "process-valid simulations / process-evaluated simulations".into(),
        ),
        ("first_deviations", "Deviated") => d(
            "deviated".into(),
            "count",
            "simulations with a first deviation (not process-valid)".into(),
        ),
        ("first_deviations", l @ ("A" | "P" | "W")) => d(
            format!("first_level_{}", l.to_lowercase()),
            "count",
            format!(
                "first deviations breaking a level-{l} requirement (A argument, P process, W workflow)"
            ),
        ),
        ("first_deviations", "Inside guarded call") => d(
            "first_inside_guarded_call".into(),
            "count",
            "first deviations at a guarded (mutating) call".into(),
        ),
        ("first_deviations", "Before first guarded call") => d(
            "first_before_guarded_call".into(),
            "count",
            "first deviations before the trajectory's first guarded call".into(),
        ),
        ("first_deviations", "Outside guarded calls") => d(
            "first_outside_guarded_calls".into(),
            "count",
            "first deviations after the first guarded call but not at one, or without one".into(),
        ),
        ("first_deviations", h) if h.starts_with("Coverage: ") => {
            let s = h.trim_start_matches("Coverage: ");
            d(
                format!("coverage_{s}"),
                "fraction",
                format!(
                    "share of first deviations the `{s}` trigger schedule could see (PolicyGuide Theorem 1)"
                ),
            )
        }
        ("procedure_levels", "Requirements") => d(
            "requirements".into(),
            "count",
            "atomic requirements of the domain's procedure spec".into(),
        ),
        ("procedure_levels", l @ ("A" | "P" | "W")) => d(
            format!("level_{}", l.to_lowercase()),
            "count",
            format!("requirements of level {l} (A argument, P process, W workflow)"),
        ),
        ("procedure_levels", "P+W share") => d(
            "process_share".into(),
            "fraction",
            "share of requirements at level P or W (the papers' process-level class)".into(),
        ),
        ("procedure_levels", "W share") => d(
            "workflow_share".into(),
            "fraction",
            "share of requirements at level W".into(),
        ),
        ("procedure_levels", h) if h.starts_with("Published ") => {
            let what = h.trim_start_matches("Published ");
            d(
                format!("published_{}", slug_of(what)),
                "",
                format!("the papers' {what} (PolicyGuard Table 11, PolicyGuide Table 6)"),
            )
        }
        ("procedure_levels", "Source") => d(
            "source".into(),
            "",
            "the paper tables the published figures come from".into(),
        ),
        ("floors", h) if h.starts_with("Valid ") => {
            let slice = h.trim_start_matches("Valid ").to_lowercase();
            d(
                format!("process_pass_1_{slice}"),
                "fraction",
                format!("floor agent's process-valid Pass^1 on {slice} tasks: {valid}"),
            )
        }
        _ => None,
    }
}

fn slug_of(s: &str) -> String {
    s.to_lowercase()
        .replace("p+w", "process")
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
}
