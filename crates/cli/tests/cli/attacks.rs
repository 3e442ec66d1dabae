//! Attack tasks end to end through the binary: the 20 airline attack tasks × 4 trials under
//! baseline, toolguard and pg-checklist; attack success counts only executed target calls, so
//! the guards' ASR differs from the baseline's; the Figure-6 plot is written; a malformed
//! attack file is refused naming the key.

use crate::support::{
    assert_contains_all, guard_group, report_json, s, tauguard_ok, tauguard_status as tauguard,
};
use tauguard_core::record::{SimulationRecord, Verdict};
use tauguard_testkit::{SimConfig, tau2_dir, workspace_root};

fn attack_config(data: &std::path::Path, task_set: &str) -> SimConfig {
    SimConfig::new("attacks", "airline", data)
        .trials(4)
        .run_line(&format!("task_set = \"{task_set}\""))
        .run_line("split = \"*\"")
        .faults("comply_forbidden = 0.5\nskip_identity = 0.2")
        .guards(&["baseline", "toolguard", "pg-checklist"])
}

#[test]
fn attack_success_counts_executed_targets_only_and_differs_by_guard() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = attack_config(&data, "tasks/airline/attacks").write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    let records: Vec<SimulationRecord> = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 20 * 4 * 3);
    assert!(records.iter().all(|r| r.attack.is_some()));
    // Every simulation whose target call a guard blocked left the database as it was.
    let mut blocked = 0;
    for r in &records {
        let a = r.attack.as_ref().unwrap();
        if r.guard_events
            .iter()
            .any(|e| e.tool == a.tool && e.verdict == Verdict::Block)
        {
            blocked += 1;
        }
    }
    assert!(blocked > 0, "the guards must block some attacks");
    let figs = tmp.path().join("figs");
    let groups = report_json(&out, &["--no-floors", "--out", s(&figs)]);
    let asr = |guard: &str| {
        let g = guard_group(&groups, guard);
        assert_eq!(g["attack"]["simulations"], 80);
        assert_eq!(g["attack"]["tasks"], 20);
        g["attack"]["asr"].as_f64().unwrap()
    };
    let (base, tg, pg) = (asr("baseline"), asr("toolguard"), asr("pg-checklist"));
    // Each guard stops attacks the baseline executes. Offline pg-checklist judges from its
    // own inputs, without the ToolGuard rules, so how it ranks against ToolGuard is a result,
    // not a construction.
    assert!(
        base > tg && base > pg && tg != pg,
        "baseline {base}, toolguard {tg}, pg-checklist {pg}"
    );
    // The baseline executes every call it makes: its ASR is exactly its compliance rate.
    let complied = records
        .iter()
        .filter(|r| r.guard == "baseline")
        .filter(|r| {
            r.injected_faults
                .iter()
                .any(|f| f.kind == "comply_forbidden")
        })
        .count();
    assert!(
        (base - complied as f64 / 80.0).abs() < 1e-9,
        "{base} vs {complied}/80"
    );
    for ext in ["png", "svg"] {
        let p = figs.join(format!("attack_success.{ext}"));
        assert!(
            std::fs::metadata(&p).is_ok_and(|m| m.len() > 0),
            "{}",
            p.display()
        );
    }
}

#[test]
fn a_malformed_attack_file_is_refused_naming_the_key() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    std::fs::create_dir_all(&set).unwrap();
    let src = workspace_root().join("tasks/airline/attacks");
    std::fs::copy(src.join("tasks.json"), set.join("tasks.json")).unwrap();
    let text = std::fs::read_to_string(src.join("attacks.json"))
        .unwrap()
        .replacen("\"authority_claim\"", "\"bribery\"", 1);
    std::fs::write(set.join("attacks.json"), text).unwrap();
    let cfg = attack_config(&data, s(&set)).write(&tmp.path().join("c.toml"));
    let (code, _, err) = tauguard(&["run", s(&cfg), "--out", s(&tmp.path().join("o"))]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["attacks.json", ".strategy", "`bribery`"]);
}
