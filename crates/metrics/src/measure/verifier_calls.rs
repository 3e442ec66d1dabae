//! Verifier calls a layered guard saved (tauguard's `hybrid`, beyond the papers): guard
//! decisions whose `info.verifier_called` says whether the LLM verifier ran after the
//! deterministic constraint layer. Decisions without that key (other guards) are not counted.

use crate::input::lean::Lean;
use crate::measure::registry::{Column, Context, Measure, Place};
use crate::render::table::Cell;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Verifier usage of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct VerifierCalls {
    /// Guard decisions that report whether the verifier ran.
    pub decisions: u64,
    /// Of those, decisions for which the verifier ran.
    pub called: u64,
    /// Decisions settled by the constraint layer alone: verifier calls saved.
    pub saved: u64,
}

/// The decisions of one simulation that report the verifier ran / did not run.
pub(crate) fn called_of(rec: &Lean<'_>) -> (u32, u32) {
    let (mut called, mut saved) = (0, 0);
    for e in &rec.guard_events {
        match e
            .info
            .as_ref()
            .and_then(|i| i.get("verifier_called"))
            .and_then(Value::as_bool)
        {
            Some(true) => called += 1,
            Some(false) => saved += 1,
            None => {}
        }
    }
    (called, saved)
}

impl VerifierCalls {
    /// Adds the guard decisions of one simulation.
    pub(crate) fn add(&mut self, rec: &SimSummary) {
        let (called, saved) = (
            u64::from(rec.verifier().called),
            u64::from(rec.verifier().saved),
        );
        self.decisions += called + saved;
        self.called += called;
        self.saved += saved;
    }
}

/// The registry entry of verifier calls: a value in the JSON only.
#[derive(Debug)]
pub(crate) struct VerifierCallsMeasure;

impl Measure for VerifierCallsMeasure {
    const KEY: &'static str = "verifier_calls";
    const GROUP_COLUMNS: &'static [Column] = &[];
    const PLACE: Place = Place::after(&["attack"], &[], None);
    type Acc = VerifierCalls;
    /// `None` when no guard decision of the group reports whether the verifier ran.
    type Value = Option<VerifierCalls>;

    fn add(acc: &mut VerifierCalls, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.add(sim);
    }

    fn finish(acc: VerifierCalls, _cx: &Context<'_>) -> Option<VerifierCalls> {
        (acc.decisions > 0).then_some(acc)
    }

    fn group_cells(_v: &Option<VerifierCalls>) -> Vec<Cell> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tauguard_core::record::Slice;
    use tauguard_testkit::synthetic::record;

    #[test]
    fn counts_only_decisions_that_report_the_verifier() {
        let mut rec = record("1", Slice::Mut, 0, 1.0);
        let event = |info: Option<Value>| tauguard_core::record::GuardEvent {
            info,
            ..tauguard_testkit::synthetic::guard_event(
                "hybrid",
                "c",
                "cancel_reservation",
                tauguard_core::record::Verdict::Pass,
                true,
            )
        };
        rec.guard_events = vec![
            event(Some(json!({"verifier_called": true}))),
            event(Some(json!({"verifier_called": false}))),
            event(Some(json!({"verifier_called": false}))),
            event(None),
        ];
        let mut v = VerifierCalls::default();
        v.add(&SimSummary::of(&rec));
        assert_eq!(
            v,
            VerifierCalls {
                decisions: 3,
                called: 1,
                saved: 2
            }
        );
    }
}
