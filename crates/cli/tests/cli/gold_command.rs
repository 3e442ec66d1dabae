//! `tauguard gold` on the project's fixture domain: one parity-shaped JSON line per task of
//! the default `base` split, with the database effects of the gold actions.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn gold(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .arg("gold")
        .args(args)
        .output()
        .unwrap()
}

/// The JSON lines a `gold` that succeeded printed; the test fails with its stderr otherwise.
fn succeeded_lines(out: std::process::Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn gold_lines_have_the_fixture_shape_and_effects() {
    let out = gold(&["--data-dir", "tasks/fixtures", "--domain", "airline"]);
    let lines = succeeded_lines(out);
    let ids: Vec<&str> = lines
        .iter()
        .map(|l| l["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["f1", "f2", "f3", "f4", "f5"]);
    for l in &lines {
        let keys: Vec<&str> = l.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "task_id",
                "initial_state_changes",
                "gold_steps",
                "changed_records",
                "user_changed_records",
                "db_sha256_sorted"
            ]
        );
        assert_eq!(l["db_sha256_sorted"].as_str().unwrap().len(), 64);
    }
    // f1 cancels business reservation FXA001: one refund entry, status cancelled.
    let f1 = &lines[0]["changed_records"]["reservations/FXA001"];
    assert_eq!(f1["status"], "cancelled");
    assert_eq!(
        f1["payment_history"][1],
        serde_json::json!({"payment_id": "credit_card_1000002", "amount": -420})
    );
    // f5 books HATHAT, takes 100 from the gift card (float arithmetic) and a seat.
    let f5 = &lines[4]["changed_records"];
    assert_eq!(
        f5["users/zoe_quinn_1001"]["payment_methods"]["gift_card_1000001"]["amount"],
        28.360000000000014
    );
    assert_eq!(
        f5["reservations/HATHAT"]["payment_history"][1]["amount"],
        40
    );
    assert_eq!(
        f5["flights/HAT900"]["dates"]["2024-05-20"]["available_seats"]["economy"],
        3
    );
    // PV tasks change nothing.
    assert_eq!(lines[2]["changed_records"], serde_json::json!({}));
    assert!(lines[2]["gold_steps"][0]["ok"].as_bool().unwrap());
}

#[test]
fn gold_rejects_unknown_split_and_domain_with_bad_input_code() {
    let out = gold(&[
        "--data-dir",
        "tasks/fixtures",
        "--domain",
        "airline",
        "--split",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("split `nope`"));
    let out = gold(&["--data-dir", "tasks/fixtures", "--domain", "banking"]);
    assert_eq!(out.status.code(), Some(2));
}

/// banking_knowledge has no split: `--split train` (any name) replays all 97 tasks, and
/// every line equals upstream's reference line.
#[test]
fn banking_knowledge_gold_lines_equal_the_upstream_fixture() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let data = dir.to_string_lossy().to_string();
    let out = gold(&[
        "--data-dir",
        &data,
        "--domain",
        "banking_knowledge",
        "--split",
        "train",
    ]);
    let got = succeeded_lines(out);
    let reference =
        std::fs::read_to_string(dir.join("reference/banking_knowledge_gold_train.jsonl")).unwrap();
    let want: Vec<Value> = reference
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 97);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "task {}", w["task_id"]);
    }
}
