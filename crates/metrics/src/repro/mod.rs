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

use crate::compare::{CompareOptions, compare_summaries};
use crate::floors::Floor;
use crate::report::{GroupReport, Report};
use crate::simulated::titled;
use crate::summary::SimSummary;
use serde::Serialize;

mod published;
mod quantity;

pub use published::{Cite, Note, Published, PublishedCell, quote_digits, quote_value};
pub use quantity::{Column, Metric, SliceKey, check_quantity};

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

impl TableSpec {
    pub fn validate(&self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Err("`columns`: list at least one column".into());
        }
        for (i, c) in self.columns.iter().enumerate() {
            check_quantity(c.metric, c.slice, c.k, c.versus.as_deref())
                .map_err(|e| format!("`columns[{i}]` ({}): {e}", c.label))?;
        }
        if self.mean_over_domains && self.layout != Layout::DomainRows {
            return Err("`mean_over_domains` needs `layout = \"domain-rows\"`".into());
        }
        Ok(())
    }
}

/// The runs of one config: its domain, the experiment's label for its agent, its guards in
/// grid order, the report over its records (`None` before it has run) and the records'
/// summaries (for the measures that pair simulations: McNemar).
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
    /// What trivial agents score on the same domains and tasks (`crate::floors`, computed by
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

/// Builds the table of `title` from the runs in `configs` (in order), `published` and the
/// floors of the runs' domains.
pub fn repro_table(
    title: &str,
    spec: &TableSpec,
    configs: &[ConfigRows<'_>],
    published: &Published,
    floors: &[Floor],
    simulated: bool,
) -> ReproTable {
    let mut domains: Vec<&str> = Vec::new();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let mut triples: Vec<(&str, &str, &str)> = Vec::new();
    for c in configs {
        if !domains.contains(&c.domain.as_str()) {
            domains.push(&c.domain);
        }
        for g in &c.guards {
            if !pairs.contains(&(c.agent.as_str(), g.as_str())) {
                pairs.push((&c.agent, g));
            }
            triples.push((&c.domain, &c.agent, g));
        }
    }
    let find = |d: &str, a: &str, g: &str| -> Option<&GroupReport> {
        let c = configs
            .iter()
            .find(|c| c.domain == d && c.agent == a && c.guards.iter().any(|x| x == g))?;
        c.report?
            .groups
            .iter()
            .find(|x| x.domain == d && x.guard == g)
    };
    let ours = |d: &str, a: &str, g: &str, col: &Column| -> Option<f64> {
        if col.metric == Metric::McnemarP {
            return mcnemar_p(configs, &[d], a, g, col.versus.as_deref()?);
        }
        let vs = col.versus.as_deref().and_then(|v| find(d, a, v));
        find(d, a, g).and_then(|x| quantity::value_of(x, col, vs))
    };
    let mut table = ReproTable {
        title: titled(title, simulated),
        simulated,
        cited: published.cited(),
        notes: published.notes.clone(),
        remarks: published.remarks.clone(),
        not_measured: spec.not_measured.clone(),
        cells: Vec::new(),
        floors: floors.to_vec(),
        unplaced: Vec::new(),
        headers: Vec::new(),
        rows: Vec::new(),
    };
    let mut placed = vec![false; published.cells.len()];
    let mut add =
        |t: &mut ReproTable, d: &str, a: &str, g: &str, col: &Column, ours: Option<f64>| {
            let hit = published.cells.iter().position(|p| {
                p.domain == d && p.agent == a && p.guard == g && same_quantity(p, col)
            });
            if let Some(i) = hit {
                placed[i] = true;
            }
            let p = hit.map(|i| &published.cells[i]);
            let value = p.map(|p| p.value);
            t.cells.push(ReproCell {
                domain: d.into(),
                agent: a.into(),
                guard: g.into(),
                column: col.label.clone(),
                metric: col.metric,
                slice: col.slice,
                k: col.k,
                versus: col.versus.clone(),
                ours,
                diff: ours
                    .zip(value)
                    .filter(|_| !p.is_some_and(PublishedCell::is_bound))
                    .map(|(o, p)| o - p),
                published: value,
                quote: p.map(|p| p.quote.clone()),
                cite: p.map(|p| p.cite.label()),
            });
            t.cells.len() - 1
        };
    let labels: Vec<&str> = spec.columns.iter().map(|c| c.label.as_str()).collect();
    match spec.layout {
        Layout::DomainRows => {
            table.headers = ["Domain", "Agent", "Guard"]
                .into_iter()
                .chain(labels.iter().copied())
                .map(String::from)
                .collect();
            for &(d, a, g) in &triples {
                let idx = spec
                    .columns
                    .iter()
                    .map(|col| {
                        let v = ours(d, a, g, col);
                        Some(add(&mut table, d, a, g, col, v))
                    })
                    .collect();
                table.rows.push((vec![d.into(), a.into(), g.into()], idx));
            }
        }
        Layout::DomainColumns => {
            table.headers = ["Agent", "Guard"].map(String::from).to_vec();
            for d in &domains {
                table
                    .headers
                    .extend(labels.iter().map(|l| format!("{d} {l}")));
            }
            for &(a, g) in &pairs {
                let mut idx = Vec::new();
                for &d in &domains {
                    let present = triples.contains(&(d, a, g));
                    for col in &spec.columns {
                        idx.push(present.then(|| {
                            let v = ours(d, a, g, col);
                            add(&mut table, d, a, g, col, v)
                        }));
                    }
                }
                table.rows.push((vec![a.into(), g.into()], idx));
            }
        }
    }
    if spec.mean_over_domains && domains.len() > 1 {
        let n = domains.len();
        let pooled = spec.columns.iter().any(|c| c.metric == Metric::McnemarP);
        for &(a, g) in &pairs {
            if !domains.iter().all(|d| triples.contains(&(*d, a, g))) {
                continue;
            }
            let idx = spec
                .columns
                .iter()
                .map(|col| {
                    if col.metric == Metric::McnemarP {
                        let p = col
                            .versus
                            .as_deref()
                            .and_then(|v| mcnemar_p(configs, &domains, a, g, v));
                        return Some(add(&mut table, POOLED_DOMAIN, a, g, col, p));
                    }
                    let vals: Option<Vec<f64>> =
                        domains.iter().map(|d| ours(d, a, g, col)).collect();
                    let mean = vals.map(|v| v.iter().sum::<f64>() / v.len() as f64);
                    Some(add(&mut table, MEAN_DOMAIN, a, g, col, mean))
                })
                .collect::<Vec<_>>();
            let label = if pooled {
                format!("all {n} domains: unweighted mean; McNemar pooled, stratified by domain")
            } else {
                format!("unweighted mean over {n} domains")
            };
            table
                .rows
                .push((vec![label, a.to_string(), g.to_string()], idx));
        }
    }
    for (p, done) in published.cells.iter().zip(placed) {
        if !done {
            table.unplaced.push(format!(
                "{} / {} / {} / {:?} {:?} k={:?} versus={:?} = {}",
                p.domain, p.agent, p.guard, p.metric, p.slice, p.k, p.versus, p.quote
            ));
        }
    }
    table
}

mod render;
#[cfg(test)]
mod tests;
