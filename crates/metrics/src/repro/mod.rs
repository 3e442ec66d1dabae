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

use crate::report::{GroupReport, Report};
use crate::simulated::titled;
use crate::slices::SliceMetrics;
use serde::{Deserialize, Serialize};

/// The domain key of the cross-domain mean rows, in published files and outputs.
pub const MEAN_DOMAIN: &str = "mean";

/// What a cell measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Pass^k on a slice.
    Pass,
    /// Overall Pass^k minus the same agent's baseline Pass^k.
    DeltaPass,
    /// Per-call PV recall, verdict view.
    PvRecall,
    /// Blocked attempts / attempts, verdict view.
    BlockRate,
    /// Attack success per trial.
    Asr,
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
}

/// Checks a (metric, slice, k) triple: Pass^k and its delta need a k, the per-call and attack
/// rates take none, and only Pass^k is cut by slice.
pub fn check_quantity(metric: Metric, slice: SliceKey, k: Option<u32>) -> Result<(), String> {
    match (metric, k) {
        (Metric::Pass | Metric::DeltaPass, None) => Err(format!("{metric:?} needs `k`")),
        (Metric::Pass | Metric::DeltaPass, Some(0)) => Err("`k` must be at least 1".into()),
        (Metric::PvRecall | Metric::BlockRate | Metric::Asr, Some(_)) => {
            Err(format!("{metric:?} takes no `k`"))
        }
        _ if metric != Metric::Pass && slice != SliceKey::All => {
            Err(format!("{metric:?} is over all tasks: leave `slice` out"))
        }
        _ => Ok(()),
    }
}

/// Where domains go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// One row per (domain, agent, guard); columns are the quantities.
    #[default]
    DomainRows,
    /// One row per (agent, guard); one column per (domain, quantity).
    DomainColumns,
}

/// How an experiment's table is laid out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    #[serde(default)]
    pub layout: Layout,
    pub columns: Vec<Column>,
    /// Add, per agent × guard present in every domain, the unweighted mean over domains.
    #[serde(default)]
    pub mean_over_domains: bool,
}

impl TableSpec {
    pub fn validate(&self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Err("`columns`: list at least one column".into());
        }
        for (i, c) in self.columns.iter().enumerate() {
            check_quantity(c.metric, c.slice, c.k)
                .map_err(|e| format!("`columns[{i}]` ({}): {e}", c.label))?;
        }
        if self.mean_over_domains && self.layout != Layout::DomainRows {
            return Err("`mean_over_domains` needs `layout = \"domain-rows\"`".into());
        }
        Ok(())
    }
}

/// One number a paper publishes, with the text it is written as in the source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedCell {
    pub domain: String,
    pub agent: String,
    pub guard: String,
    pub metric: Metric,
    #[serde(default)]
    pub slice: SliceKey,
    #[serde(default)]
    pub k: Option<u32>,
    /// As a fraction (44.1% is 0.441; a difference of +6.0 pp is 0.06).
    pub value: f64,
    /// The number exactly as the source writes it (`0.460`, `94.7%`, `+6.0 pp`).
    pub quote: String,
}

/// A published-numbers file: its source and its cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// Where the numbers come from.
    pub source: String,
    /// Claims the source makes that are no cell (printed under the table).
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default, rename = "cell")]
    pub cells: Vec<PublishedCell>,
}

impl Published {
    /// Checks every cell's quantity and that its value is what its quote says.
    pub fn validate(&self) -> Result<(), String> {
        for (i, c) in self.cells.iter().enumerate() {
            let at = format!("`cell[{i}]` ({} / {} / {})", c.domain, c.agent, c.guard);
            check_quantity(c.metric, c.slice, c.k).map_err(|e| format!("{at}: {e}"))?;
            let quoted = quote_value(&c.quote)
                .ok_or_else(|| format!("{at}: quote `{}` is not a number", c.quote))?;
            if (quoted - c.value).abs() > 1e-9 {
                return Err(format!(
                    "{at}: value {} is not what quote `{}` says ({quoted})",
                    c.value, c.quote
                ));
            }
        }
        Ok(())
    }
}

/// The fraction a quote states: `0.460` → 0.46, `94.7%` → 0.947, `+6.0 pp` / `−14.0 pp` →
/// ±0.06 / −0.14.
pub fn quote_value(quote: &str) -> Option<f64> {
    let q = quote.trim().replace('−', "-");
    let (num, scale) = if let Some(n) = q.strip_suffix("pp") {
        (n.trim().to_string(), 0.01)
    } else if let Some(n) = q.strip_suffix('%') {
        (n.trim().to_string(), 0.01)
    } else {
        (q, 1.0)
    };
    let v: f64 = num.trim_start_matches('+').parse().ok()?;
    // Round away the binary noise of the scaling so 94.7% is exactly 0.947.
    Some((v * scale * 1e9).round() / 1e9)
}

/// The runs of one config: its domain, the experiment's label for its agent, its guards in
/// grid order, and the report over its records (`None` before it has run).
pub struct ConfigRows<'a> {
    pub domain: String,
    pub agent: String,
    pub guards: Vec<String>,
    pub report: Option<&'a Report>,
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
    pub ours: Option<f64>,
    pub published: Option<f64>,
    /// ours − published, when both exist.
    pub diff: Option<f64>,
}

/// An experiment's table: every cell, and how to print them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReproTable {
    pub title: String,
    pub simulated: bool,
    pub source: String,
    pub notes: Vec<String>,
    pub cells: Vec<ReproCell>,
    /// Published cells the layout has no place for (a manifest or published-file mistake).
    pub unplaced: Vec<String>,
    #[serde(skip)]
    pub(crate) headers: Vec<String>,
    /// Per printed row: its leading text cells, then indexes into `cells` (None = no cell).
    #[serde(skip)]
    pub(crate) rows: Vec<(Vec<String>, Vec<Option<usize>>)>,
}

fn value_of(g: &GroupReport, c: &Column) -> Option<f64> {
    let slice: &SliceMetrics = match c.slice {
        SliceKey::All => &g.overall,
        SliceKey::Pv => &g.pv,
        SliceKey::Mut => &g.mut_,
    };
    let k = c.k.unwrap_or(1);
    match c.metric {
        Metric::Pass => slice.pass_k.get(k),
        Metric::DeltaPass => g.delta_vs_baseline.as_ref().and_then(|d| d.get(k)),
        Metric::PvRecall => g.confusion.verdict.pv_recall(),
        Metric::BlockRate => g.confusion.verdict.block_rate(),
        Metric::Asr => g.attack.and_then(|a| a.asr()),
    }
}

fn same_quantity(p: &PublishedCell, c: &Column) -> bool {
    p.metric == c.metric && p.slice == c.slice && p.k == c.k
}

/// Builds the table of `title` from the runs in `configs` (in order) and `published`.
pub fn repro_table(
    title: &str,
    spec: &TableSpec,
    configs: &[ConfigRows<'_>],
    published: &Published,
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
    let mut table = ReproTable {
        title: titled(title, simulated),
        simulated,
        source: published.source.clone(),
        notes: published.notes.clone(),
        cells: Vec::new(),
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
            let published = hit.map(|i| published.cells[i].value);
            t.cells.push(ReproCell {
                domain: d.into(),
                agent: a.into(),
                guard: g.into(),
                column: col.label.clone(),
                metric: col.metric,
                slice: col.slice,
                k: col.k,
                ours,
                diff: ours.zip(published).map(|(o, p)| o - p),
                published,
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
                let group = find(d, a, g);
                let idx = spec
                    .columns
                    .iter()
                    .map(|col| {
                        let ours = group.and_then(|x| value_of(x, col));
                        Some(add(&mut table, d, a, g, col, ours))
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
                            let ours = find(d, a, g).and_then(|x| value_of(x, col));
                            add(&mut table, d, a, g, col, ours)
                        }));
                    }
                }
                table.rows.push((vec![a.into(), g.into()], idx));
            }
        }
    }
    if spec.mean_over_domains && domains.len() > 1 {
        let n = domains.len();
        for &(a, g) in &pairs {
            if !domains.iter().all(|d| triples.contains(&(*d, a, g))) {
                continue;
            }
            let idx = spec
                .columns
                .iter()
                .map(|col| {
                    let vals: Option<Vec<f64>> = domains
                        .iter()
                        .map(|d| find(d, a, g).and_then(|x| value_of(x, col)))
                        .collect();
                    let mean = vals.map(|v| v.iter().sum::<f64>() / v.len() as f64);
                    Some(add(&mut table, MEAN_DOMAIN, a, g, col, mean))
                })
                .collect::<Vec<_>>();
            let lead = vec![
                format!("unweighted mean over {n} domains"),
                a.to_string(),
                g.to_string(),
            ];
            table.rows.push((lead, idx));
        }
    }
    for (p, done) in published.cells.iter().zip(placed) {
        if !done {
            table.unplaced.push(format!(
                "{} / {} / {} / {:?} {:?} k={:?} = {}",
                p.domain, p.agent, p.guard, p.metric, p.slice, p.k, p.quote
            ));
        }
    }
    table
}

mod render;
#[cfg(test)]
mod tests;
