//! Turn inflation (PolicyGuard Table 8): mean agent + user turns per Mut simulation, and its
//! delta against the same agent's baseline configuration (the registry relates each group to
//! its baseline). Infrastructure-error simulations are excluded.

use crate::measure::registry::{Column, Context, Measure, Place, TableDecl, fill};
use crate::render::table::{Cell, Table};
use crate::report::GroupReport;
use crate::report::Report;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use tauguard_core::record::Slice;

/// Turns on Mut simulations of one group.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TurnStats {
    /// Mut simulations counted.
    pub mut_simulations: u64,
    /// Mean of `agent_turns + user_turns` over them.
    pub mean_turns: Option<f64>,
    /// `mean_turns` minus the same agent's baseline `mean_turns` (same domain).
    pub delta_vs_baseline: Option<f64>,
}

/// Running sum of turns on scored Mut simulations.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TurnSum {
    n: u64,
    sum: u64,
}

impl TurnSum {
    pub(crate) fn add(&mut self, rec: &SimSummary) {
        if rec.slice == Slice::Mut && !rec.is_infra_error() {
            self.n += 1;
            self.sum += u64::from(rec.agent_turns) + u64::from(rec.user_turns);
        }
    }

    pub(crate) fn finish(self) -> TurnStats {
        TurnStats {
            mut_simulations: self.n,
            mean_turns: (self.n > 0).then(|| self.sum as f64 / self.n as f64),
            delta_vs_baseline: None,
        }
    }
}

/// The registry entry of turn inflation.
#[derive(Debug)]
pub(crate) struct Turns;

/// PolicyGuard Table 8.
const TABLE8: TableDecl = TableDecl {
    id: "policyguard_table8",
    columns: &[
        Column {
            header: "Mut sims",
            name: "mut_simulations",
            unit: "count",
            meaning: "Mut-task simulations (PolicyGuard Table 8)",
        },
        Column {
            header: "Turns / sim",
            name: "turns_per_sim",
            unit: "turns",
            meaning: "mean agent + user turns per Mut simulation (PolicyGuard Table 8)",
        },
        Column {
            header: "Δ vs baseline",
            name: "turns_delta_vs_baseline",
            unit: "turns",
            meaning: "turns per Mut simulation minus the same agent's baseline",
        },
    ],
    repeated: &[],
};

impl Measure for Turns {
    const KEY: &'static str = "turns";
    const GROUP_COLUMNS: &'static [Column] = &[
        Column::csv(
            "mut_simulations",
            "count",
            "Mut-task simulations (PolicyGuard Table 8)",
        ),
        Column::csv(
            "turns_mean",
            "turns",
            "mean agent + user turns per Mut simulation (PolicyGuard Table 8)",
        ),
        Column::csv(
            "turns_delta",
            "turns",
            "turns per Mut simulation minus the same agent's baseline",
        ),
    ];
    const TABLES: &'static [TableDecl] = &[TABLE8];
    const PLACE: Place = Place::after(
        &["call_nmr"],
        &["call_nmr_passing"],
        Some("policyguard_table7"),
    );
    type Acc = TurnSum;
    type Value = TurnStats;

    fn add(acc: &mut TurnSum, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.add(sim);
    }

    fn finish(acc: TurnSum, _cx: &Context<'_>) -> TurnStats {
        acc.finish()
    }

    fn relate(own: &mut TurnStats, baseline: &TurnStats) {
        own.delta_vs_baseline = own.mean_turns.zip(baseline.mean_turns).map(|(x, y)| x - y);
    }

    fn group_cells(v: &TurnStats) -> Vec<Cell> {
        // Fractions and turns alike keep 6 decimals in CSV.
        vec![
            Cell::Int(v.mut_simulations),
            Cell::opt_rate(v.mean_turns),
            Cell::opt_rate(v.delta_vs_baseline),
        ]
    }

    fn tables(r: &Report) -> Vec<Table> {
        let cells = |_: &GroupReport, v: TurnStats| {
            [
                Cell::Int(v.mut_simulations),
                Cell::opt_num(v.mean_turns, 1),
                v.delta_vs_baseline
                    .map_or(Cell::Missing, |d| Cell::Signed(d, 1)),
            ]
        };
        vec![fill(
            TABLE8.table("PolicyGuard Table 8: agent + user turns per Mut simulation"),
            r,
            |g| g.measures.get::<Turns>(),
            cells,
            &[],
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::registry_tests::value_over;
    use tauguard_testkit::synthetic::record;

    #[test]
    fn mean_over_mut_only() {
        let mut a = record("t1", Slice::Mut, 0, 1.0);
        (a.agent_turns, a.user_turns) = (10, 8);
        let mut b = record("t2", Slice::Mut, 0, 0.0);
        (b.agent_turns, b.user_turns) = (5, 4);
        let mut pv = record("t3", Slice::Pv, 0, 0.0);
        (pv.agent_turns, pv.user_turns) = (100, 100);
        let s = value_over::<Turns>(&[&a, &b, &pv]);
        assert_eq!(s.mut_simulations, 2);
        assert_eq!(s.mean_turns, Some(13.5));
        assert_eq!(value_over::<Turns>(&[&pv]).mean_turns, None);
    }
}
