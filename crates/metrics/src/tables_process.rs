//! The process view's tables (definitions in `crate::process`, `docs/process-validity.md`):
//! process-valid Pass^k beside outcome Pass^k, overall / PV / Mut; and the first deviations by
//! level and by position relative to the guarded calls, with the share each guard trigger
//! schedule could have seen (the intervention coverage of PolicyGuide Theorem 1). Printed
//! only when some group was process-evaluated.

use crate::process::SCHEDULES;
use crate::report::Report;
use crate::table::{Cell, Table};
use crate::tables::{headers, key_cells, pk, rate_at};

/// Outcome and process-valid Pass^k at the headline k, per slice.
pub fn process_pass_k_table(r: &Report) -> Option<Table> {
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
pub fn first_deviation_table(r: &Report) -> Option<Table> {
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
