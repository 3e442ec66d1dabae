//! `tauguard export-table RUN --format parquet|csv [--out DIR]`: a run's per-simulation and
//! per-mutating-call tables (`simulations.*`, `calls.*`: the columns are documented in
//! `crates/metrics/src/sidecar/columns.rs` and the README), for pandas, polars or DuckDB. Parquet written
//! into the run's own directory is its sidecar, with the manifest `report` checks.

use crate::commands::report::metrics_error;
use crate::exit::CliError;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use tauguard_metrics::{LoadOptions, TableFormat};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Parquet,
    Csv,
}

#[derive(Args, Debug)]
pub(crate) struct ExportTableArgs {
    /// Run directory (holding records.jsonl), a records .jsonl file, or a τ²-bench results.json.
    run: PathBuf,
    #[arg(long, value_enum, default_value = "parquet")]
    format: FormatArg,
    /// Output directory (default: the directory of the records).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub(crate) fn run(args: ExportTableArgs) -> Result<(), CliError> {
    let records = if args.run.is_dir() {
        let jsonl = args.run.join("records.jsonl");
        if jsonl.is_file() {
            jsonl
        } else {
            args.run.join("results.json")
        }
    } else {
        args.run.clone()
    };
    let dir = records
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let format = match args.format {
        FormatArg::Parquet => TableFormat::Parquet,
        FormatArg::Csv => TableFormat::Csv,
    };
    let is_jsonl = records.extension().is_some_and(|e| e != "json");
    let written = match (&args.out, format, is_jsonl) {
        // Parquet beside the records is the run's sidecar: written with its manifest.
        (None, TableFormat::Parquet, true) => {
            tauguard_metrics::write_sidecar(&records).map_err(metrics_error)?
        }
        _ => {
            let sims = if is_jsonl {
                tauguard_metrics::summarise_jsonl(&records)
            } else {
                tauguard_metrics::load_summaries(&[&records], &LoadOptions::default())
            }
            .map_err(metrics_error)?;
            let out = args.out.unwrap_or(dir);
            tauguard_metrics::export_tables(&sims, &out, format).map_err(metrics_error)?
        }
    };
    for path in written {
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
