//! Floors for `report`: the refuse-all and gold-no-procedure agents run offline on the domains
//! and tasks of the report's records (milliseconds per task), so every Pass^k table shows what
//! a trivial agent scores beside it. Without the data directory, or for a domain tauguard does
//! not implement, the floors are skipped with a warning: the report itself never fails on them.
//! With the project's procedure specs, the floors carry the process view too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauguard_core::Chain;
use tauguard_env::DataDir;
use tauguard_metrics::SimSummary;
use tauguard_metrics::procedure::{ProcedureBook, StandInJudge};
use tauguard_metrics::{Floor, floors_with_process};
use tauguard_orchestrator::{FLOOR_AGENTS, floor_records};

/// The floors of `records`' domains and tasks, and the warnings of what was skipped.
pub(crate) fn compute(
    records: &[SimSummary],
    data_dir: Option<&Path>,
    project_dir: &Path,
    book: &ProcedureBook,
) -> (Vec<Floor>, Vec<String>) {
    compute_in_task_sets(records, data_dir, project_dir, book, &BTreeMap::new())
}

/// [`compute`] for runs whose tasks of a domain come from a task set of the project
/// (`task_sets`: domain → `[run] task_set`, as the runs' configs name it; records do not
/// carry it).
pub(crate) fn compute_in_task_sets(
    records: &[SimSummary],
    data_dir: Option<&Path>,
    project_dir: &Path,
    book: &ProcedureBook,
    task_sets: &BTreeMap<String, PathBuf>,
) -> (Vec<Floor>, Vec<String>) {
    let mut tasks: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for r in records {
        let ids = tasks.entry(r.cell.domain.as_str()).or_default();
        if !ids.iter().any(|t| **t == *r.task_id) {
            ids.push(r.task_id.to_string());
        }
    }
    let mut warnings = Vec::new();
    let dir = match DataDir::resolve(data_dir) {
        Ok(d) => d,
        Err(e) => {
            warnings.push(format!("floors skipped: {}", Chain(&e)));
            return (Vec::new(), warnings);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => {
            warnings.push(format!(
                "floors skipped: cannot start a runtime: {}",
                Chain(&e)
            ));
            return (Vec::new(), warnings);
        }
    };
    let mut floor_recs = Vec::new();
    for (domain, ids) in tasks {
        if tauguard_env::registry::get(domain).is_none() {
            warnings.push(format!(
                "floors skipped for `{domain}`: not a domain tauguard implements"
            ));
            continue;
        }
        for agent in FLOOR_AGENTS {
            let set = task_sets.get(domain).map(PathBuf::as_path);
            match rt.block_on(floor_records(
                dir.path(),
                project_dir,
                domain,
                &ids,
                agent,
                set,
            )) {
                Ok(recs) => floor_recs.extend(recs),
                Err(e) => {
                    warnings.push(format!(
                        "floors skipped for `{domain}` ({agent}): {}",
                        Chain(&e)
                    ));
                    break;
                }
            }
        }
    }
    (
        floors_with_process(&floor_recs, book, &StandInJudge),
        warnings,
    )
}
