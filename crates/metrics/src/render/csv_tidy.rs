//! Tidy CSV: every table as numbers a script can read without parsing text — one row per
//! observation, numeric columns holding plain decimals (fractions as fractions, never
//! percent; p-values never in scientific notation), a mean ± std as two columns, snake_case
//! names carrying their unit when it is no fraction (`cost_usd`, `turns`, `seconds`) — and
//! the description of every column (name, type, unit, meaning) that `schema.json` collects.
//!
//! Every column is named and described by the declaration the table's code pushed with its
//! header (`Table::declared`: a registered measure's `Column` in `measure/registry.rs`, the
//! fixed tables' in `columns.rs` and `columns_views.rs`); the header text is never read for
//! a name or a meaning. A column without a declaration gets its header as a slug and an empty
//! meaning, which `schema_tests.rs` refuses for every table a report prints.

use crate::render::table::{Cell, Table};
use serde::Serialize;

/// One documented CSV column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ColumnDoc {
    pub name: String,
    /// `string`, `integer`, `number` or `boolean`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `fraction`, `count`, `usd`, `turns`, `seconds`, `tokens`, `ratio`, `probability`,
    /// `statistic`, `k` or `` (text).
    pub unit: &'static str,
    pub meaning: String,
}

/// A table in tidy form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TidyCsv {
    pub id: String,
    pub columns: Vec<ColumnDoc>,
    pub rows: Vec<Vec<String>>,
}

impl TidyCsv {
    pub(crate) fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = w.write_record(self.columns.iter().map(|c| c.name.as_str()));
        for row in &self.rows {
            let _ = w.write_record(row);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `s` as a snake_case name: what a column made for a value (a domain, a cell) is named by.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.replace('Δ', "delta ").to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// Type of a column from its cells.
fn kind_of(cells: &[&Cell], name: &str) -> &'static str {
    if name == "simulated" {
        return "boolean";
    }
    if cells
        .iter()
        .all(|c| matches!(c, Cell::Int(_) | Cell::Missing | Cell::Unknown))
        && cells.iter().any(|c| matches!(c, Cell::Int(_)))
    {
        return "integer";
    }
    if cells.iter().any(|c| matches!(c, Cell::Text(_)))
        || cells.iter().all(|c| matches!(c, Cell::Missing))
    {
        return "string";
    }
    "number"
}

/// The tidy form of a table.
pub(crate) fn tidy(t: &Table) -> TidyCsv {
    let mut columns = Vec::new();
    // Per source column: expands into mean and std; holds yes/no as a boolean.
    let mut split = Vec::new();
    let mut boolean = Vec::new();
    for (j, header) in t.headers.iter().enumerate() {
        let cells: Vec<&Cell> = t.rows.iter().filter_map(|r| r.get(j)).collect();
        // A column without a declaration keeps its header as a slug and no meaning, which
        // the schema test refuses for every table a report prints.
        let (name, unit, meaning) = match t.declared.get(j) {
            Some(Some(c)) => (c.name.clone(), c.schema_unit(), c.meaning.clone()),
            _ => (slug(header), "", String::new()),
        };
        let two = cells.iter().any(|c| matches!(c, Cell::MeanStd(..)));
        let kind = if two {
            "number"
        } else {
            kind_of(&cells, &name)
        };
        let unit = if kind == "string" || kind == "boolean" {
            ""
        } else {
            unit
        };
        split.push(two);
        boolean.push(kind == "boolean");
        if two {
            columns.push(ColumnDoc {
                name: format!("{name}_std"),
                kind,
                unit,
                meaning: format!(
                    "sample standard deviation (ddof = 1) over trials of the per-trial value; {meaning}"
                ),
            });
            columns.insert(
                columns.len() - 1,
                ColumnDoc {
                    name: format!("{name}_mean"),
                    kind,
                    unit,
                    meaning,
                },
            );
        } else {
            columns.push(ColumnDoc {
                name,
                kind,
                unit,
                meaning,
            });
        }
    }
    let rows = t
        .rows
        .iter()
        .map(|row| {
            let mut out = Vec::new();
            for (j, c) in row.iter().enumerate() {
                match c {
                    Cell::MeanStd(m, s) => {
                        out.push(format!("{m:.6}"));
                        out.push(s.map(|s| format!("{s:.6}")).unwrap_or_default());
                    }
                    Cell::Text(x) if boolean[j] => {
                        out.push((x == "yes" || x == "true").to_string());
                    }
                    Cell::Missing if split[j] => {
                        out.push(String::new());
                        out.push(String::new());
                    }
                    other => out.push(other.raw()),
                }
            }
            out
        })
        .collect();
    TidyCsv {
        id: t.id.to_string(),
        columns,
        rows,
    }
}
