//! A file the run, a merge or a plan file could not read, parse or write: one error type for
//! all of them, so each names the file once and keeps the I/O or parse error as its cause.

use std::error::Error;
use std::path::PathBuf;

/// The file, and why it could not be used (`std::io::Error`, `serde_json::Error`, …) as the
/// `#[source]`, so the chain prints "`path`: why".
#[derive(Debug, thiserror::Error)]
#[error("`{}`", path.display())]
pub struct FileError {
    pub path: PathBuf,
    #[source]
    pub cause: Box<dyn Error + Send + Sync>,
}

impl FileError {
    pub(crate) fn new(
        path: impl Into<PathBuf>,
        cause: impl Into<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        FileError {
            path: path.into(),
            cause: cause.into(),
        }
    }
}
