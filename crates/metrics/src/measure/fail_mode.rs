//! Fail-mode verdicts per group: guard decisions and guide runs whose verdict or guidance came
//! from the configured fail mode instead of a judgement (the records' `verdict_source =
//! "fail_mode"` and its `fail_reason`: an unparseable or cut reply, an HTTP error, a time-out,
//! a context overflow). A fail-closed verifier whose every reply is unparseable blocks every
//! call: PolicyGuard Table 7 would show Block% 100% as if the verifier had judged, and a guide
//! whose every call is rejected shows "Guide calls / sim 0.00" in PolicyGuide Table 14 as if it
//! had had nothing to do. So the tables count these verdicts per cell beside the numbers they
//! distort, and a report flags every cell where their share exceeds a threshold.
//!
//! Populations, infrastructure-error simulations excluded (as from Table 7 and Table 14):
//! - guard decisions: the agent-side mutating calls with a verdict (Table 7's verdict view),
//!   and of the executed ones those a fail-open verdict let through (the runtime row counts
//!   them over its attempts);
//! - guide runs: every guide event (Table 14's runs).

use crate::input::lean::Lean;
use crate::measure::registry::{Column, Context, Measure, Place};
use crate::render::table::Cell;
use crate::summary::SimSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tauguard_core::Requestor;
use tauguard_core::record::{FailReason, VerdictSource};

/// The default of `report --fail-mode-threshold`: a cell where more than a tenth of the
/// verdicts came from the fail mode is flagged.
pub const DEFAULT_FAIL_MODE_THRESHOLD: f64 = 0.10;

/// The fail reason a record's event gives, `None` when the model judged. An event marked
/// `fail_mode` without a reason reads as `model_error`.
fn reason_of(source: VerdictSource, reason: Option<FailReason>) -> Option<FailReason> {
    (source == VerdictSource::FailMode).then(|| reason.unwrap_or(FailReason::ModelError))
}

/// Per call attempt of a record, why its guard event's verdict came from the fail mode. An
/// event belongs to the attempt its `attempt_idx` names when that attempt has its call id (as
/// the orchestrator writes them), else to the first attempt with its call id.
pub(crate) fn call_fail_reasons(rec: &Lean<'_>) -> Vec<Option<FailReason>> {
    let mut out = vec![None; rec.call_attempts.len()];
    for e in &rec.guard_events {
        let Some(reason) = reason_of(e.verdict_source, e.fail_reason) else {
            continue;
        };
        let at = e.attempt_idx as usize;
        let idx = if rec
            .call_attempts
            .get(at)
            .is_some_and(|a| a.call_id == *e.call_id)
        {
            Some(at)
        } else {
            rec.call_attempts
                .iter()
                .position(|a| a.call_id == *e.call_id)
        };
        if let Some(i) = idx {
            out[i] = Some(reason);
        }
    }
    out
}

/// Why each guide run of a record whose guidance came from the fail mode did, in order.
pub(crate) fn guide_fail_reasons(rec: &Lean<'_>) -> Vec<FailReason> {
    rec.guide_events
        .iter()
        .filter_map(|e| reason_of(e.verdict_source, e.fail_reason))
        .collect()
}

/// Fail-mode verdicts among one group's decisions (guard decisions or guide runs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FailModeCounts {
    /// Decisions counted: guard decisions on agent-side mutating calls, or guide runs.
    pub decisions: u64,
    /// Of those, verdicts the fail mode gave.
    pub fail_mode: u64,
    /// The fail-mode verdicts by reason.
    pub by_reason: BTreeMap<FailReason, u64>,
    /// Guard decisions only (Table 7's runtime row): executed agent-side calls, and those of
    /// them whose verdict was the fail mode's (a fail-open PASS).
    pub executed: u64,
    pub executed_fail_mode: u64,
    /// [`FailModeCounts::share`] exceeds the report's threshold (set by [`flag`]).
    pub flagged: bool,
    /// Counts guard decisions (the runtime fields mean something).
    guard: bool,
}

impl FailModeCounts {
    /// Fail-mode share = fail-mode verdicts / decisions; `None` without decisions.
    pub fn share(&self) -> Option<f64> {
        crate::measure::confusion::ratio(self.fail_mode, self.decisions)
    }

    /// Adds the guard decisions of one simulation (none for an infrastructure error).
    pub fn add_guard(&mut self, rec: &SimSummary) {
        self.guard = true;
        if rec.is_infra_error() {
            return;
        }
        for c in rec
            .calls
            .iter()
            .filter(|c| c.requestor == Requestor::Assistant)
        {
            if c.verdict.is_some() {
                self.decisions += 1;
                if let Some(r) = c.fail_reason {
                    self.fail_mode += 1;
                    *self.by_reason.entry(r).or_default() += 1;
                }
            }
            if c.executed {
                self.executed += 1;
                self.executed_fail_mode += u64::from(c.fail_reason.is_some());
            }
        }
    }

    /// Adds the guide runs of one simulation (none for an infrastructure error).
    pub fn add_guide(&mut self, rec: &SimSummary) {
        if rec.is_infra_error() {
            return;
        }
        let g = rec.guide();
        self.decisions += u64::from(g.runs);
        for r in &g.fail_reasons {
            self.fail_mode += 1;
            *self.by_reason.entry(*r).or_default() += 1;
        }
    }

    /// `parse_failure 12, truncated 3`, most frequent first.
    pub fn reasons_text(&self) -> String {
        let mut by: Vec<(&FailReason, &u64)> = self.by_reason.iter().collect();
        by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let parts: Vec<String> = by
            .iter()
            .map(|(r, n)| format!("{} {n}", r.as_str()))
            .collect();
        parts.join(", ")
    }
}

impl Serialize for FailModeCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("decisions", &self.decisions)?;
        m.serialize_entry("fail_mode", &self.fail_mode)?;
        m.serialize_entry("share", &self.share())?;
        let by: BTreeMap<&str, u64> = self
            .by_reason
            .iter()
            .map(|(r, n)| (r.as_str(), *n))
            .collect();
        m.serialize_entry("by_reason", &by)?;
        m.serialize_entry("flagged", &self.flagged)?;
        if self.guard {
            m.serialize_entry("executed", &self.executed)?;
            m.serialize_entry("executed_fail_mode", &self.executed_fail_mode)?;
        }
        m.end()
    }
}

/// The JSON form read back: the counts without the share, which is theirs; the runtime
/// fields present only for guard decisions.
impl<'de> Deserialize<'de> for FailModeCounts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Form {
            decisions: u64,
            fail_mode: u64,
            by_reason: BTreeMap<FailReason, u64>,
            flagged: bool,
            executed: Option<u64>,
            executed_fail_mode: Option<u64>,
        }
        let f = Form::deserialize(d)?;
        Ok(FailModeCounts {
            decisions: f.decisions,
            fail_mode: f.fail_mode,
            by_reason: f.by_reason,
            executed: f.executed.unwrap_or(0),
            executed_fail_mode: f.executed_fail_mode.unwrap_or(0),
            flagged: f.flagged,
            guard: f.executed.is_some(),
        })
    }
}

impl FailModeCounts {
    /// Flagged when its share exceeds the report's threshold.
    pub(crate) fn flag(mut self, cx: &Context<'_>) -> FailModeCounts {
        self.flagged = self
            .share()
            .is_some_and(|s| s > cx.options.fail_mode_threshold);
        self
    }

    /// The warning a group with flagged counts gets, naming the cell, the share and the
    /// reasons; none for a group without counts (the value of both fail-mode measures).
    pub(crate) fn warnings(
        counts: &Option<FailModeCounts>,
        label: &str,
        what: &str,
        table: &str,
        cx: &Context<'_>,
    ) -> Vec<String> {
        let Some((c, share)) =
            (counts.as_ref()).and_then(|c| Some((c, c.share().filter(|_| c.flagged)?)))
        else {
            return Vec::new();
        };
        vec![format!(
            "{label}: {:.1}% of {what} ({} of {}) came from the fail mode, not the model \
             (reasons: {}); its {table} numbers describe the fail mode \
             (--fail-mode-threshold {})",
            share * 100.0,
            c.fail_mode,
            c.decisions,
            c.reasons_text(),
            cx.options.fail_mode_threshold
        )]
    }
}

/// The fail-mode verdicts among a group's guard decisions: PolicyGuard Table 7's fail-mode
/// columns (that table is confusion's, `confusion.rs`) and three of the flat CSV.
#[derive(Debug)]
pub(crate) struct FailMode;

impl Measure for FailMode {
    const KEY: &'static str = "fail_mode";
    const GROUP_COLUMNS: &'static [Column] = &[
        Column::csv(
            "fail_mode_decisions",
            "count",
            "guard decisions on agent-side mutating calls of scored simulations",
        ),
        Column::csv(
            "fail_mode_verdicts",
            "count",
            "of those, verdicts the guard's fail mode gave, not the verifier (see \
            fail_mode.rs)",
        ),
        Column::csv(
            "fail_mode_rate",
            "fraction",
            "fail-mode verdicts / guard decisions",
        ),
    ];
    const PLACE: Place = Place::after(&["verifier_calls"], &["asr"], None).skipping_null();
    type Acc = FailModeCounts;
    /// `None` when the group has no guard decision.
    type Value = Option<FailModeCounts>;

    fn add(acc: &mut FailModeCounts, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.add_guard(sim);
    }

    fn finish(acc: FailModeCounts, cx: &Context<'_>) -> Option<FailModeCounts> {
        (acc.decisions > 0).then(|| acc.flag(cx))
    }

    fn warnings(v: &Option<FailModeCounts>, label: &str, cx: &Context<'_>) -> Vec<String> {
        FailModeCounts::warnings(v, label, "guard verdicts", "PolicyGuard Table 7", cx)
    }

    fn shows_group_columns(values: &[Option<FailModeCounts>]) -> bool {
        values.iter().any(Option::is_some)
    }

    fn group_cells(v: &Option<FailModeCounts>) -> Vec<Cell> {
        let f = v.as_ref();
        vec![
            f.map_or(Cell::Missing, |f| Cell::Int(f.decisions)),
            f.map_or(Cell::Missing, |f| Cell::Int(f.fail_mode)),
            Cell::opt_rate(f.and_then(FailModeCounts::share)),
        ]
    }
}
