//! Tests of the measure registry over every registered measure: each column declares a unit
//! and a meaning, and each declared column reaches `schema.json` as declared.

use super::MEASURES;
use super::registry::{Column, Context, Declared, Measure, declared_columns, slots};
use crate::report::{ReportOptions, report};
use crate::summary::SimSummary;
use serde_json::{Value, json};
use tauguard_core::record::{SimulationRecord, Slice, Verdict};
use tauguard_testkit::synthetic::{attempt, guard_event, guide_event, record, usage, with_calls};

/// Measure `M`'s value over `records`, each summarised and added as a group's simulations
/// are (default options): what a measure's own tests check against hand counts.
pub(crate) fn value_over<M: Measure>(records: &[&SimulationRecord]) -> M::Value {
    let options = ReportOptions::default();
    let cx = Context { options: &options };
    let own = (slots().find(|(m, _)| m.key() == M::KEY)).map_or(0..0, |(_, r)| r);
    let mut acc = M::Acc::default();
    for rec in records {
        let sim = SimSummary::of(rec);
        M::add(&mut acc, &sim, &sim.measured[own.clone()], &cx);
    }
    M::finish(acc, &cx)
}

#[test]
fn every_declared_column_has_a_meaning_and_a_unit() {
    let columns = declared_columns();
    assert!(!MEASURES.is_empty() && !columns.is_empty());
    let problems: Vec<String> = columns
        .iter()
        .filter_map(|(at, c)| c.problem().map(|p| format!("{at}: {p}")))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    // The check refuses what a careless declaration leaves out.
    let good = columns[0].1;
    for bad in [
        Column {
            meaning: "",
            ..good
        },
        Column {
            meaning: "  ",
            ..good
        },
        Column { unit: "", ..good },
        Column {
            unit: "percent",
            ..good
        },
        Column {
            name: "Has Spaces",
            ..good
        },
        Column { header: "", ..good },
    ] {
        assert!(bad.problem().is_some(), "{bad:?} passed");
    }
}

#[test]
fn every_sidecar_column_name_is_unique() {
    let mut names: Vec<&str> = super::registry::sim_columns().map(|c| c.name).collect();
    names.extend(crate::sidecar::columns::SIMULATION_COLUMNS);
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a measure's sidecar column repeats a name");
}

/// The column `name` of `file` in a `schema.json`.
fn schema_column<'a>(schema: &'a Value, file: &str, name: &str) -> Option<&'a Value> {
    schema["files"][file]["columns"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

#[test]
fn every_registered_measures_columns_reach_the_schema_as_declared() {
    // A baseline and a guarded cell, so every delta column holds a number, with what makes
    // each measure print its tables and every column hold a number: a call whose
    // prerequisites are known, an attack task, a gold trace, a cut reply, a decision of the
    // offline verifier, guard decisions on a compliant and a violating call, a guide run.
    let records: Vec<_> = ["baseline", "pg"]
        .into_iter()
        .flat_map(|guard| guarded_records(guard, 0))
        .collect();
    let rep = report(&records, &ReportOptions::default());
    let mut tables: Vec<_> = rep
        .tables()
        .iter()
        .map(crate::render::csv_tidy::tidy)
        .collect();
    tables.push(crate::render::csv_tidy::tidy(
        &crate::render::tables::groups_table(&rep),
    ));
    let schema = crate::render::csv_schema::schema_json(&tables);
    for m in MEASURES {
        let mut expected: Vec<(String, Declared)> = (m.group_columns().iter())
            .map(|c| ("groups.csv".to_string(), Declared::from(*c)))
            .collect();
        for t in m.table_decls() {
            let cols = super::registry::KEY_COLUMNS.iter().chain(t.columns);
            expected.extend(cols.map(|c| (format!("{}.csv", t.id), Declared::from(*c))));
            // Repeated columns as made for the fixture's agent role or headline k.
            for c in t.repeated {
                let value = if c.name.contains("pass") {
                    "1"
                } else {
                    "agent"
                };
                expected.push((format!("{}.csv", t.id), c.repeated(value).1));
            }
        }
        for (file, c) in expected {
            let found = schema_column(&schema, &file, &c.name)
                .unwrap_or_else(|| panic!("{}: `{}` is not in {file}", m.key(), c.name));
            assert_eq!(found["meaning"], c.meaning, "{file} {}", c.name);
            assert_eq!(found["unit"], c.schema_unit(), "{file} {}", c.name);
        }
    }
}

/// Trial `trial` of two tasks under `guard`, with what makes each measure print its tables
/// and every column hold a number: a call whose prerequisites are known, an attack task, a
/// gold trace, a cut reply, a decision of the offline verifier, guard decisions on a compliant
/// and a violating call, a guide run.
pub(crate) fn guarded_records(guard: &str, trial: u32) -> [SimulationRecord; 2] {
    let mut a = with_calls(
        record("t1", Slice::Mut, trial, 1.0),
        &["get_user", "cancel"],
    );
    let mut call = attempt("call_1", Some(Verdict::Pass), true);
    call.missing_prerequisites = Some(Vec::new());
    a.call_attempts.push(call);
    a.gold_trace = Some(vec!["get_user".into(), "cancel".into()]);
    let mut event = guard_event(guard, "call_1", "cancel", Verdict::Pass, true);
    event.info = Some(json!({"checked": 2, "unchecked": [], "inputs": ["policy"]}));
    a.guard_events.push(event);
    a.guide_events
        .push(guide_event(guard, usage(1, 10, 0, 5, None)));
    let mut cut = usage(2, 10, 0, 5, Some(0.01));
    cut.truncated = 1;
    a.usage.insert("agent".into(), cut);
    let mut b = record("t2", Slice::Pv, trial, 0.0);
    b.attack_target = Some("cancel".into());
    b.call_attempts
        .push(attempt("call_2", Some(Verdict::Block), false));
    a.guard = guard.into();
    b.guard = guard.into();
    [a, b]
}
