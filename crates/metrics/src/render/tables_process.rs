//! The process view's tables (definitions in `crate::measure::process`, `docs/process-validity.md`):
//! process-valid Pass^k beside outcome Pass^k, overall / PV / Mut; and the first deviations by
//! level and by position relative to the guarded calls, with the share each guard trigger
//! schedule could have seen (the intervention coverage of PolicyGuide Theorem 1). Printed
//! only when some group was process-evaluated. And the requirement levels of the domains'
//! procedure specs beside the papers' partitions of the same policies.

use crate::measure::procedure::ProcedureBook;
use crate::measure::procedure::spec::{Level, LevelShares};
use crate::measure::process::SCHEDULES;
use crate::measure::registry::DOMAIN;
use crate::render::columns::N_SIMULATIONS;
use crate::render::columns_views as col;
use crate::render::table::{Cell, Table};
use crate::render::tables::{key_cells, keyed, pk, rate_at};
use crate::report::Report;

/// Outcome and process-valid Pass^k at the headline k, per slice.
pub(crate) fn process_pass_k_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.process.is_none()) {
        return None;
    }
    let k = r.headline_k;
    let p = pk(k);
    let mut t = keyed(
        "process_pass_k",
        format!("Process-valid {p} beside outcome {p}"),
        &[],
    );
    for c in col::PROCESS_PASS {
        t.push_column_for(c, &k.to_string());
    }
    t.push_column(col::PROCESS_VALID_RATE);
    for g in r.groups.iter().filter(|g| g.process.is_some()) {
        let mut row = key_cells(g);
        for s in [&g.overall, &g.pv, &g.mut_] {
            row.push(rate_at(&s.pass_k, k));
            row.push(match &s.process_pass_k {
                Some(pp) => rate_at(pp, k),
                None => Cell::Missing,
            });
        }
        row.push(Cell::opt_rate(
            g.process.as_ref().and_then(|p| p.valid_rate()),
        ));
        t.rows.push(row);
    }
    t.notes.push(format!(
        "Valid {p}: a trial succeeds when its outcome passes and it broke no requirement of the \
         domain's procedure spec (tasks/<domain>/procedure.toml) its judges could decide; \
         see docs/process-validity.md."
    ));
    if !r.floors.is_empty() {
        t.notes
            .push("The floors table shows both views for the trivial agents.".into());
    }
    Some(t)
}

/// First deviations by level and position, and each trigger schedule's coverage.
pub(crate) fn first_deviation_table(r: &Report) -> Option<Table> {
    if r.groups.iter().all(|g| g.process.is_none()) {
        return None;
    }
    let mut t = keyed(
        "first_deviations",
        "First deviations by level and position; intervention coverage per trigger schedule",
        &[N_SIMULATIONS],
    );
    for c in col::FIRST_DEVIATIONS {
        t.push_column(c);
    }
    for s in SCHEDULES {
        t.push_column_for(col::COVERAGE, s.name);
    }
    for g in &r.groups {
        let Some(p) = &g.process else { continue };
        let mut row = key_cells(g);
        row.push(Cell::Int(p.simulations));
        row.push(Cell::Int(p.deviated));
        for key in ["A", "P", "W"] {
            row.push(Cell::Int(p.by_level.get(key).copied().unwrap_or(0)));
        }
        for key in [
            "inside_guarded_call",
            "before_first_guarded_call",
            "outside_guarded_calls",
        ] {
            row.push(Cell::Int(p.by_position.get(key).copied().unwrap_or(0)));
        }
        for c in &p.coverage {
            row.push(Cell::opt_pct(c.share));
        }
        t.rows.push(row);
    }
    for s in SCHEDULES {
        t.notes
            .push(format!("Coverage {}: triggers of {}.", s.name, s.guards));
    }
    t.notes.push(
        "Coverage = share of first deviations at an event the schedule's triggers fire on; a \
         guard can keep a trajectory process-valid only where it is 100% (PolicyGuide Theorem 1)."
            .into(),
    );
    Some(t)
}

/// The papers' partitions of a domain's policy into atomic requirements by level: PolicyGuard
/// Table 11 (airline: 43 requirements, 29 process-level, 14 argument-level) and PolicyGuide
/// Table 6 (A / P / W, where W splits PolicyGuard's process-level class, so their process
/// share is P + W). Shares as the papers print them.
#[derive(Debug)]
pub(crate) struct PublishedLevels {
    pub domain: &'static str,
    pub requirements: Option<u64>,
    pub argument: Option<u64>,
    /// P + W share of the requirements.
    pub process_share: &'static str,
    pub workflow_share: &'static str,
    pub source: &'static str,
}

pub(crate) const PUBLISHED_LEVELS: &[PublishedLevels] = &[
    PublishedLevels {
        domain: "airline",
        requirements: Some(43),
        argument: Some(14),
        process_share: "67.4%",
        workflow_share: "4.7%",
        source: "PolicyGuard Table 11; PolicyGuide Table 6",
    },
    PublishedLevels {
        domain: "retail",
        requirements: None,
        argument: None,
        process_share: "~100%",
        workflow_share: "3.6%",
        source: "PolicyGuide Table 6",
    },
    PublishedLevels {
        domain: "telecom",
        requirements: None,
        argument: None,
        process_share: "98.0%",
        workflow_share: "54.0%",
        source: "PolicyGuide Table 6",
    },
];

impl Report {
    /// Keeps the level shares of the specs of the report's domains, for
    /// [`procedure_levels_table`].
    pub fn with_procedure_levels(mut self, book: &ProcedureBook) -> Report {
        let mut domains: Vec<&str> = self.groups.iter().map(|g| g.domain.as_str()).collect();
        domains.sort();
        domains.dedup();
        self.procedure_levels = domains
            .into_iter()
            .filter_map(|d| book.get(d).map(LevelShares::of))
            .collect();
        self
    }
}

/// Our specs' requirement levels beside the papers' partitions of the same policies.
pub(crate) fn procedure_levels_table(r: &Report) -> Option<Table> {
    if r.procedure_levels.is_empty() {
        return None;
    }
    let mut t = Table::declared(
        "procedure_levels",
        "Requirement levels of the procedure specs beside the papers' (PolicyGuard Table 11, \
         PolicyGuide Table 6)",
        &[DOMAIN],
    );
    for c in col::PROCEDURE_LEVELS {
        t.push_column(c);
    }
    for s in &r.procedure_levels {
        let n = |l: Level| s.counts.get(&l).copied().unwrap_or(0) as u64;
        let published = PUBLISHED_LEVELS.iter().find(|p| p.domain == s.domain);
        let text = |f: fn(&PublishedLevels) -> &'static str| {
            published.map_or(Cell::Missing, |p| Cell::Text(f(p).into()))
        };
        let int = |f: fn(&PublishedLevels) -> Option<u64>| {
            published.and_then(f).map_or(Cell::Missing, Cell::Int)
        };
        t.rows.push(vec![
            Cell::Text(s.domain.clone()),
            Cell::Int(s.requirements as u64),
            Cell::Int(n(Level::A)),
            Cell::Int(n(Level::P)),
            Cell::Int(n(Level::W)),
            Cell::Pct(s.share(Level::P) + s.share(Level::W)),
            Cell::Pct(s.share(Level::W)),
            int(|p| p.requirements),
            int(|p| p.argument),
            text(|p| p.process_share),
            text(|p| p.workflow_share),
            text(|p| p.source),
        ]);
    }
    t.notes.push(
        "Ours count the requirements of tasks/<domain>/procedure.toml. The papers' P+W (their \
         process-level class) counts every requirement that names a step; ours gives a check on \
         argument values level A even where the policy states it as a step (an id grounded in \
         what the user or a tool gave, a call matching the summary confirmed, a list limit), \
         and splits compound passages into several requirements, so the shares are not \
         comparable one to one (docs/process-validity.md)."
            .into(),
    );
    Some(t)
}
