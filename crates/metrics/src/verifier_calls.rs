//! Verifier calls a layered guard saved (tauguard's `hybrid`, beyond the papers): guard
//! decisions whose `info.verifier_called` says whether the LLM verifier ran after the
//! deterministic constraint layer. Decisions without that key (other guards) are not counted.

use serde::Serialize;
use serde_json::Value;
use tauguard_core::record::SimulationRecord;

/// Verifier usage of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct VerifierCalls {
    /// Guard decisions that report whether the verifier ran.
    pub decisions: u64,
    /// Of those, decisions for which the verifier ran.
    pub called: u64,
    /// Decisions settled by the constraint layer alone: verifier calls saved.
    pub saved: u64,
}

impl VerifierCalls {
    /// Adds the guard decisions of one simulation.
    pub fn add(&mut self, rec: &SimulationRecord) {
        for e in &rec.guard_events {
            match e
                .info
                .as_ref()
                .and_then(|i| i.get("verifier_called"))
                .and_then(Value::as_bool)
            {
                Some(true) => {
                    self.decisions += 1;
                    self.called += 1;
                }
                Some(false) => {
                    self.decisions += 1;
                    self.saved += 1;
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::record;
    use serde_json::json;
    use tauguard_core::record::Slice;

    #[test]
    fn counts_only_decisions_that_report_the_verifier() {
        let mut rec = record("1", Slice::Mut, 0, 1.0);
        let event = |info: Option<Value>| tauguard_core::record::GuardEvent {
            guard: "hybrid".into(),
            call_id: "c".into(),
            tool: "cancel_reservation".into(),
            arguments: Default::default(),
            attempt_idx: 0,
            at_message: None,
            verdict: tauguard_core::record::Verdict::Pass,
            requirements: Vec::new(),
            remediation: None,
            executed: true,
            usage: Default::default(),
            info,
        };
        rec.guard_events = vec![
            event(Some(json!({"verifier_called": true}))),
            event(Some(json!({"verifier_called": false}))),
            event(Some(json!({"verifier_called": false}))),
            event(None),
        ];
        let mut v = VerifierCalls::default();
        v.add(&rec);
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
