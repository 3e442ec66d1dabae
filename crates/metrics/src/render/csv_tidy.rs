//! Tidy CSV: every table as numbers a script can read without parsing text — one row per
//! observation, numeric columns holding plain decimals (fractions as fractions, never
//! percent; p-values never in scientific notation), a mean ± std as two columns, snake_case
//! names carrying their unit when it is no fraction (`cost_usd`, `turns`, `seconds`) — and
//! the description of every column (name, type, unit, meaning) that `schema.json` collects.
//!
//! A column a registered measure declares (`Table::declared`) is named and described by its
//! declaration (`measure/registry.rs`); any other's name and meaning come from [`describe`],
//! one entry per table header; a header it does not know gets a slug name and an empty
//! meaning, which the schema test refuses.

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

/// `Pass^4 PV` → (`Pass^k PV`, Some(4)).
fn generalise(header: &str) -> (String, Option<u32>) {
    let Some(at) = header.find("Pass^") else {
        return (header.to_string(), None);
    };
    let rest = &header[at + 5..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse() {
        Ok(k) => (
            format!("{}Pass^k{}", &header[..at], &rest[digits.len()..]),
            Some(k),
        ),
        Err(_) => (header.to_string(), None),
    }
}

fn slug(s: &str) -> String {
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

/// Name, unit and meaning of a table column. Metrics are defined where they are computed; the
/// meanings here say which one a column holds.
pub(crate) fn describe(table: &str, header: &str) -> (String, &'static str, String) {
    let (h, k) = generalise(header);
    let kk = k.map(|k| k.to_string()).unwrap_or_default();
    if let Some(x) = crate::render::tables_process::describe(table, &h, &kk) {
        return x;
    }
    // Table-specific headers first.
    if let Some(x) = table_specific(table, &h, &kk) {
        return x;
    }
    let (h, kk) = (h.as_str(), kk.as_str());
    crate::render::csv_meanings::shared(h, kk)
        .or_else(|| crate::render::csv_schema::describe_more(h, kk))
        .unwrap_or_else(|| (slug(h), "", String::new()))
}

/// A column's name, unit and meaning.
pub(crate) type Meaning = (String, &'static str, String);

pub(crate) fn d(name: &str, unit: &'static str, meaning: &str) -> Meaning {
    (name.to_string(), unit, meaning.to_string())
}

/// What a Pass^k column at `kk` means, `what` saying over which tasks.
pub(crate) fn pass_meaning(kk: &str, what: &str) -> String {
    format!("Pass^{kk} (mean over tasks of C(c,{kk})/C(n,{kk}); τ²-bench §8) {what}")
}

/// Headers whose meaning depends on the table.
fn table_specific(table: &str, h: &str, kk: &str) -> Option<Meaning> {
    let pass = |what: &str| pass_meaning(kk, what);
    let d = |name: &str, unit: &'static str, meaning: &str| Some(d(name, unit, meaning));
    match (table, h) {
        ("policyguard_table2", "Overall") => {
            return d(
                "pass_headline_overall",
                "fraction",
                "Pass^K at the report's headline k (the title's K), all tasks (PolicyGuard Table 2)",
            );
        }
        ("policyguard_table2", "PV") => {
            return d(
                "pass_headline_pv",
                "fraction",
                "Pass^K at the headline k on PV tasks (no agent-side mutating gold action)",
            );
        }
        ("policyguard_table2", "Mut") => {
            return d(
                "pass_headline_mut",
                "fraction",
                "Pass^K at the headline k on Mut tasks",
            );
        }
        ("policyguard_table2", "Δ") => {
            return d(
                "delta_pass_headline",
                "fraction",
                "overall Pass^K minus the same agent's baseline Pass^K (same domain and non-guard settings)",
            );
        }
        ("floors", "Overall") => {
            return d(
                "pass_1_overall",
                "fraction",
                "floor agent's Pass^1 on all tasks (deterministic, so Pass^1 = Pass^k)",
            );
        }
        ("floors", "PV") => return d("pass_1_pv", "fraction", "floor agent's Pass^1 on PV tasks"),
        ("floors", "Mut") => {
            return d(
                "pass_1_mut",
                "fraction",
                "floor agent's Pass^1 on Mut tasks",
            );
        }
        ("policyguide_table2", x) if x.ends_with(" Pass^k") => {
            let dom = x.trim_end_matches(" Pass^k");
            return Some((
                format!("{}_pass_{kk}", slug(dom)),
                "fraction",
                pass(&format!("in domain {dom} (PolicyGuide Table 2)")),
            ));
        }
        ("policyguide_table14", "Fail-mode") => {
            return d(
                "guide_fail_mode_runs",
                "count",
                "guide runs whose guidance the fail mode gave, not the model (records' \
                 verdict_source = fail_mode; see fail_mode.rs)",
            );
        }
        ("policyguide_table14", "Fail-mode%") => {
            return d(
                "guide_fail_mode_rate",
                "fraction",
                "fail-mode guide runs / guide runs",
            );
        }
        ("mcnemar", "Pairs") => {
            return d(
                "n_pairs",
                "count",
                "(task, trial) pairs scored on both sides",
            );
        }
        ("pass_k_diff", "A") => {
            return d(
                "pass_k_a",
                "fraction",
                "Pass^k of side A on the paired tasks",
            );
        }
        ("pass_k_diff", "B") => {
            return d(
                "pass_k_b",
                "fraction",
                "Pass^k of side B on the paired tasks",
            );
        }
        _ => {}
    }
    None
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
        let (name, unit, meaning) = match t.declared.get(j) {
            Some(Some(c)) => (c.name.clone(), c.schema_unit(), c.meaning.clone()),
            _ => describe(t.id, header),
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
