//! Summaries streamed from a records file: JSON lines read in bounded chunks (about
//! [`CHUNK_BYTES`] at a time), parsed in parallel into lean views (`input/lean.rs`) and
//! summarised at once, so memory holds summaries and one chunk of text. The first malformed
//! line (by line number) is reported as `path:line: message`; blank lines are skipped.

use crate::error::{MetricsError, RecordCause};
use crate::input::CHUNK_BYTES;
use crate::input::lean::Lean;
use crate::summary::{CellCanon, Interner, SimSummary};
use rayon::prelude::*;
use std::io::BufRead;
use std::path::Path;

/// Summaries of one records file, streamed from the records (never from a sidecar).
pub fn summarise_jsonl(path: &Path) -> Result<Vec<SimSummary>, MetricsError> {
    let file = std::fs::File::open(path).map_err(|e| MetricsError::io(path, e))?;
    let size = file.metadata().ok().map(|m| m.len());
    summarise_lines(path, std::io::BufReader::with_capacity(1 << 20, file), size)
}

/// Summaries of JSON lines read from `reader` in chunks, reserving room for the records
/// `size_hint` bytes hold; `path` only names the source in errors.
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
        let parsed: Vec<Result<Option<SimSummary>, (usize, RecordCause)>> = lines
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
                Err((line, cause)) => {
                    return Err(MetricsError::BadRecord {
                        path: path.to_path_buf(),
                        line,
                        cause,
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
fn summarise_line(line: &[u8], interner: &mut Interner) -> Result<Option<SimSummary>, RecordCause> {
    let text = std::str::from_utf8(line)?.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let lean: Lean<'_> = serde_json::from_str(text)?;
    Ok(Some(SimSummary::from_lean(lean, interner)))
}
