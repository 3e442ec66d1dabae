//! Turn inflation (PolicyGuard Table 8): mean agent + user turns per Mut simulation, and its
//! delta against the same agent's baseline configuration (computed in `report.rs`, which knows
//! the groups). Infrastructure-error simulations are excluded.

use crate::summary::SimSummary;
use serde::Serialize;
use tauguard_core::record::{SimulationRecord, Slice};

/// Turns on Mut simulations of one group.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
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
pub struct TurnSum {
    n: u64,
    sum: u64,
}

impl TurnSum {
    pub fn add(&mut self, rec: &SimSummary) {
        if rec.slice == Slice::Mut && !rec.is_infra_error() {
            self.n += 1;
            self.sum += u64::from(rec.agent_turns) + u64::from(rec.user_turns);
        }
    }

    pub fn finish(self) -> TurnStats {
        TurnStats {
            mut_simulations: self.n,
            mean_turns: (self.n > 0).then(|| self.sum as f64 / self.n as f64),
            delta_vs_baseline: None,
        }
    }
}

/// Mean agent + user turns per Mut simulation.
pub fn mut_turns(records: &[&SimulationRecord]) -> TurnStats {
    let mut acc = TurnSum::default();
    for rec in records {
        acc.add(&SimSummary::of(rec));
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::record;

    #[test]
    fn mean_over_mut_only() {
        let mut a = record("t1", Slice::Mut, 0, 1.0);
        (a.agent_turns, a.user_turns) = (10, 8);
        let mut b = record("t2", Slice::Mut, 0, 0.0);
        (b.agent_turns, b.user_turns) = (5, 4);
        let mut pv = record("t3", Slice::Pv, 0, 0.0);
        (pv.agent_turns, pv.user_turns) = (100, 100);
        let s = mut_turns(&[&a, &b, &pv]);
        assert_eq!(s.mut_simulations, 2);
        assert_eq!(s.mean_turns, Some(13.5));
        assert_eq!(mut_turns(&[&pv]).mean_turns, None);
    }
}
