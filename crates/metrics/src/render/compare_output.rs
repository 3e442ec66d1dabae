//! `compare` as files and as one CSV: `compare --format csv` stacks the McNemar and the Pass^k
//! difference tables into one tidy CSV (a `table` column says which a row belongs to), and
//! `compare --out DIR` writes each table as a tidy CSV with its caption, `schema.json`, and
//! the forest plot of the Pass^k differences B − A with their bootstrap intervals
//! (`forest.png`, `forest.svg`, `forest.caption.txt` naming the records of both sides).

use crate::error::MetricsError;
use crate::render::csv_tidy::{ColumnDoc, TidyCsv, tidy};
use crate::render::output::{write, write_csv_tables};
use crate::render::plots::{Figure, ForestRow, Panel, PanelKind, write_figure};
use crate::render::sources::Sources;
use crate::render::table::Table;
use crate::stats::compare::Comparison;
use crate::summary::simulated::titled;
use std::path::{Path, PathBuf};

/// Stacks tidy tables into one: a leading `table` column, then the union of their columns
/// in first-seen order (empty where a table has no such column).
pub(crate) fn stack(id: &str, tables: &[TidyCsv]) -> TidyCsv {
    let mut columns = vec![ColumnDoc {
        name: "table".into(),
        kind: "string",
        unit: "",
        meaning: "the table the row belongs to (its file stem under --out)".into(),
    }];
    for t in tables {
        for c in &t.columns {
            if !columns.iter().any(|x| x.name == c.name) {
                columns.push(c.clone());
            }
        }
    }
    let mut rows = Vec::new();
    for t in tables {
        for r in &t.rows {
            let mut row = vec![String::new(); columns.len()];
            row[0] = t.id.clone();
            for (c, v) in t.columns.iter().zip(r) {
                if let Some(j) = columns.iter().position(|x| x.name == c.name) {
                    row[j] = v.clone();
                }
            }
            rows.push(row);
        }
    }
    TidyCsv {
        id: id.into(),
        columns,
        rows,
    }
}

impl Comparison {
    /// Both tables with their titles labelled when simulated.
    pub fn tables(&self) -> Vec<Table> {
        let mut tables = vec![self.mcnemar_table(), self.pass_k_table()];
        for t in &mut tables {
            t.title = titled(&t.title, self.simulated);
        }
        tables
    }

    /// Every table as one tidy CSV (see [`stack`]).
    pub fn to_csv(&self) -> String {
        let tidied: Vec<TidyCsv> = self.tables().iter().map(tidy).collect();
        stack("compare", &tidied).to_csv()
    }

    /// The forest plot of the Pass^k differences.
    fn forest(&self) -> Figure {
        let rows = self
            .pass_k_diff
            .iter()
            .map(|d| ForestRow {
                label: format!("k = {}", d.k),
                estimate: d.diff,
                low: d.ci_low,
                high: d.ci_high,
            })
            .collect();
        Figure {
            title: titled(
                &format!(
                    "Pass^k difference, B − A, {:.0}% bootstrap CI",
                    self.bootstrap.level * 100.0
                ),
                self.simulated,
            ),
            panels: vec![Panel {
                title: format!("{} tasks paired", self.n_tasks),
                x_desc: "Pass^k difference B − A (fraction of tasks)".into(),
                y_desc: "k".into(),
                kind: PanelKind::Forest { rows },
            }],
            legend: Vec::new(),
            notes: vec![
                format!("A = {}; B = {}.", self.label_a, self.label_b),
                format!(
                    "Squares: B − A on the {} tasks both sides ran; bars: percentile bootstrap \
                     interval over tasks ({} resamples, seed {}); grey line: no difference.",
                    self.n_tasks, self.bootstrap.resamples, self.bootstrap.seed
                ),
            ],
        }
    }

    /// Writes the tables (tidy CSV, captions, `schema.json`) and the forest plot into `dir`
    /// (created if missing); captions name the records of each side.
    pub fn write_outputs(
        &self,
        dir: &Path,
        sources_a: &Sources,
        sources_b: &Sources,
    ) -> Result<Vec<PathBuf>, MetricsError> {
        std::fs::create_dir_all(dir).map_err(|e| MetricsError::io(dir, e))?;
        let mut out = Vec::new();
        write_csv_tables(&self.tables(), dir, &mut out)?;
        let fig = self.forest();
        out.extend(write_figure(dir, "forest", &fig)?);
        let mut caption = format!("{}\n", fig.title);
        caption.push_str(&format!(
            "Figure `forest` from compare: {} (task, trial) pairs, {} tasks; pooled McNemar b = {}, c = {}, exact p = {}.\n",
            self.n_pairs, self.n_tasks, self.test.b, self.test.c, self.test.exact_p
        ));
        for (side, label, s) in [
            ("A", &self.label_a, sources_a),
            ("B", &self.label_b, sources_b),
        ] {
            caption.push_str(&format!("{side} = {label}:\n"));
            for line in s.lines() {
                caption.push_str(&format!("- {line}\n"));
            }
        }
        for n in &fig.notes {
            caption.push_str(n);
            caption.push('\n');
        }
        write(dir.join("forest.caption.txt"), &caption, &mut out)?;
        Ok(out)
    }
}
