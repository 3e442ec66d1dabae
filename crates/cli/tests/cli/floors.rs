//! Floors beside every Pass^k table, through the binary on the real data: the refuse-all
//! agent's airline numbers are pinned, `block-all` gets PV for free and nothing on Mut, a
//! configuration below the PV floor is named, `--no-floors` hides them, and a run of the
//! floor agent itself reproduces the floor.

use crate::support::tauguard_status as tauguard;
use tauguard_testkit::{SimConfig, tau2_dir};

fn close(v: &serde_json::Value, x: f64) -> bool {
    v.as_f64().is_some_and(|y| (y - x).abs() < 1e-3)
}

#[test]
fn airline_floors_are_pinned_and_block_all_sits_at_the_pv_floor() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("floors", "airline", &data)
        .faults("skip_confirmation = 0.3\ncomply_forbidden = 0.5")
        .guards(&["baseline", "block-all"])
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    let (code, _, err) = tauguard(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let data_arg = data.to_str().unwrap();
    let (code, json, err) = tauguard(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "json",
        "--data-dir",
        data_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    let groups: serde_json::Value = serde_json::from_str(&json).unwrap();
    for g in groups.as_array().unwrap() {
        let refuse = &g["floors"]["refuse-all"];
        // τ²-bench scoring: the PV tasks pass by inaction (23 of 24), no Mut task does.
        assert!(close(&refuse["overall"], 0.46), "{refuse}");
        assert!(close(&refuse["pv"], 23.0 / 24.0), "{refuse}");
        assert!(close(&refuse["mut"], 0.0), "{refuse}");
        assert_eq!(refuse["n_tasks"], 50);
        assert!(g["floors"]["gold-no-procedure"]["overall"].is_number());
    }
    let block_all = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["guard"] == "block-all")
        .unwrap();
    // Blocking every call gets PV for free (the sim agent still does the reads and tells the
    // user what it found) and nothing on Mut.
    assert!(close(&block_all["pv"]["pass_k"]["1"], 1.0), "{block_all}");
    assert!(close(&block_all["mut"]["pass_k"]["1"], 0.0), "{block_all}");
    let baseline = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["guard"] == "baseline")
        .unwrap();
    // The faulty baseline complies with forbidden requests: its PV is below the floor.
    assert_eq!(baseline["pv_above_refuse_all"], false, "{baseline}");
    let (_, md, _) = tauguard(&["report", out.to_str().unwrap(), "--data-dir", data_arg]);
    assert!(
        md.contains("| airline | refuse-all | 50 | 0.460 | 0.958 | 0.000 |"),
        "{md}"
    );
    assert!(
        md.contains("airline / sim-agent / baseline: PV Pass^1")
            && md.contains("does not exceed the refuse-all floor (0.958)"),
        "{md}"
    );
    let (_, md, _) = tauguard(&["report", out.to_str().unwrap(), "--no-floors"]);
    assert!(!md.contains("refuse-all") && !md.contains("Floors"), "{md}");
    // The floor agent run as an agent reproduces its own floor.
    let cfg = tmp.path().join("refuse.toml");
    let text = SimConfig::new("refuse", "airline", &data)
        .toml()
        .replace("model = \"sim-agent\"", "model = \"refuse-all\"");
    std::fs::write(&cfg, text).unwrap();
    let out2 = tmp.path().join("refuse");
    let (code, _, err) = tauguard(&[
        "run",
        cfg.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, json, _) = tauguard(&[
        "report",
        out2.to_str().unwrap(),
        "--format",
        "json",
        "--no-floors",
    ]);
    let g: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(close(&g[0]["pass_k"]["1"], 0.46), "{g}");
}

#[test]
fn floors_without_data_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("f", "airline", &tauguard_testkit::fixtures_dir())
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    let (code, _, err) = tauguard(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let missing = tmp.path().join("no-data");
    let (code, md, err) = tauguard(&[
        "report",
        out.to_str().unwrap(),
        "--data-dir",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("floors skipped") && err.contains("no-data"),
        "{err}"
    );
    assert!(md.contains("Table 2") && !md.contains("Floors"), "{md}");
}

#[test]
fn faults_on_a_floor_agent_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let text = SimConfig::new("f", "airline", &tauguard_testkit::fixtures_dir())
        .faults("skip_identity = 0.5")
        .toml()
        .replace("model = \"sim-agent\"", "model = \"refuse-all\"");
    let cfg = tmp.path().join("c.toml");
    std::fs::write(&cfg, text).unwrap();
    let (code, _, err) = tauguard(&[
        "run",
        cfg.to_str().unwrap(),
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("models.agent.faults") && err.contains("sim-agent"),
        "{err}"
    );
}
