//! `records.jsonl`: append-only, one line per finished simulation, flushed as soon as it is
//! written, so a killed run loses at most the simulations in flight.
//!
//! On resume the file is scanned for complete records; a torn last line (a kill mid-write) is
//! cut off — it is an unfinished simulation and will be redone — so appends start on a fresh
//! line and no record is duplicated or lost.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("`{path}`")]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("`{path}` line {line}: not a simulation record")]
    Corrupt {
        path: PathBuf,
        line: usize,
        #[source]
        cause: serde_json::Error,
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
            cause: e,
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

/// Reads what `path` holds before a run appends to it (nothing when it does not exist),
/// cutting a torn final line first.
pub(crate) fn scan(path: &Path) -> Result<Stored, RecordsError> {
    let io = |cause| RecordsError::Io {
        path: path.into(),
        cause,
    };
    let mut stored = Stored::default();
    if !path.exists() {
        return Ok(stored);
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if keep < bytes.len() {
        let f = OpenOptions::new().write(true).open(path).map_err(io)?;
        f.set_len(keep as u64).map_err(io)?;
    }
    drop(bytes);
    let mut scored = HashSet::new();
    for r in read_records(path)? {
        let key = (r.cell_id.clone(), r.task_id.clone(), r.trial);
        if r.is_infra_error() {
            stored.infra_records += 1;
        } else {
            scored.insert(key.clone());
        }
        stored.done.insert(key);
        if !stored.config_hashes.contains(&r.config_hash) {
            stored.config_hashes.insert(r.config_hash);
        }
        stored
            .cells
            .entry(r.cell_id)
            .or_insert((r.cell_hash, r.cell));
    }
    stored.infra_only = stored.done.difference(&scored).cloned().collect();
    Ok(stored)
}

/// Moves every infrastructure-error record of `path` to `superseded` (appended, synced
/// first, so a crash in between duplicates a record rather than losing it), leaving
/// `path` with the scored records in their order; returns how many moved. `--resume` then
/// runs those simulations again: an outage's holes are repaired, not kept.
pub(crate) fn supersede_infra(path: &Path, superseded: &Path) -> Result<usize, RecordsError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |cause| RecordsError::Io { path: p, cause }
    };
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let (mut kept, mut moved) = (String::with_capacity(text.len()), String::new());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: SimulationRecord =
            serde_json::from_str(line).map_err(|e| RecordsError::Corrupt {
                path: path.into(),
                line: i + 1,
                cause: e,
            })?;
        if r.is_infra_error() {
            moved.push_str(line);
        } else {
            kept.push_str(line);
        }
    }
    if moved.is_empty() {
        return Ok(0);
    }
    let n = moved.lines().count();
    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(superseded)
        .map_err(io(superseded))?;
    log.write_all(moved.as_bytes()).map_err(io(superseded))?;
    log.sync_all().map_err(io(superseded))?;
    let tmp = path.with_extension("jsonl.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(kept.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|cause| {
        let _ = std::fs::remove_file(&tmp);
        RecordsError::Io {
            path: path.into(),
            cause,
        }
    })?;
    Ok(n)
}

/// What a records file already holds when a run reopens it.
#[derive(Debug, Default)]
pub(crate) struct Stored {
    /// The simulations complete.
    pub done: HashSet<SimKey>,
    /// Every config hash the records were written under.
    pub config_hashes: BTreeSet<String>,
    /// Per cell id, the cell hash and settings of its first record.
    pub cells: BTreeMap<String, (String, BTreeMap<String, serde_json::Value>)>,
    /// Infrastructure-error records, and the simulations that have no other record.
    pub infra_records: usize,
    pub infra_only: HashSet<SimKey>,
}

impl RecordWriter {
    /// Opens `path` for appending (created when missing); [`scan`] reads what it holds first.
    pub fn open(path: &Path) -> Result<RecordWriter, RecordsError> {
        let io = |cause| RecordsError::Io {
            path: path.into(),
            cause,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let sync = crate::group_sync::GroupSync::start(file.try_clone().map_err(io)?);
        Ok(RecordWriter {
            path: path.into(),
            file,
            sync,
        })
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
