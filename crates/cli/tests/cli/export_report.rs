//! A run exported as an upstream `results.json` reports the same Pass^k as its own records:
//! the export is faithful and the metrics importer reads it as upstream's would.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn tauguard(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tauguard {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn exported_results_report_the_same_pass_k() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[run]\nname = \"x\"\ndomain = \"airline\"\ntrials = 3\ndata_dir = \"{}\"\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.agent.faults]\ncorrupt_argument = 0.4\ncomply_forbidden = 0.4\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n",
            root().join("tasks/fixtures").display()
        ),
    )
    .unwrap();
    let run = tmp.path().join("run");
    let fixtures = root().join("tasks/fixtures");
    tauguard(&["run", cfg.to_str().unwrap(), "--out", run.to_str().unwrap()]);
    let results = tmp.path().join("results.json");
    tauguard(&[
        "export-tau2",
        run.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--data-dir",
        fixtures.to_str().unwrap(),
    ]);
    let ours: serde_json::Value = serde_json::from_str(&tauguard(&[
        "report",
        run.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    let theirs: serde_json::Value = serde_json::from_str(&tauguard(&[
        "report",
        results.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
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

/// Runs `tauguard` and returns (exit code, stdout, stderr).
fn tauguard_status(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The τ²-bench data directory when present (required under CI), else the fixtures.
fn data_dir() -> (PathBuf, bool) {
    match tauguard_testkit::tau2_dir() {
        Some(dir) => (dir, true),
        None => (tauguard_testkit::fixtures_dir(), false),
    }
}

fn write_config(path: &Path, name: &str, domain: &str, extra: &str, data: &Path) {
    std::fs::write(
        path,
        format!(
            "[run]\nname = \"{name}\"\ndomain = \"{domain}\"\ndata_dir = \"{}\"\n{extra}\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.agent.faults]\nskip_confirmation = 0.2\ncomply_forbidden = 0.3\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n",
            data.display()
        ),
    )
    .unwrap();
}

#[test]
fn compare_selects_sides_pairs_fully_and_refuses_mismatches() {
    let (data, tau2) = data_dir();
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_str().unwrap().to_string();
    write_config(
        &tmp.path().join("grid.toml"),
        "grid",
        "airline",
        "trials = 4\n[grid]\nguards = [\"baseline\", \"toolguard\", \"pg-raw\", \"pg-checklist\", \"hybrid\"]",
        &data,
    );
    tauguard(&["run", &t("grid.toml"), "--out", &t("grid")]);
    let out = tauguard(&[
        "compare",
        &t("grid"),
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
    write_config(
        &tmp.path().join("one.toml"),
        "one",
        "airline",
        "trials = 4",
        &data,
    );
    tauguard(&["run", &t("one.toml"), "--out", &t("one")]);
    let (code, _, err) = tauguard_status(&["compare", &t("grid"), &t("one")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("5 configurations"), "{err}");
    // A typo in a selector key is bad input, not an empty comparison.
    let (code, _, err) = tauguard_status(&[
        "compare",
        &t("grid"),
        "--a",
        "gaurd=baseline",
        "--b",
        "guard=hybrid",
    ]);
    assert_eq!(code, 2, "{err}");
    if tau2 {
        write_config(
            &tmp.path().join("retail.toml"),
            "retail",
            "retail",
            "num_tasks = 5",
            &data,
        );
        tauguard(&["run", &t("retail.toml"), "--out", &t("retail")]);
        let (code, _, err) = tauguard_status(&["compare", &t("one"), &t("retail")]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("share no domain"), "{err}");
    }
}

#[test]
fn one_run_name_under_two_configurations_needs_pool() {
    let fixtures = root().join("tasks/fixtures");
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_str().unwrap().to_string();
    write_config(
        &tmp.path().join("a.toml"),
        "same",
        "airline",
        "seed = 300",
        &fixtures,
    );
    write_config(
        &tmp.path().join("b.toml"),
        "same",
        "airline",
        "seed = 301",
        &fixtures,
    );
    tauguard(&["run", &t("a.toml"), "--out", &t("a")]);
    tauguard(&["run", &t("b.toml"), "--out", &t("b")]);
    let (code, _, err) = tauguard_status(&["report", &t("a"), &t("b")]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("two configurations") && err.contains("--pool"),
        "{err}"
    );
    let groups: serde_json::Value = serde_json::from_str(&tauguard(&[
        "report",
        &t("a"),
        &t("b"),
        "--pool",
        "--format",
        "json",
    ]))
    .unwrap();
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 2, "pooled inputs stay separate cells");
    assert!(
        groups.iter().all(|g| g["cell"].get("seed").is_some()),
        "{groups:?}"
    );
}
