//! The output directory of a workflow compile: refused when non-empty unless overwriting
//! (checked before any model call, so a typo costs nothing), and written only once the bundle
//! has passed the validator, so a failed compile leaves no half-written bundle behind.

use super::WorkflowCompileError;
use super::report::{BUNDLE_FILE, REPORT_FILE};
use std::path::Path;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WorkflowCompileError + use<> {
    let path = path.to_path_buf();
    move |cause| WorkflowCompileError::Io { path, cause }
}

/// Refuses a non-empty output directory unless overwriting.
pub(super) fn check(out_dir: &Path, overwrite: bool) -> Result<(), WorkflowCompileError> {
    if overwrite || !out_dir.exists() {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(out_dir).map_err(io(out_dir))?;
    if entries.next().is_some() {
        Err(WorkflowCompileError::OutputNotEmpty(out_dir.to_path_buf()))
    } else {
        Ok(())
    }
}

/// Writes the bundle and the report (each pretty JSON with a final newline), replacing the
/// previous ones when overwriting; other files in the directory stay.
pub(super) fn write(
    out_dir: &Path,
    overwrite: bool,
    bundle_json: &str,
    report_json: &str,
) -> Result<(), WorkflowCompileError> {
    check(out_dir, overwrite)?;
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    for (name, text) in [(BUNDLE_FILE, bundle_json), (REPORT_FILE, report_json)] {
        let path = out_dir.join(name);
        std::fs::write(&path, format!("{text}\n")).map_err(io(&path))?;
    }
    Ok(())
}
