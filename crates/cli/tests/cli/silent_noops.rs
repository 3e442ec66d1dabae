//! Settings that would run to nothing are refused, not obeyed: a zero step limit or task
//! count, a `--baseline` no record has (every Δ would be empty), and a task whose gold action
//! names a tool the domain lacks (the gold replay would skip it and the task score 1.0). Each
//! is bad input, exit 2, naming the file and key or the valid values; so are a split, task or
//! domain the data lacks, a missing model catalog and an output path that is a file; an
//! export that cannot land leaves no partial file.

use crate::support::{s, tauguard_ok, tauguard_status, written};
use std::path::PathBuf;
use tauguard_testkit::SimConfig;

fn fixtures() -> PathBuf {
    tauguard_testkit::workspace_root().join("tasks/fixtures")
}

fn refused(args: &[&str], fragments: &[&str]) {
    let (code, _, err) = tauguard_status(args);
    assert_eq!(code, 2, "tauguard {args:?}: {err}");
    for f in fragments {
        assert!(err.contains(f), "`{f}` missing from: {err}");
    }
}

#[test]
fn zero_steps_or_tasks_are_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    for (line, key) in [
        ("max_steps = 0", "run.max_steps"),
        ("num_tasks = 0", "run.num_tasks"),
    ] {
        let cfg = SimConfig::new("zero", "airline", &fixtures())
            .run_line(line)
            .write(&tmp.path().join("zero.toml"));
        refused(
            &["run", "--dry-run", s(&cfg)],
            &[key, "at least 1", "zero.toml"],
        );
        refused(
            &["run", s(&cfg), "--out", s(&tmp.path().join("out"))],
            &[key],
        );
    }
}

#[test]
fn an_unknown_baseline_is_refused_listing_the_guards() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("two", "airline", &fixtures())
        .guards(&["baseline", "toolguard"])
        .write(&tmp.path().join("two.toml"));
    let run = tmp.path().join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&run)]);
    refused(
        &["report", s(&run), "--baseline", "basline", "--no-floors"],
        &["--baseline `basline`", "baseline, toolguard"],
    );
    refused(
        &[
            "view",
            s(&run),
            "--out",
            s(&tmp.path().join("site")),
            "--baseline",
            "basline",
            "--no-floors",
        ],
        &["--baseline `basline`"],
    );
    let (code, _, err) =
        tauguard_status(&["report", s(&run), "--baseline", "toolguard", "--no-floors"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_gold_action_naming_an_unknown_tool_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for sub in ["agent", "user_simulator", "airline"] {
        std::fs::create_dir_all(data.join(sub)).unwrap();
        for e in std::fs::read_dir(fixtures().join(sub)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, data.join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
    let tasks_path = data.join("airline/tasks.json");
    let mut tasks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks_path).unwrap()).unwrap();
    let first = &mut tasks.as_array_mut().unwrap()[0];
    let id = first["id"].as_str().unwrap().to_string();
    let actions = first["evaluation_criteria"]["actions"]
        .as_array_mut()
        .unwrap();
    actions.push(serde_json::json!({
        "action_id": "x", "requestor": "assistant", "name": "frobnicate", "arguments": {}
    }));
    let index = actions.len() - 1;
    std::fs::write(&tasks_path, tasks.to_string()).unwrap();
    let cfg = SimConfig::new("frob", "airline", &data).write(&tmp.path().join("frob.toml"));
    refused(
        &["run", "--dry-run", s(&cfg)],
        &[
            "tasks.json",
            &format!("task `{id}`"),
            &format!("actions[{index}]"),
            "`frobnicate`",
        ],
    );
}

/// Errors found after parsing still name the config file and the key that asked for the
/// missing thing; other inputs say what they are.
#[test]
fn late_errors_name_the_config_file_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    for (lines, key) in [
        (&["split = \"bogus\""][..], "at `run.split`"),
        (&["task_ids = [\"999\"]"][..], "at `run.task_ids`"),
    ] {
        let mut c = SimConfig::new("late", "airline", &fixtures());
        for l in lines {
            c = c.run_line(l);
        }
        let cfg = c.write(&tmp.path().join("late.toml"));
        refused(&["run", "--dry-run", s(&cfg)], &["late.toml", key]);
    }
    let cfg = SimConfig::new("late", "airlin", &fixtures()).write(&tmp.path().join("dom.toml"));
    refused(
        &["run", "--dry-run", s(&cfg)],
        &["dom.toml", "at `run.domain`", "airline"],
    );
    let cfg = SimConfig::new("late", "airline", &fixtures()).write(&tmp.path().join("ok.toml"));
    refused(
        &[
            "run",
            "--dry-run",
            s(&cfg),
            "--models",
            "/nonexistent/models.toml",
        ],
        &["cannot read model catalog `/nonexistent/models.toml`"],
    );
    let file = written(tmp.path(), "a-file", "x");
    refused(
        &["run", s(&cfg), "--out", s(&file)],
        &["is a file, not a directory"],
    );
}

/// An export that cannot land (its `--out` is a non-empty directory) fails naming the path
/// and leaves no partial `.tmp` file behind.
#[test]
fn a_failed_export_leaves_no_partial_file() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("exp", "airline", &fixtures()).write(&tmp.path().join("e.toml"));
    let run = tmp.path().join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&run)]);
    let out = tmp.path().join("taken");
    std::fs::create_dir_all(out.join("inside")).unwrap();
    refused(
        &[
            "export-tau2",
            s(&run),
            "--out",
            s(&out),
            "--data-dir",
            s(&fixtures()),
        ],
        &["taken"],
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
