//! What the runs behind a report spent, beyond what their scored trajectories cost: the
//! records' own usage and their discarded attempts (`attempts.discarded`), the records
//! `--resume` superseded (`superseded.jsonl`, rerun after an infrastructure error), and the
//! simulations cut off by Ctrl-C, SIGTERM or an outage stop before they had a record
//! (`interrupted.jsonl`, [`tauguard_core::interrupted`]). The cost tables average over
//! scored simulations; this one adds up every dollar billed, so a run that was interrupted
//! or repaired still states what it cost.
//!
//! The side files are read from each input that is a run directory; a records file or an
//! upstream `results.json` given directly has none.

use crate::error::{MetricsError, RecordCause};
use crate::measure::registry::Column;
use crate::render::table::{Cell, Table};
use crate::report::Report;
use crate::summary::{RoleTotals, SimSummary};
use std::path::Path;
use tauguard_core::interrupted::{INTERRUPTED_FILE, InterruptedAttempt};
use tauguard_core::record::SUPERSEDED_FILE;

/// One source of spending: simulations, tokens and dollars.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spent {
    pub simulations: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// US dollars; `None` when something billed had no price.
    pub cost: Option<f64>,
}

impl Spent {
    fn empty() -> Spent {
        Spent {
            cost: Some(0.0),
            ..Default::default()
        }
    }

    fn add_totals(&mut self, u: &RoleTotals) {
        self.prompt_tokens += u.prompt_tokens;
        self.completion_tokens += u.completion_tokens;
        // A role with calls and no price makes the sum unknown; one without calls costs 0.
        self.cost = match (self.cost, u.cost) {
            (Some(a), Some(b)) => Some(a + b),
            (c, None) if u.calls == 0 => c,
            _ => None,
        };
    }

    fn add_summary(&mut self, s: &SimSummary) {
        self.simulations += 1;
        for (_, u) in s.roles() {
            self.add_totals(u);
        }
        if let Some(d) = &s.discarded {
            self.add_totals(d);
        }
    }

    fn plus(self, o: Spent) -> Spent {
        Spent {
            simulations: self.simulations + o.simulations,
            prompt_tokens: self.prompt_tokens + o.prompt_tokens,
            completion_tokens: self.completion_tokens + o.completion_tokens,
            cost: self.cost.zip(o.cost).map(|(a, b)| a + b),
        }
    }
}

/// Every dollar the report's runs billed, by where it is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spending {
    /// The records: their trajectories' usage and their discarded attempts'.
    pub records: Spent,
    /// Records `--resume` superseded.
    pub superseded: Spent,
    /// Simulations cut off before their record.
    pub interrupted: Spent,
}

impl Spending {
    /// The sum of the three.
    pub fn total(&self) -> Spent {
        self.records.plus(self.superseded).plus(self.interrupted)
    }
}

impl Report {
    /// The report with what its runs spent, for the spending table.
    pub fn with_spending(mut self, spending: Spending) -> Report {
        self.spending = Some(spending);
        self
    }
}

/// The spending of `summaries`, loaded from `inputs`, with the side files of every input
/// that is a run directory.
pub fn spending<P: AsRef<Path>>(
    summaries: &[SimSummary],
    inputs: &[P],
) -> Result<Spending, MetricsError> {
    let mut s = Spending {
        records: Spent::empty(),
        superseded: Spent::empty(),
        interrupted: Spent::empty(),
    };
    for rec in summaries {
        s.records.add_summary(rec);
    }
    for dir in inputs.iter().map(AsRef::as_ref).filter(|p| p.is_dir()) {
        let superseded = dir.join(SUPERSEDED_FILE);
        if superseded.is_file() {
            for rec in crate::summary::load::summarise_jsonl(&superseded)? {
                s.superseded.add_summary(&rec);
            }
        }
        let interrupted = dir.join(INTERRUPTED_FILE);
        if interrupted.is_file() {
            for line in read_interrupted(&interrupted)? {
                s.interrupted.simulations += 1;
                for b in line.usage_by_model.values() {
                    s.interrupted.add_totals(&RoleTotals {
                        calls: b.calls,
                        prompt_tokens: b.usage.prompt_tokens,
                        completion_tokens: b.usage.completion_tokens,
                        cached_prompt_tokens: b.usage.cached_prompt_tokens,
                        cost: b.cost,
                        truncated: 0,
                    });
                }
            }
        }
    }
    Ok(s)
}

/// The lines of an `interrupted.jsonl`; a malformed one is an error naming its line.
fn read_interrupted(path: &Path) -> Result<Vec<InterruptedAttempt>, MetricsError> {
    let text = std::fs::read_to_string(path).map_err(|e| MetricsError::io(path, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| MetricsError::BadRecord {
                path: path.to_path_buf(),
                line: i + 1,
                cause: RecordCause::Interrupted(e),
            })
        })
        .collect()
}

/// The spending table's columns.
const SPENDING_COLUMNS: [Column; 5] = [
    Column {
        header: "Recorded in",
        name: "recorded_in",
        unit: "text",
        meaning: "the file the billed calls are recorded in (records, superseded, interrupted), or the total",
    },
    Column {
        header: "Simulations",
        name: "simulations",
        unit: "count",
        meaning: "simulations with billed calls in the file, scored or not",
    },
    Column {
        header: "Prompt tok",
        name: "prompt_tok",
        unit: "tokens",
        meaning: "prompt tokens of every billed call of those simulations",
    },
    Column {
        header: "Completion tok",
        name: "completion_tok",
        unit: "tokens",
        meaning: "completion tokens of every billed call of those simulations",
    },
    Column {
        header: "Cost",
        name: "cost",
        unit: "usd",
        meaning: "cost of every billed call of those simulations, US dollars; empty when a model had no price",
    },
];

/// The spending table; `None` when nothing was billed outside the records and the records
/// cost nothing (offline `sim` runs).
pub(crate) fn spending_table(r: &Report) -> Option<Table> {
    let s = r.spending.as_ref()?;
    let side = s.superseded.simulations + s.interrupted.simulations;
    if side == 0 && s.records.cost == Some(0.0) {
        return None;
    }
    let mut t = Table::declared(
        "spending",
        "Spent: every billed call, scored or not (US dollars)",
        &SPENDING_COLUMNS,
    );
    let rows = [
        ("records.jsonl (with discarded attempts)", s.records),
        ("superseded.jsonl (rerun by --resume)", s.superseded),
        ("interrupted.jsonl (cut off, no record)", s.interrupted),
        ("total", s.total()),
    ];
    // A source that holds nothing gets no row (and no `0.0000` it did not spend).
    for (what, x) in rows.into_iter().filter(|(_, x)| x.simulations > 0) {
        t.rows.push(vec![
            Cell::Text(what.into()),
            Cell::Int(x.simulations),
            Cell::Int(x.prompt_tokens),
            Cell::Int(x.completion_tokens),
            Cell::cost(Some(x.cost), 4),
        ]);
    }
    t.notes.push(
        "A cost is unknown when a model that billed tokens had no price. The cost tables above \
         average over scored simulations only."
            .into(),
    );
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unpriced_call_makes_the_sum_unknown_and_an_uncalled_role_does_not() {
        let mut s = Spent::empty();
        s.add_totals(&RoleTotals {
            calls: 0,
            cost: None,
            ..Default::default()
        });
        assert_eq!(s.cost, Some(0.0));
        s.add_totals(&RoleTotals {
            calls: 2,
            prompt_tokens: 10,
            cost: Some(0.5),
            ..Default::default()
        });
        assert_eq!((s.cost, s.prompt_tokens), (Some(0.5), 10));
        s.add_totals(&RoleTotals {
            calls: 1,
            cost: None,
            ..Default::default()
        });
        assert_eq!(s.cost, None);
        assert_eq!(s.plus(Spent::empty()).cost, None);
    }
}
