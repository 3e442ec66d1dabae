//! The site index: one small row per simulation, the cells with the report's numbers for
//! them (the groups `tauguard report` prints, computed by `tauguard_metrics`), the floors,
//! and per pair of cells of one domain McNemar's discordant pairs — everything the overview
//! and the grid show without opening a simulation (the cells' process view included: their
//! report groups carry `process_pass_k` and the first-deviation counts).

use crate::scan::{Outcome, Row};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tauguard_metrics::Report;
use tauguard_metrics::SimSummary;

/// One grid cell: the report group its simulations belong to.
#[derive(Debug, Serialize)]
pub(crate) struct CellInfo {
    pub label: String,
    pub domain: String,
    pub agent: String,
    pub guard: String,
    pub cell_hash: String,
    /// The group's object of `tauguard report --format json`; `null` when the report has no
    /// group for the cell.
    pub report: Value,
    /// Outcome counts over the cell's simulations de-duplicated as the report does them, so
    /// they add up to its `n_simulations` ("Sims").
    pub outcomes: Outcomes,
    /// Where the cell's guard artifacts came from; `None` for records without it.
    pub artifacts: Option<Artifacts>,
}

/// The origin of a cell's guard artifacts, from its records' cell settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Artifacts {
    /// `artifacts.origin`: per kind, hand-written or compiled:<model>.
    pub origin: String,
    /// `artifacts.set`: the compiled set's directory; `None` = the frozen set.
    pub set: Option<String>,
    /// `artifacts.compiled`: the compiled set's origin in full (compiler, model, date, report).
    pub compiled: Option<String>,
}

impl Artifacts {
    fn of(cell: &BTreeMap<String, Value>) -> Option<Artifacts> {
        let text = |k: &str| cell.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Artifacts {
            origin: text("artifacts.origin")?,
            set: text("artifacts.set"),
            compiled: text("artifacts.compiled"),
        })
    }
}

/// A cell's simulations per grid outcome, each simulation counted once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Outcomes {
    pub pass: u64,
    pub fail: u64,
    pub infra: u64,
    pub recovered: u64,
}

impl Outcomes {
    fn add(&mut self, o: Outcome) {
        *match o {
            Outcome::Pass => &mut self.pass,
            Outcome::Fail => &mut self.fail,
            Outcome::Infra => &mut self.infra,
            Outcome::Recovered => &mut self.recovered,
        } += 1;
    }
}

/// McNemar between two cells of one domain, paired by (task, trial), infrastructure errors
/// dropped: `b` = A passed and B failed, `c` = A failed and B passed.
#[derive(Debug, Serialize)]
pub(crate) struct PairInfo {
    pub a: usize,
    pub b: usize,
    pub n_pairs: u64,
    pub test: tauguard_metrics::McNemar,
    /// Simulation indexes (A, B) of the `b` pairs, then of the `c` pairs.
    pub b_sims: Vec<(usize, usize)>,
    pub c_sims: Vec<(usize, usize)>,
}

/// The whole index, written as `data/index.js`.
#[derive(Debug, Serialize)]
pub(crate) struct Index {
    pub inputs: Vec<String>,
    pub headline_k: u32,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    pub floors: Value,
    pub cells: Vec<CellInfo>,
    pub pairs: Vec<PairInfo>,
    /// Termination reasons, indexed by the rows' `term`.
    pub terms: Vec<String>,
    /// Per simulation: `[cell, task, trial, outcome, term, slice, blocked, reward, run,
    /// process_valid]` (`process_valid` null when its process view was not evaluated).
    pub sims: Vec<SimRow>,
}

/// Builds the index from the scanned simulations (summary and row of each, in input order)
/// and the report over them.
pub(crate) fn build(
    inputs: Vec<String>,
    sims_in: &[SimSummary],
    rows: &[Row],
    report: &Report,
) -> Index {
    let groups: Vec<Value> =
        match serde_json::from_str(&report.render(tauguard_metrics::Format::Json)) {
            Ok(Value::Array(g)) => g,
            _ => Vec::new(),
        };
    let mut cells: Vec<CellInfo> = report
        .groups
        .iter()
        .zip(groups)
        .map(|(g, json)| CellInfo {
            label: g.label(),
            domain: g.domain.clone(),
            agent: g.agent_model.clone(),
            guard: g.guard.clone(),
            cell_hash: g.cell_hash.clone().unwrap_or_default(),
            report: json,
            outcomes: Outcomes::default(),
            artifacts: Artifacts::of(&g.full_cell),
        })
        .collect();
    let mut cell_of: BTreeMap<(String, String, String, String), usize> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let key = (
                c.domain.clone(),
                c.agent.clone(),
                c.guard.clone(),
                c.cell_hash.clone(),
            );
            (key, i)
        })
        .collect();
    let mut terms: Vec<String> = Vec::new();
    let mut sims = Vec::with_capacity(sims_in.len());
    // The summaries of one cell share its `CellInfo`: look each up once.
    let mut by_info: HashMap<*const tauguard_metrics::CellInfo, usize> = HashMap::new();
    for (s, r) in sims_in.iter().zip(rows) {
        let c = &s.cell;
        let cell = *by_info.entry(Arc::as_ptr(c)).or_insert_with(|| {
            let key = (
                c.domain.clone(),
                c.agent_model.clone(),
                c.guard.clone(),
                c.cell_hash.clone(),
            );
            *cell_of.entry(key.clone()).or_insert_with(|| {
                cells.push(CellInfo {
                    label: format!("{} / {} / {}", key.0, key.1, key.2),
                    domain: key.0.clone(),
                    agent: key.1.clone(),
                    guard: key.2.clone(),
                    cell_hash: key.3.clone(),
                    report: Value::Null,
                    outcomes: Outcomes::default(),
                    artifacts: Artifacts::of(&c.cell),
                });
                cells.len() - 1
            })
        });
        let term = match terms
            .iter()
            .position(|t| t == s.termination_reason.as_str())
        {
            Some(t) => t,
            None => {
                terms.push(s.termination_reason.to_string());
                terms.len() - 1
            }
        };
        sims.push((
            cell,
            s.task_id.to_string(),
            s.trial,
            r.outcome,
            term,
            s.slice.as_str(),
            r.blocked,
            s.reward,
            c.run_id.clone(),
            r.process_valid,
        ));
    }
    for (cell, o) in cells.iter_mut().zip(outcomes(sims_in, &sims)) {
        cell.outcomes = o;
    }
    let pairs = pairs(&cells, &sims);
    Index {
        inputs,
        headline_k: report.headline_k,
        warnings: report.warnings.clone(),
        notes: report.notes.clone(),
        floors: serde_json::to_value(&report.floors).unwrap_or(Value::Null),
        cells,
        pairs,
        terms,
        sims,
    }
}

pub(crate) type SimRow = (
    usize,
    String,
    u32,
    Outcome,
    usize,
    &'static str,
    u32,
    Option<f64>,
    String,
    Option<bool>,
);

/// Per cell, its outcome counts with duplicate records of one simulation (same run, cell,
/// task, trial and seed — the report's key) counted once: the later record wins unless it
/// would replace a scored one with an infrastructure error, as in the report.
fn outcomes(sims_in: &[SimSummary], sims: &[SimRow]) -> Vec<Outcomes> {
    type Key<'a> = (usize, &'a str, u32, u64, &'a str, &'a str);
    let mut kept: HashMap<Key, Outcome> = HashMap::with_capacity(sims.len());
    for (s, row) in sims_in.iter().zip(sims) {
        let key = (
            row.0,
            &*s.task_id,
            s.trial,
            s.seed,
            s.cell.run_id.as_str(),
            s.cell.cell_id.as_str(),
        );
        let slot = kept.entry(key).or_insert(row.3);
        if row.3 != Outcome::Infra || *slot == Outcome::Infra {
            *slot = row.3;
        }
    }
    let cells = sims.iter().map(|s| s.0 + 1).max().unwrap_or(0);
    let mut out = vec![Outcomes::default(); cells];
    for ((cell, ..), o) in kept {
        out[cell].add(o);
    }
    out
}

/// A cell's scored simulations by (task, trial): (simulation index, passed).
type ByTrial<'a> = BTreeMap<(&'a str, u32), (usize, bool)>;

/// Every pair of cells sharing a domain; a (task, trial) seen twice in a cell counts once,
/// the later record winning (as in `report` and `compare`).
fn pairs(cells: &[CellInfo], sims: &[SimRow]) -> Vec<PairInfo> {
    let mut by_cell: Vec<ByTrial> = vec![BTreeMap::new(); cells.len()];
    for (i, s) in sims.iter().enumerate() {
        let passed = match s.3 {
            Outcome::Pass | Outcome::Recovered => true,
            Outcome::Fail => false,
            Outcome::Infra => continue,
        };
        by_cell[s.0].insert((s.1.as_str(), s.2), (i, passed));
    }
    let mut out = Vec::new();
    for a in 0..cells.len() {
        for b in a + 1..cells.len() {
            if cells[a].domain != cells[b].domain {
                continue;
            }
            let (mut n, mut bs, mut cs) = (0u64, Vec::new(), Vec::new());
            for (key, &(ia, pa)) in &by_cell[a] {
                let Some(&(ib, pb)) = by_cell[b].get(key) else {
                    continue;
                };
                n += 1;
                match (pa, pb) {
                    (true, false) => bs.push((ia, ib)),
                    (false, true) => cs.push((ia, ib)),
                    _ => {}
                }
            }
            if n == 0 {
                continue;
            }
            out.push(PairInfo {
                a,
                b,
                n_pairs: n,
                test: tauguard_metrics::mcnemar(bs.len() as u64, cs.len() as u64),
                b_sims: bs,
                c_sims: cs,
            });
        }
    }
    out
}
