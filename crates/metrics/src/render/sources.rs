//! Which records produced each cell of a report — run ids, config hashes and record counts per
//! (domain, agent, guard, cell hash) — so a figure's or table's caption can say exactly what
//! it was computed from. Kept beside the report rather than inside it: it is read from the
//! records once, and only the files written by `report --out` use it.

use crate::report::GroupReport;
use crate::summary::SimSummary;
use std::collections::{BTreeMap, BTreeSet};
use tauguard_core::record::SimulationRecord;

/// Run ids, config hashes and record count of one cell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellSources {
    pub run_ids: BTreeSet<String>,
    pub config_hashes: BTreeSet<String>,
    /// Records read for the cell (duplicates and infrastructure errors included).
    pub records: u64,
}

type Key = (String, String, String, String);

/// The sources of every cell of a set of records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sources {
    cells: BTreeMap<Key, CellSources>,
}

impl Sources {
    pub fn from_records(records: &[SimulationRecord]) -> Sources {
        let mut s = Sources::default();
        for r in records {
            s.add(
                &r.domain,
                &r.agent_model,
                &r.guard,
                &r.cell_hash,
                &r.run_id,
                &r.config_hash,
            );
        }
        s
    }

    /// The same from per-simulation summaries (what `report` reads when it streams).
    pub fn from_summaries(sims: &[SimSummary]) -> Sources {
        let mut s = Sources::default();
        for x in sims {
            let c = &x.cell;
            s.add(
                &c.domain,
                &c.agent_model,
                &c.guard,
                &c.cell_hash,
                &c.run_id,
                &c.config_hash,
            );
        }
        s
    }

    fn add(
        &mut self,
        domain: &str,
        agent: &str,
        guard: &str,
        cell_hash: &str,
        run_id: &str,
        config_hash: &str,
    ) {
        let key = (
            domain.to_string(),
            agent.to_string(),
            guard.to_string(),
            cell_hash.to_string(),
        );
        let e = self.cells.entry(key).or_default();
        e.records += 1;
        if !e.run_ids.contains(run_id) {
            e.run_ids.insert(run_id.to_string());
        }
        if !config_hash.is_empty() && !e.config_hashes.contains(config_hash) {
            e.config_hashes.insert(config_hash.to_string());
        }
    }

    /// The sources of a report group; `None` when they were not collected.
    pub fn of(&self, g: &GroupReport) -> Option<&CellSources> {
        self.cells.get(&(
            g.domain.clone(),
            g.agent_model.clone(),
            g.guard.clone(),
            g.cell_hash.clone().unwrap_or_default(),
        ))
    }

    /// One caption line naming what produced `g`: label, cell hash, runs, configs and counts.
    pub fn describe(&self, g: &GroupReport) -> String {
        let mut s = format!(
            "{}: cell {}, {} tasks, {} scored simulations",
            g.label(),
            g.cell_hash.as_deref().unwrap_or("(none)"),
            g.overall.n_tasks,
            g.overall.n_simulations
        );
        if let Some(c) = self.of(g) {
            s.push_str(&format!(", {}", c.origin()));
        }
        s
    }
}

impl Sources {
    /// One line per cell: `domain / agent / guard: cell …, N records; runs …; config hashes …`.
    pub fn lines(&self) -> Vec<String> {
        self.cells
            .iter()
            .map(|((domain, agent, guard, cell), c)| {
                format!(
                    "{domain} / {agent} / {guard}: cell {}, {}",
                    if cell.is_empty() { "(none)" } else { cell },
                    c.origin()
                )
            })
            .collect()
    }
}

impl CellSources {
    /// `N records; runs …; config hashes …`, the part of a caption line both views share.
    fn origin(&self) -> String {
        let join = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(", ");
        format!(
            "{} records; runs {}; config hashes {}",
            self.records,
            join(&self.run_ids),
            if self.config_hashes.is_empty() {
                "(none)".to_string()
            } else {
                join(&self.config_hashes)
            }
        )
    }
}
