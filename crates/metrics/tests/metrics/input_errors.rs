//! Input resolution and malformed input: every error names the file (and line), nothing panics.

use std::path::{Path, PathBuf};
use tauguard_core::record::Slice;
use tauguard_metrics::{MetricsError, RecordCause, load_input, load_inputs, parse_records_jsonl};
use tauguard_testkit::synthetic::record;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tauguard-metrics-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn line(task: &str, trial: u32) -> String {
    serde_json::to_string(&record(task, Slice::Pv, trial, 1.0)).unwrap()
}

#[test]
fn bad_jsonl_line_names_file_and_line() {
    let text = format!("{}\n\n{}\n{{\"run_id\": 3}}\n", line("a", 0), line("a", 1));
    let err = parse_records_jsonl(Path::new("runs/x/records.jsonl"), &text).unwrap_err();
    match &err {
        MetricsError::BadRecord { line, .. } => assert_eq!(*line, 4),
        other => panic!("unexpected {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.starts_with("runs/x/records.jsonl:4: not a simulation record"),
        "{msg}"
    );

    let err = parse_records_jsonl(Path::new("r.jsonl"), "{not json\n").unwrap_err();
    assert!(err.to_string().starts_with("r.jsonl:1:"), "{err}");
    // The JSON error is the typed cause, printed once after the message by the chain.
    let MetricsError::BadRecord {
        cause: RecordCause::Json(json),
        ..
    } = &err
    else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(
        tauguard_core::chain_text(&err),
        format!("r.jsonl:1: not a simulation record: {json}")
    );
}

#[test]
fn run_directory_resolves_records_jsonl() {
    let dir = scratch("rundir");
    std::fs::write(
        dir.join("records.jsonl"),
        format!("{}\n{}\n", line("a", 0), line("b", 0)),
    )
    .unwrap();
    let recs = load_inputs(&[&dir]).unwrap();
    assert_eq!(recs.len(), 2);
    // A plain `.jsonl` path works too, and inputs concatenate.
    let recs = load_inputs(&[dir.join("records.jsonl"), dir.clone()]).unwrap();
    assert_eq!(recs.len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_inputs_are_errors() {
    let dir = scratch("empty");
    let err = load_input(&dir, &Default::default()).unwrap_err();
    assert!(matches!(err, MetricsError::UnknownInput { .. }), "{err}");
    let err = load_inputs(&[dir.join("missing.jsonl")]).unwrap_err();
    assert!(err.to_string().contains("missing.jsonl"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_results_json() {
    let dir = scratch("results");
    let p = dir.join("results.json");
    std::fs::write(&p, "[1, 2]").unwrap();
    let err = tauguard_core::chain_text(&load_inputs(&[&p]).unwrap_err());
    assert!(
        err.contains("results.json") && err.contains("not a τ²-bench results file"),
        "{err}"
    );

    std::fs::write(&p, r#"{"info": {}, "tasks": [], "simulations": []}"#).unwrap();
    let err = tauguard_core::chain_text(&load_inputs(&[&p]).unwrap_err());
    assert!(
        err.contains("line 1 column") && err.contains("agent_info"),
        "{err}"
    );

    let minimal = |domain: &str, task: &str| {
        format!(
            r#"{{"info": {{"agent_info": {{"llm": "m"}}, "environment_info": {{"domain_name": "{domain}"}}}},
               "tasks": [{{"id": "1"}}],
               "simulations": [{{"task_id": "{task}", "termination_reason": "user_stop",
                                 "reward_info": {{"reward": 1.0}}, "messages": []}}]}}"#
        )
    };
    // A domain without a mutating-tool list imports without slices, never an error.
    std::fs::write(&p, minimal("banking", "1")).unwrap();
    let recs = load_inputs(&[&p]).unwrap();
    assert_eq!(recs[0].slice, Slice::Unknown);

    // tauguard's provenance, when present, has its shape: errors name where.
    let bad_provenance = minimal("airline", "1").replace(
        r#""messages": []"#,
        r#""messages": [], "info": {"tauguard": {"guard": 7}}"#,
    );
    std::fs::write(&p, bad_provenance).unwrap();
    let err = tauguard_core::chain_text(&load_inputs(&[&p]).unwrap_err());
    assert!(err.contains("simulations[0].info.tauguard"), "{err}");

    std::fs::write(&p, minimal("airline", "9")).unwrap();
    let err = tauguard_core::chain_text(&load_inputs(&[&p]).unwrap_err());
    assert!(
        err.contains("simulations[0]") && err.contains("task `9`"),
        "{err}"
    );

    std::fs::write(&p, minimal("airline", "1")).unwrap();
    let recs = load_inputs(&[&p]).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].slice, Slice::Pv);

    let bad_message = minimal("airline", "1").replace(
        r#""messages": []"#,
        r#""messages": [{"role": "assistant", "tool_calls": [{"arguments": 3}]}]"#,
    );
    std::fs::write(&p, bad_message).unwrap();
    let err = tauguard_core::chain_text(&load_inputs(&[&p]).unwrap_err());
    assert!(err.contains("simulations[0].messages[0]"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
