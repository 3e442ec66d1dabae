//! Reproduction tables: an experiment's measured numbers beside the numbers its paper
//! publishes, with the difference per cell (ours − published), so a reader sees at a glance
//! where a reproduction lands. `tauguard reproduce` builds one from the reports of an
//! experiment's runs, a [`TableSpec`] (which quantities are columns, whether domains are rows
//! or columns, whether to add the unweighted mean over domains) and the [`Published`] cells.
//!
//! A cell is keyed by (domain, agent, guard, metric, slice, k). The agent is the label the
//! experiment gives a run (`GPT 5.4`), not the record's model id, so offline runs — where
//! every agent is the `sim` agent — still fill the paper's rows. A published cell that the
//! table has no place for is reported in [`ReproTable::unplaced`], never dropped silently.

use crate::measure::floors::Floor;
use crate::report::Report;
use crate::stats::compare::{CompareOptions, compare_summaries};
use crate::summary::SimSummary;
use serde::Serialize;

mod build;
mod published;
mod quantity;

pub use build::repro_table;
pub use published::{
    Cite, Entry, EntryFinding, Note, Published, PublishedCell, PublishedFinding, quote_digits,
    quote_value,
};
pub use quantity::{Column, Metric, QuantityFinding, SliceKey, check_quantity};

/// The domain key of the cross-domain mean rows, in published files and outputs.
pub const MEAN_DOMAIN: &str = "mean";

/// The domain key of McNemar cells pooled over domains (stratified by domain), in the
/// aggregate row.
pub const POOLED_DOMAIN: &str = "pooled";

/// Where domains go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// One row per (domain, agent, guard); columns are the quantities.
    #[default]
    DomainRows,
    /// One row per (agent, guard); one column per (domain, quantity).
    DomainColumns,
}

/// How an experiment's table is laid out.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    #[serde(default)]
    pub layout: Layout,
    pub columns: Vec<Column>,
    /// Add, per agent × guard present in every domain, the unweighted mean over domains
    /// (for McNemar columns: the test pooled over domains, stratified by domain).
    #[serde(default)]
    pub mean_over_domains: bool,
    /// What the table's source reports that tauguard does not measure, said under the table.
    #[serde(default)]
    pub not_measured: Vec<String>,
}

/// What is wrong with a table's `[render]` spec: a finding about the file's text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TableSpecFinding {
    #[error("`columns`: list at least one column")]
    NoColumns,
    #[error("`columns[{index}]` ({label}): {finding}")]
    Column {
        index: usize,
        label: String,
        finding: QuantityFinding,
    },
    #[error("`mean_over_domains` needs `layout = \"domain-rows\"`")]
    MeanNeedsDomainRows,
}

impl TableSpec {
    pub fn validate(&self) -> Result<(), TableSpecFinding> {
        if self.columns.is_empty() {
            return Err(TableSpecFinding::NoColumns);
        }
        for (i, c) in self.columns.iter().enumerate() {
            check_quantity(c.metric, c.slice, c.k, c.versus.as_deref()).map_err(|finding| {
                TableSpecFinding::Column {
                    index: i,
                    label: c.label.clone(),
                    finding,
                }
            })?;
        }
        if self.mean_over_domains && self.layout != Layout::DomainRows {
            return Err(TableSpecFinding::MeanNeedsDomainRows);
        }
        Ok(())
    }
}

/// The runs of one config: its domain, the experiment's label for its agent, its guards in
/// grid order, the report over its records (`None` before it has run) and the records'
/// summaries (for the measures that pair simulations: McNemar).
#[derive(Debug)]
pub struct ConfigRows<'a> {
    pub domain: String,
    pub agent: String,
    pub guards: Vec<String>,
    pub report: Option<&'a Report>,
    pub summaries: &'a [SimSummary],
}

/// One cell of a reproduction table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReproCell {
    pub domain: String,
    pub agent: String,
    pub guard: String,
    pub column: String,
    pub metric: Metric,
    pub slice: SliceKey,
    pub k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versus: Option<String>,
    pub ours: Option<f64>,
    pub published: Option<f64>,
    /// The published number as the source writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Where the published number comes from (`PolicyGuard Table 7 (seed …)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cite: Option<String>,
    /// ours − published, when both exist and the source states a value, not a bound.
    pub diff: Option<f64>,
}

/// An experiment's table: every cell, the floors of its domains, and how to print them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReproTable {
    pub title: String,
    pub simulated: bool,
    /// The citations of the published cells, with how many cells each holds.
    pub cited: Vec<(String, usize)>,
    pub notes: Vec<Note>,
    pub remarks: Vec<String>,
    /// What the source reports that tauguard does not measure.
    pub not_measured: Vec<String>,
    pub cells: Vec<ReproCell>,
    /// What trivial agents score on the same domains and tasks (`crate::measure::floors`, computed by
    /// the caller as `report` does); empty before any run.
    pub floors: Vec<Floor>,
    /// Published cells the layout has no place for (a manifest or published-file mistake).
    pub unplaced: Vec<String>,
    #[serde(skip)]
    pub(crate) headers: Vec<String>,
    /// Per printed row: its leading text cells, then indexes into `cells` (None = no cell).
    #[serde(skip)]
    pub(crate) rows: Vec<(Vec<String>, Vec<Option<usize>>)>,
}

fn same_quantity(p: &PublishedCell, c: &Column) -> bool {
    p.metric == c.metric && p.slice == c.slice && p.k == c.k && p.versus == c.versus
}

/// The exact McNemar p of `guard` against `versus` for `agent` on `domains` (one domain: that
/// stratum; several: pooled, stratified by domain), from the configs' simulations; `None`
/// for a guard against itself.
fn mcnemar_p(
    configs: &[ConfigRows<'_>],
    domains: &[&str],
    agent: &str,
    guard: &str,
    versus: &str,
) -> Option<f64> {
    let side = |g: &str| -> Vec<SimSummary> {
        configs
            .iter()
            .filter(|c| c.agent == agent && domains.contains(&c.domain.as_str()))
            .flat_map(|c| c.summaries.iter())
            .filter(|s| s.cell.guard == g)
            .cloned()
            .collect()
    };
    let (a, b) = (side(versus), side(guard));
    if guard == versus || a.is_empty() || b.is_empty() {
        return None;
    }
    let opts = CompareOptions {
        label_a: versus.into(),
        label_b: guard.into(),
        ..CompareOptions::default()
    };
    compare_summaries(&a, &b, &opts)
        .ok()
        .map(|c| c.test.exact_p)
}

mod render;
#[cfg(test)]
mod tests;
