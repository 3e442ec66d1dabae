//! A run exported as an upstream `results.json` reports the same Pass^k as its own records:
//! the export is faithful and the metrics importer reads it as upstream's would.

use crate::support::{
    assert_contains_all, records, report_json as report_of, s, tauguard_ok as tauguard,
    tauguard_status,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use tauguard_testkit::SimConfig;

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

#[test]
fn exported_results_report_the_same_pass_k() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = tauguard_testkit::fixtures_dir();
    let cfg = SimConfig::new("x", "airline", &fixtures)
        .trials(3)
        .faults("corrupt_argument = 0.4\ncomply_forbidden = 0.4")
        .write(&tmp.path().join("c.toml"));
    let run = tmp.path().join("run");
    tauguard(&["run", s(&cfg), "--out", s(&run)]);
    let results = tmp.path().join("results.json");
    tauguard(&[
        "export-tau2",
        s(&run),
        "--out",
        s(&results),
        "--data-dir",
        s(&fixtures),
    ]);
    let ours = report_of(&run, &[]);
    let theirs = report_of(&results, &[]);
    let (a, b) = (&ours[0], &theirs[0]);
    assert_eq!(a["n_simulations"], 15);
    assert_eq!(a["n_simulations"], b["n_simulations"]);
    assert_eq!(
        a["pass_k"], b["pass_k"],
        "pass^k differs between records and their export"
    );
    assert_eq!(a["pv"]["pass_k"], b["pv"]["pass_k"]);
    assert_eq!(a["mut"]["pass_k"], b["mut"]["pass_k"]);
    let p1 = a["pass_k"]["1"].as_f64().unwrap();
    assert!(
        p1 > 0.0 && p1 < 1.0,
        "faults should give a mixed outcome, got {p1}"
    );
}

/// The τ²-bench data directory when present (required under CI), else the fixtures.
fn data_dir() -> (PathBuf, bool) {
    match tauguard_testkit::tau2_dir() {
        Some(dir) => (dir, true),
        None => (tauguard_testkit::fixtures_dir(), false),
    }
}

/// A config of `domain` from `data` whose agent skips confirmations and complies with
/// forbidden requests now and then, so outcomes are mixed.
fn faulty(name: &str, domain: &str, data: &Path) -> SimConfig {
    SimConfig::new(name, domain, data).faults("skip_confirmation = 0.2\ncomply_forbidden = 0.3")
}

/// Writes `cfg` to `dir/<stem>.toml`, runs it into `dir/<stem>` and returns that directory.
fn run_as(dir: &Path, stem: &str, cfg: &SimConfig) -> String {
    let file = cfg.write(&dir.join(format!("{stem}.toml")));
    let out = dir.join(stem);
    tauguard(&["run", s(&file), "--out", s(&out)]);
    s(&out).to_string()
}

#[test]
fn compare_selects_sides_pairs_fully_and_refuses_mismatches() {
    let (data, tau2) = data_dir();
    let tmp = tempfile::tempdir().unwrap();
    let guards = ["baseline", "toolguard", "pg-raw", "pg-checklist", "hybrid"];
    let grid = run_as(
        tmp.path(),
        "grid",
        &faulty("grid", "airline", &data).trials(4).guards(&guards),
    );
    let out = tauguard(&[
        "compare",
        &grid,
        "--a",
        "guard=baseline",
        "--b",
        "guard=pg-checklist",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let expected = if tau2 { 200 } else { 20 };
    assert_eq!(v["n_pairs"], expected, "{v}");
    assert_eq!(
        (v["unpaired_a"].as_u64(), v["unpaired_b"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["label_a"], "guard=baseline");
    // The whole grid against one of its own cells would pair arbitrarily: refused.
    let one = run_as(
        tmp.path(),
        "one",
        &faulty("one", "airline", &data).trials(4),
    );
    let (code, _, err) = tauguard_status(&["compare", &grid, &one]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("5 configurations"), "{err}");
    // A typo in a selector key is bad input, not an empty comparison.
    let (code, _, err) = tauguard_status(&[
        "compare",
        &grid,
        "--a",
        "gaurd=baseline",
        "--b",
        "guard=hybrid",
    ]);
    assert_eq!(code, 2, "{err}");
    if tau2 {
        let retail_cfg = faulty("retail", "retail", &data).run_line("num_tasks = 5");
        let retail = run_as(tmp.path(), "retail", &retail_cfg);
        let (code, _, err) = tauguard_status(&["compare", &one, &retail]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("share no domain"), "{err}");
    }
}

#[test]
fn one_run_name_under_two_configurations_needs_pool() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let tmp = tempfile::tempdir().unwrap();
    let a = run_as(
        tmp.path(),
        "a",
        &faulty("same", "airline", &fixtures).seed(300),
    );
    let b = run_as(
        tmp.path(),
        "b",
        &faulty("same", "airline", &fixtures).seed(301),
    );
    let (code, _, err) = tauguard_status(&["report", &a, &b]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["two configurations", "--pool"]);
    let groups = report_json(&[&a, &b]);
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 2, "pooled inputs stay separate cells");
    assert!(
        groups.iter().all(|g| g["cell"].get("seed").is_some()),
        "{groups:?}"
    );
}

/// Runs `tauguard` in `cwd` with extra environment; returns (exit code, stdout, stderr).
fn tauguard_in(cwd: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(cwd)
        .env_remove("TAUGUARD_HOME")
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// Under `export_report/` so Cargo does not build it as a test target of its own.
mod tau2_schema;

fn report_json(inputs: &[&str]) -> serde_json::Value {
    let mut args = vec!["report"];
    args.extend(inputs);
    args.extend(["--format", "json", "--pool"]);
    serde_json::from_str(&tauguard(&args)).unwrap()
}

fn evaluate_json(input: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let mut args = vec!["evaluate", input, "--format", "json"];
    args.extend(extra);
    let (code, out, err) = tauguard_status(&args);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, v, err)
}

#[test]
fn guarded_export_round_trips_schema_guards_and_rewards() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let tmp = tempfile::tempdir().unwrap();
    let guards = ["baseline", "toolguard", "pg-checklist"];
    let grid = run_as(
        tmp.path(),
        "grid",
        &faulty("grid", "airline", &fixtures)
            .trials(3)
            .guards(&guards),
    );
    let data = ["--data-dir", s(&fixtures)];
    let mut files = Vec::new();
    for g in guards {
        let file = s(&tmp.path().join(format!("results_{g}.json"))).to_string();
        tauguard(&[
            "export-tau2",
            &grid,
            "--guard",
            g,
            "--out",
            &file,
            data[0],
            data[1],
        ]);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let bad = tau2_schema::violations(&doc);
        assert!(bad.is_empty(), "{g}: {bad:#?}");
        assert_eq!(doc["info"]["tauguard"]["guard"], g);
        // Upstream re-evaluates the export to the recorded rewards; so does `evaluate`.
        let (code, v, err) = evaluate_json(&file, &data);
        assert_eq!(code, 0, "{g}: {v} {err}");
        assert_eq!(
            (v["disagree"].as_u64(), v["skipped"].as_u64()),
            (Some(0), Some(0)),
            "{g}: {v}"
        );
        assert_eq!(v["evaluated"], 15, "{g}: {v}");
        files.push(file);
    }
    // The checker is not vacuous: what the export wrote before (null settings, Unix times).
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    old["info"]["git_commit"] = serde_json::Value::Null;
    old["simulations"][0]["end_time"] = "1767225600".into();
    let bad = tau2_schema::violations(&old);
    assert!(
        bad.iter().any(|v| v.starts_with("$.info.git_commit:"))
            && bad
                .iter()
                .any(|v| v.starts_with("$.simulations[0].end_time:")),
        "{bad:#?}"
    );
    // Blocked calls leave upstream's trajectory for tauguard's provenance.
    let guarded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[2]).unwrap()).unwrap();
    let blocked = guarded["simulations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["info"]["tauguard"]["blocked_calls"].as_array())
        .count();
    assert!(
        blocked > 0,
        "the faults should make pg-checklist block a call"
    );

    // Re-imported, each file reports under its guard with the records' Pass^k.
    let ours = report_json(&[&grid]);
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let theirs = report_json(&files);
    for g in guards {
        let pick = |v: &serde_json::Value| {
            v.as_array()
                .unwrap()
                .iter()
                .find(|x| x["guard"] == g)
                .cloned()
                .unwrap_or_else(|| panic!("{g} missing in {v}"))
        };
        let (a, b) = (pick(&ours), pick(&theirs));
        assert_eq!(a["pass_k"], b["pass_k"], "{g}");
        assert_eq!(a["pv"]["pass_k"], b["pv"]["pass_k"], "{g}");
        assert_eq!(a["cell_hash"], b["cell_hash"], "{g}");
    }
    // The records themselves evaluate to full agreement.
    let (code, v, err) = evaluate_json(&grid, &data);
    assert_eq!(code, 0, "{v} {err}");
    assert_eq!(
        (v["evaluated"].as_u64(), v["disagree"].as_u64()),
        (Some(45), Some(0)),
        "{v}"
    );
}

#[test]
fn evaluate_reports_a_tampered_reward_with_its_breakdown() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_as(
        tmp.path(),
        "run",
        &faulty("c", "airline", &fixtures).trials(2),
    );
    let data = ["--data-dir", s(&fixtures)];
    let file = tmp.path().join("run/records.jsonl");
    let mut lines = records(&tmp.path().join("run"));
    let stored = lines[3]["reward"]["reward"].as_f64().unwrap();
    lines[3]["reward"]["reward"] = (1.0 - stored).into();
    let (task, trial) = (lines[3]["task_id"].clone(), lines[3]["trial"].clone());
    let out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&file, out.join("\n") + "\n").unwrap();
    let (code, v, err) = evaluate_json(&run, &data);
    assert_eq!(code, 1, "{v} {err}");
    assert!(err.contains("1 of 10"), "{err}");
    assert_eq!(
        (v["agree"].as_u64(), v["disagree"].as_u64()),
        (Some(9), Some(1)),
        "{v}"
    );
    let d = &v["disagreements"][0];
    assert_eq!((&d["task_id"], &d["trial"]), (&task, &trial));
    assert_eq!(d["stored"].as_f64(), Some(1.0 - stored));
    assert_eq!(d["recomputed"].as_f64(), Some(stored));
    assert!(
        d["breakdown"]["recomputed"].is_object() && d["breakdown"]["stored"].is_object(),
        "{d}"
    );
    // --skip-nl skips nothing here (airline rewards never depend on NL assertions) but is accepted.
    let (_, v, _) = evaluate_json(&run, &["--skip-nl", data[0], data[1]]);
    assert_eq!(v["skipped"], 0, "{v}");
}

fn upstream_fixture() -> PathBuf {
    root().join("crates/metrics/tests/fixtures/tau2_results_small.json")
}

#[test]
fn evaluate_reads_upstream_results_and_counts_what_it_skips() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let (_, v, err) = evaluate_json(s(&upstream_fixture()), &["--data-dir", s(&fixtures)]);
    assert_eq!(v["n_simulations"], 24, "{v} {err}");
    // One infrastructure error and one null reward_info have no stored reward.
    assert_eq!(v["skipped_by"]["no_stored_reward"], 2, "{v}");
    assert_eq!(v["evaluated"], 22, "{v}");
    assert_eq!(
        v["agree"].as_u64().unwrap() + v["disagree"].as_u64().unwrap(),
        22,
        "{v}"
    );
}

#[test]
fn unknown_domains_report_without_slices_and_evaluate_as_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(upstream_fixture()).unwrap();
    for domain in ["airline_relaxed", "telecom-workflow"] {
        let file = tmp.path().join(format!("{domain}.json"));
        std::fs::write(
            &file,
            text.replace(
                "\"domain_name\": \"airline\"",
                &format!("\"domain_name\": \"{domain}\""),
            ),
        )
        .unwrap();
        let known = report_json(&[s(&upstream_fixture())]);
        let custom = report_json(&[s(&file)]);
        assert_eq!(custom[0]["domain"], domain);
        assert_eq!(custom[0]["pass_k"], known[0]["pass_k"]);
        assert_eq!(custom[0]["pv"]["n_tasks"], 0, "{custom}");
        assert_eq!(custom[0]["mut"]["n_tasks"], 0, "{custom}");
        let (code, v, err) = evaluate_json(s(&file), &[]);
        assert_eq!(code, 0, "{v} {err}");
        assert_eq!(v["skipped_by"]["unknown_domain"], 24, "{v}");
        assert_eq!(v["unknown_domains"][0], domain, "{v}");
        assert_eq!(v["evaluated"], 0);
    }
}

#[test]
fn run_finds_the_project_from_any_working_directory() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = faulty("elsewhere", "airline", &fixtures)
        .guards(&["pg-checklist"])
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("out");
    let args = ["run", s(&cfg), "--out", s(&out)];
    // From a directory holding no project: found through the executable's location.
    let (code, stdout, err) = tauguard_in(tmp.path(), &[], &args);
    assert_eq!(code, 0, "{stdout} {err}");
    assert!(out.join("records.jsonl").is_file());
    // An explicit project that is not one is named, whatever the working directory.
    let (code, _, err) = tauguard_in(
        tmp.path(),
        &[("TAUGUARD_HOME", s(tmp.path()))],
        &["run", s(&cfg), "--out", s(&tmp.path().join("o2"))],
    );
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["TAUGUARD_HOME", "lacks configs/prompts and tasks"]);
    // --project-dir wins over TAUGUARD_HOME.
    let (code, _, err) = tauguard_in(
        tmp.path(),
        &[("TAUGUARD_HOME", s(tmp.path()))],
        &[
            "run",
            s(&cfg),
            "--out",
            s(&tmp.path().join("o3")),
            "--project-dir",
            s(&root()),
        ],
    );
    assert_eq!(code, 0, "{err}");
}
