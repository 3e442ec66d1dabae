//! Reproduction tables on synthetic reports: quotes, placement of published cells, the
//! unweighted mean over domains and both layouts.

use super::*;
use crate::measure::floors::Floor;
use crate::report::{ReportOptions, report};
use crate::summary::simulated::SIMULATED_LABEL;
use tauguard_core::record::Slice;
use tauguard_testkit::synthetic::record;

fn col(label: &str, slice: SliceKey, k: u32) -> Column {
    Column {
        label: label.into(),
        metric: Metric::Pass,
        slice,
        k: Some(k),
        versus: None,
    }
}

fn cite() -> Cite {
    Cite {
        paper: "PolicyGuide".into(),
        seed: "001_0ce97c8c05aeb3c6.txt".into(),
        table: Some("Table 1".into()),
        section: None,
    }
}

fn published(cells: &[(&str, &str, SliceKey, &str)]) -> Published {
    Published {
        notes: vec![],
        remarks: vec![],
        cells: cells
            .iter()
            .map(|(domain, guard, slice, quote)| PublishedCell {
                domain: domain.to_string(),
                agent: "GPT 5.4".into(),
                guard: guard.to_string(),
                metric: Metric::Pass,
                slice: *slice,
                k: Some(1),
                versus: None,
                value: quote_value(quote).unwrap(),
                quote: quote.to_string(),
                cite: cite(),
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
    assert!(matches!(
        p.validate().unwrap_err().what,
        EntryFinding::NotTheQuote { .. }
    ));
    assert_eq!(
        p.validate().unwrap_err().to_string(),
        "`cell[0]` (airline / GPT 5.4 / baseline): value 0.47 is not what quote `0.460` says (0.46)"
    );
    assert!(check_quantity(Metric::Pass, SliceKey::All, None, None).is_err());
    assert!(check_quantity(Metric::Asr, SliceKey::Pv, None, None).is_err());
    assert!(check_quantity(Metric::BlockRate, SliceKey::All, None, None).is_ok());
    // The comparing metrics name what they compare against, and only they do.
    assert!(check_quantity(Metric::PassLoss, SliceKey::All, Some(4), None).is_err());
    assert!(
        check_quantity(
            Metric::PassLoss,
            SliceKey::All,
            Some(4),
            Some("policyguide")
        )
        .is_ok()
    );
    assert!(check_quantity(Metric::Pass, SliceKey::All, Some(4), Some("baseline")).is_err());
    assert!(check_quantity(Metric::McnemarP, SliceKey::All, None, Some("baseline")).is_ok());
    assert!(check_quantity(Metric::PassRatio, SliceKey::All, Some(1), None).is_err());
    // The other units a source writes in.
    assert_eq!(quote_value("247.6s"), Some(247.6));
    assert_eq!(quote_value("5.45×"), Some(5.45));
    assert_eq!(quote_value("$0.34"), Some(0.34));
    assert_eq!(quote_value("p<10^{-8}"), Some(1e-8));
    assert_eq!(quote_digits("−14.0 pp"), "14.0");
    assert_eq!(quote_digits("25.4%"), "25.4");
    assert_eq!(quote_digits("p<10^{-12}"), "10^{-12}");
    // A citation names a table or a section.
    let mut p = published(&[("airline", "baseline", SliceKey::All, "0.460")]);
    p.cells[0].cite.table = None;
    assert!(
        p.validate()
            .unwrap_err()
            .to_string()
            .contains("neither a `table` nor a `section`")
    );
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
            summaries: &[],
        },
        ConfigRows {
            domain: "retail".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["baseline".into()],
            report: Some(&ret),
            summaries: &[],
        },
    ];
    let spec = TableSpec {
        layout: Layout::DomainRows,
        columns: vec![col("P1", SliceKey::All, 1), col("PV P1", SliceKey::Pv, 1)],
        mean_over_domains: true,
        not_measured: vec![],
    };
    let p = published(&[
        ("airline", "baseline", SliceKey::All, "0.460"),
        ("mean", "baseline", SliceKey::All, "0.42"),
        ("telecom", "baseline", SliceKey::All, "0.193"),
    ]);
    let t = repro_table("T", &spec, &rows, &p, &[], true);
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
    assert!(csv.contains("airline,GPT 5.4,baseline,P1,pass,all,1,0.500000,0.460000,0.040000,0.460,PolicyGuide Table 1 (seed 001_0ce97c8c05aeb3c6.txt),true"));
    assert!(csv.contains("retail,GPT 5.4,baseline,P1,pass,all,1,0.000000,,,,,true"));
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
            summaries: &[],
        },
        ConfigRows {
            domain: "telecom".into(),
            agent: "GPT 5.4".into(),
            guards: vec!["policyguide".into()],
            report: None,
            summaries: &[],
        },
    ];
    let spec = TableSpec {
        layout: Layout::DomainColumns,
        columns: vec![col("P1", SliceKey::All, 1)],
        mean_over_domains: false,
        not_measured: vec!["the thing".into()],
    };
    let t = repro_table("T", &spec, &rows, &published(&[]), &[], false);
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
    assert!(md.contains("Not measured by tauguard: the thing"), "{md}");
    assert!(md.contains("none: the seeds state no number"), "{md}");
}

fn floor(agent: &str, pv: f64) -> Floor {
    Floor {
        domain: "airline".into(),
        agent: agent.into(),
        n_tasks: 2,
        overall: Some(pv / 2.0),
        pv: Some(pv),
        mut_: Some(0.0),
        process_overall: None,
        process_pv: None,
        process_mut: None,
    }
}

#[test]
fn floors_print_under_the_table_and_as_csv_rows() {
    let air = run("airline", "baseline", 1.0);
    let rows = [ConfigRows {
        domain: "airline".into(),
        agent: "GPT 5.4".into(),
        guards: vec!["baseline".into()],
        report: Some(&air),
        summaries: &[],
    }];
    let spec = TableSpec {
        layout: Layout::DomainRows,
        columns: vec![col("P1", SliceKey::All, 1)],
        mean_over_domains: false,
        not_measured: vec![],
    };
    let floors = [floor("refuse-all", 1.0), floor("gold-no-procedure", 0.0)];
    let p = published(&[("airline", "baseline", SliceKey::All, "0.460")]);
    let t = repro_table("T", &spec, &rows, &p, &floors, false);
    let md = t.to_markdown();
    assert!(
        md.contains("| airline | refuse-all | 2 | 0.500 | 1.000 | 0.000 |"),
        "{md}"
    );
    assert!(
        md.contains("| airline | gold-no-procedure | 2 | 0.000 | 0.000 | 0.000 |"),
        "{md}"
    );
    assert!(
        md.contains("- PolicyGuide Table 1 (seed 001_0ce97c8c05aeb3c6.txt): 1 cell"),
        "{md}"
    );
    let csv = t.to_csv();
    assert!(
        csv.contains("airline,refuse-all,floor,Floor Pass^1,pass,pv,1,1.000000,"),
        "{csv}"
    );
    let json: serde_json::Value = serde_json::from_str(&t.to_json()).unwrap();
    assert_eq!(json["floors"].as_array().unwrap().len(), 2);
}

#[test]
fn a_loss_compares_two_guards_and_a_bound_takes_no_difference() {
    let (raw, guide) = (
        run("airline", "policyguide-raw", 0.0),
        run("airline", "policyguide", 1.0),
    );
    let mut all = raw.clone();
    all.groups.extend(guide.groups.clone());
    let rows = [ConfigRows {
        domain: "airline".into(),
        agent: "GPT 5.4".into(),
        guards: vec!["policyguide".into(), "policyguide-raw".into()],
        report: Some(&all),
        summaries: &[],
    }];
    let loss = Column {
        label: "loss".into(),
        metric: Metric::PassLoss,
        slice: SliceKey::All,
        k: Some(1),
        versus: Some("policyguide".into()),
    };
    let p_col = Column {
        label: "p".into(),
        metric: Metric::McnemarP,
        slice: SliceKey::All,
        k: None,
        versus: Some("policyguide".into()),
    };
    let spec = TableSpec {
        layout: Layout::DomainRows,
        columns: vec![loss, p_col],
        mean_over_domains: false,
        not_measured: vec![],
    };
    let mut p = published(&[]);
    for (metric, k, quote) in [
        (Metric::PassLoss, Some(1), "+0.100"),
        (Metric::McnemarP, None, "p<10^{-8}"),
    ] {
        p.cells.push(PublishedCell {
            domain: "airline".into(),
            agent: "GPT 5.4".into(),
            guard: "policyguide-raw".into(),
            metric,
            slice: SliceKey::All,
            k,
            versus: Some("policyguide".into()),
            value: quote_value(quote).unwrap(),
            quote: quote.into(),
            cite: cite(),
        });
    }
    p.validate().unwrap();
    let t = repro_table("T", &spec, &rows, &p, &[], false);
    assert!(t.unplaced.is_empty(), "{:?}", t.unplaced);
    let cell = |c: &str| {
        t.cells
            .iter()
            .find(|x| x.guard == "policyguide-raw" && x.column == c)
            .unwrap()
    };
    // PolicyGuide passes the PV task, RAW does not: RAW loses 0.5 of Pass^1.
    assert_eq!(cell("loss").ours, Some(0.5));
    assert!((cell("loss").diff.unwrap() - 0.4).abs() < 1e-12);
    // Without simulations there is no test, and a bound is never subtracted.
    assert_eq!((cell("p").ours, cell("p").diff), (None, None));
    let md = t.to_markdown();
    assert!(
        md.contains("+0.500 / +0.100 / +0.400 | — / p<10^{-8} / — |"),
        "{md}"
    );
}
