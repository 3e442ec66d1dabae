//! The one error type of the viewer. Every variant names the file (and line) it concerns, so
//! a bad input or an unwritable output is found from the message alone.

use std::path::PathBuf;

/// Anything that stops building or serving a site.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A file or directory could not be read or written.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A line of a `records.jsonl` is not a simulation record.
    #[error("{}:{line}: not a simulation record", path.display())]
    BadRecord {
        path: PathBuf,
        line: usize,
        #[source]
        cause: serde_json::Error,
    },
    /// An input the metrics loader refused (upstream `results.json`, unknown input kinds).
    #[error(transparent)]
    Input(tauguard_metrics::MetricsError),
    /// `--out` is a non-empty directory that no earlier `tauguard view` wrote.
    #[error(
        "{}: exists, is not empty and holds no earlier `tauguard view` site (no `.tauguard-view` marker); pick an empty or new directory",
        path.display()
    )]
    OutNotASite { path: PathBuf },
    /// The inputs hold no simulation record.
    #[error("no simulation records in {inputs}")]
    Empty { inputs: String },
    /// The `--serve` listener could not be opened.
    #[error("cannot listen on 127.0.0.1:{port}")]
    Listen {
        port: u16,
        #[source]
        cause: std::io::Error,
    },
}

/// The metrics' streaming import of a `results.json` reports its failures as metrics errors.
impl From<tauguard_metrics::MetricsError> for ViewError {
    fn from(e: tauguard_metrics::MetricsError) -> ViewError {
        ViewError::Input(e)
    }
}

impl ViewError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> ViewError {
        ViewError::Io {
            path: path.into(),
            cause,
        }
    }
}
