//! `report --out DIR`: every rendering of a report as files: `report.md`, `report.tex`,
//! `report.json`, one CSV per table (`<table id>.csv`, plus `groups.csv` with one flat row per
//! group) with its caption beside it (`<table id>.caption.txt`: the title — labelled when the
//! numbers come from `sim` models — and the table's notes, which a CSV has no place for), and
//! the plots of `plots.rs` as PNG and SVG.

use crate::error::MetricsError;
use crate::plots::write_plots;
use crate::report::Report;
use crate::table::Format;
use crate::tables::groups_table;
use std::path::{Path, PathBuf};

fn write(path: PathBuf, text: &str, out: &mut Vec<PathBuf>) -> Result<(), MetricsError> {
    std::fs::write(&path, text).map_err(|e| MetricsError::io(&path, e))?;
    out.push(path);
    Ok(())
}

/// Writes the report into `dir` (created if missing); returns the files written.
pub fn write_outputs(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    std::fs::create_dir_all(dir).map_err(|e| MetricsError::io(dir, e))?;
    let mut out = Vec::new();
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
    for table in report
        .tables()
        .iter()
        .chain(std::iter::once(&groups_table(report)))
    {
        let path = dir.join(format!("{}.csv", table.id));
        let mut w = csv::Writer::from_path(&path).map_err(|cause| MetricsError::Csv {
            path: path.clone(),
            cause,
        })?;
        let csv_err = |cause| MetricsError::Csv {
            path: path.clone(),
            cause,
        };
        w.write_record(&table.headers).map_err(csv_err)?;
        for row in &table.rows {
            w.write_record(row.iter().map(|c| c.raw()))
                .map_err(csv_err)?;
        }
        w.flush().map_err(|e| MetricsError::io(&path, e))?;
        out.push(path);
        let mut caption = table.title.clone();
        caption.push('\n');
        for note in &table.notes {
            caption.push_str(note);
            caption.push('\n');
        }
        write(
            dir.join(format!("{}.caption.txt", table.id)),
            &caption,
            &mut out,
        )?;
    }
    out.extend(write_plots(report, dir)?);
    Ok(out)
}
