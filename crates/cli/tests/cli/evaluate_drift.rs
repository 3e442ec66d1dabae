//! `tauguard evaluate` on a trajectory recorded by an older τ²-bench: the lenient replay (the
//! default, as upstream's `tau2 evaluate-trajs`) scores it, agrees with the stored reward and
//! lists the drift; `--strict-replay` refuses it. The drift is a real one, not a made-up text:
//! one that trajectories recorded under an older τ²-bench carry.
//!
//! The drift. Upstream's airline tool code never changed a payment message in the history of
//! the pinned commit (a2c0247): `src/tau2/domains/airline/tools.py` and `data_model.py` are as
//! the first release (37199f3) left them. What changed is the pydantic that τ²-bench locks,
//! and with it the text of every validation error: the release's `pdm.lock` (37199f3, still in
//! v0.2.0 and up to c5b2d22) pins pydantic 2.10.6; "feat: τ³-bench 1.0.0" (01e812d) replaced
//! it by a `uv.lock` pinning pydantic 2.12.4, still pinned at a2c0247, which tauguard
//! reproduces. `book_reservation` turns each payment dict into a `Payment` model before any
//! check; a payment without `amount` fails there, and the tool message (upstream's
//! `Error: {e}`) ends in the error's documentation link, which names the pydantic minor
//! version: `https://errors.pydantic.dev/2.10/v/missing` in a trajectory recorded under v0.2.x,
//! `https://errors.pydantic.dev/2.12/v/missing` when replayed today. The rest of the text is
//! the same under both (checked with both pydantic versions installed).
//!
//! It is an error whose text changed, so no mutation either way: the lenient replay's score
//! is the stored one. The fixture is a real offline run of airline task 35 (one booking, the
//! reward on DB and COMMUNICATE, no NL judge), with the agent's realistic first attempt added
//! before its booking: the same call without the payment's `amount`, answered with the old
//! error text, as a v0.2.x run would have stored it. The same attempt answered with today's
//! text is the control: no drift. Both are checked as tauguard records and, exported, as an
//! upstream results.json (the form an old upstream run comes in). Last, which task
//! definitions score a results file: its own by default, the data directory's with
//! `--fresh-tasks`.

use crate::support::{assert_contains_all, line_starting, tauguard_status};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tauguard_testkit::{SimConfig, tau2_dir};

/// The airline task: one `book_reservation` paid with credit card `PAYMENT_ID`.
const TASK: &str = "35";
const PAYMENT_ID: &str = "credit_card_9074831";
/// The id of the added, failing attempt.
const CALL_ID: &str = "drift-attempt-1";

/// The tool message of that attempt under τ²-bench v0.2.x (pydantic 2.10.6).
const RECORDED: &str = "Error: 1 validation error for Payment\namount\n  Field required [type=missing, input_value={'payment_id': 'credit_card_9074831'}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.10/v/missing";
/// The same under a2c0247 (pydantic 2.12.4): what the replay returns today.
const REPLAYED: &str = "Error: 1 validation error for Payment\namount\n  Field required [type=missing, input_value={'payment_id': 'credit_card_9074831'}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.12/v/missing";

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// Runs `tauguard`, asserting the exit code; returns stdout.
fn tauguard_ok(args: &[&str], code: i32) -> String {
    let (got, out, err) = tauguard_status(args);
    assert_eq!(got, code, "tauguard {args:?}:\n{out}\n{err}");
    out
}

fn evaluate_json(input: &Path, data: &Path, extra: &[&str], code: i32) -> Value {
    let mut args = vec![
        "evaluate",
        path(input),
        "--data-dir",
        path(data),
        "--format",
        "json",
    ];
    args.extend(extra);
    let out = tauguard_ok(&args, code);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// One offline run of task 35; returns its record.
fn run_task(dir: &Path, data: &Path) -> Value {
    let cfg = SimConfig::new("drift", "airline", data)
        .run_line(&format!("task_ids = [\"{TASK}\"]"))
        .write(&dir.join("drift.toml"));
    let run = dir.join("run");
    tauguard_ok(&["run", path(&cfg), "--out", path(&run)], 0);
    let text = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    serde_json::from_str(lines[0]).unwrap()
}

/// `record` with a failing first attempt at its booking, answered by `content`: the booking
/// call with the payment's `amount` left out.
fn with_failed_attempt(record: &Value, content: &str) -> Value {
    let mut r = record.clone();
    let messages = r["messages"].as_array_mut().unwrap();
    let at = messages
        .iter()
        .position(|m| m["tool_calls"][0]["name"] == "book_reservation")
        .expect("the sim agent books");
    let mut call = messages[at].clone();
    let tc = &mut call["tool_calls"][0];
    assert_eq!(
        tc["arguments"]["payment_methods"],
        json!([{"payment_id": PAYMENT_ID, "amount": 290}]),
        "task {TASK}'s booking changed: {tc}"
    );
    tc["id"] = CALL_ID.into();
    tc["arguments"]["payment_methods"] = json!([{ "payment_id": PAYMENT_ID }]);
    let mut answer = messages[at + 1].clone();
    assert_eq!(answer["role"], "tool", "{answer}");
    answer["id"] = CALL_ID.into();
    answer["content"] = content.into();
    answer["error"] = true.into();
    messages.splice(at..at, [call, answer]);
    for (i, m) in messages.iter_mut().enumerate() {
        m["turn_idx"] = i.into();
    }
    let attempts = r["call_attempts"].as_array_mut().unwrap();
    let mut attempt = attempts[0].clone();
    attempt["call_id"] = CALL_ID.into();
    attempts.insert(0, attempt);
    r
}

fn write_records(file: &Path, record: &Value) -> PathBuf {
    std::fs::write(file, format!("{record}\n")).unwrap();
    file.to_path_buf()
}

/// The run directory with `record` as its records, exported as an upstream results.json.
fn export(dir: &Path, record: &Value, name: &str, data: &Path) -> PathBuf {
    write_records(&dir.join("run/records.jsonl"), record);
    let out = dir.join(name);
    tauguard_ok(
        &[
            "export-tau2",
            path(&dir.join("run")),
            "--out",
            path(&out),
            "--data-dir",
            path(data),
        ],
        0,
    );
    out
}

fn assert_agrees(v: &Value, replay: &str, drifted: u64) {
    assert_eq!(v["replay"], replay, "{v:#}");
    for (key, n) in [
        ("n_simulations", 1),
        ("evaluated", 1),
        ("agree", 1),
        ("disagree", 0),
        ("skipped", 0),
    ] {
        assert_eq!(v[key], n, "{key}: {v:#}");
    }
    assert_eq!(v["drifted_simulations"], drifted, "{v:#}");
}

/// Default and strict evaluation of the drifted `input`.
fn check_drifted(input: &Path, data: &Path) {
    // Lenient (the default): scored, agrees, the drift listed with both texts.
    let v = evaluate_json(input, data, &[], 0);
    assert_agrees(&v, "lenient", 1);
    let drifts = v["drifts"].as_array().unwrap();
    assert_eq!(drifts.len(), 1, "{v:#}");
    let d = &drifts[0];
    assert_eq!(
        (&d["task_id"], &d["trial"], &d["tool"], &d["call_id"]),
        (
            &json!(TASK),
            &json!(0),
            &json!("book_reservation"),
            &json!(CALL_ID)
        ),
        "{d:#}"
    );
    assert_eq!(d["recorded"], RECORDED, "{d:#}");
    assert_eq!(d["replayed"], REPLAYED, "{d:#}");

    let text = tauguard_ok(&["evaluate", path(input), "--data-dir", path(data)], 0);
    assert!(
        text.contains("1 simulation: 1 evaluated, 1 agree, 0 disagree, 0 skipped"),
        "{text}"
    );
    assert!(
        text.contains("1 simulation replayed with drift (1 call):"),
        "one of each, in the singular: {text}"
    );
    let line = line_starting(&text, &format!("drift: task {TASK} trial 0 "));
    assert!(line.contains("`book_reservation`"), "{line}");
    // The texts differ only near their end: the line shows that part of both.
    let (stored, replayed) = line.split_once(" | replayed ").expect("both texts");
    assert!(stored.contains("pydantic.dev/2.10/v/missing"), "{line}");
    assert!(replayed.contains("pydantic.dev/2.12/v/missing"), "{line}");

    // Strict: refused, so a disagreement with the replay's error, and exit 1.
    let v = evaluate_json(input, data, &["--strict-replay"], 1);
    assert_eq!(v["replay"], "strict", "{v:#}");
    assert_eq!(
        (&v["evaluated"], &v["agree"], &v["disagree"]),
        (&json!(1), &json!(0), &json!(1)),
        "{v:#}"
    );
    let dis = &v["disagreements"][0];
    assert_eq!(dis["task_id"], TASK, "{dis:#}");
    assert_eq!(dis["stored"], 1.0, "{dis:#}");
    assert!(dis["recomputed"].is_null(), "{dis:#}");
    let error = dis["error"].as_str().unwrap_or_default();
    assert_contains_all(
        error,
        &[
            "replayed `book_reservation` returned different content",
            RECORDED,
            REPLAYED,
        ],
    );
    assert_eq!(v["drifts"], json!([]), "{v:#}");
}

#[test]
fn evaluate_scores_an_old_pydantic_payment_error_leniently_and_strict_refuses_it() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let record = run_task(dir, &data);
    assert_eq!(record["task_id"], TASK);
    assert_eq!(record["reward"]["reward"], 1.0, "{:#}", record["reward"]);

    // Control: the attempt answered as today's τ²-bench answers it replays without drift,
    // strict or not, and does not change the reward (an error mutates nothing).
    let current = write_records(
        &dir.join("current.jsonl"),
        &with_failed_attempt(&record, REPLAYED),
    );
    assert_agrees(&evaluate_json(&current, &data, &[], 0), "lenient", 0);
    assert_agrees(
        &evaluate_json(&current, &data, &["--strict-replay"], 0),
        "strict",
        0,
    );

    // The attempt as τ²-bench v0.2.x stored it: as tauguard records, then as upstream's file.
    let old = with_failed_attempt(&record, RECORDED);
    check_drifted(&write_records(&dir.join("drifted.jsonl"), &old), &data);
    let results = export(dir, &old, "results.json", &data);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let stored: Vec<&Value> = doc["simulations"][0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool" && m["id"] == CALL_ID)
        .collect();
    assert_eq!(stored.len(), 1, "the export keeps the attempt");
    assert_eq!(stored[0]["content"], RECORDED);
    check_drifted(&results, &data);
}

/// A results file is scored against the tasks it embeds, as upstream's `evaluate-trajs` does;
/// `--fresh-tasks` scores it against the data directory's current tasks instead, and the
/// output says which. An embedded task whose gold actions were emptied (an older definition)
/// makes the two disagree.
#[test]
fn evaluate_uses_the_embedded_tasks_unless_fresh_tasks_is_given() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let record = run_task(dir, &data);
    let results = export(dir, &record, "results.json", &data);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let task = doc["tasks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["id"] == TASK)
        .unwrap();
    task["evaluation_criteria"]["actions"] = json!([]);
    std::fs::write(&results, doc.to_string()).unwrap();

    let embedded = evaluate_json(&results, &data, &[], 1);
    assert!(
        embedded["tasks"].as_str().unwrap().contains("embedded"),
        "{embedded:#}"
    );
    assert_eq!(embedded["disagree"], 1, "{embedded:#}");
    let fresh = evaluate_json(&results, &data, &["--fresh-tasks"], 0);
    assert!(
        fresh["tasks"].as_str().unwrap().contains("current"),
        "{fresh:#}"
    );
    assert_eq!(
        (fresh["agree"].as_u64(), fresh["disagree"].as_u64()),
        (Some(1), Some(0))
    );
}
