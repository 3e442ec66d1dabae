//! Running the `tauguard` binary from the tests: one helper, so every test runs it the same way
//! (from the workspace root, output captured).

use std::process::Command;

/// Runs `tauguard` with `args` from the workspace root; returns (exit code, stdout, stderr).
pub fn tauguard_status(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tauguard_testkit::workspace_root())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot start tauguard: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
