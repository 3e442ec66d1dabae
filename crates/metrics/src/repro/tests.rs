//! Reproduction tables on synthetic reports: quotes, placement of published cells, the
//! unweighted mean over domains and both layouts.

use super::*;
use crate::report::{ReportOptions, report};
use crate::simulated::SIMULATED_LABEL;
use crate::testutil::record;
use tauguard_core::record::Slice;

fn col(label: &str, slice: SliceKey, k: u32) -> Column {
    Column {
        label: label.into(),
        metric: Metric::Pass,
        slice,
        k: Some(k),
    }
}

fn published(cells: &[(&str, &str, SliceKey, &str)]) -> Published {
    Published {
        source: "papers.md".into(),
        notes: vec![],
        cells: cells
            .iter()
            .map(|(domain, guard, slice, quote)| PublishedCell {
                domain: domain.to_string(),
                agent: "GPT 5.4".into(),
                guard: guard.to_string(),
                metric: Metric::Pass,
                slice: *slice,
                k: Some(1),
                value: quote_value(quote).unwrap(),
                quote: quote.to_string(),
            })
            .collect(),
    }
}

/// Two tasks on `domain` under `guard`, one trial each: one PV pass, one Mut fail.
fn run(domain: &str, guard: &str, pv_reward: f64) -> Report {
    let recs: Vec<_> = [("a", Slice::Pv, pv_reward), ("b", Slice::Mut, 0.0)]
        .into_iter()
        .map(|(t, s, r)| {
            let mut rec = record(t, s, 0, r);
            (rec.domain, rec.guard) = (domain.into(), guard.into());
            rec
        })
        .collect();
    report(&recs, &ReportOptions::default())
}

#[test]
fn quotes_read_as_fractions() {
    assert_eq!(quote_value("0.460"), Some(0.46));
    assert_eq!(quote_value("94.7%"), Some(0.947));
    assert_eq!(quote_value("+6.0 pp"), Some(0.06));
    assert_eq!(quote_value("−14.0 pp"), Some(-0.14));
    assert_eq!(quote_value("n/a"), None);
    let mut p = published(&[("airline", "baseline", SliceKey::All, "0.460")]);
    p.validate().unwrap();
    p.cells[0].value = 0.47;
    assert!(p.validate().unwrap_err().contains("quote `0.460`"));
    assert!(check_quantity(Metric::Pass, SliceKey::All, None).is_err());
    assert!(check_quantity(Metric::Asr, SliceKey::Pv, None).is_err());
    assert!(check_quantity(Metric::BlockRate, SliceKey::All, None).is_ok());
}

#[test]
fn cells_pair_ours_with_published_and_the_mean_is_unweighted() {
    let (air, ret) = (
        run("airline", "baseline", 1.0),
        run("retail", "baseline", 0.0),
    );
    let rows = [
        ConfigRows {
            domain: "airline".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["baseline".into()],
            report: Some(&air),
        },
        ConfigRows {
            domain: "retail".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["baseline".into()],
            report: Some(&ret),
        },
    ];
    let spec = TableSpec {
        layout: Layout::DomainRows,
        columns: vec![col("P1", SliceKey::All, 1), col("PV P1", SliceKey::Pv, 1)],
        mean_over_domains: true,
    };
    let p = published(&[
        ("airline", "baseline", SliceKey::All, "0.460"),
        ("mean", "baseline", SliceKey::All, "0.42"),
        ("telecom", "baseline", SliceKey::All, "0.193"),
    ]);
    let t = repro_table("T", &spec, &rows, &p, true);
    let at = |d: &str, c: &str| t.cells.iter().find(|x| x.domain == d && x.column == c);
    let air_all = at("airline", "P1").unwrap();
    assert_eq!((air_all.ours, air_all.published), (Some(0.5), Some(0.46)));
    assert!((air_all.diff.unwrap() - 0.04).abs() < 1e-12);
    assert_eq!(at("retail", "P1").unwrap().published, None);
    // Airline 0.5 and retail 0.0 overall: every domain weighs the same.
    let mean = at(MEAN_DOMAIN, "P1").unwrap();
    assert_eq!(mean.ours, Some(0.25));
    assert!((mean.diff.unwrap() - (0.25 - 0.42)).abs() < 1e-12);
    assert_eq!(at(MEAN_DOMAIN, "PV P1").unwrap().ours, Some(0.5));
    // A published cell without a place is reported, never dropped.
    assert_eq!(t.unplaced.len(), 1);
    assert!(t.unplaced[0].starts_with("telecom / GPT 5.4 / baseline"));
    let md = t.to_markdown();
    assert!(md.starts_with(&format!("### T ({SIMULATED_LABEL})")));
    assert!(
        md.contains("| airline | GPT 5.4 | baseline | 0.500 / 0.460 / +0.040 | 1.000 / — / — |")
    );
    assert!(md.contains(
        "| unweighted mean over 2 domains | GPT 5.4 | baseline | 0.250 / 0.420 / −0.170 |"
    ));
    let csv = t.to_csv();
    assert!(csv.contains("airline,GPT 5.4,baseline,P1,pass,all,1,0.500000,0.460000,0.040000,true"));
    assert!(csv.contains("retail,GPT 5.4,baseline,P1,pass,all,1,0.000000,,,true"));
}

#[test]
fn domain_columns_put_each_domain_beside_the_others() {
    let air = run("airline", "policyguide", 1.0);
    let rows = [
        ConfigRows {
            domain: "airline".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["policyguide".into()],
            report: Some(&air),
        },
        ConfigRows {
            domain: "telecom".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["policyguide".into()],
            report: None,
        },
    ];
    let spec = TableSpec {
        layout: Layout::DomainColumns,
        columns: vec![col("P1", SliceKey::All, 1)],
        mean_over_domains: false,
    };
    let t = repro_table("T", &spec, &rows, &published(&[]), false);
    let md = t.to_markdown();
    assert!(
        md.contains("| Agent | Guard | airline P1 | telecom P1 |"),
        "{md}"
    );
    assert!(
        md.contains("| GPT 5.4 | policyguide | 0.500 / — / — | — / — / — |"),
        "{md}"
    );
    assert!(!md.contains("simulated"));
}
