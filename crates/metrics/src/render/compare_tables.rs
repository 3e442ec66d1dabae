//! `compare`'s tables — the McNemar block and the Pass^k difference with its bootstrap
//! interval — and its rendering in every format: the statistics are `stats/compare.rs`'s,
//! their layout is here.

use crate::render::columns as col;
use crate::render::table::{Cell, Format, Table};
use crate::stats::compare::{Comparison, Strata};
use crate::stats::mcnemar::McNemar;

impl Comparison {
    /// The McNemar block: one row per stratum and a pooled row.
    pub fn mcnemar_table(&self) -> Table {
        let mut t = Table::declared(
            "mcnemar",
            format!(
                "McNemar: {} vs {} on (task, trial) pairs, stratified by {}",
                self.label_a,
                self.label_b,
                match self.strata_by {
                    Strata::Domain => "domain",
                    Strata::Agent => "agent",
                }
            ),
            &[
                col::STRATUM,
                col::N_PAIRS,
                col::B,
                col::C,
                col::EXACT_P,
                col::MID_P,
                col::CHI2,
                col::CHI2_P,
            ],
        );
        let row = |name: String, n: u64, m: &McNemar| {
            vec![
                Cell::Text(name),
                Cell::Int(n),
                Cell::Int(m.b),
                Cell::Int(m.c),
                Cell::P(m.exact_p),
                Cell::P(m.mid_p),
                Cell::Num(m.chi2, 3),
                Cell::P(m.chi2_p),
            ]
        };
        for s in &self.strata {
            t.rows.push(row(s.stratum.clone(), s.n_pairs, &s.test));
        }
        t.rows.push(row("pooled".into(), self.n_pairs, &self.test));
        t.notes.push(format!(
            "exact p: two-sided binomial (statsmodels `mcnemar(exact=True)`); mid-p: 2·P(X≤min) − \
             P(X=min); χ²: continuity-corrected. Paired by {} + task + trial; {} pair(s) \
             dropped for infrastructure errors; unpaired: {} in A, {} in B{}.",
            if self.pair_by.is_empty() {
                "—".to_string()
            } else {
                self.pair_by.join(", ")
            },
            self.infra_dropped,
            self.unpaired_a,
            self.unpaired_b,
            if self.dropped_domains.is_empty() {
                String::new()
            } else {
                format!(
                    " (domains on one side only: {})",
                    self.dropped_domains.join(", ")
                )
            }
        ));
        t
    }

    /// Pass^k of both sides and the bootstrap interval of the difference.
    pub fn pass_k_table(&self) -> Table {
        let mut t = Table::declared(
            "pass_k_diff",
            format!(
                "Pass^k difference ({} − {}), {:.0}% percentile bootstrap over {} tasks, {} resamples",
                self.label_b,
                self.label_a,
                self.bootstrap.level * 100.0,
                self.n_tasks,
                self.bootstrap.resamples
            ),
            &[
                col::K,
                col::PASS_K_A,
                col::PASS_K_B,
                col::DIFF,
                col::CI_LOW,
                col::CI_HIGH,
            ],
        );
        for d in &self.pass_k_diff {
            t.rows.push(vec![
                Cell::Int(u64::from(d.k)),
                Cell::Rate(d.a),
                Cell::Rate(d.b),
                Cell::Delta(d.diff),
                Cell::Delta(d.ci_low),
                Cell::Delta(d.ci_high),
            ]);
        }
        t
    }

    /// The comparison in one format (CSV: both tables stacked, see `compare_output.rs`).
    /// Table titles carry the simulated label when [`Comparison::simulated`].
    pub fn render(&self, format: Format) -> String {
        let tables = self.tables();
        match format {
            Format::Md => tables
                .iter()
                .map(Table::to_markdown)
                .collect::<Vec<_>>()
                .join("\n"),
            Format::Latex => tables
                .iter()
                .map(Table::to_latex)
                .collect::<Vec<_>>()
                .join("\n"),
            Format::Csv => self.to_csv(),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(&self.to_json())
                    .expect("JSON values always serialize");
                s.push('\n');
                s
            }
        }
    }
}
