//! `records.jsonl`: append-only, one line per finished simulation, flushed as soon as it is
//! written, so a killed run loses at most the simulations in flight.
//!
//! On resume the file is scanned for complete records; a torn last line (a kill mid-write) is
//! cut off — it is an unfinished simulation and will be redone — so appends start on a fresh
//! line and no record is duplicated or lost.

use std::collections::{BTreeSet, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("`{path}`: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("`{path}` line {line}: not a simulation record: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Identity of a simulation within a run: (cell, task, trial).
pub type SimKey = (String, String, u32);

/// Reads every complete record; a torn final line (no trailing newline) is ignored, a
/// malformed complete line is an error naming it.
pub fn read_records(path: &Path) -> Result<Vec<SimulationRecord>, RecordsError> {
    let io = |cause| RecordsError::Io {
        path: path.into(),
        cause,
    };
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::new(file);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        let read = reader.read_line(&mut line).map_err(io)?;
        if read == 0 {
            break;
        }
        n += 1;
        if !line.ends_with('\n') {
            break; // torn write
        }
        if line.trim().is_empty() {
            continue;
        }
        let rec = serde_json::from_str(&line).map_err(|e| RecordsError::Corrupt {
            path: path.into(),
            line: n,
            message: e.to_string(),
        })?;
        out.push(rec);
    }
    Ok(out)
}

/// Append-only writer; `fsync` is grouped (see [`crate::group_sync`]).
#[derive(Debug)]
pub struct RecordWriter {
    path: PathBuf,
    file: File,
    sync: crate::group_sync::GroupSync,
}

impl RecordWriter {
    /// Opens `path` for appending, first cutting a torn final line. Returns the writer, the
    /// keys of the simulations already complete and the config hashes their records carry.
    #[allow(clippy::type_complexity)]
    pub fn open(
        path: &Path,
    ) -> Result<(RecordWriter, HashSet<SimKey>, BTreeSet<String>), RecordsError> {
        let io = |cause| RecordsError::Io {
            path: path.into(),
            cause,
        };
        let mut done = HashSet::new();
        let mut hashes = BTreeSet::new();
        if path.exists() {
            let bytes = std::fs::read(path).map_err(io)?;
            let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            if keep < bytes.len() {
                let f = OpenOptions::new().write(true).open(path).map_err(io)?;
                f.set_len(keep as u64).map_err(io)?;
            }
            for r in read_records(path)? {
                done.insert((r.cell_id.clone(), r.task_id.clone(), r.trial));
                if !hashes.contains(&r.config_hash) {
                    hashes.insert(r.config_hash);
                }
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let sync = crate::group_sync::GroupSync::start(file.try_clone().map_err(io)?, path.into());
        Ok((
            RecordWriter {
                path: path.into(),
                file,
                sync,
            },
            done,
            hashes,
        ))
    }

    /// Appends one record as one line and hands it to the OS at once; the `fsync` follows
    /// within [`crate::group_sync::SYNC_EVERY`]. A failed earlier `fsync` is reported here.
    pub fn append(&mut self, record: &SimulationRecord) -> Result<(), RecordsError> {
        let mut line = serde_json::to_string(record).expect("records serialise");
        line.push('\n');
        let io = |cause| RecordsError::Io {
            path: self.path.clone(),
            cause,
        };
        if let Some(e) = self.sync.take_failure() {
            return Err(io(e));
        }
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(io)?;
        self.sync.written();
        Ok(())
    }

    /// Syncs every record written to disk and closes the syncing thread.
    pub fn finish(&mut self) -> Result<(), RecordsError> {
        match self.sync.close() {
            Some(cause) => Err(RecordsError::Io {
                path: self.path.clone(),
                cause,
            }),
            None => Ok(()),
        }
    }
}
