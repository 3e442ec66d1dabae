//! What a reproduction-table cell measures: the metric, the slice, the k and, for the
//! quantities that compare two configurations, the configuration compared against. Every
//! quantity reads a measure the report already defines (with its citation there), so a table
//! never computes a metric of its own: Pass^k (`crate::measure::pass_k`), per-call confusion
//! (`crate::measure::confusion`), turn inflation (`crate::measure::turns`), call-NMR (`crate::measure::nmr`), ordered-trace
//! compliance (`crate::measure::trace`), guide usage and wall clock (`crate::measure::guide`), cost per
//! simulation (`crate::report`), McNemar (`crate::stats::compare`).

use crate::measure::attack::Attack;
use crate::measure::confusion::ConfusionMeasure;
use crate::measure::nmr::Nmr;
use crate::measure::slices::SliceMetrics;
use crate::measure::trace::Trace;
use crate::measure::turns::Turns;
use crate::report::GroupReport;
use serde::{Deserialize, Serialize};

/// What a cell measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Pass^k on a slice.
    Pass,
    /// Overall Pass^k minus the same agent's baseline Pass^k.
    DeltaPass,
    /// Pass^k / Pass^1 on a slice: the consistency ratio of PolicyGuide Table 10 ("P4/P1").
    PassRatio,
    /// Overall Pass^k of the `versus` configuration minus this row's: what replacing `versus`
    /// by this row loses (PolicyGuide Table 2, "RAW loses +0.100").
    PassLoss,
    /// Per-call PV recall, verdict view (PolicyGuard Table 7).
    PvRecall,
    /// Blocked attempts / attempts, verdict view (PolicyGuard Table 7).
    BlockRate,
    /// Per-call PV recall, runtime view: what executed (`crate::measure::confusion`).
    RuntimePvRecall,
    /// Attempts that did not execute / attempts, runtime view.
    RuntimeBlockRate,
    /// Attack success per trial.
    Asr,
    /// Mean agent + user turns per Mut simulation (PolicyGuard Table 8, top row).
    MeanTurns,
    /// Mean turns minus the same agent's baseline (PolicyGuard Table 8, other rows).
    TurnInflation,
    /// Call-NMR over all Mut simulations (PolicyGuard Table 9).
    CallNmr,
    /// Call-NMR over outcome-passing Mut simulations (PolicyGuide Table 17).
    CallNmrPassing,
    /// Step-TCR on outcome-passing traces (PolicyGuide Table 5).
    StepTcr,
    /// Trace-TCR on outcome-passing traces (PolicyGuide Table 5).
    TraceTcr,
    /// End-to-end process-valid rate over all traces (PolicyGuide Table 5).
    ProcessValidRate,
    /// Guide model calls per simulation (PolicyGuide Table 14).
    GuideCalls,
    /// Guide cost in US dollars per simulation (PolicyGuide Table 14).
    GuideCost,
    /// Guide prefix-cache hit rate (PolicyGuide Table 14).
    PrefixCacheHit,
    /// Mean wall clock per simulation in seconds (PolicyGuide Table 15).
    WallClock,
    /// Mean wall clock / the same agent's baseline's (PolicyGuide Table 15).
    WallClockRatio,
    /// Cost in US dollars per simulation, all roles.
    Cost,
    /// Cost per simulation minus the `versus` configuration's.
    DeltaCost,
    /// Exact McNemar p of this row against `versus` on (task, trial) pairs: per domain, and
    /// pooled over domains stratified by domain in the aggregate row (PolicyGuide Table 12).
    McnemarP,
}

/// How a metric's values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Three decimals (Pass^k and its differences, ASR, ratios of Pass^k).
    Fraction,
    /// A percentage with one decimal; differences in pp.
    Percent,
    /// Two decimals (turns).
    Turns,
    /// One decimal (calls).
    Count,
    /// US dollars, three decimals.
    Dollars,
    /// Seconds, one decimal.
    Seconds,
    /// A ratio, two decimals and ×.
    Times,
    /// A p-value, scientific.
    P,
}

impl Metric {
    pub(crate) fn unit(self) -> Unit {
        use Metric::*;
        match self {
            Pass | DeltaPass | PassRatio | PassLoss | Asr => Unit::Fraction,
            PvRecall | BlockRate | RuntimePvRecall | RuntimeBlockRate | CallNmr
            | CallNmrPassing | StepTcr | TraceTcr | ProcessValidRate | PrefixCacheHit => {
                Unit::Percent
            }
            MeanTurns | TurnInflation => Unit::Turns,
            GuideCalls => Unit::Count,
            GuideCost | Cost | DeltaCost => Unit::Dollars,
            WallClock => Unit::Seconds,
            WallClockRatio => Unit::Times,
            McnemarP => Unit::P,
        }
    }

    /// A difference of two configurations' values: printed with its sign.
    pub(crate) fn is_difference(self) -> bool {
        matches!(
            self,
            Metric::DeltaPass | Metric::PassLoss | Metric::TurnInflation | Metric::DeltaCost
        )
    }

    fn needs_k(self) -> bool {
        matches!(
            self,
            Metric::Pass | Metric::DeltaPass | Metric::PassRatio | Metric::PassLoss
        )
    }

    fn needs_versus(self) -> bool {
        matches!(
            self,
            Metric::PassLoss | Metric::DeltaCost | Metric::McnemarP
        )
    }

    fn sliced(self) -> bool {
        matches!(self, Metric::Pass | Metric::PassRatio)
    }
}

/// Which tasks a cell is over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SliceKey {
    #[default]
    All,
    Pv,
    Mut,
}

/// One column of a reproduction table: a label and the quantity it shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    pub label: String,
    pub metric: Metric,
    #[serde(default)]
    pub slice: SliceKey,
    #[serde(default)]
    pub k: Option<u32>,
    /// The guard a comparing metric compares against (same domain and agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
}

/// What is wrong with a quantity a column or a published cell names: a finding about the
/// file's text, with no error beneath it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuantityFinding {
    #[error("{0:?} needs `k`")]
    NeedsK(Metric),
    #[error("`k` must be at least 1")]
    ZeroK,
    #[error("PassRatio divides Pass^k by Pass^1: `k` must be above 1")]
    RatioOfPassOne,
    #[error("{0:?} takes no `k`")]
    TakesNoK(Metric),
    #[error("{0:?} is over all tasks: leave `slice` out")]
    NotSliced(Metric),
    #[error("{0:?} compares two guards: name the other in `versus`")]
    NeedsVersus(Metric),
    #[error("{metric:?} compares nothing: `versus = \"{versus}\"` does not apply")]
    ComparesNothing { metric: Metric, versus: String },
}

/// Checks a quantity: the Pass^k family needs a k (Pass^k / Pass^1 a k above 1), the rates
/// take none; only Pass^k and its ratio are cut by slice; the comparing metrics name the
/// guard they compare against, and only they do.
pub fn check_quantity(
    metric: Metric,
    slice: SliceKey,
    k: Option<u32>,
    versus: Option<&str>,
) -> Result<(), QuantityFinding> {
    match k {
        None if metric.needs_k() => return Err(QuantityFinding::NeedsK(metric)),
        Some(0) if metric.needs_k() => return Err(QuantityFinding::ZeroK),
        Some(1) if metric == Metric::PassRatio => return Err(QuantityFinding::RatioOfPassOne),
        Some(_) if !metric.needs_k() => return Err(QuantityFinding::TakesNoK(metric)),
        _ => {}
    }
    if !metric.sliced() && slice != SliceKey::All {
        return Err(QuantityFinding::NotSliced(metric));
    }
    match versus {
        None if metric.needs_versus() => Err(QuantityFinding::NeedsVersus(metric)),
        Some(v) if !metric.needs_versus() => Err(QuantityFinding::ComparesNothing {
            metric,
            versus: v.to_string(),
        }),
        _ => Ok(()),
    }
}

fn slice_of(g: &GroupReport, slice: SliceKey) -> &SliceMetrics {
    match slice {
        SliceKey::All => &g.overall,
        SliceKey::Pv => &g.pv,
        SliceKey::Mut => &g.mut_,
    }
}

/// Cost per simulation over all roles: the sum of the per-role means; `None` when a role's
/// mean is unknown (an unpriced call) or no role has usage.
fn cost(g: &GroupReport) -> Option<f64> {
    if g.cost_per_simulation.is_empty() {
        return None;
    }
    g.cost_per_simulation.values().copied().sum()
}

/// The value of `c` for group `g`; `vs` is the group of `c.versus` (same domain and agent)
/// where the metric compares. McNemar reads simulations, not reports: its cells are filled by
/// the table builder.
pub(crate) fn value_of(g: &GroupReport, c: &Column, vs: Option<&GroupReport>) -> Option<f64> {
    // A comparison of a guard with itself says nothing: no cell.
    let vs = vs.filter(|v| v.guard != g.guard);
    let slice = slice_of(g, c.slice);
    let k = c.k.unwrap_or(1);
    let usage = g.guide_usage.as_ref();
    let trace = || g.measures.get::<Trace>().flatten();
    match c.metric {
        Metric::Pass => slice.pass_k.get(k),
        Metric::DeltaPass => g.delta_vs_baseline.as_ref().and_then(|d| d.get(k)),
        Metric::PassRatio => {
            let one = slice.pass_k.get(1).filter(|p| *p > 0.0)?;
            Some(slice.pass_k.get(k)? / one)
        }
        Metric::PassLoss => Some(vs?.overall.pass_k.get(k)? - g.overall.pass_k.get(k)?),
        Metric::PvRecall => g.measures.get::<ConfusionMeasure>()?.verdict.pv_recall(),
        Metric::BlockRate => g.measures.get::<ConfusionMeasure>()?.verdict.block_rate(),
        Metric::RuntimePvRecall => g.measures.get::<ConfusionMeasure>()?.runtime.pv_recall(),
        Metric::RuntimeBlockRate => g.measures.get::<ConfusionMeasure>()?.runtime.block_rate(),
        Metric::Asr => g.measures.get::<Attack>().flatten().and_then(|a| a.asr()),
        Metric::MeanTurns => g.measures.get::<Turns>()?.mean_turns,
        Metric::TurnInflation => g.measures.get::<Turns>()?.delta_vs_baseline,
        Metric::CallNmr => g.measures.get::<Nmr>().and_then(|v| v.all.rate()),
        Metric::CallNmrPassing => g.measures.get::<Nmr>().and_then(|v| v.passing.rate()),
        Metric::StepTcr => trace().and_then(|t| t.step_tcr()),
        Metric::TraceTcr => trace().and_then(|t| t.trace_tcr()),
        Metric::ProcessValidRate => trace().and_then(|t| t.process_valid_rate()),
        Metric::GuideCalls => usage.and_then(|u| u.calls_per_simulation()),
        Metric::GuideCost => usage.and_then(|u| u.cost_per_simulation()),
        Metric::PrefixCacheHit => usage.and_then(|u| u.prefix_cache_hit_rate()),
        Metric::WallClock => g.wall_clock.and_then(|w| w.mean_seconds),
        Metric::WallClockRatio => g.wall_clock.and_then(|w| w.ratio_vs_baseline),
        Metric::Cost => cost(g),
        Metric::DeltaCost => Some(cost(g)? - cost(vs?)?),
        Metric::McnemarP => None,
    }
}
