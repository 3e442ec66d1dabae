//! `schema.json`: every column of every CSV a command writes — name, type, unit, meaning —
//! as the tidy tables carry them, read from the columns' declarations (`csv_tidy.rs`).

use crate::render::csv_tidy::{ColumnDoc, TidyCsv};
use serde_json::{Value, json};

/// `schema.json`: `{"files": {"<file>.csv": {"columns": [...]}}}` in file order.
pub(crate) fn schema_json(tables: &[TidyCsv]) -> Value {
    let files: serde_json::Map<String, Value> = tables
        .iter()
        .map(|t| {
            let cols: Vec<&ColumnDoc> = t.columns.iter().collect();
            (format!("{}.csv", t.id), json!({ "columns": cols }))
        })
        .collect();
    json!({
        "description": "Columns of every CSV file beside this one. Numbers are plain decimals; \
                        unit `fraction` is a value in [0, 1] (never percent); an empty field is a \
                        missing value (undefined rate, too few trials).",
        "files": files,
    })
}
