//! The output directory of either compiler: refused when non-empty unless overwriting
//! (checked before any model call, so a typo costs nothing), and every file-system failure
//! under it named by its path.

use std::path::{Path, PathBuf};

/// Why a compile's output directory cannot be used or written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("output directory {} is not empty; choose a new directory or allow overwriting", .0.display())]
    NotEmpty(PathBuf),
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
}

/// The I/O failure at `path`, for `map_err`.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + use<> {
    let path = path.to_path_buf();
    move |cause| OutputError::Io { path, cause }
}

/// Refuses a non-empty output directory unless overwriting.
pub(crate) fn check_empty(out_dir: &Path, overwrite: bool) -> Result<(), OutputError> {
    if overwrite || !out_dir.exists() {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(out_dir).map_err(io_at(out_dir))?;
    if entries.next().is_some() {
        Err(OutputError::NotEmpty(out_dir.to_path_buf()))
    } else {
        Ok(())
    }
}
