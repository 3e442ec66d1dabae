//! Loading inputs: tauguard `records.jsonl` files, run directories holding one, and upstream
//! τ²-bench `results.json` files (imported by `upstream.rs`, one simulation at a time).
//!
//! An INPUT is resolved as follows: a directory → its `records.jsonl`, else its
//! `results.json`; a `.json` file → an upstream results file; any other file → JSON lines.
//! JSON lines are parsed in parallel; the first malformed line (by line number) is reported
//! as `path:line: message`. Blank lines are skipped.
//!
//! `report` and `compare` load summaries (`sidecar/load.rs`), never whole records: a run's
//! columnar sidecar when it is fresh, else its records read in bounded chunks (about
//! [`CHUNK_BYTES`] of lines at a time, parsed in parallel into lean views and summarised at
//! once, `summary/load.rs`), so memory holds summaries and one chunk of text, never a
//! trajectory.

pub(crate) mod domains;
pub(crate) mod lean;
pub(crate) mod upstream;

use crate::error::MetricsError;
use crate::input::domains::DomainTable;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

/// Bytes of JSON lines read before a chunk is parsed (a longer line makes a longer chunk).
pub(crate) const CHUNK_BYTES: usize = 32 << 20;

/// How inputs are interpreted.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Mutating tools and ordered-trace flags per domain, used for imported results files.
    pub domains: DomainTable,
}

/// Loads every input with the built-in domain table; records keep input order.
pub fn load_inputs<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<SimulationRecord>, MetricsError> {
    load_inputs_with(paths, &LoadOptions::default())
}

/// Loads every input; records keep input order.
pub(crate) fn load_inputs_with<P: AsRef<Path>>(
    paths: &[P],
    options: &LoadOptions,
) -> Result<Vec<SimulationRecord>, MetricsError> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(load_input(p.as_ref(), options)?);
    }
    Ok(out)
}

/// Loads one INPUT (run directory, records `.jsonl` or τ²-bench `results.json`).
pub fn load_input(
    path: &Path,
    options: &LoadOptions,
) -> Result<Vec<SimulationRecord>, MetricsError> {
    let file = resolve(path)?;
    if file.extension().is_some_and(|e| e == "json") {
        return upstream::import_results(&file, &options.domains);
    }
    let text = std::fs::read_to_string(&file).map_err(|e| MetricsError::io(&file, e))?;
    parse_records_jsonl(&file, &text)
}

/// Hands each simulation of a τ²-bench `results.json` (a file, not a directory), imported as
/// a record, to `each` in file order, reading one simulation at a time: memory holds the
/// file's `info` and `tasks` and the record at hand, never the document. A failure of `each`
/// stops the read and is returned as it is.
pub fn for_each_imported<E: From<MetricsError>>(
    path: &Path,
    options: &LoadOptions,
    each: impl FnMut(SimulationRecord) -> Result<(), E>,
) -> Result<(), E> {
    upstream::for_each_record(path, &options.domains, each)
}

pub(crate) fn resolve(path: &Path) -> Result<PathBuf, MetricsError> {
    let meta = std::fs::metadata(path).map_err(|e| MetricsError::io(path, e))?;
    if meta.is_file() {
        return Ok(path.to_path_buf());
    }
    if meta.is_dir() {
        for name in ["records.jsonl", "results.json"] {
            let candidate = path.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(MetricsError::UnknownInput {
        path: path.to_path_buf(),
    })
}

/// Parses JSON lines of `SimulationRecord`s; `path` only names the source in errors.
pub fn parse_records_jsonl(path: &Path, text: &str) -> Result<Vec<SimulationRecord>, MetricsError> {
    let lines: Vec<&str> = text.lines().collect();
    let parse = |line: &str| serde_json::from_str::<SimulationRecord>(line.trim());
    let parsed: Result<Vec<SimulationRecord>, serde_json::Error> = lines
        .par_iter()
        .with_min_len(1024)
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse(l))
        .collect();
    // Some line is malformed: the parallel parse stops at any of them, so find the first one,
    // sequentially, for a stable message.
    parsed.map_err(|found| {
        let (line, cause) = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .find_map(|(i, l)| parse(l).err().map(|e| (i + 1, e)))
            // Parsing is deterministic, so the line is found again; report rather than panic.
            .unwrap_or((0, found));
        MetricsError::BadRecord {
            path: path.to_path_buf(),
            line,
            cause: cause.into(),
        }
    })
}
