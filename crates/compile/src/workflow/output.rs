//! The output directory of a workflow compile: checked as either compiler's is
//! ([`crate::output`]), and written only once the bundle has passed the validator, so a
//! failed compile leaves no half-written bundle behind.

use super::report::{BUNDLE_FILE, REPORT_FILE};
use crate::output::{OutputError, check_empty, io_at};
use std::path::Path;

/// Writes the bundle and the report (each pretty JSON with a final newline), replacing the
/// previous ones when overwriting; other files in the directory stay.
pub(super) fn write(
    out_dir: &Path,
    overwrite: bool,
    bundle_json: &str,
    report_json: &str,
) -> Result<(), OutputError> {
    check_empty(out_dir, overwrite)?;
    std::fs::create_dir_all(out_dir).map_err(io_at(out_dir))?;
    for (name, text) in [(BUNDLE_FILE, bundle_json), (REPORT_FILE, report_json)] {
        let path = out_dir.join(name);
        std::fs::write(&path, format!("{text}\n")).map_err(io_at(&path))?;
    }
    Ok(())
}
