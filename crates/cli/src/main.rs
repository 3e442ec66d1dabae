//! The `tauguard` binary: parses arguments, runs the command, maps the outcome to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    tauguard::run()
}
