//! The `tauguard` binary: parses arguments, runs the command, maps the outcome to an exit code.

use std::process::ExitCode;

/// See `tauguard_alloc` for why this allocator and its setting.
#[global_allocator]
static ALLOCATOR: tauguard_alloc::Allocator = tauguard_alloc::Allocator;

fn main() -> ExitCode {
    tauguard_alloc::keep_freed_memory();
    tauguard::run()
}
