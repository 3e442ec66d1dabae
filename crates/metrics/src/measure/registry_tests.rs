//! Tests of the measure registry over every registered measure: each column declares a unit
//! and a meaning, and each declared column reaches `schema.json` as declared.

use super::MEASURES;
use super::registry::{Column, declared_columns};
use crate::report::{ReportOptions, report};
use crate::summary::synthetic::{attempt, record, with_calls};
use serde_json::Value;
use tauguard_core::record::Slice;

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
    // A baseline and a guarded cell, so every delta column holds a number.
    let mut records = Vec::new();
    for guard in ["baseline", "pg"] {
        let mut a = with_calls(record("t1", Slice::Mut, 0, 1.0), &["get_user", "cancel"]);
        a.call_attempts.push(attempt("call_1", None, true));
        let b = record("t2", Slice::Pv, 0, 0.0);
        for mut r in [a, b] {
            r.guard = guard.into();
            records.push(r);
        }
    }
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
        let mut expected: Vec<(String, &Column)> = (m.group_columns().iter())
            .map(|c| ("groups.csv".to_string(), c))
            .collect();
        for t in m.table_decls() {
            let cols = super::registry::KEY_COLUMNS.iter().chain(t.columns);
            expected.extend(cols.map(|c| (format!("{}.csv", t.id), c)));
        }
        for (file, c) in expected {
            let found = schema_column(&schema, &file, c.name)
                .unwrap_or_else(|| panic!("{}: `{}` is not in {file}", m.key(), c.name));
            assert_eq!(found["meaning"], c.meaning, "{file} {}", c.name);
            assert_eq!(found["unit"], c.schema_unit(), "{file} {}", c.name);
        }
    }
}
