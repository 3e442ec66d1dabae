//! Running the `tauguard` binary from the tests: one helper, so every test runs it the same way
//! (from the workspace root, output captured).

use std::process::Command;

/// Runs `tauguard` with `args` from the workspace root; returns (exit code, stdout, stderr).
pub(crate) fn tauguard_status(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_tauguard")).args(args))
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
