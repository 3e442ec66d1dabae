//! The binary's error contract: bad input exits 2 with one line that names what and where
//! exactly once (no cause printed twice through an error chain), and a reader that closes
//! standard output early does not turn a successful command into a panic. Credentials a
//! server rejects are bad input too: the run stops at once naming the key variable, and
//! `run --check` says which model is rejected before anything runs.

use crate::support::{assert_contains_all, s, written};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};

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
    SimConfig::new(name, "airline", &tauguard_testkit::fixtures_dir())
        .run_line(extra_run)
        .guards(guards)
        .write(&dir.join(format!("{name}.toml")))
}

/// Runs the fixture domain under two guards into `dir/run` and returns that directory.
fn two_cell_run(dir: &Path) -> PathBuf {
    let cfg = config(dir, "two", &["baseline", "toolguard"], "");
    let run = dir.join("run");
    let out = tauguard(&["run", s(&cfg), "--out", s(&run)]);
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
fn run_help_lists_every_guard_configuration_with_its_line() {
    let out = tauguard(&["run", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for e in tauguard_guards::GUARDS {
        let line = help
            .lines()
            .find(|l| l.split_whitespace().next() == Some(e.config))
            .unwrap_or_else(|| panic!("`{}` missing from run --help:\n{help}", e.config));
        assert!(line.ends_with(e.help), "{line}");
    }
}

#[test]
fn config_key_errors_name_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), "c", &["baseline"], "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let missing = written(
        tmp.path(),
        "missing.toml",
        text.replace("model = \"sim-user\"\n", ""),
    );
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

/// A loopback OpenAI-style server answering every request with `status` (200: a short text
/// reply), on a runtime of its own.
fn model_server(status: u16) -> Loopback {
    use wiremock::ResponseTemplate;
    Loopback::serve(if status == 200 {
        ResponseTemplate::new(200).set_body_json(chat_completion(
            "m",
            "stop",
            assistant_text("OK"),
            (9, 1),
        ))
    } else {
        ResponseTemplate::new(status).set_body_string("invalid api key")
    })
}

const SECRET: &str = "sk-test-not-a-real-key-4711";

/// A provider `name` at `url` with its key in `<NAME>_KEY`.
fn keyed(name: &str, url: &str) -> MockProvider {
    MockProvider::new(name, url).lines(&format!("api_key_env = \"{}_KEY\"", name.to_uppercase()))
}

/// A fixture-domain config whose agent and user are the given `provider = .., model = ..`
/// lines, with providers `good` and `bad` (keys in `GOOD_KEY`, `BAD_KEY`).
fn http_config(agent: &str, user: &str, good: MockProvider, bad: MockProvider) -> SimConfig {
    SimConfig::new("http", "airline", &tauguard_testkit::fixtures_dir())
        .run_line("num_tasks = 2\nconcurrency = 1\nmax_steps = 4")
        .agent(agent)
        .user(user)
        .provider(good)
        .provider(bad)
}

/// [`http_config`] with the agent `bad/m` at `bad` and the sim user (`good` is never asked).
fn bad_agent(bad: MockProvider) -> SimConfig {
    let unused = keyed("good", "http://127.0.0.1:9");
    http_config(
        "provider = \"bad\"\nmodel = \"m\"",
        "provider = \"sim\"\nmodel = \"sim-user\"",
        unused,
        bad,
    )
}

fn tauguard_with_keys(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(root())
        .env_remove("TAUGUARD_DATA_DIR")
        .env("GOOD_KEY", SECRET)
        .env("BAD_KEY", SECRET)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn rejected_credentials_stop_the_run_at_once_naming_the_key_variable() {
    let bad = model_server(401);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = bad_agent(keyed("bad", &bad.uri())).write(&tmp.path().join("http.toml"));
    let run = tmp.path().join("run");
    let out = tauguard_with_keys(&["run", s(&cfg), "--out", s(&run)]);
    let line = assert_bad_input(&out, &["HTTP 401", "`BAD_KEY`", "provider `bad`)"]);
    assert!(line.contains("run stopped"), "{line}");
    assert!(!line.contains(SECRET), "the key leaked: {line}");
    assert_eq!(
        bad.received().len(),
        1,
        "no retry, no restart, no second simulation"
    );
    let records = std::fs::read_to_string(run.join("records.jsonl")).unwrap_or_default();
    assert_eq!(
        records, "",
        "the stopped simulation is not recorded: --resume redoes it"
    );
}

#[test]
fn check_reports_each_model_reachable_or_rejected() {
    let good = model_server(200);
    let bad = model_server(403);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = http_config(
        "provider = \"good\"\nmodel = \"m\"",
        "provider = \"bad\"\nmodel = \"u\"",
        keyed("good", &good.uri()),
        keyed("bad", &bad.uri()),
    )
    .write(&tmp.path().join("http.toml"));
    let out = tauguard_with_keys(&["run", "--check", s(&cfg)]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_contains_all(
        &stdout,
        &[
            "reachable: agent `good/m`",
            "rejected: user `bad/u`: bad `u`: request rejected (HTTP 403)",
        ],
    );
    assert_bad_input(
        &out,
        &["models failed the check", "user `bad/u`: not reachable"],
    );
    assert!(!stdout.contains(SECRET));
    // A model that is not reachable is asked nothing more; a reachable agent is asked for a
    // tool call and sent its prompt (what those show: `tests/cli/model_fit.rs`).
    assert_eq!(bad.received().len(), 1);
    assert_eq!(good.received().len(), 3);
}

#[test]
fn a_zero_k_range_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tauguard(&["report", tmp.path().to_str().unwrap(), "--max-k", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_contains_all(&err, &["--max-k", "'0'"]);
}

#[test]
fn a_server_answering_only_5xx_stops_the_run_like_refused_connections() {
    let down = model_server(503);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = bad_agent(keyed("bad", &down.uri()).retry("max_attempts = 1"))
        .run_line("max_consecutive_server_errors = 3")
        .write(&tmp.path().join("http.toml"));
    let run = tmp.path().join("run");
    let out = tauguard_with_keys(&["run", s(&cfg), "--out", s(&run)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "as a connection stop: {stderr}");
    assert_contains_all(
        &stderr,
        &[
            "run stopped: 3 HTTP attempts were answered with a server error (5xx) in a row",
            "model `m` of provider `bad`",
            "`run.max_consecutive_server_errors`",
            "--resume --out",
        ],
    );
    assert_eq!(down.received().len(), 3, "no request after the limit");
}
