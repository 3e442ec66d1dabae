//! The offline PolicyGuard variants differ where their inputs differ, and the report says why:
//! on the airline base split with faults on, each variant's decisions report the inputs it was
//! given, how many requirements they state and how many of those its inputs cannot show; and
//! where each cell's guard artifacts came from.

use crate::support::{
    assert_contains_all, guard_group, report_json, s, tauguard_ok, tauguard_status as tauguard,
};
use tauguard_testkit::{SimConfig, tau2_dir};

#[test]
fn offline_variants_report_the_requirements_their_inputs_let_them_check() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("variants", "airline", &data)
        .trials(2)
        .faults("skip_identity = 0.2\nskip_prerequisite = 0.2\nskip_confirmation = 0.3\ncomply_forbidden = 0.3")
        .guards(&["pg-raw", "pg-raw-traj", "pg-checklist", "pg-checklist-only"])
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    let groups = report_json(&out, &["--no-floors"]);
    let inputs = |guard: &str| {
        let g = guard_group(&groups, guard);
        let v = &g["verifier_inputs"];
        let names: Vec<String> = v["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_string())
            .collect();
        let per = |key: &str| v[key].as_f64().unwrap() / v["decisions"].as_f64().unwrap();
        (names, per("checked"), per("unseen"))
    };
    let (raw, raw_mean, raw_unseen) = inputs("pg-raw");
    let (traj, _, traj_unseen) = inputs("pg-raw-traj");
    let (cl, cl_mean, _) = inputs("pg-checklist");
    let (only, _, _) = inputs("pg-checklist-only");
    assert!(raw.contains(&"policy".to_string()) && raw.contains(&"dialogue".to_string()));
    assert!(!traj.contains(&"dialogue".to_string()), "{traj:?}");
    assert!(!only.contains(&"policy".to_string()), "{only:?}");
    assert!(cl.contains(&"checklist".to_string()) && cl.contains(&"policy".to_string()));
    // Without the dialogue the confirmations the policy asks for are unseen — NOT MET —
    // where pg-raw sees them; more input states more requirements.
    assert_eq!(raw_unseen, 0.0);
    assert!(traj_unseen > 0.0, "{traj_unseen}");
    assert!(cl_mean > raw_mean, "{cl_mean} vs {raw_mean}");
    let (_, md, _) = tauguard(&["report", s(&out), "--no-floors"]);
    assert!(md.contains("Requirements each variant could check"), "{md}");
    // And where each cell's artifacts came from.
    assert_contains_all(
        &md,
        &[
            "Guard artifacts: where each cell's came from",
            "| airline | sim-agent | pg-raw | checklists=hand-written,",
        ],
    );
}
