//! Summaries and the columnar sidecar: a report from a run's sidecar equals the report from its
//! records (streamed) and from the records in memory, on a fixture with guards, verifier
//! reports, fail-mode verdicts, attacks, guide events, traces, faults, infrastructure errors
//! discarded attempts' usage and floors; a stale or foreign sidecar is ignored; a malformed line still names path:line;
//! and the summary types hold no trajectory.

use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauguard_core::record::{
    AttackSpec, FailReason, InjectedFault, SimulationRecord, Slice, Verdict, VerdictSource,
};
use tauguard_metrics::{
    CallSummary, Format, LoadOptions, MetricsError, ReportOptions, SimSummary, load_summaries,
    report, report_summaries, summarise, write_sidecar,
};
use tauguard_metrics::{FailModeCounts, RoleReplies, floors};
use tauguard_metrics::{
    MANIFEST_FILE, SIDECAR_SCHEMA_VERSION, SIMULATIONS_FILE, fresh_manifest, read_fresh,
};
use tauguard_testkit::synthetic::{
    attempt, guard_event, guide_event, infra, record, usage, with_calls,
};

#[allow(
    clippy::too_many_lines,
    reason = "test fixture data reads in one place"
)]
/// Every kind of content a metric reads, over two domains, five guards and three trials.
fn fixture() -> Vec<SimulationRecord> {
    let mut out = Vec::new();
    for (gi, guard) in [
        "baseline",
        "pg-checklist",
        "hybrid",
        "policyguide",
        "flowagent",
    ]
    .into_iter()
    .enumerate()
    {
        for domain in ["airline", "telecom"] {
            for task in 0..6u32 {
                for trial in 0..3u32 {
                    let slice = if task.is_multiple_of(2) {
                        Slice::Pv
                    } else {
                        Slice::Mut
                    };
                    let ok = !(task + trial + gi as u32).is_multiple_of(3);
                    let mut r = record(&format!("t{task}"), slice, trial, f64::from(ok as u8));
                    (r.domain, r.guard) = (domain.into(), guard.into());
                    r.run_id = format!("run-{guard}");
                    r.cell_id = format!("{domain}-{guard}");
                    r.cell_hash = format!("h-{domain}-{guard}");
                    r.config_hash = format!("c-{guard}");
                    r.cell.insert("agent.provider".into(), json!("openai"));
                    r.cell.insert("guard.name".into(), json!(guard));
                    r.cell.insert("trials".into(), json!(3));
                    (r.agent_turns, r.user_turns) = (4 + task, 3 + trial);
                    r.wall_seconds = 10.5 + f64::from(task) * 0.1 + gi as f64;
                    r.usage
                        .insert("agent".into(), usage(3, 900, 0, 70, Some(0.0123)));
                    r.usage.insert("judge".into(), usage(1, 10, 0, 2, None));
                    // Replies cut at the token limit and provider-cached prompt tokens, which
                    // the sidecar keeps per role.
                    if let Some(a) = r.usage.get_mut("agent") {
                        a.truncated = u64::from(task % 3);
                        a.usage.cached_prompt_tokens = 100 * u64::from(trial);
                    }
                    if task == 5 {
                        let mut critic = usage(2, 5, 1, 1, Some(0.5));
                        critic.truncated = 1;
                        r.usage.insert("critic".into(), critic);
                        // What discarded attempts spent, which the spending table adds up.
                        r.attempts.discarded = usage(2, 40, 0, 3, Some(0.2));
                    }
                    let verdict = (guard != "baseline").then(|| {
                        if (task + trial).is_multiple_of(2) {
                            Verdict::Block
                        } else {
                            Verdict::Pass
                        }
                    });
                    let executed = verdict != Some(Verdict::Block);
                    let mut a = attempt("c1", verdict, executed);
                    a.missing_prerequisites = (task != 3).then(|| {
                        if trial == 1 {
                            vec!["get_user_details".into()]
                        } else {
                            vec![]
                        }
                    });
                    if task == 1 {
                        r.injected_faults.push(InjectedFault {
                            kind: "skip_confirmation".into(),
                            call_id: Some("c1".into()),
                            tool: Some("book_reservation".into()),
                            detail: "no yes".into(),
                            at_message: None,
                        });
                    }
                    let mut u = attempt("u1", None, true);
                    u.requestor = tauguard_core::Requestor::User;
                    u.tool = "toggle_data".into();
                    r.call_attempts = vec![a, u];
                    if let Some(v) = verdict {
                        let mut e = guard_event(guard, "c1", "book_reservation", v, executed);
                        e.usage = usage(1, 300, 100, 20, Some(0.001 * f64::from(trial + 1)));
                        e.info = Some(match guard {
                            "hybrid" => json!({"verifier_called": trial != 0}),
                            _ => json!({"checked": task, "unchecked": ["x"],
                                        "inputs": ["policy", "dialogue"]}),
                        });
                        if task == 3 {
                            e.verdict_source = VerdictSource::FailMode;
                            e.fail_reason = Some(FailReason::ParseFailure);
                        }
                        r.guard_events.push(e);
                    }
                    if guard.starts_with("policyguide") || guard == "flowagent" {
                        r.guide_events = (0..=trial)
                            .map(|i| {
                                let cost = (i != 2).then_some(0.1 + 0.01 * f64::from(i));
                                let mut e = guide_event(guard, usage(1, 1000, 800, 50, cost));
                                if i == 1 {
                                    e.verdict_source = VerdictSource::FailMode;
                                    e.fail_reason = Some(FailReason::ContextOverflow);
                                    e.fail_http_status = Some(400);
                                }
                                e
                            })
                            .collect();
                    }
                    r = with_calls(r, &["get_details_by_id", "book_reservation", "refuel_data"]);
                    if domain == "telecom" {
                        r.gold_trace = Some(vec!["get_details_by_id".into(), "refuel_data".into()]);
                    }
                    if task == 4 {
                        r.attack_target = Some("book_reservation".into());
                        if trial == 2 {
                            r.attack = Some(AttackSpec {
                                tool: "book_reservation".into(),
                                arguments: Default::default(),
                                strategy: "urgency".into(),
                            });
                        }
                    }
                    if (task, trial) == (2, 2) && gi.is_multiple_of(2) {
                        r = infra(r);
                    }
                    out.push(r);
                }
            }
        }
    }
    out
}

fn write_records(dir: &Path, records: &[SimulationRecord]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("records.jsonl");
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn load(dir: &Path) -> Vec<SimSummary> {
    load_summaries(&[dir], &LoadOptions::default()).unwrap()
}

#[test]
fn report_from_the_sidecar_equals_the_report_from_records() {
    let tmp = tempfile::tempdir().unwrap();
    let records = fixture();
    let path = write_records(tmp.path(), &records);
    let floor_recs: Vec<SimulationRecord> = (0..6u32)
        .map(|t| {
            let mut r = record(
                &format!("t{t}"),
                Slice::Pv,
                0,
                f64::from(t.is_multiple_of(2)),
            );
            r.agent_model = "refuse-all".into();
            r
        })
        .collect();
    let opts = ReportOptions::default();
    let in_memory = report(&records, &opts).with_floors(floors(&floor_recs));
    assert!(fresh_manifest(&path).is_none());
    let streamed = load(tmp.path());
    assert_eq!(streamed, summarise(&records));
    let from_records = report_summaries(&streamed, &opts).with_floors(floors(&floor_recs));
    let written = write_sidecar(&path).unwrap();
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(fresh_manifest(&path).is_some());
    let from_sidecar_sims = read_fresh(&path).expect("a fresh sidecar is read");
    assert_eq!(from_sidecar_sims, streamed);
    assert!(from_sidecar_sims.iter().any(|s| s.discarded.is_some()));
    let from_sidecar = report_summaries(&load(tmp.path()), &opts).with_floors(floors(&floor_recs));
    for (name, r) in [("streamed", &from_records), ("sidecar", &from_sidecar)] {
        assert_eq!(*r, in_memory, "{name}");
        for f in [Format::Md, Format::Csv, Format::Latex, Format::Json] {
            assert_eq!(r.render(f), in_memory.render(f), "{name} {f:?}");
        }
    }
    // The fixture exercises what the sidecar must carry.
    let g = |guard: &str, domain: &str| {
        in_memory
            .groups
            .iter()
            .find(|g| g.guard == guard && g.domain == domain)
            .unwrap()
    };
    assert!(g("policyguide", "airline").guide_usage.is_some());
    let replies = (g("baseline", "airline").measures)
        .value::<BTreeMap<String, RoleReplies>>("truncated_replies")
        .unwrap();
    assert!(replies["agent"].truncated > 0);
    assert_eq!(replies["critic"].truncated, 3);
    assert_eq!(g("baseline", "airline").cost_per_simulation["judge"], None);
    let fail_mode = |guard: &str, key: &str| {
        let counts = g(guard, "airline").measures.value::<FailModeCounts>(key);
        counts.unwrap().fail_mode
    };
    assert!(fail_mode("pg-checklist", "fail_mode") > 0);
    assert!(fail_mode("policyguide", "guide_fail_mode") > 0);
    let has = |guard: &str, domain: &str, key: &str| {
        (g(guard, domain).measures.0.iter()).any(|(k, v)| *k == key && !v.is_null())
    };
    assert!(has("hybrid", "airline", "verifier_calls"));
    assert!(has("pg-checklist", "airline", "verifier_inputs"));
    assert!(has("baseline", "telecom", "trace"));
    assert!(has("baseline", "airline", "attack"));
    assert!(g("baseline", "airline").overall.infra_errors > 0);
    assert!(
        g("baseline", "airline")
            .cost_per_simulation
            .contains_key("critic")
    );
    assert!(!in_memory.floors.is_empty());
}

#[test]
fn a_stale_or_foreign_sidecar_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let records = fixture();
    let path = write_records(tmp.path(), &records);
    write_sidecar(&path).unwrap();
    // Proof the sidecar is what `report` reads when fresh: records edited in place (same
    // length, old modification time) still report the sidecar's numbers.
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("\"reward\":1.0", "\"reward\":0.0", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, &edited).unwrap();
    let old = before - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert_eq!(load(tmp.path()), summarise(&records));
    // Records newer than the sidecar: the records are read.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(later).unwrap();
    assert!(read_fresh(&path).is_none());
    let edited_sims = load(tmp.path());
    assert_ne!(edited_sims, summarise(&records));
    // Records that grew: stale whatever the times say.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    write_sidecar(&path).unwrap();
    assert!(read_fresh(&path).is_some());
    std::fs::write(&path, format!("{edited}{}", edited.lines().next().unwrap())).unwrap();
    let manifest = tmp.path().join(MANIFEST_FILE);
    std::fs::File::options()
        .write(true)
        .open(&manifest)
        .unwrap()
        .set_modified(later + std::time::Duration::from_secs(60))
        .unwrap();
    assert!(read_fresh(&path).is_none());
    assert_eq!(load(tmp.path()).len(), records.len() + 1);
    // Another schema version, or a damaged table: ignored, the records are read.
    write_sidecar(&path).unwrap();
    let m = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        m.replace(
            &format!("\"schema_version\": {SIDECAR_SCHEMA_VERSION}"),
            "\"schema_version\": 0",
        ),
    )
    .unwrap();
    assert!(fresh_manifest(&path).is_none());
    write_sidecar(&path).unwrap();
    let table = tmp.path().join(SIMULATIONS_FILE);
    let bytes = std::fs::read(&table).unwrap();
    std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
    assert!(fresh_manifest(&path).is_some() && read_fresh(&path).is_none());
    assert_eq!(load(tmp.path()).len(), records.len() + 1);
}

#[test]
fn a_malformed_line_names_path_and_line_when_streamed() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_records(tmp.path(), &fixture()[..3]);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n{\"run_id\": \"x\"}\n");
    std::fs::write(&path, text).unwrap();
    let err = load_summaries(&[&path], &LoadOptions::default()).unwrap_err();
    assert!(
        matches!(err, MetricsError::BadRecord { line: 5, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}:5: not a simulation record", path.display())),
        "{msg}"
    );
}

/// The summaries hold no trajectory: every field is listed here (a new field fails to compile
/// until it is added), none is a message, a text or an argument, and their sizes stay small.
#[test]
fn summaries_hold_no_trajectory() {
    let rec = &fixture()[40];
    assert!(!rec.messages.is_empty());
    let s = SimSummary::of(rec);
    let SimSummary {
        cell: _,
        task_id: _,
        slice: _,
        trial: _,
        seed: _,
        termination_reason: _,
        reward: _,
        missing_reward_info: _,
        error: _,
        agent_turns: _,
        user_turns: _,
        wall_seconds: _,
        usage: _,
        other_usage: _,
        discarded: _,
        has_fault_labels: _,
        trace: _,
        attack: _,
        verifier: _,
        guide: _,
        // Two flags and a level/position: no message, text or argument.
        process: _,
        calls,
        // Counts the registered measures derive: numbers only.
        measured: _,
    } = s;
    for CallSummary {
        call_id: _,
        tool: _,
        requestor: _,
        verdict: _,
        executed: _,
        faults: _,
        missing_prerequisites: _,
        fail_reason: _,
    } in calls
    {}
    assert!(std::mem::size_of::<SimSummary>() <= 512);
    assert!(std::mem::size_of::<CallSummary>() <= 128);
}
