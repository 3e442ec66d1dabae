//! Building a reproduction table: the runs' cells in the spec's layout, each beside the
//! published number it reproduces, then the means over domains and the published numbers no
//! cell took. One function per stage; [`Builder`] holds what every stage reads and the
//! table being filled.

use super::{Column, Metric, Published, PublishedCell, quantity};
use super::{
    ConfigRows, Layout, MEAN_DOMAIN, POOLED_DOMAIN, ReproCell, ReproTable, TableSpec, mcnemar_p,
    same_quantity,
};
use crate::measure::floors::Floor;
use crate::report::GroupReport;
use crate::summary::simulated::titled;

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
    let keys = Keys::of(configs);
    let mut b = Builder {
        configs,
        published,
        placed: vec![false; published.cells.len()],
        table: ReproTable {
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
        },
    };
    match spec.layout {
        Layout::DomainRows => b.domain_rows(spec, &keys),
        Layout::DomainColumns => b.domain_columns(spec, &keys),
    }
    if spec.mean_over_domains && keys.domains.len() > 1 {
        b.mean_rows(spec, &keys);
    }
    b.finish()
}

/// The runs' domains, agent × guard pairs and domain × agent × guard triples, in config order.
struct Keys<'c> {
    domains: Vec<&'c str>,
    pairs: Vec<(&'c str, &'c str)>,
    triples: Vec<(&'c str, &'c str, &'c str)>,
}

impl<'c> Keys<'c> {
    fn of(configs: &'c [ConfigRows<'_>]) -> Keys<'c> {
        let mut k = Keys {
            domains: Vec::new(),
            pairs: Vec::new(),
            triples: Vec::new(),
        };
        for c in configs {
            if !k.domains.contains(&c.domain.as_str()) {
                k.domains.push(&c.domain);
            }
            for g in &c.guards {
                if !k.pairs.contains(&(c.agent.as_str(), g.as_str())) {
                    k.pairs.push((&c.agent, g));
                }
                k.triples.push((&c.domain, &c.agent, g));
            }
        }
        k
    }
}

struct Builder<'c, 'r> {
    configs: &'c [ConfigRows<'r>],
    published: &'c Published,
    /// Which published cells a table cell took.
    placed: Vec<bool>,
    table: ReproTable,
}

impl Builder<'_, '_> {
    fn find(&self, d: &str, a: &str, g: &str) -> Option<&GroupReport> {
        let c = self
            .configs
            .iter()
            .find(|c| c.domain == d && c.agent == a && c.guards.iter().any(|x| x == g))?;
        c.report?
            .groups
            .iter()
            .find(|x| x.domain == d && x.guard == g)
    }

    /// Our value of `col` for the cell `(d, a, g)`.
    fn ours(&self, d: &str, a: &str, g: &str, col: &Column) -> Option<f64> {
        if col.metric == Metric::McnemarP {
            return mcnemar_p(self.configs, &[d], a, g, col.versus.as_deref()?);
        }
        let vs = col.versus.as_deref().and_then(|v| self.find(d, a, v));
        self.find(d, a, g)
            .and_then(|x| quantity::value_of(x, col, vs))
    }

    /// Adds the cell `(d, a, g, col)` with `ours` beside the published number it reproduces,
    /// if any; its index.
    fn add(&mut self, d: &str, a: &str, g: &str, col: &Column, ours: Option<f64>) -> usize {
        let published = &self.published.cells;
        let hit = published
            .iter()
            .position(|p| p.domain == d && p.agent == a && p.guard == g && same_quantity(p, col));
        if let Some(i) = hit {
            self.placed[i] = true;
        }
        let p = hit.map(|i| &published[i]);
        let value = p.map(|p| p.value);
        self.table.cells.push(ReproCell {
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
        self.table.cells.len() - 1
    }

    /// Our cell of `col` for `(d, a, g)`, added; its index.
    fn our_cell(&mut self, d: &str, a: &str, g: &str, col: &Column) -> usize {
        let v = self.ours(d, a, g, col);
        self.add(d, a, g, col, v)
    }

    /// One row per domain × agent × guard.
    fn domain_rows(&mut self, spec: &TableSpec, keys: &Keys<'_>) {
        self.table.headers = ["Domain", "Agent", "Guard"]
            .into_iter()
            .chain(spec.columns.iter().map(|c| c.label.as_str()))
            .map(String::from)
            .collect();
        for &(d, a, g) in &keys.triples {
            let idx = spec
                .columns
                .iter()
                .map(|col| Some(self.our_cell(d, a, g, col)))
                .collect();
            self.table
                .rows
                .push((vec![d.into(), a.into(), g.into()], idx));
        }
    }

    /// One row per agent × guard, the columns repeated per domain.
    fn domain_columns(&mut self, spec: &TableSpec, keys: &Keys<'_>) {
        self.table.headers = ["Agent", "Guard"].map(String::from).to_vec();
        for d in &keys.domains {
            self.table
                .headers
                .extend(spec.columns.iter().map(|c| format!("{d} {}", c.label)));
        }
        for &(a, g) in &keys.pairs {
            let mut idx = Vec::new();
            for &d in &keys.domains {
                let present = keys.triples.contains(&(d, a, g));
                for col in &spec.columns {
                    idx.push(present.then(|| self.our_cell(d, a, g, col)));
                }
            }
            self.table.rows.push((vec![a.into(), g.into()], idx));
        }
    }

    /// For each agent × guard run in every domain: the unweighted mean over domains (McNemar
    /// pooled, stratified by domain).
    fn mean_rows(&mut self, spec: &TableSpec, keys: &Keys<'_>) {
        let n = keys.domains.len();
        let pooled = spec.columns.iter().any(|c| c.metric == Metric::McnemarP);
        for &(a, g) in &keys.pairs {
            if !keys
                .domains
                .iter()
                .all(|d| keys.triples.contains(&(*d, a, g)))
            {
                continue;
            }
            let idx = spec
                .columns
                .iter()
                .map(|col| Some(self.mean_cell(keys, a, g, col)))
                .collect::<Vec<_>>();
            let label = if pooled {
                format!("all {n} domains: unweighted mean; McNemar pooled, stratified by domain")
            } else {
                format!("unweighted mean over {n} domains")
            };
            self.table
                .rows
                .push((vec![label, a.to_string(), g.to_string()], idx));
        }
    }

    fn mean_cell(&mut self, keys: &Keys<'_>, a: &str, g: &str, col: &Column) -> usize {
        if col.metric == Metric::McnemarP {
            let p = col
                .versus
                .as_deref()
                .and_then(|v| mcnemar_p(self.configs, &keys.domains, a, g, v));
            return self.add(POOLED_DOMAIN, a, g, col, p);
        }
        let vals: Option<Vec<f64>> = keys
            .domains
            .iter()
            .map(|d| self.ours(d, a, g, col))
            .collect();
        let mean = vals.map(|v| v.iter().sum::<f64>() / v.len() as f64);
        self.add(MEAN_DOMAIN, a, g, col, mean)
    }

    /// The table, with the published numbers no cell took listed as unplaced.
    fn finish(mut self) -> ReproTable {
        for (p, done) in self.published.cells.iter().zip(&self.placed) {
            if !done {
                self.table.unplaced.push(format!(
                    "{} / {} / {} / {:?} {:?} k={:?} versus={:?} = {}",
                    p.domain, p.agent, p.guard, p.metric, p.slice, p.k, p.versus, p.quote
                ));
            }
        }
        self.table
    }
}
