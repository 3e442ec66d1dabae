//! `compare`: pairing, discordant counts, strata, bootstrap block and the JSON shape, on
//! hand-built records.

use tauguard_core::record::{SimulationRecord, Slice};
use tauguard_metrics::{
    CompareOptions, Format, MetricsError, SelectorFinding, Strata, compare, mcnemar,
};
use tauguard_testkit::synthetic::{infra, record};

fn rec(domain: &str, guard: &str, task: &str, trial: u32, ok: bool) -> SimulationRecord {
    let mut r = record(task, Slice::Mut, trial, if ok { 1.0 } else { 0.0 });
    r.domain = domain.into();
    r.guard = guard.into();
    r
}

/// outcomes[task][trial] for one side.
fn side(domain: &str, guard: &str, outcomes: &[[bool; 2]]) -> Vec<SimulationRecord> {
    outcomes
        .iter()
        .enumerate()
        .flat_map(|(t, trials)| {
            trials
                .iter()
                .enumerate()
                .map(move |(i, &ok)| rec(domain, guard, &t.to_string(), i as u32, ok))
        })
        .collect()
}

#[test]
fn hand_computed_pairs_and_strata() {
    // airline: A = [[1,1],[1,0],[0,0]]  B = [[1,0],[1,1],[1,1]]
    //   pairs: (1,1) (1,0)b (1,1) (0,1)c (0,1)c (0,1)c → b=1, c=3
    // retail:  A = [[1,1]]  B = [[0,0]] → b=2, c=0
    let mut a = side(
        "airline",
        "baseline",
        &[[true, true], [true, false], [false, false]],
    );
    a.extend(side("retail", "baseline", &[[true, true]]));
    let mut b = side(
        "airline",
        "pg",
        &[[true, false], [true, true], [true, true]],
    );
    b.extend(side("retail", "pg", &[[false, false]]));
    let cmp = compare(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(cmp.pair_by, vec!["domain", "agent_model", "user_model"]);
    assert_eq!(cmp.n_pairs, 8);
    assert_eq!((cmp.test.b, cmp.test.c), (3, 3));
    assert_eq!(cmp.strata.len(), 2);
    assert_eq!(cmp.strata[0].stratum, "airline");
    assert_eq!((cmp.strata[0].test.b, cmp.strata[0].test.c), (1, 3));
    assert_eq!(cmp.strata[0].test, mcnemar(1, 3));
    assert_eq!((cmp.strata[1].test.b, cmp.strata[1].test.c), (2, 0));
    assert_eq!(cmp.test, mcnemar(3, 3));
    // No sim model on either side: no label; one sim verifier on side B labels both tables.
    assert!(!cmp.simulated && !cmp.render(Format::Md).contains("simulated models"));
    let mut sim_b = b.clone();
    sim_b[0]
        .cell
        .insert("verifier.provider".into(), serde_json::json!("sim"));
    let sim = compare(&a, &sim_b, &CompareOptions::default()).unwrap();
    assert!(sim.simulated && sim.to_json()["simulated"] == true);
    let md = sim.render(Format::Md);
    let titles: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
    assert_eq!(titles.len(), 2);
    assert!(
        titles
            .iter()
            .all(|t| t.ends_with("(simulated models — not a paper result)"))
    );

    // Pass^k on 4 tasks: A pass^1 = (1 + .5 + 0 + 1)/4, B = (.5 + 1 + 1 + 0)/4.
    assert_eq!(cmp.n_tasks, 4);
    let d1 = &cmp.pass_k_diff[0];
    assert!((d1.a - 0.625).abs() < 1e-15 && (d1.b - 0.625).abs() < 1e-15);
    assert!(d1.ci_low <= d1.diff && d1.diff <= d1.ci_high);
    // pass^2: A = (1 + 0 + 0 + 1)/4, B = (0 + 1 + 1 + 0)/4.
    assert!((cmp.pass_k_diff[1].a - 0.5).abs() < 1e-15);
    assert!((cmp.pass_k_diff[1].b - 0.5).abs() < 1e-15);

    let v = cmp.to_json();
    for key in ["n_pairs", "b", "c", "exact_p", "mid_p", "chi2", "chi2_p"] {
        assert!(v.get(key).is_some(), "compare JSON lacks `{key}`: {v}");
    }
    assert_eq!(v["b"], 3);
    assert_eq!(v["strata"][0]["stratum"], "airline");
    let md = cmp.render(Format::Md);
    assert!(md.contains("| pooled | 8 | 3 | 3 |"), "{md}");
    // Both tables in one tidy CSV (issue 15), p-values as plain decimals.
    let csv = cmp.render(Format::Csv);
    assert!(
        csv.starts_with("table,stratum,n_pairs,b,c,exact_p,mid_p,chi2,chi2_p,k,"),
        "{csv}"
    );
    assert!(
        csv.contains("\npass_k_diff,") && !csv.contains("e-"),
        "{csv}"
    );
}

#[test]
fn infra_pairs_are_dropped_and_unpaired_counted() {
    let a = vec![
        rec("airline", "baseline", "0", 0, true),
        infra(rec("airline", "baseline", "0", 1, true)),
        rec("airline", "baseline", "1", 0, true),
    ];
    let b = vec![
        rec("airline", "pg", "0", 0, false),
        rec("airline", "pg", "0", 1, true),
        rec("airline", "pg", "2", 0, true),
    ];
    let cmp = compare(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(cmp.n_pairs, 1);
    assert_eq!((cmp.test.b, cmp.test.c), (1, 0));
    assert_eq!(cmp.infra_dropped, 1);
    assert_eq!((cmp.unpaired_a, cmp.unpaired_b), (1, 1));
}

#[test]
fn agent_strata_and_cross_agent_pairing() {
    let mut a = side("airline", "baseline", &[[true, false]]);
    for r in &mut a {
        r.agent_model = "gpt".into();
    }
    let mut b = side("airline", "baseline", &[[false, true]]);
    for r in &mut b {
        r.agent_model = "sonnet".into();
    }
    let opts = CompareOptions {
        strata: Strata::Agent,
        ..CompareOptions::default()
    };
    let cmp = compare(&a, &b, &opts).unwrap();
    assert!(!cmp.pair_by.contains(&"agent_model"));
    assert_eq!(cmp.n_pairs, 2);
    assert_eq!(cmp.strata[0].stratum, "gpt");
}

#[test]
fn no_pairs_is_an_error() {
    let a = side("airline", "baseline", &[[true, true]]);
    let mut b = side("airline", "pg", &[[true, true]]);
    for r in &mut b {
        r.task_id = format!("other-{}", r.task_id);
    }
    let err = compare(&a, &b, &CompareOptions::default()).unwrap_err();
    assert!(
        matches!(&err, MetricsError::NoPairs(u) if (u.scored_a, u.scored_b) == (2, 2)),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no paired simulations: A and B share no scored (task, trial); 2 vs 2 scored simulations"
    );
}

#[test]
fn different_domains_are_refused_and_one_sided_domains_named() {
    let a = side("airline", "baseline", &[[true, true]]);
    let b = side("retail", "pg", &[[true, false]]);
    let err = compare(&a, &b, &CompareOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("share no domain") && err.contains("airline") && err.contains("retail"),
        "{err}"
    );
    // Partial overlap: airline pairs, retail (A only) is dropped and named.
    let mut a2 = a.clone();
    a2.extend(side("retail", "baseline", &[[true, true]]));
    let b2 = side("airline", "pg", &[[false, true]]);
    let cmp = compare(&a2, &b2, &CompareOptions::default()).unwrap();
    assert_eq!(cmp.n_pairs, 2);
    assert_eq!(cmp.dropped_domains, ["retail"]);
    assert_eq!(cmp.unpaired_a, 2);
    assert!(
        cmp.render(Format::Md)
            .contains("domains on one side only: retail")
    );
}

#[test]
fn a_side_with_several_configurations_is_refused_and_selectors_pick_one() {
    use tauguard_metrics::Selector;
    // One grid run holding five guards, compared with itself by selection.
    let guards = ["baseline", "toolguard", "pg-raw", "pg-checklist", "hybrid"];
    let mut grid = Vec::new();
    for (i, g) in guards.iter().enumerate() {
        let outcomes: Vec<[bool; 2]> = (0..20).map(|t| [t % 5 != i, t % 3 != 0]).collect();
        let mut recs = side("airline", g, &outcomes);
        for r in &mut recs {
            r.cell_hash = format!("h-{g}");
        }
        grid.extend(recs);
    }
    // Today's mistake: the whole grid against a baseline-only input.
    let base_only = Selector::parse("guard=baseline")
        .unwrap()
        .select(&grid)
        .unwrap();
    let err = compare(&grid, &base_only, &CompareOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("5 configurations") && err.contains("--a guard=baseline"),
        "{err}"
    );
    let a = Selector::parse("guard=baseline")
        .unwrap()
        .select(&grid)
        .unwrap();
    let b = Selector::parse("guard=pg-checklist")
        .unwrap()
        .select(&grid)
        .unwrap();
    let cmp = compare(&a, &b, &CompareOptions::default()).unwrap();
    assert_eq!(cmp.n_pairs, 40, "20 tasks × 2 trials, all paired");
    assert_eq!((cmp.unpaired_a, cmp.unpaired_b), (0, 0));
    // A key no record has is an error, not an empty side.
    let err = Selector::parse("gaurd=baseline")
        .unwrap()
        .select(&grid)
        .unwrap_err();
    assert!(
        matches!(&err, MetricsError::BadSelector { finding: SelectorFinding::UnknownKey { key, .. }, .. } if key == "gaurd"),
        "{err:?}"
    );
    // Printed with its cause as the binary prints it, the text is the one before the finding
    // was typed.
    assert_eq!(
        tauguard_core::chain_text(&err),
        "selector `gaurd=baseline`: no record has `gaurd` (fields: domain, guard, agent, user, \
         run, cell, task, or a cell setting such as verifier.model)"
    );
    assert!(Selector::parse("guard").is_err());
}
