//! `report` end to end on hand-built records: grouping, baseline deltas, every rendering, the
//! JSON shape the CLI documents, and `write_outputs` (CSV per table, plots as PNG and SVG).

use std::path::PathBuf;
use tauguard_core::record::{SimulationRecord, Slice, Verdict};
use tauguard_metrics::{Format, ReportOptions, report, write_outputs};
use tauguard_testkit::synthetic::{Population, attempt, infra, record, with_calls};

fn rec(guard: &str, task: &str, slice: Slice, trial: u32, ok: bool) -> SimulationRecord {
    let mut r = record(task, slice, trial, if ok { 1.0 } else { 0.0 });
    r.guard = guard.into();
    r.agent_turns = 5;
    r.user_turns = 4;
    r
}

/// Two tasks (PV "p", Mut "m") × 4 trials for a baseline and a guard.
fn sample() -> Vec<SimulationRecord> {
    let mut out = Vec::new();
    // baseline: p passes 2/4, m passes 4/4
    for t in 0..4 {
        let mut p = rec("baseline", "p", Slice::Pv, t, t < 2);
        p.call_attempts = if t < 2 {
            vec![]
        } else {
            vec![attempt("c", None, true)]
        };
        out.push(p);
        out.push(rec("baseline", "m", Slice::Mut, t, true));
    }
    // guard: p passes 4/4 (two blocks), m passes 3/4, turns +2 on Mut
    for t in 0..4 {
        let mut p = rec("pg-checklist", "p", Slice::Pv, t, true);
        if t >= 2 {
            p.call_attempts = vec![attempt("c", Some(Verdict::Block), false)];
        }
        out.push(p);
        let mut m = rec("pg-checklist", "m", Slice::Mut, t, t != 3);
        m.agent_turns = 6;
        m.user_turns = 5;
        m.call_attempts = vec![attempt("d", Some(Verdict::Pass), true)];
        out.push(m);
    }
    out.push(infra(rec("pg-checklist", "m", Slice::Mut, 4, false)));
    out
}

#[test]
fn groups_deltas_and_json_shape() {
    let rep = report(&sample(), &ReportOptions::default());
    assert_eq!(rep.groups.len(), 2);
    assert_eq!(rep.groups[0].guard, "baseline", "baseline sorts first");
    assert_eq!(rep.headline_k, 4);
    let (base, pg) = (&rep.groups[0], &rep.groups[1]);
    // baseline Pass^4: p 0, m 1 → 0.5; pg: p 1, m 0 → 0.5.
    assert_eq!(base.overall.pass_k.get(4), Some(0.5));
    assert_eq!(pg.overall.pass_k.get(4), Some(0.5));
    assert_eq!(pg.pv.pass_k.get(4), Some(1.0));
    assert_eq!(pg.mut_.pass_k.get(4), Some(0.0));
    // Pass^1: base (0.5 + 1)/2, pg (1 + 0.75)/2 → Δ = +0.125.
    let d = pg.delta_vs_baseline.as_ref().unwrap();
    assert!((d.get(1).unwrap() - 0.125).abs() < 1e-15);
    assert_eq!(d.get(4), Some(0.0));
    assert!(base.delta_vs_baseline.is_none());
    assert_eq!(pg.overall.infra_errors, 1);
    assert_eq!(
        pg.measures
            .value::<tauguard_metrics::TurnStats>("turns")
            .unwrap()
            .mean_turns,
        Some(11.0)
    );
    assert_eq!(
        pg.measures
            .value::<tauguard_metrics::TurnStats>("turns")
            .unwrap()
            .delta_vs_baseline,
        Some(2.0)
    );
    // Verdict view of the guard: 2 PV blocks (TP), 4 Mut passes (TN).
    let confusion = |g: &tauguard_metrics::GroupReport| {
        (g.measures)
            .value::<tauguard_metrics::ConfusionViews>("confusion")
            .unwrap()
    };
    assert_eq!(confusion(pg).verdict.tp, 2);
    assert_eq!(confusion(pg).verdict.tn, 4);
    assert_eq!(confusion(pg).verdict.block_rate(), Some(2.0 / 6.0));
    // Baseline runtime view: 2 executed PV calls, all missed.
    assert_eq!(confusion(base).runtime.fn_, 2);

    let v = rep.to_json();
    let g = &v[1];
    for key in [
        "domain",
        "agent_model",
        "guard",
        "n_tasks",
        "n_simulations",
        "infra_errors",
        "pass_k",
        "pv",
        "mut",
        "confusion",
        "call_nmr",
        "turns",
    ] {
        assert!(g.get(key).is_some(), "group JSON lacks `{key}`: {g}");
    }
    assert_eq!(
        g["pass_k"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["1", "2", "3", "4"]
    );
    for s in ["pv", "mut"] {
        for key in ["n_tasks", "n_simulations", "infra_errors", "pass_k"] {
            assert!(g[s].get(key).is_some(), "`{s}` lacks `{key}`");
        }
    }
    assert_eq!(g["mut"]["infra_errors"], 1);
    assert_eq!(g["confusion"]["verdict"]["fn"], 0);
    assert_eq!(g["trace"], serde_json::Value::Null);
}

#[test]
fn renders_every_format() {
    let rep = report(&sample(), &ReportOptions::default());
    let md = rep.render(Format::Md);
    for title in [
        "PolicyGuard Table 2",
        "PolicyGuard Table 7",
        "PolicyGuard Table 8",
        "PolicyGuard Table 9",
        "PolicyGuide Table 1",
        "PolicyGuide Table 10",
    ] {
        assert!(md.contains(title), "missing {title}:\n{md}");
    }
    assert!(
        md.contains(
            "| airline | agent | pg-checklist | 2 | 1 | 1 | 0.500 | 1.000 | 0.000 | +0.000 |"
        ),
        "{md}"
    );
    let tex = rep.render(Format::Latex);
    assert!(tex.contains("\\begin{tabular}") && tex.contains("pg-checklist"));
    let csv = rep.render(Format::Csv);
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("domain,agent_model,guard,n_tasks,")
    );
    assert_eq!(lines.count(), 2);
    let json: serde_json::Value = serde_json::from_str(&rep.render(Format::Json)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
}

#[test]
fn trace_and_attack_tables_appear_when_records_carry_them() {
    let mut recs = sample();
    let mut t = with_calls(rec("baseline", "tele", Slice::Mut, 0, true), &["a", "b"]);
    t.gold_trace = Some(vec!["a".into(), "b".into()]);
    recs.push(t);
    let mut a = rec("baseline", "att", Slice::Pv, 0, true);
    a.attack_target = Some("book_reservation".into());
    a.call_attempts = vec![attempt("x", None, true)];
    recs.push(a);
    let md = report(&recs, &ReportOptions::default()).render(Format::Md);
    assert!(md.contains("PolicyGuide Table 5"), "{md}");
    assert!(md.contains("Attack success rate per trial"), "{md}");
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tauguard-metrics-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn write_outputs_writes_csv_and_sane_plots() {
    let mut pop = Population::new(2_000);
    pop.domains = vec!["airline", "telecom"];
    pop.agents = vec!["gpt-5.4", "sim"];
    pop.guards = vec!["baseline", "toolguard", "pg-checklist"];
    let rep = report(&pop.generate(), &ReportOptions::default());
    let dir = out_dir("outputs");
    let files = write_outputs(&rep, &dir).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "report.md",
        "report.tex",
        "report.json",
        "summary.csv",
        "policyguard_table2.csv",
        "policyguard_table7.csv",
        "policyguard_table8.csv",
        "policyguard_table9.csv",
        "policyguide_table1.csv",
        "policyguide_table5.csv",
        "pass_k.csv",
        "groups.csv",
        "pass_k.png",
        "pass_k.svg",
        "pass_by_slice.png",
        "pass_by_slice.svg",
        "block_vs_recall.png",
        "block_vs_recall.svg",
        "attack_success.png",
        "attack_success.svg",
        "pass_k.caption.txt",
        "task_outcomes_long.csv",
        "schema.json",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} not written: {names:?}"
        );
    }
    for f in &files {
        let len = std::fs::metadata(f).unwrap().len();
        // A caption is a title ("Groups") and the table's notes.
        let floor = if f.to_string_lossy().ends_with(".caption.txt") {
            6
        } else {
            200
        };
        assert!(len > floor, "{} is only {len} bytes", f.display());
        if f.extension().is_some_and(|e| e == "png") {
            let bytes = std::fs::read(f).unwrap();
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
            // Width and height from the IHDR chunk.
            let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
            let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
            assert!(
                (300..=4000).contains(&w) && (300..=4000).contains(&h),
                "{w}x{h}"
            );
            assert!(
                len > 10_000 && len < 2_000_000,
                "{} has {len} bytes",
                f.display()
            );
        }
        if f.extension().is_some_and(|e| e == "svg") {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.contains("<text"),
                "{}",
                f.display()
            );
        }
    }
    let csv = std::fs::read_to_string(dir.join("policyguard_table7.csv")).unwrap();
    // Tidy CSV (issue 15): documented snake_case names, recall and Block% as fractions.
    assert!(csv.starts_with(
        "domain,agent_model,guard,view,attempts,tp,fn,fp,tn,pv_recall,block_rate,fail_mode,\
             fail_mode_rate\n"
    ));
    assert!(names.iter().any(|n| n == "schema.json"));
    crate::figures::assert_tidy_csvs(&dir, &files);
    if std::env::var_os("TAUGUARD_KEEP_PLOTS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("plots kept in {}", dir.display());
    }
}

#[test]
fn duplicates_of_one_simulation_count_once() {
    // A resumed run wrote trial 0 twice: first an infrastructure error, then a success; and
    // trial 1 twice: a failure, then (wrongly) an infrastructure error that must not win.
    let mut recs = vec![
        infra(rec("baseline", "t", Slice::Mut, 0, false)),
        rec("baseline", "t", Slice::Mut, 1, false),
        rec("baseline", "t", Slice::Mut, 0, true),
        infra(rec("baseline", "t", Slice::Mut, 1, true)),
    ];
    // Another run of the same configuration is pooled, not a duplicate.
    let mut other = rec("baseline", "t", Slice::Mut, 0, true);
    other.run_id = "run-2".into();
    recs.push(other);
    let rep = report(&recs, &ReportOptions::default());
    let g = &rep.groups[0];
    assert_eq!(g.duplicates, 2);
    assert_eq!(g.overall.n_simulations, 3);
    assert_eq!(g.overall.infra_errors, 0);
    // Successes: trial 0 (run), trial 0 (run-2); failure: trial 1.
    assert!((g.overall.pass_k.get(1).unwrap() - 2.0 / 3.0).abs() < 1e-15);
    assert!(
        rep.warnings
            .iter()
            .any(|w| w.contains("2 duplicate record(s)")),
        "{:?}",
        rep.warnings
    );
}

#[test]
fn empty_input_renders() {
    let rep = report(&[], &ReportOptions::default());
    assert!(rep.groups.is_empty());
    assert!(rep.render(Format::Md).contains("no simulation records"));
    assert_eq!(rep.render(Format::Json).trim(), "[]");
    let dir = out_dir("empty");
    write_outputs(&rep, &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tags every record with a cell: its settings map and their hash.
fn in_cell(mut recs: Vec<SimulationRecord>, settings: &[(&str, &str)]) -> Vec<SimulationRecord> {
    for r in &mut recs {
        r.cell = settings
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
            .collect();
        r.cell.insert("guard".into(), serde_json::json!(r.guard));
        r.cell_hash = format!("{:?}", r.cell);
    }
    recs
}

#[test]
fn cells_that_differ_in_any_setting_are_never_pooled() {
    // The same guard label under two verifiers, and two user models with their baselines.
    let mut recs = in_cell(sample(), &[("user.model", "u1"), ("verifier.model", "v1")]);
    let other_verifier: Vec<SimulationRecord> = in_cell(
        sample()
            .into_iter()
            .filter(|r| r.guard != "baseline")
            .collect(),
        &[("user.model", "u1"), ("verifier.model", "v2")],
    )
    .into_iter()
    .map(|mut r| {
        if let Some(reward) = r.reward.as_mut() {
            reward.reward = 0.0;
        }
        r
    })
    .collect();
    recs.extend(other_verifier);
    let other_user = in_cell(
        sample()
            .into_iter()
            .map(|mut r| {
                if r.guard == "baseline" {
                    r.reward
                        .as_mut()
                        .expect("baseline records are scored")
                        .reward = 0.0;
                }
                r
            })
            .collect(),
        &[("user.model", "u2"), ("verifier.model", "v1")],
    );
    recs.extend(other_user);
    let r = report(&recs, &ReportOptions::default());
    assert_eq!(r.groups.len(), 5, "2 baselines + 3 guarded cells");
    for g in &r.groups {
        // sample(): 8 scored simulations per configuration.
        assert_eq!(g.overall.n_simulations, 8, "{}: nothing pooled", g.label());
    }
    let guarded: Vec<_> = r.groups.iter().filter(|g| g.guard != "baseline").collect();
    let labels: std::collections::BTreeSet<String> =
        guarded.iter().map(|g| g.guard_label()).collect();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(
        labels.contains("pg-checklist [user.model=u1, verifier.model=v2]"),
        "{labels:?}"
    );
    // Each guarded cell's delta is taken against the baseline with its own user model.
    for g in guarded {
        let base = if g.cell["user.model"] == "u1" {
            0.75
        } else {
            0.0
        };
        let delta = g.delta_vs_baseline.as_ref().unwrap().get(1).unwrap();
        let own = g.overall.pass_k.get(1).unwrap();
        assert!((delta - (own - base)).abs() < 1e-9, "{}", g.label());
    }
    // The rendered tables show the distinguishing settings.
    let md = r.render(Format::Md);
    assert!(md.contains("verifier.model=v2"), "{md}");
}

#[test]
fn one_run_name_with_two_configurations_is_refused_unless_pooled() {
    let mut recs = sample();
    for (i, r) in recs.iter_mut().enumerate() {
        r.config_hash = if i % 2 == 0 { "aaaa" } else { "bbbb" }.into();
    }
    let err = tauguard_metrics::check_single_config(&recs)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`run`") && err.contains("aaaa") && err.contains("--pool"),
        "{err}"
    );
    for r in &mut recs {
        r.config_hash = "aaaa".into();
    }
    tauguard_metrics::check_single_config(&recs).unwrap();
}

/// Every file `write_outputs` writes for `recs`, by name, with the text ones read.
fn outputs_of(recs: &[SimulationRecord], name: &str) -> (PathBuf, Vec<(String, String)>) {
    let rep = report(recs, &ReportOptions::default());
    let dir = out_dir(name);
    let files = write_outputs(&rep, &dir).unwrap();
    let texts = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e != "png"))
        .map(|f| {
            (
                f.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(f).unwrap(),
            )
        })
        .collect();
    (dir, texts)
}

#[test]
fn results_of_sim_models_are_labelled_everywhere_and_others_nowhere() {
    use tauguard_metrics::SIMULATED_LABEL;
    let mut real = sample();
    let mut att = rec("pg-checklist", "att", Slice::Pv, 0, true);
    att.attack_target = Some("cancel_reservation".into());
    att.call_attempts = vec![attempt("x", Some(Verdict::Block), false)];
    real.push(att);
    // The same records, with the baseline's user and the guard's verifier the sim models:
    // every group has a sim role.
    let mut sim = real.clone();
    for r in &mut sim {
        let role = if r.guard == "baseline" {
            "user"
        } else {
            "verifier"
        };
        r.cell
            .insert(format!("{role}.provider"), serde_json::json!("sim"));
    }

    let (dir, texts) = outputs_of(&sim, "sim-labels");
    let text = |name: &str| &texts.iter().find(|(n, _)| n == name).unwrap().1;
    // Every Markdown and LaTeX table title.
    let md_titles: Vec<&str> = text("report.md")
        .lines()
        .filter(|l| l.starts_with("### "))
        .collect();
    assert!(md_titles.len() >= 7, "{md_titles:?}");
    for t in &md_titles {
        assert!(t.ends_with(&format!("({SIMULATED_LABEL})")), "{t}");
    }
    let tex_captions: Vec<&str> = text("report.tex")
        .lines()
        .filter(|l| l.starts_with("\\caption{"))
        .collect();
    assert_eq!(tex_captions.len(), md_titles.len());
    for c in &tex_captions {
        assert!(
            c.contains("simulated models") && c.contains("not a paper result"),
            "{c}"
        );
    }
    // The JSON: every group says so.
    let json: serde_json::Value = serde_json::from_str(text("report.json")).unwrap();
    for g in json.as_array().unwrap() {
        assert_eq!(g["simulated"], true, "{g}");
    }
    // The flat CSV: a `simulated` column, true on every row; the file still parses.
    assert_eq!(simulated_column(text("groups.csv")), ["true", "true"]);
    // Every table CSV has its caption beside it, labelled.
    for (name, _) in texts.iter().filter(|(n, _)| n.ends_with(".csv")) {
        let caption = text(&name.replace(".csv", ".caption.txt"));
        assert!(
            caption.lines().next().unwrap().contains(SIMULATED_LABEL),
            "{name}"
        );
    }
    // Every plot's text.
    let svgs: Vec<&(String, String)> = texts.iter().filter(|(n, _)| n.ends_with(".svg")).collect();
    assert_eq!(
        svgs.len(),
        4,
        "pass_k, pass_by_slice, block_vs_recall, attack_success"
    );
    for (name, svg) in svgs {
        assert!(svg.contains(SIMULATED_LABEL), "{name} is not labelled");
    }
    let _ = std::fs::remove_dir_all(&dir);

    let (dir, texts) = outputs_of(&real, "real-labels");
    for (name, t) in &texts {
        assert!(!t.contains("simulated models"), "{name} is labelled");
    }
    let json: serde_json::Value =
        serde_json::from_str(&texts.iter().find(|(n, _)| n == "report.json").unwrap().1).unwrap();
    assert!(
        json.as_array()
            .unwrap()
            .iter()
            .all(|g| g["simulated"] == false)
    );
    let groups = &texts.iter().find(|(n, _)| n == "groups.csv").unwrap().1;
    assert!(simulated_column(groups).iter().all(|c| c == "false"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `simulated` column of a flat per-group CSV, row by row (the file parsing as CSV).
fn simulated_column(groups_csv: &str) -> Vec<String> {
    let mut csv = csv::Reader::from_reader(groups_csv.as_bytes());
    let col = (csv.headers().unwrap().iter())
        .position(|h| h == "simulated")
        .unwrap();
    csv.records().map(|r| r.unwrap()[col].to_string()).collect()
}

#[test]
fn the_k_range_of_tables_is_capped_and_configurable() {
    // Two tasks × 40 trials: without the cap the tables would carry 40 Pass^k columns.
    let recs: Vec<SimulationRecord> = (0..40)
        .flat_map(|t| {
            [
                rec("baseline", "a", Slice::Mut, t, t % 2 == 0),
                rec("baseline", "b", Slice::Pv, t, true),
            ]
        })
        .collect();
    let capped = report(&recs, &ReportOptions::default());
    assert_eq!(capped.groups[0].overall.pass_k.max_k(), 16);
    // The cap hides trials: the report and the Pass^k table say so.
    assert_eq!(capped.warnings.len(), 1, "{:?}", capped.warnings);
    assert!(
        capped.warnings[0].contains("k ≤ 16 only (--max-k 16)")
            && capped.warnings[0].contains("at least 40"),
        "{:?}",
        capped.warnings
    );
    let pass_k = tauguard_metrics::pass_k_table(&capped);
    assert!(
        pass_k
            .notes
            .iter()
            .any(|n| n.contains("k ≤ 16 only") && n.contains("up to 40")),
        "{:?}",
        pass_k.notes
    );
    let wide = report(
        &recs,
        &ReportOptions {
            max_k: 40,
            ..ReportOptions::default()
        },
    );
    assert!(wide.warnings.is_empty(), "{:?}", wide.warnings);
    let pk = &wide.groups[0].overall.pass_k;
    assert_eq!(pk.max_k(), 40);
    // Task b always passes; task a passes 20 of 40: pass^k(a) = C(20,k)/C(40,k).
    assert_eq!(pk.get(40), Some(0.5));
    assert_eq!(pk.get(1), capped.groups[0].overall.pass_k.get(1));
}

#[test]
fn a_k_range_shrunk_by_infrastructure_errors_says_so() {
    let mut recs: Vec<SimulationRecord> = (0..4)
        .flat_map(|t| {
            [
                rec("baseline", "a", Slice::Mut, t, true),
                rec("baseline", "b", Slice::Pv, t, true),
            ]
        })
        .collect();
    // Task b's last trial never got scored.
    let last = recs.iter_mut().rev().find(|r| r.task_id == "b").unwrap();
    last.termination_reason = tauguard_core::termination::Termination::InfrastructureError;
    last.reward = None;
    let r = report(&recs, &ReportOptions::default());
    assert_eq!(r.groups[0].overall.pass_k.max_k(), 3);
    assert!(
        r.warnings.iter().any(|w| w.contains("k ≤ 3")
            && w.contains("1 infrastructure-error simulation not scored")
            && w.contains("--resume")),
        "{:?}",
        r.warnings
    );
}
