//! The project's procedure specs (`tasks/<domain>/procedure.toml`, one per domain folder that
//! has one), read for the process view of `report`, `evaluate` and `view`. A domain gains the
//! process view by adding its spec; nothing here names one. A spec that does not parse is bad
//! input naming the file and the key.

use crate::exit::{Classify, CliError};
use anyhow::Context;
use std::path::Path;
use tauguard_metrics::procedure::{ProcedureBook, ProcedureSpec};

/// Every procedure spec under `<project>/tasks/`.
pub(crate) fn load_book(project: &Path) -> Result<ProcedureBook, CliError> {
    let tasks = project.join("tasks");
    let mut book = ProcedureBook::default();
    let entries = std::fs::read_dir(&tasks)
        .with_context(|| format!("cannot read `{}`", tasks.display()))
        .bad_input()?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read `{}`", tasks.display()))
            .bad_input()?
            .path()
            .join("procedure.toml");
        if !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read `{}`", path.display()))
            .bad_input()?;
        let spec = ProcedureSpec::from_toml(&text, &path.display().to_string()).bad_input()?;
        book.specs.insert(spec.domain.clone(), spec);
    }
    Ok(book)
}

/// The book of the resolved project, or an empty one (with the reason as a warning) when no
/// project is found: the outcome view never depends on it.
pub(crate) fn book_or_warn(
    project: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<ProcedureBook, CliError> {
    match crate::project::resolve(project) {
        Ok(dir) => load_book(&dir),
        Err(e) => {
            warnings.push(format!("process view skipped: {e:#}"));
            Ok(ProcedureBook::default())
        }
    }
}
