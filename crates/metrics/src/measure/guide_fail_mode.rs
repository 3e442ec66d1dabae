//! Fail-mode guide runs per group: the guide runs whose guidance came from the configured
//! fail mode instead of the model (counted as `fail_mode.rs` says), beside the guide's usage
//! in PolicyGuide Table 14, flagged past the report's threshold like the guard's verdicts.

use crate::measure::fail_mode::FailModeCounts;
use crate::measure::registry::{Column, Context, Measure, Place};
use crate::render::table::Cell;
use crate::summary::SimSummary;

/// A group's guide runs, and whether any record had one (an infrastructure error's runs
/// count none, yet the group is a guided one).
#[derive(Debug, Default)]
pub(crate) struct GuideRuns {
    counts: FailModeCounts,
    guided: bool,
}

/// The guide runs whose guidance came from the fail mode: PolicyGuide Table 14's fail-mode
/// columns (that table is the guide's, `tables_policyguide.rs`) and two of the flat CSV.
#[derive(Debug)]
pub(crate) struct GuideFailMode;

impl Measure for GuideFailMode {
    const KEY: &'static str = "guide_fail_mode";
    const GROUP_COLUMNS: &'static [Column] = &[
        Column::csv(
            "guide_fail_mode_runs",
            "count",
            "guide runs whose guidance the fail mode gave, not the model",
        ),
        Column::csv(
            "guide_fail_mode_rate",
            "fraction",
            "fail-mode guide runs / guide runs",
        ),
    ];
    const PLACE: Place =
        Place::after(&["guide_usage"], &["fail_mode_rate", "asr"], None).skipping_null();
    type Acc = GuideRuns;
    /// `None` without guide events.
    type Value = Option<FailModeCounts>;

    fn add(acc: &mut GuideRuns, sim: &SimSummary, _own: &[u64], _cx: &Context<'_>) {
        acc.guided |= sim.guide().runs > 0;
        acc.counts.add_guide(sim);
    }

    fn finish(acc: GuideRuns, cx: &Context<'_>) -> Option<FailModeCounts> {
        acc.guided.then(|| acc.counts.flag(cx))
    }

    fn warnings(v: &Option<FailModeCounts>, label: &str, cx: &Context<'_>) -> Vec<String> {
        FailModeCounts::warnings(v, label, "guide runs", "PolicyGuide Table 14", cx)
    }

    fn shows_group_columns(values: &[Option<FailModeCounts>]) -> bool {
        values.iter().any(Option::is_some)
    }

    fn group_cells(v: &Option<FailModeCounts>) -> Vec<Cell> {
        let f = v.as_ref();
        vec![
            f.map_or(Cell::Missing, |f| Cell::Int(f.fail_mode)),
            Cell::opt_rate(f.and_then(FailModeCounts::share)),
        ]
    }
}
