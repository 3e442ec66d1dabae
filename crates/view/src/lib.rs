//! `tauguard view`: a static site over a run's records — an overview of the cells with the
//! report's Pass^k by slice and the floors, a grid of outcomes per task and trial with
//! McNemar's discordant pairs between cells, and each simulation as a conversation with the
//! guard's and guide's decisions inline where they happened, and the process view: per cell
//! process-valid Pass^k, first deviations and intervention coverage; per simulation its
//! first deviation and violations.
//!
//! The site works from `file://` (data files are scripts, see `embed.rs`) or served on
//! loopback (`serve.rs`). It loads a small index first and one file per simulation on demand;
//! building it streams the records, `results.json` imports included (`scan.rs`), keeping per
//! simulation only its index row and the summary the metrics read (`SimSummary`), so memory
//! follows the index, never the records.
//! Every record string is rendered as text by the page's script (`assets/dom.js`), and the
//! page's Content-Security-Policy forbids inline scripts, event handlers and remote sources.
//!
//! Imports `tauguard-core` (records) and `tauguard-metrics` (the streaming `results.json`
//! import, the per-simulation summaries and the report's numbers) only.

mod embed;
mod error;
mod index;
mod scan;
mod serve;
mod site;

pub use error::ViewError;
pub use scan::{ProcessView, process_file, sim_file};
pub use serve::{Server, serve_forever};

use std::path::{Path, PathBuf};
use tauguard_metrics::Floor;
use tauguard_metrics::{ReportOptions, SimSummary, report_summaries};

/// The first half of a build: the inputs streamed into `out`'s data files.
#[derive(Debug)]
pub struct Scan {
    out: PathBuf,
    inputs: Vec<String>,
    scanned: scan::Scanned,
}

/// What a finished build wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub dir: PathBuf,
    pub simulations: usize,
    pub cells: usize,
    /// Bytes of the simulation data files and of the index.
    pub data_bytes: u64,
    pub index_bytes: u64,
}

/// Streams `inputs` (run directories, `records.jsonl` files or τ²-bench `results.json` files)
/// into a site at `out`, one data file per simulation; with `process`, each simulation's
/// process verdict beside it and on its summary (the overview's process view).
pub fn scan(
    inputs: &[PathBuf],
    out: &Path,
    process: Option<ProcessView<'_>>,
) -> Result<Scan, ViewError> {
    site::prepare(out)?;
    let scanned = scan::scan(inputs, out, process)?;
    let inputs: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    if scanned.rows.is_empty() {
        return Err(ViewError::Empty {
            inputs: inputs.join(", "),
        });
    }
    Ok(Scan {
        out: out.to_path_buf(),
        inputs,
        scanned,
    })
}

impl Scan {
    /// Every simulation's summary, in input order: what the report reads, and the floors'
    /// task lists (domain and task of each simulation).
    pub fn summaries(&self) -> &[SimSummary] {
        &self.scanned.sims
    }

    /// Computes the report (with `floors`, when given) and writes the index and the page.
    pub fn finish(
        self,
        options: &ReportOptions,
        floors: Option<Vec<Floor>>,
        warnings: Vec<String>,
    ) -> Result<Built, ViewError> {
        let mut rep = report_summaries(&self.scanned.sims, options);
        if let Some(floors) = floors {
            rep = rep.with_floors(floors);
        }
        rep.warnings.extend(warnings);
        let simulations = self.scanned.rows.len();
        let data_bytes = self.scanned.bytes_written;
        let idx = index::build(self.inputs, &self.scanned.sims, &self.scanned.rows, &rep);
        drop(self.scanned);
        let index_bytes = site::finish(&self.out, &idx)?;
        Ok(Built {
            dir: self.out,
            simulations,
            cells: idx.cells.len(),
            data_bytes,
            index_bytes,
        })
    }
}
