//! A run exported as an upstream `results.json` reports the same Pass^k as its own records:
//! the export is faithful and the metrics importer reads it as upstream's would.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
