//! The process view of `tauguard evaluate`: per simulation, whether it is process-valid by
//! its domain's procedure spec, its first deviation and every violation (the JSON contract in
//! `docs/process-validity.md`), for tauguard records and upstream `results.json` alike.

use serde::Serialize;
use tauguard_core::record::SimulationRecord;
use tauguard_metrics::procedure::{DialogueJudge, Level, Position, ProcedureBook, Violation};

/// Where one simulation first deviated.
#[derive(Debug, Serialize)]
pub(crate) struct FirstDeviation {
    pub message_index: u32,
    pub requirement: String,
    pub level: Level,
    pub position: Position,
}

/// One simulation of the process view.
#[derive(Debug, Serialize)]
pub(crate) struct SimulationProcess {
    pub cell_id: String,
    pub task_id: String,
    pub trial: u32,
    pub process_valid: bool,
    pub first_deviation: Option<FirstDeviation>,
    pub violations: Vec<Violation>,
}

/// The process view of every scored record whose domain has a spec, in the records' order
/// (judged as many at once as the judge allows).
pub(crate) fn simulations(
    records: &[SimulationRecord],
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Vec<SimulationProcess> {
    let verdicts = tauguard_metrics::procedure::verdicts(records, book, judge);
    records
        .iter()
        .zip(verdicts)
        .filter_map(|(r, v)| {
            let v = v?;
            Some(SimulationProcess {
                cell_id: r.cell_id.clone(),
                task_id: r.task_id.clone(),
                trial: r.trial,
                process_valid: v.process_valid,
                first_deviation: v.first_deviation.map(|d| FirstDeviation {
                    message_index: d.message_index,
                    requirement: d.requirement,
                    level: d.level,
                    position: d.position,
                }),
                violations: v.violations,
            })
        })
        .collect()
}
