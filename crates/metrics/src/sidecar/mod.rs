//! The columnar sidecar of a run: `simulations.parquet` and `calls.parquet` beside
//! `records.jsonl` (the tables of `columns.rs`), and `sidecar.json`, the manifest written last:
//! the sidecar's schema version, the records file it summarises and that file's length.
//!
//! Records stay the source of truth. `report` reads the sidecar instead of the records only
//! when it is fresh ([`read_fresh`]): the manifest names this records file, has this
//! [`SIDECAR_SCHEMA_VERSION`], its recorded length equals the file's, it is not older than the
//! records, and both tables carry the same version in their Parquet metadata and read back
//! whole. Anything else falls back to the records, silently: a stale sidecar costs time, never
//! a wrong number.

pub(crate) mod columns;
pub(crate) mod columns_read;
pub(crate) mod load;
pub(crate) mod sidecar_read;

use crate::error::{MetricsError, SidecarCause};
use crate::sidecar::columns::{calls_batch, simulations_batch, write_csv};
use crate::summary::SimSummary;
use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the sidecar's layout; bumped on any change to its columns or their meaning.
pub const SIDECAR_SCHEMA_VERSION: u32 = 5;

/// The Parquet metadata key holding [`SIDECAR_SCHEMA_VERSION`].
pub(crate) const SCHEMA_KEY: &str = "tauguard.sidecar_schema";

pub const SIMULATIONS_FILE: &str = "simulations.parquet";
pub(crate) const CALLS_FILE: &str = "calls.parquet";
pub const MANIFEST_FILE: &str = "sidecar.json";

/// Rows per Parquet row group (a few in unit tests, so reads cross row groups).
#[cfg(not(test))]
const ROW_GROUP: usize = 65_536;
#[cfg(test)]
const ROW_GROUP: usize = 40;

/// `sidecar.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    /// File name of the records summarised (in the same directory).
    pub records: String,
    /// Length in bytes of the records file when summarised.
    pub records_bytes: u64,
    pub simulations: u64,
    pub calls: u64,
}

/// Table formats of `export-table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Parquet,
    Csv,
}

fn sidecar_err(path: &Path, cause: impl Into<SidecarCause>) -> MetricsError {
    MetricsError::Sidecar {
        path: path.to_path_buf(),
        cause: cause.into(),
    }
}

fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<(), MetricsError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            SCHEMA_KEY.to_string(),
            SIDECAR_SCHEMA_VERSION.to_string(),
        )]))
        .build();
    let tmp = path.with_extension("parquet.tmp");
    let write = || -> Result<(), MetricsError> {
        let file = std::fs::File::create(&tmp).map_err(|e| MetricsError::io(&tmp, e))?;
        let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props))
            .map_err(|e| sidecar_err(path, e))?;
        w.write(batch).map_err(|e| sidecar_err(path, e))?;
        w.close().map_err(|e| sidecar_err(path, e))?;
        std::fs::rename(&tmp, path).map_err(|e| MetricsError::io(path, e))
    };
    // A failed write (a full disk) leaves no partial file behind.
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn write_csv_file(path: &Path, batch: &RecordBatch) -> Result<(), MetricsError> {
    let csv_err = |cause| MetricsError::Csv {
        path: path.to_path_buf(),
        cause,
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    write_csv(batch, &mut w).map_err(csv_err)?;
    w.flush().map_err(|e| MetricsError::io(path, e))
}

/// Writes the two tables of `sims` into `dir` (created if missing) as `simulations.<ext>` and
/// `calls.<ext>`; returns the files written.
pub fn export_tables(
    sims: &[SimSummary],
    dir: &Path,
    format: TableFormat,
) -> Result<Vec<PathBuf>, MetricsError> {
    std::fs::create_dir_all(dir).map_err(|e| MetricsError::io(dir, e))?;
    let batches = [
        ("simulations", simulations_batch(sims)),
        ("calls", calls_batch(sims)),
    ];
    let mut out = Vec::new();
    for (name, batch) in batches {
        let batch = batch.map_err(|e| sidecar_err(dir, e))?;
        let path = match format {
            TableFormat::Parquet => {
                let p = dir.join(format!("{name}.parquet"));
                write_parquet(&p, &batch)?;
                p
            }
            TableFormat::Csv => {
                let p = dir.join(format!("{name}.csv"));
                write_csv_file(&p, &batch)?;
                p
            }
        };
        out.push(path);
    }
    Ok(out)
}

/// Summarises a records file and writes its sidecar beside it (the manifest last); returns
/// the files written.
pub fn write_sidecar(records: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    let bytes = std::fs::metadata(records)
        .map_err(|e| MetricsError::io(records, e))?
        .len();
    let sims = crate::summary::load::summarise_jsonl(records)?;
    let dir = records.parent().unwrap_or(Path::new("."));
    let mut out = export_tables(&sims, dir, TableFormat::Parquet)?;
    let manifest = Manifest {
        schema_version: SIDECAR_SCHEMA_VERSION,
        records: file_name(records),
        records_bytes: bytes,
        simulations: sims.len() as u64,
        calls: sims.iter().map(|s| s.calls.len() as u64).sum(),
    };
    let path = dir.join(MANIFEST_FILE);
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serializes");
    std::fs::write(&path, text + "\n").map_err(|e| MetricsError::io(&path, e))?;
    out.push(path);
    Ok(out)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The manifest beside `records` when the sidecar is fresh for it (see the module docs).
pub fn fresh_manifest(records: &Path) -> Option<Manifest> {
    let dir = records.parent().unwrap_or(Path::new("."));
    let path = dir.join(MANIFEST_FILE);
    let m: Manifest = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    let rec_meta = std::fs::metadata(records).ok()?;
    let fresh = m.schema_version == SIDECAR_SCHEMA_VERSION
        && m.records == file_name(records)
        && m.records_bytes == rec_meta.len()
        && std::fs::metadata(&path).ok()?.modified().ok()? >= rec_meta.modified().ok()?;
    fresh.then_some(m)
}

/// The summaries of `records` from its sidecar when fresh (`sidecar_read.rs`); `None` to read
/// the records.
pub fn read_fresh(records: &Path) -> Option<Vec<SimSummary>> {
    let m = fresh_manifest(records)?;
    let dir = records.parent().unwrap_or(Path::new("."));
    crate::sidecar::sidecar_read::read_sidecar(dir, &m).ok()
}
