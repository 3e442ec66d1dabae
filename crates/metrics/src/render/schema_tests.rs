//! Every column of every table a report and a comparison print — the fixed tables, the
//! registered measures', the flat per-group CSV — carries a declaration with a snake_case
//! name, a unit of `UNITS` and a meaning, since `schema.json` reads nothing else.

use crate::measure::floors::Floor;
use crate::measure::procedure::spec::{Level, LevelShares};
use crate::measure::process::ProcessStats;
use crate::measure::registry::UNITS;
use crate::measure::registry_tests::guarded_records;
use crate::measure::spending::{Spending, Spent};
use crate::render::output::csv_tables;
use crate::render::table::Table;
use crate::report::{Report, ReportOptions, report};
use crate::stats::compare::{CompareOptions, compare};
use serde_json::json;
use std::collections::BTreeMap;
use tauguard_core::comparability::CellStamp;
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
/// mean), FlowAgent beside PolicyGuide, a workflow ablation, four trials a task.
fn records() -> Vec<SimulationRecord> {
    let mut records = Vec::new();
    for domain in ["airline", "retail"] {
        for guard in [
            "baseline",
            "pg",
            "policyguide",
            "flowagent",
            "policyguide-raw",
        ] {
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

/// What the report's own inputs would add beside the records — floors, spending, the
/// procedure specs' levels, process verdicts, comparability stamps, artifact origins — so
/// the tables printed only with them are walked too.
fn with_side_parts(rep: &mut Report) {
    let rate = Some(0.5);
    rep.floors = vec![Floor {
        domain: "airline".into(),
        agent: "refuse-all".into(),
        n_tasks: 2,
        overall: rate,
        pv: rate,
        mut_: rate,
        process_overall: rate,
        process_pv: rate,
        process_mut: rate,
    }];
    let spent = Spent {
        simulations: 1,
        prompt_tokens: 10,
        completion_tokens: 5,
        cost: Some(0.1),
    };
    rep.spending = Some(Spending {
        records: spent,
        superseded: spent,
        interrupted: Spent::default(),
    });
    rep.procedure_levels = vec![LevelShares {
        domain: "airline".into(),
        requirements: 2,
        counts: BTreeMap::from([(Level::A, 1), (Level::W, 1)]),
    }];
    for g in &mut rep.groups {
        g.process = Some(ProcessStats::default());
        g.comparability = Some(CellStamp {
            comparable: false,
            deviations: vec![("prompts".into(), "edited".into())],
        });
        g.full_cell
            .insert("artifacts.origin".into(), json!("hand-written"));
        g.full_cell
            .insert("artifacts.set".into(), json!("compiled"));
    }
}

#[test]
fn every_column_of_every_printed_table_is_declared() {
    let records = records();
    let mut rep = report(&records, &ReportOptions::default());
    with_side_parts(&mut rep);
    let mut tables = rep.tables();
    tables.extend(csv_tables(&rep));
    let (a, b): (Vec<_>, Vec<_>) = records.iter().cloned().partition(|r| r.guard == "baseline");
    let b: Vec<_> = b.into_iter().filter(|r| r.guard == "pg").collect();
    let comparison = compare(&a, &b, &CompareOptions::default()).expect("both sides share domains");
    tables.extend(comparison.tables());
    // The walk must reach the flat CSV and a comparison, or it proves nothing.
    for id in [
        "groups",
        "summary",
        "policyguide_table2",
        "floors",
        "spending",
        "procedure_levels",
        "process_pass_k",
        "first_deviations",
        "comparability",
        "artifacts_origin",
        "mcnemar",
        "pass_k_diff",
    ] {
        assert!(tables.iter().any(|t| t.id == id), "no `{id}` table");
    }
    let problems: Vec<String> = tables.iter().flat_map(problems).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
