//! The PolicyGuide paper's tables from hand-built records (Tables 1 with its cross-domain mean,
//! 2, 3, 14 and 15): every expected value is computed by hand from the outcomes, tokens and
//! seconds the records are given; and their absence from reports without PolicyGuide records.

use tauguard_core::record::{SimulationRecord, Slice, Verdict};
use tauguard_metrics::{Format, ReportOptions, Table, report, write_outputs};
use tauguard_metrics::{
    ablation_table, controller_table, guide_usage_table, policyguide_table1, wall_clock_table,
};
use tauguard_metrics::{trailing_group_columns, trailing_table_ids};
use tauguard_testkit::synthetic::{guard_event, guide_event, infra, record, usage};

/// One scored record.
fn rec(
    domain: &str,
    agent: &str,
    guard: &str,
    task: &str,
    trial: u32,
    ok: bool,
) -> SimulationRecord {
    let slice = if task.starts_with('p') {
        Slice::Pv
    } else {
        Slice::Mut
    };
    let mut r = record(task, slice, trial, if ok { 1.0 } else { 0.0 });
    (r.domain, r.agent_model, r.guard) = (domain.into(), agent.into(), guard.into());
    r.run_id = format!("{domain}-{agent}-{guard}");
    r
}

/// A group of two tasks, PV "p" and Mut "m", × 4 trials, passing `p` and `m` of the four.
fn group(domain: &str, agent: &str, guard: &str, p: u32, m: u32) -> Vec<SimulationRecord> {
    (0..4)
        .flat_map(|t| {
            [
                rec(domain, agent, guard, "p", t, t < p),
                rec(domain, agent, guard, "m", t, t < m),
            ]
        })
        .collect()
}

/// The displayed cells of the table's rows whose first cells are `key`.
fn row(t: &Table, key: &[&str]) -> Vec<String> {
    let found: Vec<&Vec<tauguard_metrics::Cell>> = t
        .rows
        .iter()
        .filter(|r| key.iter().zip(r.iter()).all(|(k, c)| c.display() == *k))
        .collect();
    assert_eq!(found.len(), 1, "{key:?} in {}", t.to_markdown());
    found[0].iter().map(|c| c.display()).collect()
}

#[test]
fn table1_means_each_value_over_three_domains_only_for_complete_groups() {
    let mut recs = Vec::new();
    // baseline: airline p 4/4 m 0/4; retail p 2/4 m 4/4; telecom p 3/4 m 1/4.
    recs.extend(group("airline", "a", "baseline", 4, 0));
    recs.extend(group("retail", "a", "baseline", 2, 4));
    recs.extend(group("telecom", "a", "baseline", 3, 1));
    // policyguide in two of the three domains: no mean row.
    recs.extend(group("airline", "a", "policyguide", 4, 4));
    recs.extend(group("retail", "a", "policyguide", 4, 4));
    let rep = report(&recs, &ReportOptions::default());
    let t = policyguide_table1(&rep);
    // Pass^1 All: (0.5 + 0.75 + 0.5) / 3; PV (1 + 0.5 + 0.75) / 3; Mut (0 + 1 + 0.25) / 3.
    // Pass^4 All: (0.5 + 0.5 + 0) / 3; PV (1 + 0 + 0) / 3; Mut (0 + 1 + 0) / 3.
    assert_eq!(
        row(&t, &["unweighted mean over 3 domains", "a", "baseline"])[3..],
        ["0.583", "0.750", "0.417", "0.333", "0.333", "0.333"]
    );
    assert!(
        !t.rows
            .iter()
            .any(|r| r[0].display().starts_with("unweighted") && r[2].display() == "policyguide"),
        "{}",
        t.to_markdown()
    );
    assert_eq!(t.rows.len(), 5 + 1);
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("unweighted mean over the report's 3 domains"))
    );

    // One domain: no mean row, no note.
    let one = report(
        &group("airline", "a", "baseline", 4, 0),
        &ReportOptions::default(),
    );
    let t = policyguide_table1(&one);
    assert_eq!(t.rows.len(), 1);
    assert!(t.notes.is_empty());
}

#[test]
fn table2_lays_configurations_out_against_domains() {
    let mut recs = Vec::new();
    recs.extend(group("airline", "a", "baseline", 4, 0)); // Pass^4 0.5
    recs.extend(group("airline", "a", "policyguide", 4, 4)); // 1.0
    recs.extend(group("airline", "a", "policyguide-raw", 4, 3)); // 0.5
    recs.extend(group("airline", "a", "policyguide-self", 2, 0)); // 0.0
    recs.extend(group("telecom", "a", "baseline", 3, 4)); // 0.5
    recs.extend(group("telecom", "a", "policyguide-raw", 0, 4)); // 0.5
    // Retail holds no ablation: not a column. Another agent without ablations: no rows.
    recs.extend(group("retail", "a", "policyguide", 4, 4));
    recs.extend(group("airline", "b", "policyguide", 4, 4));
    let rep = report(&recs, &ReportOptions::default());
    let t = ablation_table(&rep).expect("ablation records are present");
    assert_eq!(
        t.headers,
        [
            "Agent",
            "Configuration",
            "Guard",
            "airline Pass^4",
            "telecom Pass^4"
        ]
    );
    assert_eq!(
        t.rows
            .iter()
            .map(|r| r.iter().map(|c| c.display()).collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        [
            ["a", "ReAct", "baseline", "0.500", "0.500"],
            ["a", "RAW", "policyguide-raw", "0.500", "0.500"],
            ["a", "SELF", "policyguide-self", "0.000", "—"],
            ["a", "PolicyGuide", "policyguide", "1.000", "—"],
        ]
    );
    let without = report(
        &group("airline", "a", "policyguide", 4, 4),
        &ReportOptions::default(),
    );
    assert!(ablation_table(&without).is_none());
}

#[test]
fn table3_scores_flowagent_and_policyguide_on_their_shared_tasks() {
    let mut recs = Vec::new();
    for t in 0..4 {
        // FlowAgent on the "test split" {t1, t2}: t1 4/4, t2 2/4.
        recs.push(rec("telecom", "a", "flowagent", "t1", t, true));
        recs.push(rec("telecom", "a", "flowagent", "t2", t, t < 2));
        // PolicyGuide on {t1, t2, t3}: 4/4, 4/4, 0/4 (Pass^4 0.667 over its own tasks).
        recs.push(rec("telecom", "a", "policyguide", "t1", t, true));
        recs.push(rec("telecom", "a", "policyguide", "t2", t, true));
        recs.push(rec("telecom", "a", "policyguide", "t3", t, false));
        // A FlowAgent group with no PolicyGuide group of its settings.
        recs.push(rec("airline", "a", "flowagent", "t1", t, true));
    }
    let rep = report(&recs, &ReportOptions::default());
    let t = controller_table(&rep).expect("flowagent records are present");
    // Shared {t1, t2}: FlowAgent Pass^1 (1 + 0.5) / 2, Pass^4 (1 + 0) / 2; PolicyGuide 1, 1.
    assert_eq!(
        row(&t, &["telecom", "a", "flowagent"])[3..],
        [
            "policyguide",
            "2",
            "3",
            "2",
            "0.750",
            "1.000",
            "+0.250",
            "0.500",
            "1.000",
            "+0.500"
        ]
    );
    assert_eq!(
        row(&t, &["airline", "a", "flowagent"])[3..],
        ["—", "1", "—", "—", "—", "—", "—", "—", "—", "—"]
    );
    let json = rep.to_json();
    let fa = json
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["guard"] == "flowagent" && g["domain"] == "telecom")
        .unwrap();
    assert_eq!(fa["matched_policyguide"][0]["shared_tasks"], 2);
    assert_eq!(fa["matched_policyguide"][0]["policyguide_pass_k"]["4"], 1.0);
    let without = report(
        &group("telecom", "a", "policyguide", 4, 4),
        &ReportOptions::default(),
    );
    assert!(controller_table(&without).is_none());
}

/// 2 tasks × 2 trials of `guard` for `agent`: per simulation two guide runs of (1 call, 1000
/// prompt tokens of which 800 cached, 200 completion, $0.01) and one decision of the same guard
/// (1 call, 500 prompt, 100 cached, 50 completion, $0.005); a decision of another guard is not
/// the guide's.
fn guided(agent: &str, guard: &str) -> Vec<SimulationRecord> {
    let mut out = Vec::new();
    for task in ["p", "m"] {
        for t in 0..2 {
            let mut r = rec("airline", agent, guard, task, t, true);
            r.guide_events = vec![
                guide_event(guard, usage(1, 1000, 800, 200, Some(0.01))),
                guide_event(guard, usage(1, 1000, 800, 200, Some(0.01))),
            ];
            let mut own = guard_event(guard, "c1", "book_reservation", Verdict::Block, false);
            own.usage = usage(1, 500, 100, 50, Some(0.005));
            let mut other = guard_event("toolguard", "c1", "book_reservation", Verdict::Pass, true);
            other.usage = usage(9, 9000, 9000, 900, Some(9.0));
            r.guard_events = vec![own, other];
            out.push(r);
        }
    }
    // An infrastructure error is no task: its usage is not counted.
    let mut broken = infra(rec("airline", agent, guard, "m", 2, false));
    broken.guide_events = vec![guide_event(guard, usage(5, 5000, 0, 500, Some(1.0)))];
    out.push(broken);
    out
}

#[test]
fn table14_counts_guide_usage_per_simulation() {
    let mut recs = guided("a", "policyguide");
    // Agent b: one guide call without a price → cost unknown; no cached tokens → hit rate —.
    let mut b = guided("b", "policyguide");
    for r in &mut b {
        for e in &mut r.guide_events {
            e.usage.usage.cached_prompt_tokens = 0;
        }
        for e in &mut r.guard_events {
            e.usage.usage.cached_prompt_tokens = 0;
        }
    }
    b[0].guide_events[1].usage.cost = None;
    recs.extend(b);
    recs.extend(group("airline", "a", "baseline", 4, 4));
    let rep = report(&recs, &ReportOptions::default());
    let t = guide_usage_table(&rep).expect("guide events are present");
    // Per simulation: 2 runs, 3 calls, 2500 prompt tokens (1700 cached: 68.0%), 450 completion
    // tokens, $0.025.
    assert_eq!(
        row(&t, &["airline", "a", "policyguide"])[3..],
        [
            "4", "2.00", "3.00", "2500", "450", "68.0%", "0.025", "0", "0.0%"
        ]
    );
    assert_eq!(
        row(&t, &["airline", "b", "policyguide"])[3..],
        // An unpriced guide call: the cost is unknown, not missing.
        [
            "4", "2.00", "3.00", "2500", "450", "—", "unknown", "0", "0.0%"
        ]
    );
    assert_eq!(t.rows.len(), 2, "the baseline has no guide events");
    let json = rep.to_json();
    let a = json
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["guard"] == "policyguide" && g["agent_model"] == "a")
        .unwrap();
    assert_eq!(a["guide_usage"]["calls"], 12);
    assert_eq!(a["guide_usage"]["prefix_cache_hit_rate"], 0.68);
    let cost = a["guide_usage"]["cost_per_simulation"].as_f64().unwrap();
    assert!((cost - 0.025).abs() < 1e-12, "{cost}");
}

#[test]
fn table15_relates_wall_clock_to_the_same_agents_baseline() {
    let mut recs = Vec::new();
    for (i, mut r) in group("airline", "a", "baseline", 4, 4)
        .into_iter()
        .enumerate()
    {
        r.wall_seconds = [8.0, 12.0][i % 2]; // mean 10
        recs.push(r);
    }
    for (i, mut r) in group("airline", "a", "policyguide", 4, 4)
        .into_iter()
        .enumerate()
    {
        r.wall_seconds = [50.0, 60.0][i % 2]; // mean 55
        recs.push(r);
    }
    let mut lone = group("retail", "a", "policyguide", 4, 4);
    lone.iter_mut().for_each(|r| r.wall_seconds = 30.0);
    recs.extend(lone);
    let mut slow = infra(rec("airline", "a", "policyguide", "m", 4, false));
    slow.wall_seconds = 1000.0;
    recs.push(slow);
    let rep = report(&recs, &ReportOptions::default());
    let t = wall_clock_table(&rep).expect("a PolicyGuide group is present");
    assert_eq!(
        row(&t, &["airline", "a", "baseline"])[3..],
        ["8", "10.0", "—", "no"]
    );
    assert_eq!(
        row(&t, &["airline", "a", "policyguide"])[3..],
        ["8", "55.0", "5.50", "no"]
    );
    assert_eq!(
        row(&t, &["retail", "a", "policyguide"])[3..],
        ["8", "30.0", "—", "no"]
    );
    assert!(!t.title.contains("not comparable"));

    // Simulated models: the title says their wall clock is not comparable.
    let mut sim = recs.clone();
    sim.iter_mut()
        .for_each(|r| r.agent_model = "sim-agent".into());
    let rep = report(&sim, &ReportOptions::default());
    let t = wall_clock_table(&rep).unwrap();
    assert!(
        t.title.contains("not comparable to model runs"),
        "{}",
        t.title
    );
    assert_eq!(row(&t, &["airline", "sim-agent", "policyguide"])[6], "yes");
}

/// A baseline of near-zero wall clock (offline models: milliseconds) gives no ratio: the
/// cell is missing (—) with a note saying why, never a huge multiple.
#[test]
fn table15_gives_no_ratio_to_a_near_zero_baseline() {
    let mut recs = group("airline", "a", "baseline", 4, 4);
    recs.iter_mut().for_each(|r| r.wall_seconds = 0.0003);
    let mut guided = group("airline", "a", "policyguide", 4, 4);
    guided.iter_mut().for_each(|r| r.wall_seconds = 0.2);
    recs.extend(guided);
    let rep = report(&recs, &ReportOptions::default());
    let t = wall_clock_table(&rep).unwrap();
    assert_eq!(
        row(&t, &["airline", "a", "policyguide"])[3..],
        ["8", "0.2", "—", "no"]
    );
    assert!(
        t.notes.iter().any(|n| n.contains("too short to divide by")),
        "{:?}",
        t.notes
    );
    let g = rep
        .groups
        .iter()
        .find(|g| g.guard == "policyguide")
        .unwrap();
    assert_eq!(g.wall_clock.unwrap().ratio_vs_baseline, None);
    // A baseline long enough keeps its ratio and the table no such note.
    recs.iter_mut()
        .filter(|r| r.guard == "baseline")
        .for_each(|r| r.wall_seconds = 0.1);
    let t = wall_clock_table(&report(&recs, &ReportOptions::default())).unwrap();
    assert_eq!(row(&t, &["airline", "a", "policyguide"])[5], "2.00");
    assert!(t.notes.iter().all(|n| !n.contains("too short")));
}

/// The last columns of the per-group CSV: the registered measures' placed last, then
/// `simulated`.
fn trailing_columns() -> String {
    let mut s: String = trailing_group_columns()
        .iter()
        .map(|c| format!(",{c}"))
        .collect();
    s.push_str(",simulated");
    s
}

/// Baseline and PolicyGuard on one domain, as the existing report tests build them.
fn policyguard_only() -> Vec<SimulationRecord> {
    let mut recs = group("airline", "a", "baseline", 2, 4);
    recs.extend(group("airline", "a", "pg-checklist", 4, 3));
    recs.iter_mut().for_each(|r| r.wall_seconds = 12.0);
    recs
}

#[test]
fn reports_without_policyguide_records_have_none_of_the_new_tables() {
    let rep = report(&policyguard_only(), &ReportOptions::default());
    let ids: Vec<&str> = rep.tables().iter().map(|t| t.id).collect();
    // Then the tables of the registered measures that go after the fixed ones.
    let mut expected = vec![
        "summary",
        "policyguard_table2",
        "policyguide_table1",
        "pass_k",
        "policyguard_table7",
        "policyguard_table8",
        "policyguard_table9",
        // Issue 15: per-task outcomes are always there.
        "task_outcomes",
    ];
    expected.extend(trailing_table_ids());
    assert_eq!(ids, expected);
    let md = rep.render(Format::Md);
    assert!(!md.contains("unweighted mean"), "{md}");
    let json = rep.render(Format::Json);
    for key in ["guide_usage", "wall_clock", "matched_policyguide"] {
        assert!(!json.contains(key), "{key} in {json}");
    }
    let csv = rep.render(Format::Csv);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(&format!(",attack_simulations,asr{}", trailing_columns()))
    );

    // A PolicyGuide group without guide events: Table 15 only.
    let mut recs = policyguard_only();
    recs.extend(group("airline", "a", "policyguide", 4, 4));
    let ids: Vec<&str> = report(&recs, &ReportOptions::default())
        .tables()
        .iter()
        .map(|t| t.id)
        .collect();
    assert!(ids.contains(&"policyguide_table15"));
    for absent in [
        "policyguide_table2",
        "policyguide_table3",
        "policyguide_table14",
    ] {
        assert!(!ids.contains(&absent), "{absent} in {ids:?}");
    }
}

#[test]
fn every_rendering_carries_the_new_tables_when_present() {
    let mut recs = guided("a", "policyguide");
    recs.extend(group("airline", "a", "baseline", 4, 4));
    recs.extend(group("airline", "a", "policyguide-raw", 4, 4));
    recs.extend(group("airline", "a", "flowagent", 4, 4));
    let rep = report(&recs, &ReportOptions::default());
    let md = rep.render(Format::Md);
    for title in [
        "PolicyGuide Table 2",
        "PolicyGuide Table 3",
        "PolicyGuide Table 14",
        "PolicyGuide Table 15",
    ] {
        assert!(md.contains(title), "missing {title}:\n{md}");
    }
    let tex = rep.render(Format::Latex);
    assert!(tex.contains("\\label{tab:policyguide-table14}"), "{tex}");
    assert!(tex.contains("68.0\\%"), "{tex}");
    let csv = rep.render(Format::Csv);
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(&format!(
            ",guide_prefix_cache_hit_rate,guide_cost_usd_per_sim,wall_seconds_mean,wall_ratio_vs_baseline{}",
            trailing_columns()
        )),
        "{header}"
    );
    let dir = std::env::temp_dir().join(format!("tauguard-metrics-{}-pg", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = write_outputs(&rep, &dir).unwrap();
    for id in [
        "policyguide_table2",
        "policyguide_table3",
        "policyguide_table14",
        "policyguide_table15",
    ] {
        let csv = dir.join(format!("{id}.csv"));
        assert!(files.contains(&csv), "{id}.csv not written");
        assert!(files.contains(&dir.join(format!("{id}.caption.txt"))));
    }
    crate::figures::assert_tidy_csvs(&dir, &files);
    let t14 = std::fs::read_to_string(dir.join("policyguide_table14.csv")).unwrap();
    assert!(
        t14.contains(
            "airline,a,policyguide,4,2.000000,3.000000,2500.000000,450.000000,0.680000,0.025000"
        ),
        "{t14}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
