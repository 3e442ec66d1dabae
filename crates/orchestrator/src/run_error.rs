//! How a run fails: every error `runner::run` returns, each naming what and where, and the
//! early stops (a fatal model error, an outage, an interrupt) saying what was kept and the
//! command that continues the run.

use crate::config::ConfigError;
use crate::records::RecordsError;
use crate::shard::Shard;
use std::path::PathBuf;
use tauguard_env::LoadError;
use tauguard_guards::PrerequisitesError;
use tauguard_llm::Outage;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Records(#[from] RecordsError),
    /// An input that is readable but wrong (a validation message naming the bad value).
    #[error("`{path}`: {message}")]
    Input { path: PathBuf, message: String },
    /// A file that could not be read, parsed or written.
    #[error(transparent)]
    File(#[from] crate::file_error::FileError),
    /// The plan file of the output directory.
    #[error(transparent)]
    Plan(#[from] crate::plan_file::PlanFileError),
    /// A domain's documents could not be embedded before the first simulation.
    #[error("`{url}`: {what}")]
    Embedding {
        url: PathBuf,
        what: String,
        #[source]
        cause: Box<tauguard_llm::LlmError>,
    },
    #[error(transparent)]
    Prerequisites(#[from] PrerequisitesError),
    #[error(transparent)]
    Oracle(#[from] crate::nmr_oracle::OracleError),
    #[error("`{path}`: cannot create the run directory")]
    CreateOutput {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error(
        "output `{0}` already holds records; pass --resume to continue it or choose another --out"
    )]
    OutputExists(PathBuf),
    /// A model (or the model factory: `role` is then `llm`) could not be built or identified.
    /// The typed cause is kept (callers can ask whether it is fatal, which provider, ...).
    #[error("`{role}` model")]
    Model {
        role: String,
        #[source]
        cause: tauguard_llm::LlmError,
    },
    #[error(
        "output `{path}` holds records of cell `{cell}` made from other inputs (cell hash {hashes}); these settings differ: {}\n  hint: choose another --out, or undo the change",
        keys.join(", ")
    )]
    CellChanged {
        path: PathBuf,
        cell: String,
        hashes: String,
        keys: Vec<String>,
    },
    #[error("output `{0}` is in use by another tauguard run")]
    Locked(PathBuf),
    #[error(
        "output `{path}` holds a run of another configuration; these keys differ: {}\n  hint: choose another --out, or undo the change",
        keys.join(", ")
    )]
    ConfigChanged { path: PathBuf, keys: Vec<String> },
    #[error(
        "output `{path}` holds {}, but this invocation asks for {}\n  hint: resume it with {}, or choose another --out",
        saved.map_or_else(|| "a whole run (no --shard)".into(), |s| format!("shard {s} of a run")),
        shard_name(*now),
        shard_flag(*saved)
    )]
    ShardChanged {
        path: PathBuf,
        saved: Option<Shard>,
        now: Option<Shard>,
    },
    /// A model answered that no call can succeed (HTTP 401/403/404); the attempt's error is
    /// the cause.
    #[error(
        "run stopped on a fatal model error ({hint}; {completed} simulations finished before it, their records are kept in `{}`)",
        out.display()
    )]
    ModelFatal {
        #[source]
        error: Box<crate::attempt::AttemptError>,
        hint: String,
        completed: usize,
        out: PathBuf,
    },
    #[error(
        "run stopped: {limit} attempts in a row could not connect to {endpoint}; {completed} simulations finished before it, their records are kept in `{}`\n  hint: is the server up and `base_url` right? (`run.max_consecutive_connect_failures` sets the limit); once it is, resume with `{resume}`",
        out.display()
    )]
    ConnectFailures {
        limit: u32,
        endpoint: String,
        completed: usize,
        out: PathBuf,
        /// The command that continues the run.
        resume: String,
    },
    /// Server errors, rate limits beyond the retries, or time-outs, too many in a row.
    #[error(
        "run stopped: {limit} {} in a row, the last from {endpoint}; {completed} simulations finished before it, their records are kept in `{}`\n  hint: is the server up and serving? (`run.{}` sets the limit, 0 = never); once it is, resume with `{resume}`",
        cause.what(),
        out.display(),
        cause.config_key()
    )]
    Outage {
        cause: Outage,
        limit: u32,
        endpoint: String,
        completed: usize,
        out: PathBuf,
        resume: String,
    },
    /// Ctrl-C or SIGTERM ([`RunOptions::interrupt`]).
    #[error("{0}")]
    Interrupted(Box<crate::interrupt::Interrupted>),
}

impl RunError {
    /// An input that reads but is wrong, with the message naming the bad value.
    pub(crate) fn input(path: impl Into<PathBuf>, message: String) -> RunError {
        RunError::Input {
            path: path.into(),
            message,
        }
    }

    /// The text of an optional input file: `None` when there is no such file.
    pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<String>, RunError> {
        if !path.exists() {
            return Ok(None);
        }
        std::fs::read_to_string(path)
            .map(Some)
            .map_err(|e| RunError::file(path, e))
    }

    /// A file that could not be read, parsed or written, with its cause.
    pub(crate) fn file(
        path: impl Into<PathBuf>,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> RunError {
        RunError::File(crate::file_error::FileError::new(path, cause))
    }
}

/// `shard 1/4` or `the whole run`, for [`RunError::ShardChanged`].
fn shard_name(s: Option<Shard>) -> String {
    s.map_or_else(
        || "the whole run (no --shard)".into(),
        |s| format!("shard {s}"),
    )
}

/// The `run` flag that resumes a directory holding shard `s` (none for a whole run).
fn shard_flag(s: Option<Shard>) -> String {
    s.map_or_else(|| "no --shard".into(), |s| format!("`--shard {s}`"))
}
