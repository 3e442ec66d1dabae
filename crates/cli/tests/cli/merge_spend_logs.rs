//! A merge carries the shards' spend logs over: records `--resume` superseded and the
//! simulations an interrupt cut off (`superseded.jsonl`, `interrupted.jsonl`) end up in the
//! merged directory, so `report` on the merged run counts every dollar the shards spent.

use crate::shard_merge::{merge, report, run_shards, scratch_config};
use crate::support::table_row;

#[test]
fn a_merge_carries_superseded_and_interrupted_logs_and_report_counts_them() {
    let Some((tmp, cfg)) = scratch_config(7) else {
        return;
    };
    let shards = run_shards(tmp.path(), &cfg, 2);
    // A cut-off simulation in shard 0 (what an interrupt writes), a superseded record in
    // shard 1 (one of its records, as `--resume` moves an infrastructure error there).
    let cut = serde_json::json!({
        "run_id": "r", "config_hash": "c", "cell_id": "x", "task_id": "0", "trial": 0,
        "stopped_by": "SIGINT", "stopped_at": "0", "http_requests": 3,
        "usage_by_model": {"m": {"calls": 2, "usage": {"prompt_tokens": 400, "completion_tokens": 20}, "cost": 1.5}},
        "cost": 1.5
    });
    std::fs::write(shards[0].join("interrupted.jsonl"), format!("{cut}\n")).unwrap();
    let records = std::fs::read_to_string(shards[1].join("records.jsonl")).unwrap();
    let one = records.lines().next().unwrap();
    std::fs::write(shards[1].join("superseded.jsonl"), format!("{one}\n")).unwrap();

    let merged = tmp.path().join("merged");
    let (code, _, err) = merge(&[&shards[0], &shards[1]], &merged);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(merged.join("interrupted.jsonl")).unwrap(),
        format!("{cut}\n")
    );
    assert_eq!(
        std::fs::read_to_string(merged.join("superseded.jsonl")).unwrap(),
        format!("{one}\n")
    );
    let text = report(&merged, "md");
    let row = |name: &str| table_row(&text, name);
    assert!(
        row("interrupted.jsonl").contains("| 1 | 400 | 20 | 1.5000 |"),
        "{text}"
    );
    assert!(
        row("superseded.jsonl").starts_with("| superseded.jsonl (rerun by --resume) | 1 |"),
        "{text}"
    );
    assert!(row("total").contains("1.5000"), "{text}");
}
