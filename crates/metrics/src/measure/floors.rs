//! Floors beside every Pass^k table: what trivial agents score on the same domain and tasks.
//!
//! - `refuse-all` never mutates. Under τ²-bench scoring it passes the PV tasks whose gold is
//!   inaction, so a guard that blocks every call gets the PV slice for free; a configuration's
//!   PV score means something only above this floor.
//! - `gold-no-procedure` performs the gold mutations with no identity check, reads or
//!   confirmation: outcome-only scoring cannot tell it from a careful agent.
//!
//! The floor records come from the caller (metrics reads records only); both agents are
//! deterministic, so their Pass^1 is their Pass^k for every k.

use crate::measure::procedure::{DialogueJudge, ProcedureBook};
use crate::report::{GroupReport, Report, ReportOptions, report, report_summaries};
use serde::Serialize;
use std::collections::BTreeMap;
use tauguard_core::record::SimulationRecord;

/// Pass^1 of one floor agent on one domain, by slice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Floor {
    pub domain: String,
    /// The floor agent (`refuse-all`, `gold-no-procedure`).
    pub agent: String,
    pub n_tasks: u64,
    pub overall: Option<f64>,
    pub pv: Option<f64>,
    #[serde(rename = "mut")]
    pub mut_: Option<f64>,
    /// Process-valid Pass^1 in the same three views (`crate::measure::process`); `null` when the
    /// domain has no procedure spec.
    pub process_overall: Option<f64>,
    pub process_pv: Option<f64>,
    pub process_mut: Option<f64>,
}

/// The floor agent whose PV score a configuration must exceed.
pub(crate) const REFUSE_ALL: &str = "refuse-all";

/// Floors from the floor agents' records, one per (domain, agent), outcome view only.
pub fn floors(records: &[SimulationRecord]) -> Vec<Floor> {
    floors_of(&report(records, &ReportOptions::default()))
}

/// Floors in both views: outcome, and process-valid by the domains' procedure specs.
pub fn floors_with_process(
    records: &[SimulationRecord],
    book: &ProcedureBook,
    judge: &dyn DialogueJudge,
) -> Vec<Floor> {
    let summaries = crate::measure::process::summarise_with_process(records, book, judge);
    floors_of(&report_summaries(&summaries, &ReportOptions::default()))
}

fn floors_of(r: &Report) -> Vec<Floor> {
    let p1 = |p: &Option<crate::measure::pass_k::PassK>| p.as_ref().and_then(|p| p.get(1));
    r.groups
        .iter()
        .map(|g| Floor {
            domain: g.domain.clone(),
            agent: g.agent_model.clone(),
            n_tasks: g.overall.n_tasks,
            overall: g.overall.pass_k.get(1),
            pv: g.pv.pass_k.get(1),
            mut_: g.mut_.pass_k.get(1),
            process_overall: p1(&g.overall.process_pass_k),
            process_pv: p1(&g.pv.process_pass_k),
            process_mut: p1(&g.mut_.process_pass_k),
        })
        .collect()
}

impl Report {
    /// Attaches `floors`: each group gets its domain's floors, and a note is added for every
    /// configuration whose PV Pass^1 does not exceed the refuse-all floor.
    pub fn with_floors(mut self, floors: Vec<Floor>) -> Report {
        for g in &mut self.groups {
            g.floors = floors
                .iter()
                .filter(|f| f.domain == g.domain)
                .map(|f| (f.agent.clone(), f.clone()))
                .collect();
            g.pv_above_refuse_all = pv_above(g);
            if g.pv_above_refuse_all == Some(false) {
                self.notes.push(format!(
                    "{}: PV Pass^1 {:.3} does not exceed the refuse-all floor ({:.3})",
                    g.label(),
                    g.pv.pass_k.get(1).unwrap_or(0.0),
                    g.floors[REFUSE_ALL].pv.unwrap_or(0.0)
                ));
            }
        }
        self.floors = floors;
        self
    }
}

fn pv_above(g: &GroupReport) -> Option<bool> {
    let floor = g.floors.get(REFUSE_ALL)?.pv?;
    let own = g.pv.pass_k.get(1)?;
    Some(own > floor + 1e-9)
}

/// Floors by domain, for rendering.
pub(crate) fn by_domain(floors: &[Floor]) -> BTreeMap<&str, Vec<&Floor>> {
    let mut out: BTreeMap<&str, Vec<&Floor>> = BTreeMap::new();
    for f in floors {
        out.entry(f.domain.as_str()).or_default().push(f);
    }
    out
}
