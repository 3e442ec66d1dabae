//! The guard seam end to end through the `tauguard` binary, on the project's fixture domain:
//! for each guard configuration, a blocked call never executes, never reaches evaluation and
//! is not in the trajectory — it lives in the guard events, with its arguments and the
//! remediation the agent read (that the agent's next request carries the remediation is
//! tested on the loop itself, in `crates/orchestrator/src/simulation.rs`); a passed call
//! executes exactly once; a blocked attack is no attack success.

use crate::support::s;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tauguard_core::Message;
use tauguard_core::record::{SimulationRecord, Verdict};
use tauguard_env::replay_tool_calls;
use tauguard_env::{DataDir, DomainData};
use tauguard_metrics::attack_succeeded;

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn fixture() -> DomainData {
    DomainData::load(
        &DataDir::resolve(Some(&root().join("tasks/fixtures"))).unwrap(),
        "airline",
    )
    .unwrap()
}

fn run_grid(guards: &[&str], faults: &str, out: &Path) -> Vec<SimulationRecord> {
    let cfg = tauguard_testkit::SimConfig::new("seam", "airline", &root().join("tasks/fixtures"))
        .trials(2)
        .seed(7)
        .faults(faults)
        .guards(guards)
        .write(&out.join("config.toml"));
    let status = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .args(["run", s(&cfg), "--out", s(&out.join("run"))])
        .status()
        .unwrap();
    assert!(status.success(), "tauguard run failed");
    let text = std::fs::read_to_string(out.join("run/records.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Tool messages answering `call_id`.
fn answers<'a>(
    r: &'a SimulationRecord,
    call_id: &str,
) -> Vec<&'a tauguard_core::message::ToolMessage> {
    r.messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) if t.id == call_id => Some(t),
            _ => None,
        })
        .collect()
}

fn check_seam(records: &[SimulationRecord], guard: &str) {
    let mine: Vec<&SimulationRecord> = records.iter().filter(|r| r.guard == guard).collect();
    assert!(!mine.is_empty(), "{guard}: no records");
    let (mut blocks, mut passes) = (0, 0);
    let data = fixture();
    for r in &mine {
        assert_ne!(
            r.termination_reason.as_str(),
            "infrastructure_error",
            "{guard}: {:?}",
            r.error
        );
        assert!(
            !r.messages
                .iter()
                .any(|m| matches!(m, Message::Tool(t) if t.guard_blocked)),
            "{guard}: a remediation is in the trajectory"
        );
        // Never replayed: the mutating calls of the trajectory, which replay re-executes,
        // are exactly the attempts that executed; and the cut trajectory replays to the
        // results it recorded.
        let attempted: HashSet<&str> = r.call_attempts.iter().map(|a| a.call_id.as_str()).collect();
        let replayed: Vec<&str> = r
            .messages
            .iter()
            .flat_map(|m| m.tool_calls())
            .map(|c| c.id.as_str())
            .filter(|id| attempted.contains(id))
            .collect();
        let executed: Vec<&str> = r
            .call_attempts
            .iter()
            .filter(|a| a.executed)
            .map(|a| a.call_id.as_str())
            .collect();
        assert_eq!(replayed, executed, "{guard}: replay differs from execution");
        let mut env = data.fresh_env();
        replay_tool_calls(env.as_mut(), &r.messages, true).unwrap();
        for e in &r.guard_events {
            let tool_msgs = answers(r, &e.call_id);
            let in_trajectory = r
                .messages
                .iter()
                .any(|m| m.tool_calls().iter().any(|c| c.id == e.call_id));
            let attempt = r
                .call_attempts
                .iter()
                .find(|a| a.call_id == e.call_id)
                .expect("attempt recorded");
            assert_eq!(attempt.verdict, Some(e.verdict));
            assert_eq!(attempt.tool, e.tool);
            match e.verdict {
                Verdict::Block => {
                    blocks += 1;
                    assert!(
                        !e.executed && !attempt.executed,
                        "{guard}: blocked call marked executed"
                    );
                    // Never happened in the trajectory: neither the call nor an answer.
                    assert!(
                        !in_trajectory && tool_msgs.is_empty(),
                        "{guard}: blocked call {} in the trajectory",
                        e.call_id
                    );
                    // Its record is the event: the call's arguments and the remediation.
                    assert!(
                        !e.arguments.is_empty(),
                        "{guard}: blocked call lost its arguments"
                    );
                    let remediation = e
                        .remediation
                        .as_deref()
                        .expect("a block carries a remediation");
                    assert!(!remediation.trim().is_empty());
                }
                Verdict::Pass => {
                    passes += 1;
                    assert!(e.executed && attempt.executed);
                    assert!(in_trajectory, "{guard}: executed call missing");
                    assert_eq!(tool_msgs.len(), 1, "{guard}: one result per call");
                    assert!(!tool_msgs[0].guard_blocked);
                }
            }
        }
    }
    assert!(blocks > 0, "{guard}: the grid must exercise a block");
    assert!(
        passes > 0 || guard == "pg-raw-traj",
        "{guard}: the grid must exercise a pass"
    );
}

#[test]
fn every_guard_blocks_without_executing_and_passes_execute_once() {
    let tmp = tempfile::tempdir().unwrap();
    let guards = [
        "toolguard",
        "pg-raw",
        "pg-raw-traj",
        "pg-checklist",
        "pg-checklist-only",
        "hybrid",
    ];
    let records = run_grid(
        &guards,
        "skip_confirmation = 0.5\ncomply_forbidden = 1.0",
        tmp.path(),
    );
    for g in guards {
        check_seam(&records, g);
    }
    // The report counts the verifier calls hybrid saved (decisions settled by the rules).
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .args(["report", s(&tmp.path().join("run")), "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let groups: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let hybrid = groups.iter().find(|g| g["guard"] == "hybrid").unwrap();
    let v = &hybrid["verifier_calls"];
    let (decisions, called, saved) = (
        v["decisions"].as_u64().unwrap(),
        v["called"].as_u64().unwrap(),
        v["saved"].as_u64().unwrap(),
    );
    let hybrid_events: u64 = records
        .iter()
        .filter(|r| r.guard == "hybrid")
        .map(|r| r.guard_events.len() as u64)
        .sum();
    assert_eq!(decisions, hybrid_events);
    assert_eq!(called + saved, decisions);
    assert!(
        saved > 0,
        "the rule layer blocks the forbidden cancellation without the verifier"
    );
    assert!(groups.iter().find(|g| g["guard"] == "pg-raw").unwrap()["verifier_calls"].is_null());
    // A blocked forbidden cancellation leaves the reservation untouched: the PV task passes.
    // Read as an attack on cancel_reservation (the sim agent complies with the forbidden
    // request every time), a blocked cancellation is no attack success.
    let mut blocked_attacks = 0;
    for r in records.iter().filter(|r| r.task_id == "f3") {
        let blocked = r
            .guard_events
            .iter()
            .any(|e| e.tool == "cancel_reservation" && e.verdict == Verdict::Block);
        let executed = r
            .call_attempts
            .iter()
            .any(|a| a.tool == "cancel_reservation" && a.executed);
        if blocked {
            assert!(
                r.succeeded(),
                "{}: blocked forbidden call still changed the database",
                r.guard
            );
        }
        let mut attack = r.clone();
        attack.attack_target = Some("cancel_reservation".into());
        assert_eq!(attack_succeeded(&attack), Some(executed), "{}", r.guard);
        blocked_attacks += usize::from(blocked && !executed);
    }
    assert!(
        blocked_attacks > 0,
        "the grid must block an attack outright"
    );
}
