//! The summaries of a report's inputs: a run's fresh sidecar, else its records streamed
//! (`summary/load.rs`); upstream results files imported one simulation at a time. It sits
//! here, after the sidecar, because it chooses between the sidecar and the records.

use crate::error::MetricsError;
use crate::input::{LoadOptions, resolve, upstream};
use crate::summary::load::summarise_jsonl;
use crate::summary::{SimSummary, Summariser};
use std::path::Path;

/// Loads every input as simulation summaries, in input order: a run's fresh sidecar, else
/// its records streamed (see the module docs); upstream results files are imported one
/// simulation at a time.
pub fn load_summaries<P: AsRef<Path>>(
    paths: &[P],
    options: &LoadOptions,
) -> Result<Vec<SimSummary>, MetricsError> {
    let mut out = Vec::new();
    for p in paths {
        let file = resolve(p.as_ref())?;
        if file.extension().is_some_and(|e| e == "json") {
            let mut summariser = Summariser::default();
            upstream::for_each_record(&file, &options.domains, |rec| {
                out.push(summariser.summary(&rec));
                Ok::<(), MetricsError>(())
            })?;
        } else if let Some(sims) = super::read_fresh(&file) {
            out.extend(sims);
        } else {
            out.extend(summarise_jsonl(&file)?);
        }
    }
    Ok(out)
}
