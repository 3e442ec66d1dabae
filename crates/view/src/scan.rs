//! Streaming the inputs: each record is read one at a time (a line of `records.jsonl`, or a
//! simulation of an upstream `results.json` through the metrics' streaming import), its data
//! file written at once, and only what the index and the report need kept: the simulation's
//! summary (`tauguard_metrics::SimSummary`, a few numbers with the cell and repeated strings
//! shared among simulations) and its outcome and blocked calls. The report is computed from the
//! summaries exactly as `tauguard report` computes it, so building a site costs memory in
//! proportion to the index, not to the records.
//!
//! With a procedure book, each simulation's process verdict (`tauguard_metrics::procedure::verdicts`) is
//! attached to its summary and written beside its data file (`data/process/…`, for the
//! simulation page: its first deviation and violations). A judge that decides several
//! simulations at once gets them in batches of a few records per thread, so its calls overlap.

use crate::embed::script_call;
use crate::error::ViewError;
use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use tauguard_core::record::{SimulationRecord, Verdict};
use tauguard_metrics::procedure::ProcessSummary;
use tauguard_metrics::procedure::{DialogueJudge, ProcedureBook};
use tauguard_metrics::{SimSummary, Summariser};

/// What the process view of a site is judged with.
#[derive(Clone, Copy)]
pub struct ProcessView<'a> {
    pub book: &'a ProcedureBook,
    pub judge: &'a dyn DialogueJudge,
}

impl std::fmt::Debug for ProcessView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessView")
            .field("book", &self.book)
            .finish_non_exhaustive()
    }
}

/// Records held at once per judging thread.
const PER_WORKER: usize = 8;

/// Simulations per data subdirectory (`data/sims/<i / SHARD>/<i>.js`).
pub(crate) const SHARD: usize = 1000;

/// Outcome of one simulation as the grid colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Pass,
    Fail,
    Infra,
    /// A guard blocked a call and the simulation still passed.
    Recovered,
}

/// What the index shows of one simulation besides its summary: the blocked calls are counted
/// over every guard event, which the summary (mutating calls only) does not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    pub outcome: Outcome,
    pub blocked: u32,
    /// Whether it is process-valid (`None`: not evaluated; its process file then is absent).
    pub process_valid: Option<bool>,
}

/// What streaming the inputs leaves behind: per simulation, in input order, its summary and
/// its row.
#[derive(Debug, Default)]
pub(crate) struct Scanned {
    pub sims: Vec<SimSummary>,
    pub rows: Vec<Row>,
    pub bytes_written: u64,
    summariser: Summariser,
    /// Shard directories of process files made so far.
    process_shards: std::collections::BTreeSet<usize>,
}

/// The data file of simulation `i`, relative to the site directory.
pub fn sim_file(i: usize) -> String {
    format!("data/sims/{}/{i}.js", i / SHARD)
}

/// The process file of simulation `i` (its process verdict), relative to the site directory.
pub fn process_file(i: usize) -> String {
    format!("data/process/{}/{i}.js", i / SHARD)
}

/// Records read but not yet written, with their JSON text.
struct Pending<'a> {
    process: Option<ProcessView<'a>>,
    batch: usize,
    recs: Vec<SimulationRecord>,
    texts: Vec<String>,
}

impl Pending<'_> {
    fn push(
        &mut self,
        out: &mut Scanned,
        site: &Path,
        rec: SimulationRecord,
        json: String,
    ) -> Result<(), ViewError> {
        self.recs.push(rec);
        self.texts.push(json);
        if self.recs.len() >= self.batch {
            self.flush(out, site)?;
        }
        Ok(())
    }

    fn flush(&mut self, out: &mut Scanned, site: &Path) -> Result<(), ViewError> {
        let verdicts = match self.process {
            Some(p) => tauguard_metrics::procedure::verdicts(&self.recs, p.book, p.judge),
            None => vec![None; self.recs.len()],
        };
        for ((rec, json), v) in self.recs.iter().zip(&self.texts).zip(verdicts) {
            add(out, site, rec, json, v)?;
        }
        self.recs.clear();
        self.texts.clear();
        Ok(())
    }
}

/// Streams every input into `site`: one data file per simulation, in input order, and with
/// `process` each simulation's process verdict.
pub(crate) fn scan(
    inputs: &[PathBuf],
    site: &Path,
    process: Option<ProcessView<'_>>,
) -> Result<Scanned, ViewError> {
    let mut out = Scanned::default();
    let batch = process.map_or(1, |p| p.judge.concurrency().max(1) * PER_WORKER);
    let mut pending = Pending {
        process,
        batch,
        recs: Vec::new(),
        texts: Vec::new(),
    };
    for input in inputs {
        let file = resolve(input)?;
        if file.extension().is_some_and(|e| e == "json") {
            // An upstream results.json is one JSON document: the metrics' import walks its
            // `simulations` array one element at a time, so it is streamed too.
            let options = tauguard_metrics::LoadOptions::default();
            tauguard_metrics::for_each_imported(&file, &options, |rec| {
                let json = serde_json::to_string(&rec).expect("a record serializes");
                pending.push(&mut out, site, rec, json)
            })?;
            continue;
        }
        let f = std::fs::File::open(&file).map_err(|e| ViewError::io(&file, e))?;
        let mut reader = BufReader::with_capacity(1 << 16, f);
        let mut line = String::new();
        let mut n = 0usize;
        loop {
            line.clear();
            let read = reader
                .read_line(&mut line)
                .map_err(|e| ViewError::io(&file, e))?;
            if read == 0 {
                break;
            }
            n += 1;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            let rec: SimulationRecord =
                serde_json::from_str(text).map_err(|e| ViewError::BadRecord {
                    path: file.clone(),
                    line: n,
                    cause: e,
                })?;
            pending.push(&mut out, site, rec, text.to_string())?;
        }
    }
    pending.flush(&mut out, site)?;
    Ok(out)
}

/// A directory means its `records.jsonl`, else its `results.json` (as `tauguard report`).
fn resolve(path: &Path) -> Result<PathBuf, ViewError> {
    let meta = std::fs::metadata(path).map_err(|e| ViewError::io(path, e))?;
    if meta.is_dir() {
        for name in ["records.jsonl", "results.json"] {
            let candidate = path.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        return Err(ViewError::Input(
            tauguard_metrics::MetricsError::UnknownInput {
                path: path.to_path_buf(),
            },
        ));
    }
    Ok(path.to_path_buf())
}

fn add(
    out: &mut Scanned,
    site: &Path,
    rec: &SimulationRecord,
    json: &str,
    verdict: Option<tauguard_metrics::procedure::ProcessVerdict>,
) -> Result<(), ViewError> {
    let i = out.rows.len();
    let text = script_call("window.__tg_sim", &i.to_string(), json);
    out.bytes_written += write_data(site, &sim_file(i), i.is_multiple_of(SHARD), &text)?;
    let mut row = row(rec);
    let mut summary = out.summariser.summary(rec);
    if let Some(v) = verdict {
        row.process_valid = Some(v.process_valid);
        summary.process = Some(ProcessSummary::of(&v));
        let text = crate::embed::script_call_value("window.__tg_process", &i.to_string(), &v);
        let new_shard = out.process_shards.insert(i / SHARD);
        out.bytes_written += write_data(site, &process_file(i), new_shard, &text)?;
    }
    out.rows.push(row);
    out.sims.push(summary);
    Ok(())
}

/// Writes data file `rel`, making its shard directory first when `new_shard`.
fn write_data(site: &Path, rel: &str, new_shard: bool, text: &str) -> Result<u64, ViewError> {
    let path = site.join(rel);
    let dir = path.parent().expect("a data file has a directory");
    if new_shard {
        std::fs::create_dir_all(dir).map_err(|e| ViewError::io(dir, e))?;
    }
    let mut f = std::fs::File::create(&path).map_err(|e| ViewError::io(&path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ViewError::io(&path, e))?;
    Ok(text.len() as u64)
}

fn row(rec: &SimulationRecord) -> Row {
    let blocked = rec
        .guard_events
        .iter()
        .filter(|e| e.verdict == Verdict::Block)
        .count() as u32;
    let outcome = if rec.is_infra_error() {
        Outcome::Infra
    } else if rec.succeeded() {
        if blocked > 0 {
            Outcome::Recovered
        } else {
            Outcome::Pass
        }
    } else {
        Outcome::Fail
    };
    Row {
        outcome,
        blocked,
        process_valid: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tauguard_testkit::synthetic::{Population, guard_event};

    #[test]
    fn a_scan_keeps_the_records_summaries_with_each_cell_held_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut records = Population::new(600).generate();
        for (i, r) in records.iter_mut().enumerate() {
            r.cell.insert("agent.temperature".into(), (i % 2).into());
            r.cell_hash = format!("h{}", i % 2);
            if i % 7 == 0 {
                r.guard_events.push(guard_event(
                    "pg-checklist",
                    "c1",
                    "book",
                    Verdict::Block,
                    false,
                ));
            }
        }
        let lines: Vec<String> = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        let input = dir.path().join("records.jsonl");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let scanned = scan(&[input], &dir.path().join("site"), None).unwrap();

        assert_eq!(scanned.sims, tauguard_metrics::summarise(&records));
        let rows: Vec<Row> = records.iter().map(row).collect();
        assert_eq!(scanned.rows, rows);
        assert!(rows.iter().any(|r| r.blocked > 0));
        let mut shared = 0;
        for (i, a) in scanned.sims.iter().enumerate() {
            for b in &scanned.sims[i + 1..] {
                assert_eq!(
                    Arc::ptr_eq(&a.cell, &b.cell),
                    a.cell == b.cell,
                    "simulations of one cell share its settings, others do not"
                );
                shared += usize::from(Arc::ptr_eq(&a.cell, &b.cell));
            }
        }
        assert!(shared > 0);
    }
}
