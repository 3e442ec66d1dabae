//! The comparability table: for every group, whether its cell ran τ²-bench's benchmark
//! definition (the stamp its records carry, see `tauguard_core::comparability`) and, when
//! not, which items deviate and how. A number beside upstream's leaderboard is only evidence
//! when this says "yes", so the table is always printed when any group carries a stamp.

use crate::render::columns as col;
use crate::render::table::{Cell, Table};
use crate::render::tables::{key_cells, keyed};
use crate::report::Report;
use tauguard_core::comparability::upstream_short;

/// `None` when no group carries a stamp (upstream imports, records before the stamp).
pub(crate) fn comparability_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.comparability.is_none()) {
        return None;
    }
    let commit = upstream_short();
    let mut t = keyed(
        "comparability",
        format!("Comparability with τ²-bench {commit}"),
        &[col::COMPARABLE, col::DEVIATIONS],
    );
    for g in &r.groups {
        let mut row = key_cells(g);
        match &g.comparability {
            Some(s) => {
                row.push(Cell::Text(if s.comparable { "yes" } else { "no" }.into()));
                let what: Vec<String> = s
                    .deviations
                    .iter()
                    .map(|(item, detail)| format!("{item}: {detail}"))
                    .collect();
                row.push(Cell::Text(what.join("; ")));
            }
            None => {
                row.push(Cell::Text("unknown".into()));
                row.push(Cell::Text("records carry no stamp".into()));
            }
        }
        t.rows.push(row);
    }
    t.notes.push(format!(
        "Comparable: the prompts, tool schemas, data (policy, database, tasks), sampling \
         defaults, termination limits and evaluator of the cell equal upstream τ²-bench \
         {commit}'s benchmark definition (the models are the run's own)."
    ));
    Some(t)
}
