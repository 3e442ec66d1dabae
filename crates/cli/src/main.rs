//! The `tauguard` binary: parses arguments, runs the command, maps the outcome to an exit code.

use std::process::ExitCode;

/// Thousands of simulations in flight allocate small messages from every worker thread;
/// glibc's allocator spends a third of the harness's CPU on that (see the concurrency bench).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tauguard::run()
}
