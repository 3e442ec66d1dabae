//! `report --out DIR`: every rendering of a report as files: `report.md`, `report.tex`,
//! `report.json`, one tidy CSV per table (`<table id>.csv`, plus `groups.csv` with one flat
//! row per group and `task_outcomes_long.csv`; see `csv_tidy.rs`) with its caption beside it
//! (`<table id>.caption.txt`: the title — labelled when the numbers come from `sim` models —
//! and the table's notes, which a CSV has no place for), `schema.json` describing every CSV
//! column, and the figures of `plots.rs` (PNG, SVG and `<figure>.caption.txt`).
//! `--tables-only` / `--figures-only` write one half.

use crate::error::MetricsError;
use crate::render::csv_schema::schema_json;
use crate::render::csv_tidy::{TidyCsv, tidy};
use crate::render::plots::write_plots_with;
use crate::render::sources::Sources;
use crate::render::table::{Format, Table};
use crate::render::tables::groups_table;
use crate::render::tables_extra::task_outcomes_long;
use crate::report::Report;
use crate::summary::simulated::titled;
use std::path::{Path, PathBuf};

/// Which files `write_outputs_with` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Parts {
    #[default]
    All,
    TablesOnly,
    FiguresOnly,
}

/// Options of [`write_outputs_with`].
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    pub parts: Parts,
    /// The records' run ids and config hashes per cell, for captions.
    pub sources: Sources,
}

pub(crate) fn write(path: PathBuf, text: &str, out: &mut Vec<PathBuf>) -> Result<(), MetricsError> {
    std::fs::write(&path, text).map_err(|e| MetricsError::io(&path, e))?;
    out.push(path);
    Ok(())
}

/// Writes tidy CSVs with their captions and `schema.json` into `dir`.
pub(crate) fn write_csv_tables(
    tables: &[Table],
    dir: &Path,
    out: &mut Vec<PathBuf>,
) -> Result<Vec<TidyCsv>, MetricsError> {
    let mut tidied = Vec::new();
    for table in tables {
        let t = tidy(table);
        write(dir.join(format!("{}.csv", t.id)), &t.to_csv(), out)?;
        let mut caption = table.title.clone();
        caption.push('\n');
        for note in &table.notes {
            caption.push_str(note);
            caption.push('\n');
        }
        write(dir.join(format!("{}.caption.txt", table.id)), &caption, out)?;
        tidied.push(t);
    }
    let mut schema =
        serde_json::to_string_pretty(&schema_json(&tidied)).expect("schema serializes");
    schema.push('\n');
    write(dir.join("schema.json"), &schema, out)?;
    Ok(tidied)
}

/// The tables `report --out` writes as CSV: the printed ones but the wide per-task outcomes,
/// which the long form replaces, and the flat per-group table.
pub(crate) fn csv_tables(report: &Report) -> Vec<Table> {
    let mut tables: Vec<Table> = report
        .tables()
        .into_iter()
        .filter(|t| t.id != "task_outcomes")
        .collect();
    let mut long = task_outcomes_long(report);
    long.title = report.caveated(titled(&long.title, report.simulated()));
    tables.push(long);
    tables.push(groups_table(report));
    tables
}

/// Writes the report into `dir` (created if missing); returns the files written.
pub fn write_outputs(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    write_outputs_with(report, dir, &OutputOptions::default())
}

/// As [`write_outputs`], with the parts to write and the records' sources for captions.
pub fn write_outputs_with(
    report: &Report,
    dir: &Path,
    options: &OutputOptions,
) -> Result<Vec<PathBuf>, MetricsError> {
    std::fs::create_dir_all(dir).map_err(|e| MetricsError::io(dir, e))?;
    let mut out = Vec::new();
    if options.parts != Parts::FiguresOnly {
        write(dir.join("report.md"), &report.render(Format::Md), &mut out)?;
        write(
            dir.join("report.tex"),
            &report.render(Format::Latex),
            &mut out,
        )?;
        write(
            dir.join("report.json"),
            &report.render(Format::Json),
            &mut out,
        )?;
        write_csv_tables(&csv_tables(report), dir, &mut out)?;
    }
    if options.parts != Parts::TablesOnly {
        out.extend(write_plots_with(report, dir, &options.sources)?);
    }
    Ok(out)
}
