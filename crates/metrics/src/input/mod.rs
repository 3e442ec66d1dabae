//! Loading inputs: tauguard `records.jsonl` files, run directories holding one, and upstream
//! τ²-bench `results.json` files (imported by `upstream.rs`, one simulation at a time).
//!
//! An INPUT is resolved as follows: a directory → its `records.jsonl`, else its
//! `results.json`; a `.json` file → an upstream results file; any other file → JSON lines.
//! JSON lines are parsed in parallel; the first malformed line (by line number) is reported
//! as `path:line: message`. Blank lines are skipped.
//!
//! `report` and `compare` load summaries ([`load_summaries`]), never whole records: a run's
//! columnar sidecar when it is fresh (`sidecar.rs`), else its records read in bounded chunks
//! (about [`CHUNK_BYTES`] of lines at a time, parsed in parallel into lean views and summarised
//! at once), so memory holds summaries and one chunk of text, never a trajectory.

pub mod domains;
pub(crate) mod lean;
pub mod sources;
pub(crate) mod upstream;

use crate::error::MetricsError;
use crate::input::domains::DomainTable;
use crate::input::lean::Lean;
use crate::summary::{CellCanon, Interner, SimSummary, Summariser};
use rayon::prelude::*;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

/// Bytes of JSON lines read before a chunk is parsed (a longer line makes a longer chunk).
pub const CHUNK_BYTES: usize = 32 << 20;

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
pub fn load_inputs_with<P: AsRef<Path>>(
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
        } else if let Some(sims) = crate::sidecar::read_fresh(&file) {
            out.extend(sims);
        } else {
            out.extend(summarise_jsonl(&file)?);
        }
    }
    Ok(out)
}

/// Summaries of one records file, streamed from the records (never from a sidecar).
pub fn summarise_jsonl(path: &Path) -> Result<Vec<SimSummary>, MetricsError> {
    let file = std::fs::File::open(path).map_err(|e| MetricsError::io(path, e))?;
    let size = file.metadata().ok().map(|m| m.len());
    summarise_lines(path, std::io::BufReader::with_capacity(1 << 20, file), size)
}

/// Summaries of JSON lines read from `reader` in chunks; `path` only names the source in
/// errors.
pub fn summarise_jsonl_from(
    path: &Path,
    reader: impl BufRead,
) -> Result<Vec<SimSummary>, MetricsError> {
    summarise_lines(path, reader, None)
}

/// [`summarise_jsonl_from`], reserving room for the records `size_hint` bytes hold.
fn summarise_lines(
    path: &Path,
    mut reader: impl BufRead,
    size_hint: Option<u64>,
) -> Result<Vec<SimSummary>, MetricsError> {
    let mut out = Vec::new();
    let mut canon = CellCanon::default();
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK_BYTES + (1 << 20));
    let mut ends: Vec<usize> = Vec::new();
    let mut first_line = 1;
    loop {
        buf.clear();
        ends.clear();
        while buf.len() < CHUNK_BYTES {
            let n = reader
                .read_until(b'\n', &mut buf)
                .map_err(|e| MetricsError::io(path, e))?;
            if n == 0 {
                break;
            }
            ends.push(buf.len());
        }
        if ends.is_empty() {
            return Ok(out);
        }
        let lines: Vec<&[u8]> = std::iter::once(0)
            .chain(ends.iter().copied())
            .zip(ends.iter().copied())
            .map(|(a, b)| &buf[a..b])
            .collect();
        let parsed: Vec<Result<Option<SimSummary>, (usize, String)>> = lines
            .par_chunks(256)
            .enumerate()
            .flat_map_iter(|(ci, chunk)| {
                let mut interner = Interner::default();
                chunk
                    .iter()
                    .enumerate()
                    .map(|(i, line)| {
                        let n = first_line + ci * 256 + i;
                        summarise_line(line, &mut interner).map_err(|e| (n, e))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        if out.capacity() == 0 {
            out.reserve(estimated_records(size_hint, &ends));
        }
        for r in parsed {
            match r {
                Ok(Some(mut s)) => {
                    canon.apply(&mut s);
                    out.push(s);
                }
                Ok(None) => {}
                Err((line, message)) => {
                    return Err(MetricsError::BadRecord {
                        path: path.to_path_buf(),
                        line,
                        message,
                    });
                }
            }
        }
        canon.next_batch();
        first_line += lines.len();
    }
}

/// The records a file of `size_hint` bytes holds, estimated from its first chunk (line ends
/// `ends`) with a fifth more for lines longer than the first ones; 0 without a hint. Growing a
/// million summaries by doubling would hold the old and the new buffer at once.
fn estimated_records(size_hint: Option<u64>, ends: &[usize]) -> usize {
    match (size_hint, ends.last()) {
        (Some(total), Some(&first)) if first > 0 => {
            let per_line = first as f64 / ends.len() as f64;
            (total as f64 / per_line * 1.2) as usize
        }
        _ => 0,
    }
}

/// One JSON line's summary; `None` for a blank line.
fn summarise_line(line: &[u8], interner: &mut Interner) -> Result<Option<SimSummary>, String> {
    let text = std::str::from_utf8(line).map_err(|e| e.to_string())?.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let lean: Lean<'_> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(Some(SimSummary::from_lean(lean, interner)))
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
    let parsed: Result<Vec<SimulationRecord>, ()> = lines
        .par_iter()
        .with_min_len(1024)
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse(l).map_err(|_| ()))
        .collect();
    match parsed {
        Ok(records) => Ok(records),
        // Some line is malformed: find the first one, sequentially, for a stable message.
        Err(()) => {
            for (i, line) in lines.iter().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                if let Err(e) = parse(line) {
                    return Err(MetricsError::BadRecord {
                        path: path.to_path_buf(),
                        line: i + 1,
                        message: e.to_string(),
                    });
                }
            }
            // Parsing is deterministic, so this is not reached; report rather than panic.
            Err(MetricsError::BadRecord {
                path: path.to_path_buf(),
                line: 0,
                message: "a line failed to parse".into(),
            })
        }
    }
}
