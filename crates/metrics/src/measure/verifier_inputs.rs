//! What the offline PolicyGuard verifier could check, per group: the offline stand-in decides
//! only from the inputs its variant is given (raw policy, checklist, general rules, dialogue,
//! tool trace), and reports per decision how many requirements its inputs state
//! (`info.checked`), which of those it judged NOT MET because their evidence lies in an input
//! it is not given (`info.unseen`: pg-raw-traj's confirmations, without the dialogue), and
//! which no input states (`info.unchecked`). This is why the variants differ offline, and in
//! which direction; LLM verifiers do not report it.

use crate::input::lean::Lean;
use crate::measure::registry::{Column, Context, Measure, Place, TableDecl, fill_some};
use crate::render::table::{Cell, Table};
use crate::report::GroupReport;
use crate::report::Report;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeSet;

/// Requirements checked, unseen and left unchecked by the offline verifier of one group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct VerifierInputs {
    /// Decisions that report `info.checked`.
    pub decisions: u64,
    pub checked: u64,
    /// Of the checked, those NOT MET for want of the input their evidence lies in.
    pub unseen: u64,
    pub unchecked: u64,
    /// The inputs the variant was given (union over decisions).
    pub inputs: BTreeSet<String>,
}

/// The decisions of one simulation that report `info.checked`, summed.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub decisions: u32,
    pub checked: u64,
    pub unchecked: u64,
    pub unseen: u64,
    pub inputs: BTreeSet<String>,
}

pub(crate) fn totals_of(rec: &Lean<'_>) -> Totals {
    let mut t = Totals::default();
    let len = |info: &Value, key: &str| {
        info.get(key)
            .and_then(Value::as_array)
            .map_or(0, |u| u.len() as u64)
    };
    for info in rec.guard_events.iter().filter_map(|e| e.info.as_ref()) {
        let Some(c) = info.get("checked").and_then(Value::as_u64) else {
            continue;
        };
        t.decisions += 1;
        t.checked += c;
        t.unchecked += len(info, "unchecked");
        t.unseen += len(info, "unseen");
        for i in info
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            t.inputs.insert(i.to_string());
        }
    }
    t
}

impl VerifierInputs {
    /// Adds the guard decisions of one simulation.
    pub(crate) fn add(&mut self, rec: &SimSummary) {
        let v = rec.verifier();
        self.decisions += u64::from(v.decisions);
        self.checked += v.checked;
        self.unchecked += v.unchecked;
        self.unseen += v.unseen;
        for i in &v.inputs {
            if !self.inputs.contains(&**i) {
                self.inputs.insert(i.to_string());
            }
        }
    }

    /// Mean requirements checked per decision.
    pub(crate) fn mean_checked(&self) -> Option<f64> {
        (self.decisions > 0).then(|| self.checked as f64 / self.decisions as f64)
    }

    /// Mean requirements NOT MET for want of an input per decision.
    pub(crate) fn mean_unseen(&self) -> Option<f64> {
        (self.decisions > 0).then(|| self.unseen as f64 / self.decisions as f64)
    }

    /// Mean requirements left unchecked per decision.
    pub(crate) fn mean_unchecked(&self) -> Option<f64> {
        (self.decisions > 0).then(|| self.unchecked as f64 / self.decisions as f64)
    }
}

/// The registry entry of the offline verifier's inputs.
#[derive(Debug)]
pub(crate) struct VerifierInputsMeasure;

const TABLE: TableDecl = TableDecl {
    id: "verifier_inputs",
    columns: &[
        Column {
            header: "Decisions",
            name: "decisions",
            unit: "count",
            meaning: "offline verifier decisions",
        },
        Column {
            header: "Stated / decision",
            name: "checked_per_decision",
            unit: "count",
            meaning: "requirements a given input states, judged, per decision (mean)",
        },
        Column {
            header: "Unseen (NOT MET) / decision",
            name: "unseen_per_decision",
            unit: "count",
            meaning: "of those, NOT MET for want of the input their evidence lies in, per \
                      decision (mean)",
        },
        Column {
            header: "Unchecked / decision",
            name: "unchecked_per_decision",
            unit: "count",
            meaning: "requirements left unchecked per decision (mean)",
        },
        Column {
            header: "Inputs",
            name: "inputs",
            unit: "text",
            meaning: "the inputs the verifier variant is given",
        },
    ],
    repeated: &[],
};

impl Measure for VerifierInputsMeasure {
    const KEY: &'static str = "verifier_inputs";
    const GROUP_COLUMNS: &'static [Column] = &[];
    const TABLES: &'static [TableDecl] = &[TABLE];
    const PLACE: Place = Place::after(
        &["fail_mode", "verifier_calls"],
        &[],
        Some("truncated_replies"),
    )
    .skipping_null();
    type Acc = VerifierInputs;
    /// `None` when no decision reports them (LLM verifiers, other guards).
    type Value = Option<VerifierInputs>;

    fn add(acc: &mut VerifierInputs, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.add(sim);
    }

    fn finish(acc: VerifierInputs, _cx: &Context<'_>) -> Option<VerifierInputs> {
        (acc.decisions > 0).then_some(acc)
    }

    fn group_cells(_v: &Option<VerifierInputs>) -> Vec<Cell> {
        Vec::new()
    }

    fn tables(r: &Report) -> Vec<Table> {
        let t = TABLE.table(
            "Requirements each variant could check: per decision of the offline verifier, by \
             the inputs it is given",
        );
        let mean = |x: Option<f64>| x.map_or(Cell::Missing, |x| Cell::Num(x, 2));
        let cells = |_: &GroupReport, v: VerifierInputs| {
            [
                Cell::Int(v.decisions),
                mean(v.mean_checked()),
                mean(v.mean_unseen()),
                mean(v.mean_unchecked()),
                Cell::Text(v.inputs.iter().cloned().collect::<Vec<_>>().join(", ")),
            ]
        };
        fill_some::<Self, _, _>(
            t,
            r,
            cells,
            &[
                "Stated: requirements an input the variant is given states (the policy, the \
             checklist or the general rules), judged. Unseen: of those, the ones whose evidence \
             lies in an input it is not given — pg-raw-traj's confirmations, without the \
             dialogue — judged NOT MET, as a verifier with those inputs would: no evidence of a \
             confirmation is not a confirmation, so such a variant blocks more, never less. \
             Unchecked: requirements no given input states, or that the stand-in cannot judge \
             (dialogue predicates other than confirmation, constraints no argument rule \
             implements).",
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tauguard_core::record::{GuardEvent, Slice, Verdict};
    use tauguard_testkit::synthetic::record;

    #[test]
    fn means_over_decisions_that_report_them() {
        let mut rec = record("1", Slice::Mut, 0, 1.0);
        let event = |info: Option<Value>| GuardEvent {
            info,
            ..tauguard_testkit::synthetic::guard_event(
                "pg-checklist",
                "c",
                "cancel_reservation",
                Verdict::Pass,
                true,
            )
        };
        rec.guard_events = vec![
            event(Some(
                json!({"checked": 6, "unchecked": ["a", "b"], "unseen": ["c"], "inputs": ["policy", "dialogue"]}),
            )),
            event(Some(
                json!({"checked": 4, "unchecked": [], "inputs": ["tool_trace"]}),
            )),
            event(Some(json!({"verifier_called": true}))),
            event(None),
        ];
        let mut v = VerifierInputs::default();
        v.add(&SimSummary::of(&rec));
        assert_eq!(
            (v.decisions, v.checked, v.unchecked, v.unseen),
            (2, 10, 2, 1)
        );
        assert_eq!(v.mean_unseen(), Some(0.5));
        assert_eq!(v.mean_checked(), Some(5.0));
        assert_eq!(v.mean_unchecked(), Some(1.0));
        assert_eq!(
            v.inputs.iter().map(String::as_str).collect::<Vec<_>>(),
            ["dialogue", "policy", "tool_trace"]
        );
    }
}
