//! The one error type of this crate. Every variant that comes from an input names the file
//! (and the line, where there is one), so a malformed record is found without a debugger.
//! A cause that is an error keeps it as its `#[source]`: the message names what failed and
//! where, and the binary's `{err:#}` (or `tauguard_core::Chain`) adds the cause once.

use std::path::PathBuf;

/// Anything that stops loading inputs, computing a comparison or writing outputs.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A file or directory could not be read or written.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A line of a `records.jsonl` is not a valid simulation record.
    #[error("{}:{line}: not a simulation record: {message}", path.display())]
    BadRecord {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A τ²-bench `results.json` does not have upstream's layout.
    /// `location` is `line L column C` for JSON syntax and shape errors, or a path such as
    /// `simulations[3].messages[5]`.
    #[error("{}: {location}: not a τ²-bench results file: {message}", path.display())]
    BadResults {
        path: PathBuf,
        location: String,
        message: String,
    },
    /// An input path is neither a run directory, a `.jsonl` nor a `.json` file.
    #[error("{}: not a run directory, a records `.jsonl` or a τ²-bench `results.json`\nhint: a run directory holds `records.jsonl` (or `results.json`)", path.display())]
    UnknownInput { path: PathBuf },
    /// A domain table (`domains.json` shape) is malformed.
    #[error("domain table: {0}")]
    BadDomainTable(String),
    /// `compare` found no (task, trial) present in both inputs.
    #[error("no paired simulations: {0}")]
    NoPairs(String),
    /// Writing a CSV table failed.
    #[error("{}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        cause: csv::Error,
    },
    /// A `compare` selector is malformed or names a key no record has.
    #[error("selector `{selector}`: {message}")]
    BadSelector { selector: String, message: String },
    /// The two sides of `compare` share no domain.
    #[error("cannot compare {a} ({a_domains}) with {b} ({b_domains}): they share no domain")]
    DifferentDomains {
        a: String,
        b: String,
        a_domains: String,
        b_domains: String,
    },
    /// A side of `compare` holds several configurations that would be paired with one.
    #[error(
        "{side} holds {n} configurations for {group}: {cells}\nhint: select one side per configuration, e.g. --a guard=baseline --b guard=pg-checklist"
    )]
    AmbiguousSide {
        side: String,
        group: String,
        n: usize,
        cells: String,
    },
    /// Records of one run name come from different configurations.
    #[error(
        "run `{run}` holds records of two configurations (config hashes {a} and {b}); they would be pooled\nhint: report them separately, or pass --pool to pool them deliberately"
    )]
    MixedConfigs { run: String, a: String, b: String },
    /// A columnar sidecar could not be written (or read back when asked for explicitly).
    #[error("{}: sidecar: {message}", path.display())]
    Sidecar { path: PathBuf, message: String },
    /// Drawing a plot failed.
    #[error("{}: cannot draw plot: {message}", path.display())]
    Plot { path: PathBuf, message: String },
}

impl MetricsError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        MetricsError::Io {
            path: path.into(),
            cause,
        }
    }
}
