//! The binary's error contract: bad input exits 2 with one line that names what and where
//! exactly once (no cause printed twice through an error chain), and a reader that closes
//! standard output early does not turn a successful command into a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn tauguard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .env_remove("TAUGUARD_DATA_DIR")
        .args(args)
        .output()
        .unwrap()
}

/// A fixture-domain config over `guards`, written to `dir/<name>.toml`.
fn config(dir: &Path, name: &str, guards: &[&str], extra_run: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let guards: Vec<String> = guards.iter().map(|g| format!("\"{g}\"")).collect();
    std::fs::write(
        &path,
        format!(
            "[run]\nname = \"{name}\"\ndomain = \"airline\"\ntrials = 1\ndata_dir = \"{}\"\n{extra_run}\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
             [grid]\nguards = [{}]\n",
            root().join("tasks/fixtures").display(),
            guards.join(", ")
        ),
    )
    .unwrap();
    path
}

/// Runs the fixture domain under two guards into `dir/run` and returns that directory.
fn two_cell_run(dir: &Path) -> PathBuf {
    let cfg = config(dir, "two", &["baseline", "toolguard"], "");
    let run = dir.join("run");
    let out = tauguard(&["run", cfg.to_str().unwrap(), "--out", run.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "tauguard run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    run
}

/// Exit 2, one `error: ` line holding every `expected` fragment, and no part of the message
/// repeated (what a cause printed by both the message and the error chain looks like).
fn assert_bad_input(out: &Output, expected: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let line = stderr.trim_end();
    assert!(
        !line.contains('\n') && line.starts_with("error: "),
        "expected one `error: ` line, got:\n{stderr}"
    );
    for fragment in expected {
        assert_eq!(
            line.matches(fragment).count(),
            1,
            "`{fragment}` should appear exactly once in: {line}"
        );
    }
    assert_no_repeated_part(line);
    line.to_string()
}

fn assert_no_repeated_part(line: &str) {
    let parts: Vec<&str> = line.split(": ").map(str::trim).collect();
    for (i, a) in parts.iter().enumerate() {
        for b in &parts[i + 1..] {
            assert!(a.len() < 8 || a != b, "`{a}` is printed twice in: {line}");
        }
    }
}

#[test]
fn the_repeated_part_check_catches_a_doubled_cause() {
    let doubled = "error: cannot read `x`: No such file or directory (os error 2): \
                   No such file or directory (os error 2)";
    let caught = std::panic::catch_unwind(|| assert_no_repeated_part(doubled));
    assert!(caught.is_err(), "a doubled cause went unnoticed");
    assert_no_repeated_part("error: cannot read `x`: No such file or directory (os error 2)");
}

#[test]
fn a_model_without_provider_is_bad_input() {
    let out = tauguard(&[
        "compile",
        "checklist",
        "--domain",
        "airline",
        "--model",
        "gpt",
        "--data-dir",
        "tasks/fixtures",
    ]);
    assert_bad_input(&out, &["--model `gpt`", "PROVIDER/MODEL"]);
}

#[test]
fn a_missing_file_names_its_path_and_cause_once() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("absent.jsonl");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["run", missing],
        vec!["report", missing],
        vec!["export-tau2", missing],
    ] {
        let out = tauguard(&args);
        assert_bad_input(&out, &[missing, "No such file or directory"]);
    }
}

#[test]
fn exporting_a_several_cell_run_needs_a_known_guard() {
    let tmp = tempfile::tempdir().unwrap();
    let run = two_cell_run(tmp.path());
    let records = run.join("records.jsonl");
    let export = |extra: &[&str]| {
        let mut args = vec![
            "export-tau2",
            run.to_str().unwrap(),
            "--data-dir",
            "tasks/fixtures",
        ];
        args.extend_from_slice(extra);
        tauguard(&args)
    };
    assert_bad_input(
        &export(&[]),
        &[records.to_str().unwrap(), "several grid cells", "--guard"],
    );
    assert_bad_input(
        &export(&["--guard", "nope"]),
        &["--guard `nope`", "unknown guard configuration", "toolguard"],
    );
    assert_bad_input(
        &export(&["--guard", "hybrid"]),
        &[
            records.to_str().unwrap(),
            "no records to export for guard `hybrid`",
        ],
    );
    let out = export(&["--guard", "toolguard"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(run.join("results_toolguard.json").is_file());
}

#[test]
fn a_garbage_record_line_stops_a_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let run = two_cell_run(tmp.path());
    let records = run.join("records.jsonl");
    let mut text = std::fs::read_to_string(&records).unwrap();
    let lines = text.lines().count();
    // A complete but garbage line, then a torn last line (which resume may cut).
    text.push_str("not json at all\n{\"run_id\": ");
    std::fs::write(&records, text).unwrap();
    let cfg = tmp.path().join("two.toml");
    let out = tauguard(&[
        "run",
        cfg.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
        "--resume",
    ]);
    let garbage_line = format!("line {}", lines + 1);
    assert_bad_input(
        &out,
        &[
            records.to_str().unwrap(),
            &garbage_line,
            "not a simulation record",
        ],
    );
}

#[test]
fn an_unknown_guard_in_a_config_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), "c", &["baseline", "nope"], "");
    let out = tauguard(&["run", cfg.to_str().unwrap()]);
    assert_bad_input(
        &out,
        &[
            cfg.to_str().unwrap(),
            "`grid.guards[1]`",
            "unknown guard configuration `nope`",
        ],
    );
}

#[test]
fn config_key_errors_name_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), "c", &["baseline"], "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let missing = tmp.path().join("missing.toml");
    std::fs::write(&missing, text.replace("model = \"sim-user\"\n", "")).unwrap();
    let line = text
        .lines()
        .position(|l| l == "[models.user]")
        .map(|i| format!("line {}", i + 1))
        .unwrap();
    assert_bad_input(
        &tauguard(&["run", missing.to_str().unwrap()]),
        &[
            missing.to_str().unwrap(),
            &line,
            "`models.user`",
            "missing field `model`",
        ],
    );
    let unknown = config(tmp.path(), "u", &["baseline"], "trails = 4\n");
    assert_bad_input(
        &tauguard(&["run", unknown.to_str().unwrap()]),
        &[
            unknown.to_str().unwrap(),
            "`run.trails`",
            "unknown field `trails`",
        ],
    );
}

#[test]
fn report_into_a_closed_pipe_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let run = two_cell_run(tmp.path());
    // The reader is closed before the command starts, so its first write meets a closed
    // pipe whatever the timing.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    for format in ["md", "json", "csv"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
            .current_dir(root())
            .args(["report", run.to_str().unwrap(), "--format", format])
            .stdout(Stdio::from(writer.try_clone().unwrap()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "--format {format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
