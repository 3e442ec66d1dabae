//! Read-only calls per simulation: the mean number of the agent's tool calls per scored
//! simulation that changed nothing. This is tauguard's own measure, not a paper's: it shows
//! how much a guard or a prompt makes the agent look things up.
//!
//! A read-only call is a call of the agent (`requestor` assistant) that the trajectory
//! executed and that is in none of the record's call attempts: `call_attempts` lists every
//! agent-side mutating call, blocked or executed, so an executed agent call outside it reads.
//! The user simulator's calls are left out. Infrastructure-error simulations are excluded.

use crate::input::lean::Lean;
use crate::measure::registry::{Column, Context, Measure, TableDecl, fill};
use crate::render::table::{Cell, Table};
use crate::report::GroupReport;
use crate::report::Report;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use tauguard_core::Requestor;

/// Read-only calls of one group.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct ReadOnlyStats {
    /// Scored simulations counted.
    pub simulations: u64,
    /// Read-only agent calls over them.
    pub calls: u64,
    /// `calls / simulations`; `None` without a scored simulation.
    pub per_simulation: Option<f64>,
}

/// The registry entry of read-only calls.
#[derive(Debug)]
pub(crate) struct ReadOnlyCalls;

const PER_SIM: Column = Column {
    header: "Read-only / sim",
    name: "read_only_calls_per_sim",
    unit: "count",
    meaning: "mean read-only agent calls per scored simulation: executed agent tool calls in no \
              call attempt, so not mutating (tauguard's own measure; measure/read_only_calls.rs)",
};

const TABLE: TableDecl = TableDecl {
    id: "read_only_calls",
    columns: &[
        Column {
            header: "Scored sims",
            name: "read_only_simulations",
            unit: "count",
            meaning: "scored simulations counted (infrastructure errors excluded)",
        },
        Column {
            header: "Read-only calls",
            name: "read_only_calls",
            unit: "count",
            meaning: "executed agent tool calls that are in no call attempt (not mutating), \
                      over the scored simulations",
        },
        PER_SIM,
    ],
    repeated: &[],
};

impl Measure for ReadOnlyCalls {
    const KEY: &'static str = "read_only_calls";
    const SIM_COLUMNS: &'static [Column] = &[Column::csv(
        "read_only_calls",
        "count",
        "executed agent tool calls of the simulation that are in no call attempt (not mutating)",
    )];
    const GROUP_COLUMNS: &'static [Column] = &[PER_SIM];
    const TABLES: &'static [TableDecl] = &[TABLE];
    type Acc = ReadOnlyStats;
    type Value = ReadOnlyStats;

    fn derive(rec: &Lean<'_>, out: &mut [u64]) {
        let mutating = |id: &str| rec.call_attempts.iter().any(|a| a.call_id == id);
        out[0] = rec
            .executed_calls()
            .filter(|c| c.requestor == Requestor::Assistant && !mutating(&c.id))
            .count() as u64;
    }

    fn add(acc: &mut ReadOnlyStats, sim: &SimSummary, own: &[u64], _cx: &Context<'_>) {
        if !sim.is_infra_error() {
            acc.simulations += 1;
            acc.calls += own[0];
        }
    }

    fn finish(mut acc: ReadOnlyStats, _cx: &Context<'_>) -> ReadOnlyStats {
        acc.per_simulation =
            (acc.simulations > 0).then(|| acc.calls as f64 / acc.simulations as f64);
        acc
    }

    fn group_cells(v: &ReadOnlyStats) -> Vec<Cell> {
        vec![Cell::opt_num(v.per_simulation, 2)]
    }

    fn tables(r: &Report) -> Vec<Table> {
        let cells = |_: &GroupReport, v: ReadOnlyStats| {
            [
                Cell::Int(v.simulations),
                Cell::Int(v.calls),
                Cell::opt_num(v.per_simulation, 2),
            ]
        };
        vec![fill(
            TABLE.table("Read-only agent calls per scored simulation"),
            r,
            |g| g.measures.get::<ReadOnlyCalls>(),
            cells,
            &[
                "Read-only: an executed agent tool call that is in none of the record's call \
               attempts (which list every agent-side mutating call); the user simulator's calls \
               are not counted.",
            ],
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ReportOptions, report};
    use tauguard_core::Message;
    use tauguard_core::record::Slice;
    use tauguard_testkit::synthetic::{attempt, infra, record, with_calls};

    #[test]
    fn counts_the_agents_executed_calls_that_mutate_nothing() {
        // Two reads and a cancellation (a call attempt), then a call of the user simulator.
        let mut a = with_calls(
            record("t1", Slice::Mut, 0, 1.0),
            &[
                "get_user",
                "get_order",
                "cancel_order",
                "toggle_airplane_mode",
            ],
        );
        a.call_attempts.push(attempt("call_2", None, true));
        if let Message::Assistant(p) = &mut a.messages[3] {
            p.tool_calls.as_mut().unwrap()[0].requestor = Requestor::User;
        }
        let b = record("t2", Slice::Pv, 0, 0.0);
        let lost = infra(with_calls(record("t3", Slice::Pv, 0, 0.0), &["get_user"]));
        let s = crate::summary::SimSummary::of(&a);
        assert_eq!(&*s.measured, &[2]);
        let rep = report(&[a, b, lost], &ReportOptions::default());
        let v = rep.groups[0].measures.get::<ReadOnlyCalls>().unwrap();
        assert_eq!(
            v,
            ReadOnlyStats {
                simulations: 2,
                calls: 2,
                per_simulation: Some(1.0)
            }
        );
        let json = &rep.to_json()[0]["read_only_calls"];
        assert_eq!(json["per_simulation"], 1.0);
        assert!(
            rep.render(crate::render::table::Format::Csv)
                .lines()
                .next()
                .unwrap()
                .contains("read_only_calls_per_sim")
        );
        let md = rep.render(crate::render::table::Format::Md);
        assert!(
            md.contains("| Scored sims | Read-only calls | Read-only / sim |"),
            "{md}"
        );
        assert!(md.contains("| 2 | 2 | 1.00 |"), "{md}");
    }
}
