//! The one error type every command returns, and the documented exit codes it maps to.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the command ran but reported failures (infrastructure-error records, gold tasks that failed to replay, a compile whose model calls failed, a run stopped by a server refusing connections) |
//! | 2 | bad input: command line (a malformed `--shard`, `--shard auto` outside a job array), config, data directory, task file, record file, output path, credentials or a model name a server rejects (a run stopped by HTTP 401/403/404, `run --check`), a workflow bundle that fails `validate workflow`, run directories `merge` refuses (other configs, a shard still running, a non-empty `--out`, a union lacking planned simulations) |
//! | 3 | internal error (a bug: please report it), or the machine failing under the command |
//! | 130 | a run stopped by Ctrl-C or SIGTERM: its records and the spend of the simulations it cut off are kept (`interrupted.jsonl`); `--resume` continues it |
//!
//! Each command classifies its errors where they arise ([`Classify`], or an exhaustive `match`
//! over a library error), so the code never depends on guessing an error's type afterwards,
//! and a new library error variant fails to compile until someone decides its class.

use std::process::ExitCode;

/// Why a command did not succeed.
#[derive(Debug)]
pub(crate) enum CliError {
    /// The command ran to its end and reported failures (each named on stderr as it
    /// happened); the error says how many and where they are recorded.
    Failures(anyhow::Error),
    /// Something the user supplied is wrong; the message names what and where.
    BadInput(anyhow::Error),
    /// Neither of the above: a bug, or the machine failing (no runtime, stdout unwritable).
    Internal(anyhow::Error),
    /// The user stopped the command (Ctrl-C, SIGTERM); the error says what was kept.
    Interrupted(anyhow::Error),
}

impl CliError {
    /// The error to print, whatever its class.
    pub(crate) fn error(&self) -> &anyhow::Error {
        match self {
            CliError::Failures(e)
            | CliError::BadInput(e)
            | CliError::Internal(e)
            | CliError::Interrupted(e) => e,
        }
    }
}

/// The process exit code of a command's outcome: the one place codes are decided.
pub(crate) fn code(outcome: &Result<(), CliError>) -> ExitCode {
    ExitCode::from(match outcome {
        Ok(()) => 0,
        Err(CliError::Failures(_)) => 1,
        Err(CliError::BadInput(_)) => 2,
        Err(CliError::Internal(_)) => 3,
        Err(CliError::Interrupted(_)) => 130,
    })
}

/// Classifies any error where it arises: `load(path).bad_input()?`.
pub(crate) trait Classify<T> {
    /// The user supplied something wrong (exit 2).
    fn bad_input(self) -> Result<T, CliError>;
    /// A bug or a machine failure (exit 3).
    fn internal(self) -> Result<T, CliError>;
}

impl<T, E: Into<anyhow::Error>> Classify<T> for Result<T, E> {
    fn bad_input(self) -> Result<T, CliError> {
        self.map_err(|e| CliError::BadInput(e.into()))
    }

    fn internal(self) -> Result<T, CliError> {
        self.map_err(|e| CliError::Internal(e.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_has_its_documented_code() {
        let codes = [
            (Ok(()), ExitCode::from(0)),
            (
                Err(CliError::Failures(anyhow::anyhow!("f"))),
                ExitCode::from(1),
            ),
            (
                Err(CliError::BadInput(anyhow::anyhow!("b"))),
                ExitCode::from(2),
            ),
            (
                Err(CliError::Internal(anyhow::anyhow!("i"))),
                ExitCode::from(3),
            ),
            (
                Err(CliError::Interrupted(anyhow::anyhow!("c"))),
                ExitCode::from(130),
            ),
        ];
        for (outcome, expected) in codes {
            assert_eq!(code(&outcome), expected, "{outcome:?}");
        }
    }
}
