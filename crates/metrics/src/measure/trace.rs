//! Ordered-trace compliance (PolicyGuide Table 5, telecom: "author-designed ordered trace
//! compliance; Step- and Trace-TCR condition on outcome-passing traces"), over simulations
//! whose record carries a `gold_trace`.
//!
//! The rubric, as the paper operationalises it:
//! - **Gold task actions**: the gold trace is the task's gold actions as ordered tool names
//!   (written into the record at run time; metrics never read τ²-bench data).
//! - **Deterministic event ordering**: the simulation's events are its executed tool calls,
//!   agent and user side, in trajectory order (message order, then call order within a
//!   message), so the same record always yields the same sequence.
//! - **Text matching**: a gold step matches an event when the tool names are equal as text
//!   (exact, case-sensitive); arguments are not compared.
//! - **Blocked or intercepted calls stay out**: a call that never executed is no event. A
//!   guard-blocked call never enters the trajectory (`messages`); a call of an older record
//!   answered by a guard-blocked result, or whose id only a guard event that did not execute
//!   names (an intercepted call, PolicyGuide's one-shot gate), is dropped as well.
//!
//! The metrics:
//! - **Step-TCR**: over outcome-passing traces, gold steps matched in order / gold steps,
//!   pooled over traces (micro average). "Matched in order" = the longest common subsequence
//!   of the gold steps and the events.
//! - **Trace-TCR**: share of outcome-passing traces that match every gold step in order.
//! - **Process-valid rate**: the end-to-end rate (papers.md: "process-valid rate 56.2%", over
//!   all traces, not only passing ones): simulations with a gold trace that pass and are
//!   trace-compliant / all (scored) simulations with a gold trace.
//!
//! Infrastructure-error simulations are excluded.

use crate::input::lean::Lean;
use crate::measure::confusion::ratio;
use crate::measure::registry::{Column, Context, Measure, Place, TableDecl, fill_some};
use crate::render::table::{Cell, Table};
use crate::report::GroupReport;
use crate::report::Report;
use crate::summary::{SimSummary, TraceSteps};
use serde::{Deserialize, Serialize};

/// Trace-compliance counts of one group (its JSON adds the three rates; reading it back
/// ignores them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub(crate) struct TraceCompliance {
    /// Simulations with a gold trace.
    pub traces: u64,
    /// Of those, outcome-passing.
    pub passing: u64,
    /// Gold steps of passing traces, and how many were matched in order.
    pub gold_steps: u64,
    pub matched_steps: u64,
    /// Passing traces matching every gold step in order.
    pub compliant: u64,
}

impl TraceCompliance {
    pub(crate) fn step_tcr(&self) -> Option<f64> {
        ratio(self.matched_steps, self.gold_steps)
    }

    pub(crate) fn trace_tcr(&self) -> Option<f64> {
        ratio(self.compliant, self.passing)
    }

    pub(crate) fn process_valid_rate(&self) -> Option<f64> {
        ratio(self.compliant, self.traces)
    }
}

impl Serialize for TraceCompliance {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out {
            traces: u64,
            passing: u64,
            gold_steps: u64,
            matched_steps: u64,
            compliant: u64,
            step_tcr: Option<f64>,
            trace_tcr: Option<f64>,
            process_valid_rate: Option<f64>,
        }
        Out {
            traces: self.traces,
            passing: self.passing,
            gold_steps: self.gold_steps,
            matched_steps: self.matched_steps,
            compliant: self.compliant,
            step_tcr: self.step_tcr(),
            trace_tcr: self.trace_tcr(),
            process_valid_rate: self.process_valid_rate(),
        }
        .serialize(s)
    }
}

/// Length of the longest common subsequence of `gold` and `trace`.
pub(crate) fn matched_in_order<G: AsRef<str>, T: AsRef<str>>(gold: &[G], trace: &[T]) -> usize {
    let mut prev = vec![0usize; trace.len() + 1];
    let mut cur = vec![0usize; trace.len() + 1];
    for g in gold {
        for (j, t) in trace.iter().enumerate() {
            cur[j + 1] = if g.as_ref() == t.as_ref() {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[trace.len()]
}

/// Tool names of the calls that executed, in trajectory order: without calls answered by a
/// guard-blocked result, and without calls whose id is named only by guard events that did
/// not execute.
fn trajectory_calls<'a>(rec: &'a Lean<'_>) -> Vec<&'a str> {
    let executed = |id: &str| {
        let mut events = rec.guard_events.iter().filter(|e| e.call_id == id);
        events.clone().next().is_none() || events.any(|e| e.executed)
    };
    rec.executed_calls()
        .filter(|c| executed(&c.id))
        .map(|c| c.name.as_ref())
        .collect()
}

/// The gold steps of a simulation with a gold trace and how many its executed calls match in
/// order; computed once per simulation when it is summarised.
pub(crate) fn trace_steps(rec: &Lean<'_>) -> Option<TraceSteps> {
    let gold = rec.gold_trace.as_deref()?;
    let matched = matched_in_order(gold, &trajectory_calls(rec));
    Some(TraceSteps {
        gold: gold.len() as u32,
        matched: matched as u32,
    })
}

impl TraceCompliance {
    /// Adds one simulation (ignored without a gold trace or when an infrastructure error).
    pub(crate) fn add(&mut self, rec: &SimSummary) {
        let Some(steps) = rec.trace else {
            return;
        };
        if rec.is_infra_error() {
            return;
        }
        self.traces += 1;
        if !rec.succeeded() {
            return;
        }
        self.passing += 1;
        self.gold_steps += u64::from(steps.gold);
        self.matched_steps += u64::from(steps.matched);
        self.compliant += u64::from(steps.matched == steps.gold);
    }
}

/// The registry entry of ordered-trace compliance.
#[derive(Debug)]
pub(crate) struct Trace;

/// PolicyGuide Table 5.
const TABLE5: TableDecl = TableDecl {
    id: "policyguide_table5",
    columns: &[
        Column {
            header: "Traces",
            name: "traces",
            unit: "count",
            meaning: "simulations with a gold trace (PolicyGuide Table 5)",
        },
        Column {
            header: "Passing",
            name: "passing",
            unit: "count",
            meaning: "outcome-passing traces",
        },
        Column {
            header: "Step-TCR",
            name: "step_tcr",
            unit: "fraction",
            meaning: "gold steps matched in order / gold steps, passing traces (PolicyGuide \
                      Table 5)",
        },
        Column {
            header: "Trace-TCR",
            name: "trace_tcr",
            unit: "fraction",
            meaning: "fully compliant / passing traces (PolicyGuide Table 5)",
        },
        PROCESS_VALID,
    ],
    repeated: &[],
};

const PROCESS_VALID: Column = Column {
    header: "Process-valid",
    name: "process_valid_rate",
    unit: "fraction",
    meaning: "passing and compliant / all traces (PolicyGuide Table 5)",
};

impl Measure for Trace {
    const KEY: &'static str = "trace";
    const GROUP_COLUMNS: &'static [Column] = &[
        Column::csv("step_tcr", "fraction", "Step-TCR (PolicyGuide Table 5)"),
        Column::csv("trace_tcr", "fraction", "Trace-TCR (PolicyGuide Table 5)"),
        Column {
            header: "process_valid_rate",
            ..PROCESS_VALID
        },
    ];
    const TABLES: &'static [TableDecl] = &[TABLE5];
    const PLACE: Place = Place::after(&["turns"], &["turns_delta"], Some("policyguard_table9"));
    type Acc = TraceCompliance;
    /// `None` when no simulation of the group has a gold trace.
    type Value = Option<TraceCompliance>;

    fn add(acc: &mut TraceCompliance, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.add(sim);
    }

    fn finish(acc: TraceCompliance, _cx: &Context<'_>) -> Option<TraceCompliance> {
        (acc.traces > 0).then_some(acc)
    }

    fn group_cells(v: &Option<TraceCompliance>) -> Vec<Cell> {
        vec![
            Cell::opt_rate(v.and_then(|t| t.step_tcr())),
            Cell::opt_rate(v.and_then(|t| t.trace_tcr())),
            Cell::opt_rate(v.and_then(|t| t.process_valid_rate())),
        ]
    }

    fn tables(r: &Report) -> Vec<Table> {
        let cells = |_: &GroupReport, tc: TraceCompliance| {
            [
                Cell::Int(tc.traces),
                Cell::Int(tc.passing),
                Cell::opt_pct(tc.step_tcr()),
                Cell::opt_pct(tc.trace_tcr()),
                Cell::opt_pct(tc.process_valid_rate()),
            ]
        };
        fill_some::<Trace, _, _>(
            TABLE5.table("PolicyGuide Table 5: ordered-trace compliance"),
            r,
            cells,
            &[
                "Step- and Trace-TCR condition on outcome-passing traces; process-valid = passing \
               and trace-compliant / all traces.",
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::registry_tests::value_over;
    use tauguard_core::record::Slice;
    use tauguard_testkit::synthetic::{record, with_calls};

    #[test]
    fn lcs_hand_cases() {
        assert_eq!(matched_in_order(&["a", "b", "c"], &["a", "c"]), 2);
        assert_eq!(matched_in_order(&["a", "b", "c"], &["c", "b", "a"]), 1);
        assert_eq!(matched_in_order(&["a", "b"], &["x", "a", "y", "b"]), 2);
        assert_eq!(matched_in_order::<&str, &str>(&[], &["a"]), 0);
        assert_eq!(matched_in_order(&["a", "a"], &["a"]), 1);
    }

    #[test]
    fn hand_computed_compliance() {
        let gold = Some(vec!["a".to_string(), "b".into(), "c".into()]);
        // Passing, compliant (extra calls in between are fine).
        let mut ok = with_calls(record("t1", Slice::Mut, 0, 1.0), &["a", "x", "b", "c"]);
        ok.gold_trace = gold.clone();
        // Passing, out of order: matches 2 of 3.
        let mut swapped = with_calls(record("t1", Slice::Mut, 1, 1.0), &["a", "c", "b"]);
        swapped.gold_trace = gold.clone();
        // Failing: counts only in the process-valid denominator.
        let mut failed = with_calls(record("t1", Slice::Mut, 2, 0.0), &["a", "b", "c"]);
        failed.gold_trace = gold.clone();
        // No gold trace: ignored.
        let other = record("t2", Slice::Mut, 0, 1.0);
        let t = value_over::<Trace>(&[&ok, &swapped, &failed, &other]).unwrap();
        assert_eq!(
            t,
            TraceCompliance {
                traces: 3,
                passing: 2,
                gold_steps: 6,
                matched_steps: 5,
                compliant: 1
            }
        );
        assert_eq!(t.step_tcr(), Some(5.0 / 6.0));
        assert_eq!(t.trace_tcr(), Some(0.5));
        assert_eq!(t.process_valid_rate(), Some(1.0 / 3.0));
        assert_eq!(value_over::<Trace>(&[&other]), None);
    }

    #[test]
    fn a_blocked_call_matches_no_gold_step() {
        use tauguard_core::message::{Message, ToolMessage};
        // An older record still holds its blocked call "b", answered by a remediation: the
        // call never executed, so the trace matches "a" only.
        let mut r = with_calls(record("t1", Slice::Mut, 0, 1.0), &["a", "b"]);
        r.gold_trace = Some(vec!["a".into(), "b".into()]);
        r.messages.push(Message::Tool(ToolMessage {
            id: "call_1".into(),
            content: "blocked".into(),
            requestor: tauguard_core::Requestor::Assistant,
            error: true,
            turn_idx: None,
            timestamp: None,
            guard_blocked: true,
        }));
        let t = value_over::<Trace>(&[&r]).unwrap();
        assert_eq!((t.matched_steps, t.compliant), (1, 0));
    }

    #[test]
    fn a_call_whose_guard_event_did_not_execute_is_no_event() {
        use tauguard_core::record::Verdict;
        use tauguard_testkit::synthetic::guard_event;
        let gold = Some(vec!["get".to_string(), "refuel".into()]);
        // Today's record: the blocked attempt of "refuel" is in guard_events only; the
        // trajectory holds the read. The attempt does not count as a step.
        let mut blocked = with_calls(record("t1", Slice::Mut, 0, 1.0), &["get"]);
        blocked.gold_trace = gold.clone();
        blocked.guard = "policyguide".into();
        blocked.guard_events = vec![guard_event(
            "policyguide",
            "call_9",
            "refuel",
            Verdict::Block,
            false,
        )];
        // A record whose trajectory still names the intercepted call (id call_1) with no
        // guard-blocked result: its unexecuted guard event keeps it out.
        let mut intercepted = with_calls(record("t1", Slice::Mut, 1, 1.0), &["get", "refuel"]);
        intercepted.gold_trace = gold.clone();
        intercepted.guard_events = vec![guard_event(
            "policyguide",
            "call_1",
            "refuel",
            Verdict::Block,
            false,
        )];
        let t = value_over::<Trace>(&[&blocked, &intercepted]).unwrap();
        assert_eq!(
            (t.passing, t.gold_steps, t.matched_steps, t.compliant),
            (2, 4, 2, 0)
        );
        // The one-shot gate lets the same call through: an executed event for the id counts it.
        intercepted.guard_events.push(guard_event(
            "policyguide",
            "call_1",
            "refuel",
            Verdict::Block,
            true,
        ));
        let t = value_over::<Trace>(&[&intercepted]).unwrap();
        assert_eq!((t.matched_steps, t.compliant), (2, 1));
        // Calls no guard judged (read-only) count as they are.
        let mut plain = with_calls(record("t1", Slice::Mut, 2, 1.0), &["get", "refuel"]);
        plain.gold_trace = gold;
        plain.guard_events = vec![guard_event(
            "policyguide",
            "call_7",
            "refuel",
            Verdict::Pass,
            true,
        )];
        assert_eq!(value_over::<Trace>(&[&plain]).unwrap().compliant, 1);
    }
}
