//! Floors beside every Pass^k table, through the binary on the real data: the refuse-all
//! agent's airline numbers are pinned, `block-all` gets PV for free and nothing on Mut, a
//! configuration below the PV floor is named, `--no-floors` hides them, and a run of the
//! floor agent itself reproduces the floor.

use crate::support::{
    assert_contains_all, guard_group, report_json, s, tauguard_ok, tauguard_status as tauguard,
};
use tauguard_testkit::{SimConfig, tau2_dir};

/// The `[models.agent]` lines of the refuse-all floor agent.
const REFUSE_ALL: &str = "provider = \"sim\"\nmodel = \"refuse-all\"";

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
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    let data_arg = s(&data);
    let groups = report_json(&out, &["--data-dir", data_arg]);
    for g in groups.as_array().unwrap() {
        let refuse = &g["floors"]["refuse-all"];
        // τ²-bench scoring: the PV tasks pass by inaction (23 of 24), no Mut task does.
        assert!(close(&refuse["overall"], 0.46), "{refuse}");
        assert!(close(&refuse["pv"], 23.0 / 24.0), "{refuse}");
        assert!(close(&refuse["mut"], 0.0), "{refuse}");
        assert_eq!(refuse["n_tasks"], 50);
        assert!(g["floors"]["gold-no-procedure"]["overall"].is_number());
    }
    let block_all = guard_group(&groups, "block-all");
    // Blocking every call gets PV for free (the sim agent still does the reads and tells the
    // user what it found) and nothing on Mut.
    assert!(close(&block_all["pv"]["pass_k"]["1"], 1.0), "{block_all}");
    assert!(close(&block_all["mut"]["pass_k"]["1"], 0.0), "{block_all}");
    let baseline = guard_group(&groups, "baseline");
    // The faulty baseline complies with forbidden requests: its PV is below the floor.
    assert_eq!(baseline["pv_above_refuse_all"], false, "{baseline}");
    let (_, md, _) = tauguard(&["report", s(&out), "--data-dir", data_arg]);
    assert_contains_all(
        &md,
        &[
            "| airline | refuse-all | 50 | 0.460 | 0.958 | 0.000 |",
            "airline / sim-agent / baseline: PV Pass^1",
            "does not exceed the refuse-all floor (0.958)",
        ],
    );
    let (_, md, _) = tauguard(&["report", s(&out), "--no-floors"]);
    assert!(!md.contains("refuse-all") && !md.contains("Floors"), "{md}");
    // The floor agent run as an agent reproduces its own floor.
    let cfg = SimConfig::new("refuse", "airline", &data)
        .agent(REFUSE_ALL)
        .write(&tmp.path().join("refuse.toml"));
    let out2 = tmp.path().join("refuse");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out2)]);
    let g = report_json(&out2, &["--no-floors"]);
    assert!(close(&g[0]["pass_k"]["1"], 0.46), "{g}");
}

#[test]
fn floors_without_data_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("f", "airline", &tauguard_testkit::fixtures_dir())
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    let missing = tmp.path().join("no-data");
    let (code, md, err) = tauguard(&["report", s(&out), "--data-dir", s(&missing)]);
    assert_eq!(code, 0, "{err}");
    assert_contains_all(&err, &["floors skipped", "no-data"]);
    assert!(md.contains("Table 2") && !md.contains("Floors"), "{md}");
}

#[test]
fn faults_on_a_floor_agent_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("f", "airline", &tauguard_testkit::fixtures_dir())
        .agent(REFUSE_ALL)
        .faults("skip_identity = 0.5")
        .write(&tmp.path().join("c.toml"));
    let (code, _, err) = tauguard(&["run", s(&cfg), "--out", s(&tmp.path().join("o"))]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["models.agent.faults", "sim-agent"]);
}
