//! Every column of every table a report and a comparison print — the fixed tables, the
//! registered measures', the flat per-group CSV — carries a declaration with a snake_case
//! name, a unit of `UNITS` and a meaning, since `schema.json` reads nothing else.

use crate::measure::registry::UNITS;
use crate::measure::registry_tests::guarded_records;
use crate::render::output::csv_tables;
use crate::render::table::Table;
use crate::report::{ReportOptions, report};
use crate::stats::compare::{CompareOptions, compare};
use tauguard_core::record::SimulationRecord;

/// What is wrong with the declarations of `t`'s columns, each naming the table and column.
fn problems(t: &Table) -> Vec<String> {
    let mut out = Vec::new();
    if t.declared.len() > t.headers.len() {
        out.push(format!("{}: more declarations than headers", t.id));
    }
    for (j, header) in t.headers.iter().enumerate() {
        let at = format!("{}: column `{header}`", t.id);
        let Some(Some(d)) = t.declared.get(j) else {
            out.push(format!("{at} has no declaration"));
            continue;
        };
        let snake = !d.name.is_empty()
            && (d.name.bytes()).all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !snake {
            out.push(format!("{at} has no snake_case name (`{}`)", d.name));
        }
        if !UNITS.contains(&d.unit) {
            out.push(format!(
                "{at} declares unit `{}`, not one of {UNITS:?}",
                d.unit
            ));
        }
        if d.meaning.trim().is_empty() {
            out.push(format!("{at} has no meaning"));
        }
    }
    out
}

/// Cells of a baseline and of guards that make the report print its optional tables (the
/// registry tests' cells, see `guarded_records`), in several domains (the cross-domain
/// mean), FlowAgent beside PolicyGuide, four trials a task.
fn records() -> Vec<SimulationRecord> {
    let mut records = Vec::new();
    for domain in ["airline", "retail"] {
        for guard in ["baseline", "pg", "policyguide", "flowagent"] {
            for trial in 0..4 {
                for mut r in guarded_records(guard, trial) {
                    r.domain = domain.into();
                    records.push(r);
                }
            }
        }
    }
    records
}

#[test]
fn every_column_of_every_printed_table_is_declared() {
    let records = records();
    let rep = report(&records, &ReportOptions::default());
    let mut tables = rep.tables();
    tables.extend(csv_tables(&rep));
    let (a, b): (Vec<_>, Vec<_>) = records.iter().cloned().partition(|r| r.guard == "baseline");
    let b: Vec<_> = b.into_iter().filter(|r| r.guard == "pg").collect();
    let comparison = compare(&a, &b, &CompareOptions::default()).expect("both sides share domains");
    tables.extend(comparison.tables());
    // The walk must reach the flat CSV and a comparison, or it proves nothing.
    for id in ["groups", "summary", "mcnemar", "pass_k_diff"] {
        assert!(tables.iter().any(|t| t.id == id), "no `{id}` table");
    }
    let problems: Vec<String> = tables.iter().flat_map(problems).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
