//! The process view of a report: each simulation's process verdict (from its record and its
//! domain's procedure spec, `procedure/`) reduced to what tables read, attached to its
//! summary; per group, process-valid Pass^k (in `report.rs`, beside outcome Pass^k), and the
//! first deviations by level and by position with the intervention coverage of each guard
//! trigger schedule.
//!
//! Process-valid Pass^k is Pass^k (τ²-bench §8) where a trial succeeds only when its outcome
//! passes AND it is process-valid (`docs/process-validity.md`). Intervention coverage is the
//! empirical side of PolicyGuide's Theorem 1: a guard whose triggers fire at a schedule can
//! keep a trajectory valid only if its first deviation falls where a trigger fires.

use crate::error::MetricsError;
use crate::input::LoadOptions;
use crate::measure::procedure::{
    DialogueJudge, Level, Position, ProcedureBook, ProcessVerdict, evaluate,
};
use crate::summary::SimSummary;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;
use tauguard_core::record::SimulationRecord;

/// Where a simulation first deviated, as tables read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstDeviation {
    pub level: Level,
    pub position: Position,
    /// The deviating message is the agent's first output after a user turn.
    pub after_user_turn: bool,
}

/// A simulation's process verdict as tables read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessSummary {
    pub valid: bool,
    pub first: Option<FirstDeviation>,
}

impl ProcessSummary {
    pub fn of(v: &ProcessVerdict) -> ProcessSummary {
        ProcessSummary {
            valid: v.process_valid,
            first: v.first_deviation.as_ref().map(|d| FirstDeviation {
                level: d.level,
                position: d.position,
                after_user_turn: d.after_user_turn,
            }),
        }
    }
}

/// A guard trigger schedule: when a guard of that family looks at the trajectory.
#[derive(Debug)]
pub(crate) struct Schedule {
    pub name: &'static str,
    /// The guards (as their papers describe them) that trigger so.
    pub guards: &'static str,
    pub sees: fn(&FirstDeviation) -> bool,
}

/// The trigger schedules of the guards of both papers.
pub(crate) const SCHEDULES: &[Schedule] = &[
    Schedule {
        name: "mutating_calls",
        guards: "PolicyGuard, ToolGuard, checklist and hybrid guards",
        sees: |d| d.position == Position::InsideGuardedCall,
    },
    Schedule {
        name: "user_turns_and_interceptions",
        guards: "PolicyGuide (before each reply to a user turn, and at intercepted calls)",
        sees: |d| d.position == Position::InsideGuardedCall || d.after_user_turn,
    },
];

/// Simulation key: (cell id, task id, trial).
pub(crate) type SimKey = (String, String, u32);

/// Process summaries by simulation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessIndex {
    pub by_sim: HashMap<SimKey, ProcessSummary>,
}

impl ProcessIndex {
    /// Keeps the verdict of `rec`.
    pub fn insert(&mut self, rec: &SimulationRecord, v: &ProcessVerdict) {
        let key = (rec.cell_id.clone(), rec.task_id.clone(), rec.trial);
        self.by_sim.insert(key, ProcessSummary::of(v));
    }
}

/// The process verdict of a record, when its domain has a spec and it was scored.
pub(crate) fn verdict(
    rec: &SimulationRecord,
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Option<ProcessVerdict> {
    let spec = book.get(&rec.domain)?;
    (!rec.is_infra_error()).then(|| evaluate(rec, spec, judge))
}

/// The process verdicts of `records`, in their order: up to `judge.concurrency()` simulations
/// are evaluated at once (a model judge's calls then overlap, bounded by its concurrency), and
/// the result is the same as evaluating them one after the other.
pub fn verdicts(
    records: &[SimulationRecord],
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Vec<Option<ProcessVerdict>> {
    let workers = judge.concurrency().clamp(1, records.len().max(1));
    if workers == 1 {
        return records.iter().map(|r| verdict(r, book, judge)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<ProcessVerdict>> = vec![None; records.len()];
    let parts: Vec<Vec<(usize, Option<ProcessVerdict>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(r) = records.get(i) else { break };
                        mine.push((i, verdict(r, book, judge)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a process evaluation thread panicked"))
            .collect()
    });
    for (i, v) in parts.into_iter().flatten() {
        out[i] = v;
    }
    out
}

/// Records held at once per evaluating thread while streaming the inputs.
const PER_WORKER: usize = 8;

/// Evaluates every simulation of the inputs (run directories, records files, upstream
/// `results.json`), streaming them: one record in memory at a time, or a few per thread when
/// the judge evaluates several at once ([`verdicts`]).
pub fn process_index<P: AsRef<Path>>(
    paths: &[P],
    options: &LoadOptions,
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Result<ProcessIndex, MetricsError> {
    let mut index = ProcessIndex::default();
    let batch = judge.concurrency().max(1) * PER_WORKER;
    let mut held: Vec<SimulationRecord> = Vec::with_capacity(batch);
    let flush = |held: &mut Vec<SimulationRecord>, index: &mut ProcessIndex| {
        for (rec, v) in held.iter().zip(verdicts(held, book, judge)) {
            if let Some(v) = v {
                index.insert(rec, &v);
            }
        }
        held.clear();
    };
    for_each_record(paths, options, |rec| {
        held.push(rec);
        if held.len() >= batch {
            flush(&mut held, &mut index);
        }
        Ok(())
    })?;
    flush(&mut held, &mut index);
    Ok(index)
}

/// Hands every record of the inputs to `each`, one at a time, in input order.
pub(crate) fn for_each_record<P: AsRef<Path>>(
    paths: &[P],
    options: &LoadOptions,
    mut each: impl FnMut(SimulationRecord) -> Result<(), MetricsError>,
) -> Result<(), MetricsError> {
    for p in paths {
        let file = crate::input::resolve(p.as_ref())?;
        if file.extension().is_some_and(|e| e == "json") {
            crate::input::for_each_imported(&file, options, &mut each)?;
            continue;
        }
        let f = std::fs::File::open(&file).map_err(|e| MetricsError::io(&file, e))?;
        for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
            let line = line.map_err(|e| MetricsError::io(&file, e))?;
            if line.trim().is_empty() {
                continue;
            }
            let rec = serde_json::from_str(&line).map_err(|e| MetricsError::BadRecord {
                path: file.clone(),
                line: i + 1,
                cause: e.into(),
            })?;
            each(rec)?;
        }
    }
    Ok(())
}

/// Attaches each summary's process verdict from `index` (summaries without one keep `None`).
pub fn attach(summaries: &mut [SimSummary], index: &ProcessIndex) {
    for s in summaries {
        let key = (s.cell.cell_id.clone(), s.task_id.to_string(), s.trial);
        s.process = index.by_sim.get(&key).copied();
    }
}

/// Summaries of records in memory with their process verdicts attached.
pub(crate) fn summarise_with_process(
    records: &[SimulationRecord],
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Vec<SimSummary> {
    let mut out = crate::summary::summarise(records);
    for (s, v) in out.iter_mut().zip(verdicts(records, book, judge)) {
        s.process = v.map(|v| ProcessSummary::of(&v));
    }
    out
}

/// One schedule's share of first deviations its triggers could have seen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    pub schedule: String,
    pub covered: u64,
    /// `covered / deviated`; `null` without deviations.
    pub share: Option<f64>,
}

/// First deviations of a group's scored, process-evaluated simulations.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessStats {
    pub simulations: u64,
    pub process_valid: u64,
    pub deviated: u64,
    pub by_level: BTreeMap<String, u64>,
    pub by_position: BTreeMap<String, u64>,
    pub coverage: Vec<Coverage>,
    #[serde(skip)]
    firsts: Vec<FirstDeviation>,
}

impl ProcessStats {
    pub(crate) fn add(&mut self, p: &ProcessSummary) {
        self.simulations += 1;
        self.process_valid += u64::from(p.valid);
        if let Some(d) = p.first {
            self.deviated += 1;
            *self.by_level.entry(d.level.as_str().into()).or_default() += 1;
            *self
                .by_position
                .entry(d.position.as_str().into())
                .or_default() += 1;
            self.firsts.push(d);
        }
    }

    pub(crate) fn finish(mut self) -> Option<ProcessStats> {
        if self.simulations == 0 {
            return None;
        }
        for l in Level::ALL {
            self.by_level.entry(l.as_str().into()).or_default();
        }
        for p in Position::ALL {
            self.by_position.entry(p.as_str().into()).or_default();
        }
        self.coverage = SCHEDULES
            .iter()
            .map(|s| {
                let covered = self.firsts.iter().filter(|d| (s.sees)(d)).count() as u64;
                Coverage {
                    schedule: s.name.into(),
                    covered,
                    share: (self.deviated > 0).then(|| covered as f64 / self.deviated as f64),
                }
            })
            .collect();
        Some(self)
    }

    /// The process-valid share.
    pub fn valid_rate(&self) -> Option<f64> {
        (self.simulations > 0).then(|| self.process_valid as f64 / self.simulations as f64)
    }
}
