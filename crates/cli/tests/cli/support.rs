//! Running the `tauguard` binary from the tests, and reading what it wrote: one helper per
//! step, so every test runs it the same way (from the workspace root, output captured) and
//! reads a run's records the same way.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tauguard_orchestrator::{RunConfig, RunOptions, RunSummary, Workload, build_runtime, run};
use tauguard_testkit::{MockProvider, SimConfig};

/// Runs `tauguard` with `args` from the workspace root; returns (exit code, stdout, stderr).
pub(crate) fn tauguard_status(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_tauguard")).args(args))
}

/// Runs `tauguard` with `args`, asserting it exits 0 (naming the arguments and stderr);
/// returns stdout.
pub(crate) fn tauguard_ok(args: &[&str]) -> String {
    let (code, out, err) = tauguard_status(args);
    assert_eq!(code, 0, "tauguard {args:?}: {err}");
    out
}

/// `tauguard args` with the loopback provider's key (`LOCAL_KEY`) set, no data directory
/// taken from the environment and no stdin, its output piped: what a run against a
/// [`local_config`] server is started with.
pub(crate) fn keyed_command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tauguard"));
    c.current_dir(tauguard_testkit::workspace_root())
        .env_remove("TAUGUARD_DATA_DIR")
        .env("LOCAL_KEY", "sk-test-local")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A fixture-domain run, one simulation at a time and never retried, whose agent and user are
/// `model` of the provider `local` at `server` (key in `LOCAL_KEY`, one attempt per call).
pub(crate) fn local_config(name: &str, model: &str, server: &str) -> SimConfig {
    let role = format!("provider = \"local\"\nmodel = \"{model}\"");
    let provider = MockProvider::new("local", server)
        .lines("api_key_env = \"LOCAL_KEY\"")
        .retry("max_attempts = 1");
    SimConfig::new(name, "airline", &tauguard_testkit::fixtures_dir())
        .run_line("concurrency = 1\nmax_retries = 0")
        .agent(&role)
        .user(&role)
        .provider(provider)
}

/// The row of a Markdown table that starts with `| name`.
pub(crate) fn table_row(md: &str, name: &str) -> String {
    line_starting(md, &format!("| {name}")).to_string()
}

/// The first line of `text` that starts with `prefix`; the test fails naming it without one.
pub(crate) fn line_starting<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting `{prefix}`:\n{text}"))
}

/// The first line of `text` that holds `part`; the test fails naming it without one.
pub(crate) fn line_with<'a>(text: &'a str, part: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(part))
        .unwrap_or_else(|| panic!("no line with `{part}`:\n{text}"))
}

/// A procedure spec of the toy domain (`tasks/<project>/toy/procedure.toml`): its guarded and
/// identity tools, `header_extra` lines, its provenance, then `requirements`.
pub(crate) fn toy_spec(header_extra: &str, requirements: &[String]) -> String {
    format!(
        r#"
schema = "tauguard.procedure/1"
domain = "toy"
guarded = ["borrow_book", "return_book"]
identity_tools = ["get_member_details"]
{header_extra}
[provenance]
origin = "hand-written"
authors = "tauguard maintainers (test)"
policy_files = ["policy.md"]
sections = ["Toy lending library policy (tauguard test data)"]
date = "2026-12-02"
{}"#,
        requirements.concat()
    )
}

/// One `[[requirement]]` of a [`toy_spec`], citing `passage` of the toy policy.
pub(crate) fn toy_requirement(id: &str, level: &str, passage: &str, check: &str) -> String {
    format!(
        r#"
[[requirement]]
id = "{id}"
level = "{level}"
file = "policy.md"
section = "Toy lending library policy (tauguard test data)"
passage = "{passage}"
check = {check}
"#
    )
}

/// `report <dir> --format json` (with `extra` arguments), parsed.
pub(crate) fn report_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["report", s(dir), "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&tauguard_ok(&args)).unwrap()
}

/// Asserts that `text` holds every one of `parts`, naming the first one missing.
pub(crate) fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "`{part}` missing from: {text}");
    }
}

/// The group of `guard` among a report's JSON groups.
pub(crate) fn guard_group<'a>(groups: &'a Value, guard: &str) -> &'a Value {
    groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["guard"] == guard)
        .unwrap_or_else(|| panic!("no group of `{guard}` in {groups}"))
}

/// The file `name` in `dir`, written with `text` (a config, a catalog, an input file).
pub(crate) fn written(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// A path as the `&str` an argument list takes.
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The records a run wrote into `dir`, as JSON; the file must exist and every line parse.
pub(crate) fn records(dir: &Path) -> Vec<Value> {
    let path = dir.join("records.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every guard event of `records`, in order.
pub(crate) fn guard_events(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .flat_map(|r| r["guard_events"].as_array().unwrap().clone())
        .collect()
}

/// The lines of a JSON-lines file (none when it is missing), blank lines skipped.
pub(crate) fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs `cfg` into `out` in this process, through the orchestrator's library entry and the
/// runtime the binary would choose, with the workspace as the project.
pub(crate) fn run_in_process(cfg: RunConfig, out: &Path) -> RunSummary {
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        project_dir: Some(tauguard_testkit::workspace_root()),
        ..Default::default()
    };
    build_runtime(Workload::of(&cfg))
        .unwrap()
        .block_on(run(cfg, opts))
        .unwrap()
}

/// Runs `cmd` from the workspace root; returns (exit code, stdout, stderr).
fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd
        .current_dir(tauguard_testkit::workspace_root())
        .output()
        .unwrap_or_else(|e| panic!("cannot start tauguard: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The variables `run --shard auto` reads; [`tauguard_in_env`] clears them all first, so a test
/// run inside a Slurm or Kubernetes job sees only what the test sets.
const SHARD_VARS: [&str; 6] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "JOB_COMPLETION_INDEX",
    "TAUGUARD_SHARD_COUNT",
];

/// [`tauguard_status`] with the job-array variables cleared and `env` set.
pub(crate) fn tauguard_in_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tauguard"));
    cmd.args(args);
    for var in SHARD_VARS {
        cmd.env_remove(var);
    }
    output(cmd.envs(env.iter().copied()))
}

/// `PATH` with the tested `tauguard` binary's directory first: what scripts that call
/// `tauguard` by name (the cluster launchers) run with.
pub(crate) fn path_with_tauguard() -> String {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_tauguard"))
        .parent()
        .expect("the binary is in a directory");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
