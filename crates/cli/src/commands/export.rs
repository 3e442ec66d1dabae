//! `tauguard export-tau2 RUN`: write one grid cell's records as an upstream `results.json`.

use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tauguard_env::{DataDir, DomainData};
use tauguard_orchestrator::export::results_json;
use tauguard_orchestrator::records::read_records;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Run directory (holding records.jsonl) or a records.jsonl file.
    run: PathBuf,
    /// Output file (default: <run>/results.json, or <run>/results_<guard>.json with --guard).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Grid configuration to export when the run holds several.
    #[arg(long)]
    guard: Option<String>,
    /// τ²-bench data directory (for the task objects; default $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let (dir, file) = if args.run.is_dir() {
        (args.run.clone(), args.run.join("records.jsonl"))
    } else {
        (
            args.run.parent().map(PathBuf::from).unwrap_or_default(),
            args.run.clone(),
        )
    };
    let records = read_records(&file)?;
    let domain = records
        .first()
        .map(|r| r.domain.clone())
        .context("the run has no records")?;
    let data = DomainData::load(&DataDir::resolve(args.data_dir.as_deref())?, &domain)?;
    let doc = results_json(&records, &data, args.guard.as_deref())?;
    let out = args.out.unwrap_or_else(|| match &args.guard {
        Some(g) => dir.join(format!("results_{g}.json")),
        None => dir.join("results.json"),
    });
    let tmp = out.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&doc)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &out).with_context(|| format!("writing {}", out.display()))?;
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}
