//! Documented exit codes.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the command ran but reported failures (e.g. a gold step failed to load its task) |
//! | 2 | bad input: command line, config, data directory or task file |
//! | 3 | internal error (a bug: please report it) |

use std::process::ExitCode;

pub const SUCCESS: u8 = 0;
pub const FAILURES: u8 = 1;
pub const BAD_INPUT: u8 = 2;
pub const INTERNAL: u8 = 3;

/// Maps an error to its exit code: load and parse errors are bad input.
pub fn for_error(err: &anyhow::Error) -> ExitCode {
    use tauguard_orchestrator::runner::RunError;
    let bad_input = err.downcast_ref::<tauguard_env::LoadError>().is_some()
        || err
            .downcast_ref::<tauguard_orchestrator::config::ConfigError>()
            .is_some()
        || err
            .downcast_ref::<tauguard_metrics::MetricsError>()
            .is_some()
        || matches!(
            err.downcast_ref::<RunError>(),
            Some(
                RunError::Config(_)
                    | RunError::Load(_)
                    | RunError::Input { .. }
                    | RunError::OutputExists(_)
                    | RunError::Model { .. }
            )
        );
    if bad_input {
        ExitCode::from(BAD_INPUT)
    } else {
        ExitCode::from(INTERNAL)
    }
}
