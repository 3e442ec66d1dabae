//! Reading a fresh sidecar back into summaries, each written straight into its place.
//!
//! The simulations are made by a parallel iterator over row numbers: each piece of it holds a
//! cursor that streams the `simulations` table from the piece's first row, and the `calls`
//! table from that simulation's first call (found in the `sim` column, read alone first), and
//! attaches each simulation's calls as it goes. Rayon writes each summary into the final
//! vector, so a million summaries are made once and never moved between buffers: reading
//! row groups into parts and joining them cost a second copy, and its memory.

use crate::error::{MetricsError, ShapeFinding, SidecarCause};
use crate::sidecar::columns_read::{CallColumns, SimColumns, dictionary_schema};
use crate::sidecar::{CALLS_FILE, Manifest, SCHEMA_KEY, SIDECAR_SCHEMA_VERSION, SIMULATIONS_FILE};
use crate::summary::{CallSummary, Interner, SimSummary};
use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rows per batch a cursor decodes: what a piece may read past its end. (Unit tests use a
/// few, so pieces start inside row groups and batches end inside a simulation's calls.)
#[cfg(not(test))]
const BATCH_ROWS: usize = 8192;
#[cfg(test)]
const BATCH_ROWS: usize = 3;

/// Fewest simulations per piece of the parallel read.
#[cfg(not(test))]
const MIN_PIECE: usize = 32_768;
#[cfg(test)]
const MIN_PIECE: usize = 7;

fn sidecar_err(path: &Path, cause: impl Into<SidecarCause>) -> MetricsError {
    MetricsError::Sidecar {
        path: path.to_path_buf(),
        cause: cause.into(),
    }
}

/// One table of the sidecar, its metadata read once (with the dictionary schema).
struct Table {
    path: PathBuf,
    meta: ArrowReaderMetadata,
    /// First row of each row group, then the row count.
    starts: Vec<usize>,
}

impl Table {
    fn open(path: PathBuf) -> Result<Table, MetricsError> {
        let file = std::fs::File::open(&path).map_err(|e| MetricsError::io(&path, e))?;
        let plain = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| sidecar_err(&path, e))?;
        let version = plain
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .and_then(|kv| kv.iter().find(|k| k.key == SCHEMA_KEY))
            .and_then(|k| k.value.clone());
        if version.as_deref() != Some(SIDECAR_SCHEMA_VERSION.to_string().as_str()) {
            return Err(sidecar_err(&path, ShapeFinding::SchemaVersion));
        }
        let schema = Arc::new(dictionary_schema(plain.schema()));
        let meta = ArrowReaderMetadata::try_new(
            plain.metadata().clone(),
            ArrowReaderOptions::new().with_schema(schema),
        )
        .map_err(|e| sidecar_err(&path, e))?;
        let mut starts = vec![0];
        for g in meta.metadata().row_groups() {
            let rows = usize::try_from(g.num_rows()).map_err(|e| sidecar_err(&path, e))?;
            starts.push(starts.last().copied().unwrap_or(0) + rows);
        }
        Ok(Table { path, meta, starts })
    }

    fn rows(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    fn builder(&self) -> Result<ParquetRecordBatchReaderBuilder<std::fs::File>, MetricsError> {
        let file = std::fs::File::open(&self.path).map_err(|e| MetricsError::io(&self.path, e))?;
        Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
            file,
            self.meta.clone(),
        ))
    }

    /// A reader of every row from `row` on, in batches of [`BATCH_ROWS`].
    fn reader_from(&self, row: usize) -> Result<ParquetRecordBatchReader, MetricsError> {
        let group = self.starts.partition_point(|&s| s <= row).saturating_sub(1);
        let groups: Vec<usize> = (group..self.starts.len() - 1).collect();
        let skip = row - self.starts[group];
        let mut selectors = vec![RowSelector::select(self.rows() - row)];
        if skip > 0 {
            selectors.insert(0, RowSelector::skip(skip));
        }
        let selection = RowSelection::from(selectors);
        self.builder()?
            .with_row_groups(groups)
            .with_row_selection(selection)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| sidecar_err(&self.path, e))
    }

    /// One `u64` column, whole.
    fn u64_column(&self, name: &str) -> Result<Vec<u64>, MetricsError> {
        let builder = self.builder()?;
        let mask = ProjectionMask::columns(builder.parquet_schema(), [name]);
        let reader = builder
            .with_projection(mask)
            .with_batch_size(65_536)
            .build()
            .map_err(|e| sidecar_err(&self.path, e))?;
        let mut out = Vec::with_capacity(self.rows());
        for batch in reader {
            let batch = batch.map_err(|e| sidecar_err(&self.path, e))?;
            let col = batch
                .column_by_name(name)
                .and_then(|c| c.as_primitive_opt::<UInt64Type>())
                .ok_or_else(|| {
                    sidecar_err(&self.path, ShapeFinding::NoTableColumn(name.to_string()))
                })?;
            out.extend(col.values().iter().copied());
        }
        Ok(out)
    }
}

/// What the pieces share.
struct Shared {
    sims: Table,
    calls: Table,
    /// The `sim` column of `calls`.
    call_sims: Vec<u64>,
    attached: AtomicU64,
    error: Mutex<Option<MetricsError>>,
}

impl Shared {
    fn fail(&self, e: MetricsError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    }
}

/// A piece's position in both tables.
struct Cursor<'a> {
    shared: &'a Shared,
    interner: Interner,
    /// The row the next call of [`Cursor::row`] continues from, when streaming.
    next: Option<usize>,
    sims: Option<ParquetRecordBatchReader>,
    batch: Option<(usize, SimColumns)>,
    calls: Option<ParquetRecordBatchReader>,
    /// The first call of the next row in `call_sims`.
    call_pos: usize,
    pending: std::iter::Peekable<std::vec::IntoIter<(u64, CallSummary)>>,
}

impl<'a> Cursor<'a> {
    fn new(shared: &'a Shared) -> Self {
        Cursor {
            shared,
            interner: Interner::default(),
            next: None,
            sims: None,
            batch: None,
            calls: None,
            call_pos: 0,
            pending: Vec::new().into_iter().peekable(),
        }
    }

    fn next_batch(
        reader: &mut Option<ParquetRecordBatchReader>,
        path: &Path,
    ) -> Result<Option<RecordBatch>, MetricsError> {
        match reader.as_mut().and_then(Iterator::next) {
            None => Ok(None),
            Some(b) => b.map(Some).map_err(|e| sidecar_err(path, e)),
        }
    }

    /// The summary of simulation `row` with its calls; `None` after an error (recorded).
    fn row(&mut self, row: usize) -> Option<SimSummary> {
        match self.try_row(row) {
            Ok(s) => Some(s),
            Err(e) => {
                self.shared.fail(e);
                None
            }
        }
    }

    fn try_row(&mut self, row: usize) -> Result<SimSummary, MetricsError> {
        let sh = self.shared;
        if self.next != Some(row) {
            self.sims = Some(sh.sims.reader_from(row)?);
            self.batch = None;
            let first_call = sh.call_sims.partition_point(|&s| s < row as u64);
            self.call_pos = first_call;
            self.calls = match first_call < sh.calls.rows() {
                true => Some(sh.calls.reader_from(first_call)?),
                false => None,
            };
            self.pending = Vec::new().into_iter().peekable();
        }
        self.next = Some(row + 1);
        while !matches!(&self.batch, Some((start, b)) if row < start + b.len()) {
            let start = match &self.batch {
                Some((start, b)) => start + b.len(),
                None => row,
            };
            let path = &sh.sims.path;
            let batch = Self::next_batch(&mut self.sims, path)?
                .ok_or_else(|| sidecar_err(path, ShapeFinding::NoRow(row)))?;
            let cols =
                SimColumns::new(&batch, &mut self.interner).map_err(|e| sidecar_err(path, e))?;
            self.batch = Some((start, cols));
        }
        let (start, cols) = self.batch.as_mut().expect("a batch holds the row");
        let mut sim = cols.row(row - *start, &mut self.interner);
        // Sized exactly: a vector grown from empty holds room for four calls.
        let from = self.call_pos;
        while sh.call_sims.get(self.call_pos) == Some(&(row as u64)) {
            self.call_pos += 1;
        }
        sim.calls.reserve_exact(self.call_pos - from);
        loop {
            if self.pending.peek().is_none() {
                let path = &sh.calls.path;
                let Some(batch) = Self::next_batch(&mut self.calls, path)? else {
                    break;
                };
                let cols = CallColumns::new(&batch, &mut self.interner)
                    .map_err(|e| sidecar_err(path, e))?;
                self.pending = cols.rows().into_iter().peekable();
                continue;
            }
            match self.pending.next_if(|(s, _)| *s == row as u64) {
                Some((_, call)) => sim.calls.push(call),
                None => break,
            }
        }
        sh.attached
            .fetch_add(sim.calls.len() as u64, Ordering::Relaxed);
        Ok(sim)
    }
}

/// The summaries of the sidecar in `dir` that `m` describes.
pub(crate) fn read_sidecar(dir: &Path, m: &Manifest) -> Result<Vec<SimSummary>, MetricsError> {
    let sims = Table::open(dir.join(SIMULATIONS_FILE))?;
    let calls = Table::open(dir.join(CALLS_FILE))?;
    let call_sims = calls.u64_column("sim")?;
    let counts = (sims.rows() as u64, calls.rows() as u64);
    if counts != (m.simulations, m.calls) || !call_sims.is_sorted() {
        return Err(sidecar_err(dir, ShapeFinding::NotTheManifest));
    }
    let n = sims.rows();
    let shared = Shared {
        sims,
        calls,
        call_sims,
        attached: AtomicU64::new(0),
        error: Mutex::new(None),
    };
    let mut out: Vec<Option<SimSummary>> = Vec::with_capacity(n);
    (0..n)
        .into_par_iter()
        .with_min_len(MIN_PIECE)
        .map_init(|| Cursor::new(&shared), |c, row| c.row(row))
        .collect_into_vec(&mut out);
    if let Some(e) = shared.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if shared.attached.into_inner() != m.calls {
        return Err(sidecar_err(dir, ShapeFinding::OrphanCall));
    }
    out.into_iter()
        .collect::<Option<Vec<SimSummary>>>()
        .ok_or_else(|| sidecar_err(dir, ShapeFinding::SimulationNotRead))
}

#[cfg(test)]
mod tests {
    use crate::sidecar::{CALLS_FILE, fresh_manifest, read_fresh, write_sidecar};
    use crate::summary::summarise;
    use std::io::Write;
    use tauguard_testkit::synthetic::{Population, attempt};

    /// Records of many cells, interleaved as a grid run writes them, a few with several calls.
    fn records() -> Vec<tauguard_core::record::SimulationRecord> {
        let mut recs = Population::new(300).generate();
        let n = recs.len();
        let mut order: Vec<usize> = (0..n).map(|i| (i * 7919) % n).collect();
        order.dedup();
        assert_eq!(order.len(), n, "7919 is prime to {n}");
        let mut out: Vec<_> = order.into_iter().map(|i| recs[i].clone()).collect();
        for (i, r) in out.iter_mut().enumerate().filter(|(i, _)| i % 5 == 0) {
            for k in 0..i % 4 + 1 {
                r.call_attempts
                    .push(attempt(&format!("extra{k}"), None, true));
            }
        }
        recs.clear();
        out
    }

    #[test]
    fn read_in_pieces_across_row_groups_and_batches_equals_the_records() {
        let tmp = tempfile::tempdir().unwrap();
        let recs = records();
        let path = tmp.path().join("records.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        for r in &recs {
            writeln!(f, "{}", serde_json::to_string(r).unwrap()).unwrap();
        }
        drop(f);
        write_sidecar(&path).unwrap();
        let m = fresh_manifest(&path).unwrap();
        assert!(m.calls > 2 * super::BATCH_ROWS as u64, "{m:?}");
        let read = read_fresh(&path).expect("the sidecar reads");
        let expected = summarise(&recs);
        assert_eq!(read.len(), expected.len());
        for (i, (a, b)) in read.iter().zip(&expected).enumerate() {
            assert_eq!(a, b, "simulation {i}");
        }
    }

    #[test]
    fn a_calls_table_that_disagrees_with_the_manifest_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let recs = records();
        let path = tmp.path().join("records.jsonl");
        let text: String = recs
            .iter()
            .map(|r| serde_json::to_string(r).unwrap() + "\n")
            .collect();
        std::fs::write(&path, &text).unwrap();
        write_sidecar(&path).unwrap();
        let m = fresh_manifest(&path).unwrap();
        // The calls of fewer simulations, under the same manifest.
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        let half = other.join("records.jsonl");
        let lines: Vec<&str> = text.lines().take(recs.len() / 2).collect();
        std::fs::write(&half, lines.join("\n") + "\n").unwrap();
        write_sidecar(&half).unwrap();
        std::fs::copy(other.join(CALLS_FILE), tmp.path().join(CALLS_FILE)).unwrap();
        let err = tauguard_core::chain_text(&super::read_sidecar(tmp.path(), &m).unwrap_err());
        assert!(
            err.contains("calls.parquet") || err.contains("manifest"),
            "{err}"
        );
        assert!(read_fresh(&path).is_none());
    }
}
