//! A domain's frozen workflow bundle, read for a guide: `tasks/<domain>/workflow/bundle.json`
//! (or a compiled set's `bundle.json`), parsed, checked by the validator against the domain's
//! tool catalogue and indexed. A guide never runs on a bundle the validator refuses, so a broken artifact stops the run at plan
//! time with the file and its first problems named, not mid-simulation.

use super::flow::Flow;
use super::validate::validate;
use super::workflow::{Bundle, WorkflowError};
use crate::catalog::ToolCatalog;
use std::path::{Path, PathBuf};

/// Where a domain's frozen bundle lives under the project's `tasks/`.
pub fn bundle_path(tasks_dir: &Path, domain: &str) -> PathBuf {
    tasks_dir.join(domain).join("workflow").join("bundle.json")
}

/// How many validation problems an error message quotes.
const QUOTED: usize = 3;

/// Why a frozen bundle cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FrozenBundleError {
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
    #[error("workflow bundle {} is invalid ({count} problem(s)): {first}", path.display())]
    Invalid {
        path: PathBuf,
        count: usize,
        /// The first problems, one per line of the validator's report, joined by `; `.
        first: String,
    },
}

/// Loads, validates and indexes the frozen bundle of `catalog`'s domain.
pub fn load_flow(tasks_dir: &Path, catalog: &ToolCatalog) -> Result<Flow, FrozenBundleError> {
    load_flow_file(&bundle_path(tasks_dir, &catalog.domain), catalog)
}

/// [`load_flow`] of the bundle at `path` (a compiled set's, see [`crate::artifact_set`]).
pub(crate) fn load_flow_file(
    path: &Path,
    catalog: &ToolCatalog,
) -> Result<Flow, FrozenBundleError> {
    let path = path.to_path_buf();
    let bundle = Bundle::load(&path)?;
    let report = validate(&bundle, catalog);
    if !report.is_valid() {
        let first: Vec<String> = report
            .problems
            .iter()
            .take(QUOTED)
            .map(ToString::to_string)
            .collect();
        let more = report.problems.len().saturating_sub(QUOTED);
        let mut first = first.join("; ");
        if more > 0 {
            first.push_str(&format!(
                "; and {more} more (run `tauguard validate workflow`)"
            ));
        }
        return Err(FrozenBundleError::Invalid {
            path,
            count: report.problems.len(),
            first,
        });
    }
    Ok(Flow::new(bundle))
}
