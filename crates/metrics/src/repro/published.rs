//! The numbers a paper publishes for one experiment (`configs/repro/published/<name>.toml`),
//! each cited to the paper's table (or, where the source names none, its section) and to the
//! seed file it is read from — the seeds are the papers' summaries beside the workspace
//! (`shared/seeds/`), the only source the numbers are taken from.

use super::quantity::{Metric, QuantityFinding, SliceKey, check_quantity};
use serde::{Deserialize, Serialize};

/// Where a published number comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cite {
    /// The paper (`PolicyGuard`, `PolicyGuide`).
    pub paper: String,
    /// The seed file the number is read from (a file name in `shared/seeds/`).
    pub seed: String,
    /// The paper's table or figure the number belongs to, as the seed names it (`Table 7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Where the seed states the number outside any named table: the words of the seed that
    /// locate it (its section heading where it has headings), as the seed writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

impl Cite {
    fn validate(&self) -> Result<(), EntryFinding> {
        if self.paper.trim().is_empty() || self.seed.trim().is_empty() {
            return Err(EntryFinding::CiteUnnamed);
        }
        match (&self.table, &self.section) {
            (None, None) => Err(EntryFinding::CiteUnplaced {
                paper: self.paper.clone(),
                seed: self.seed.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// `PolicyGuard Table 7 (seed 000_….txt)`.
    pub fn label(&self) -> String {
        let place = match (&self.table, &self.section) {
            (Some(t), Some(s)) => format!("{t}, at “{s}”"),
            (Some(t), None) => t.clone(),
            (None, Some(s)) => format!("at “{s}” (no table named)"),
            (None, None) => String::new(),
        };
        format!("{} {place} (seed {})", self.paper, self.seed)
    }
}

/// What is wrong with a published-numbers file: the entry, and the finding about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}: {what}")]
pub struct PublishedFinding {
    pub at: Entry,
    pub what: EntryFinding,
}

/// An entry of a published-numbers file, as a finding names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Entry {
    #[error("`cell[{index}]` ({domain} / {agent} / {guard})")]
    Cell {
        index: usize,
        domain: String,
        agent: String,
        guard: String,
    },
    #[error("`note[{0}]`")]
    Note(usize),
}

/// What is wrong with one entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EntryFinding {
    #[error(transparent)]
    Quantity(#[from] QuantityFinding),
    #[error("quote `{0}` is not a number")]
    NotANumber(String),
    /// The value and the number its quote reads as differ.
    #[error("value {value} is not what quote `{quote}` says ({quoted})")]
    NotTheQuote {
        value: f64,
        quote: String,
        quoted: f64,
    },
    #[error("a citation names its `paper` and its `seed` file")]
    CiteUnnamed,
    #[error("citation of {paper} ({seed}) names neither a `table` nor a `section`")]
    CiteUnplaced { paper: String, seed: String },
}

/// One number a paper publishes, with the text it is written as and where.
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
    /// The guard a comparing metric compares against.
    #[serde(default)]
    pub versus: Option<String>,
    /// In the metric's unit: fractions for rates (44.1% is 0.441; +6.0 pp is 0.06), seconds,
    /// dollars, a p-value.
    pub value: f64,
    /// The number as the source writes it (`0.460`, `94.7%`, `+6.0 pp`, `247.6s`,
    /// `p<10^{-8}`). A quote starting `p<` or `<` is an upper bound: no difference is taken.
    pub quote: String,
    pub cite: Cite,
}

impl PublishedCell {
    /// Whether the source states only an upper bound (`p<10^{-8}`).
    pub fn is_bound(&self) -> bool {
        let q = self.quote.trim();
        q.starts_with('<') || q.starts_with("p<")
    }
}

/// A claim the source makes that is no cell, printed under the table with its citation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Note {
    pub text: String,
    pub cite: Cite,
}

/// A published-numbers file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The source's claims that are no cell, each cited.
    #[serde(default, rename = "note")]
    pub notes: Vec<Note>,
    /// tauguard's own remarks on the comparison (no published number in them).
    #[serde(default, rename = "remark")]
    pub remarks: Vec<String>,
    #[serde(default, rename = "cell")]
    pub cells: Vec<PublishedCell>,
}

impl Published {
    /// Checks every cell's quantity, that its value is what its quote says, and every
    /// citation's shape.
    pub fn validate(&self) -> Result<(), Box<PublishedFinding>> {
        for (i, c) in self.cells.iter().enumerate() {
            let at = |what| {
                Box::new(PublishedFinding {
                    at: Entry::Cell {
                        index: i,
                        domain: c.domain.clone(),
                        agent: c.agent.clone(),
                        guard: c.guard.clone(),
                    },
                    what,
                })
            };
            check_quantity(c.metric, c.slice, c.k, c.versus.as_deref())
                .map_err(|e| at(e.into()))?;
            let quoted = quote_value(&c.quote)
                .ok_or_else(|| at(EntryFinding::NotANumber(c.quote.clone())))?;
            if (quoted - c.value).abs() > 1e-9 * quoted.abs().max(1.0) {
                return Err(at(EntryFinding::NotTheQuote {
                    value: c.value,
                    quote: c.quote.clone(),
                    quoted,
                }));
            }
            c.cite.validate().map_err(at)?;
        }
        for (i, n) in self.notes.iter().enumerate() {
            n.cite.validate().map_err(|what| {
                Box::new(PublishedFinding {
                    at: Entry::Note(i),
                    what,
                })
            })?;
        }
        Ok(())
    }

    /// Every citation of the file's cells, in first-use order, with its cell count.
    pub fn cited(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for c in &self.cells {
            let label = c.cite.label();
            match out.iter_mut().find(|(l, _)| *l == label) {
                Some((_, n)) => *n += 1,
                None => out.push((label, 1)),
            }
        }
        out
    }
}

/// The number a quote states, in its metric's unit: `0.460` → 0.46, `94.7%` → 0.947,
/// `+6.0 pp` / `−14.0 pp` → ±0.06 / −0.14, `247.6s` → 247.6, `$0.34` → 0.34, `5.45×` → 5.45,
/// `p<10^{-8}` → 1e-8.
pub fn quote_value(quote: &str) -> Option<f64> {
    let q = quote.trim().replace('−', "-");
    let q = q.trim_start_matches("p<").trim_start_matches('<').trim();
    if let Some(exp) = q.strip_prefix("10^{").and_then(|e| e.strip_suffix('}')) {
        let e: i32 = exp.parse().ok()?;
        return Some(10f64.powi(e));
    }
    let (num, scale) = if let Some(n) = q.strip_suffix("pp") {
        (n, 0.01)
    } else if let Some(n) = q.strip_suffix('%') {
        (n, 0.01)
    } else if let Some(n) = q.strip_suffix('s').or_else(|| q.strip_suffix('×')) {
        (n, 1.0)
    } else {
        (q, 1.0)
    };
    let num = num.trim().trim_start_matches('+').trim_start_matches('$');
    let v: f64 = num.parse().ok()?;
    // Round away the binary noise of the scaling so 94.7% is exactly 0.947.
    Some((v * scale * 1e9).round() / 1e9)
}

/// The digits of a quote as the source prints them (`−14.0 pp` → `14.0`, `p<10^{-8}` →
/// `10^{-8}`): what a test looks for in the cited seed.
pub fn quote_digits(quote: &str) -> String {
    let q = quote.trim().replace('−', "-");
    let q = q.trim_start_matches("p<").trim_start_matches('<').trim();
    if q.starts_with("10^{") {
        return q.to_string();
    }
    q.trim_end_matches("pp")
        .trim_end_matches('%')
        .trim_end_matches('s')
        .trim_end_matches('×')
        .trim()
        .trim_start_matches(['+', '-', '$'])
        .to_string()
}
