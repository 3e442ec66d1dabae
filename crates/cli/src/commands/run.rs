//! `tauguard run CONFIG`: run a config's simulations and append their records.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tauguard_orchestrator::config::RunConfig;
use tauguard_orchestrator::runner::{RunOptions, run as run_config};
use tauguard_orchestrator::runtime;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Run config (TOML).
    config: PathBuf,
    /// Output directory (default: results/<run.name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue an interrupted run: keep its complete records, redo the rest.
    #[arg(long)]
    resume: bool,
    /// τ²-bench data directory (default: run.data_dir, then $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Bypass the on-disk response cache.
    #[arg(long)]
    no_cache: bool,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig::load(&args.config)?;
    let rt = runtime::build(runtime::Workload::of(&cfg))?;
    let opts = RunOptions {
        out_dir: args.out,
        data_dir: args.data_dir,
        resume: args.resume,
        no_cache: args.no_cache,
        ..Default::default()
    };
    let s = rt.block_on(run_config(cfg, opts))?;
    println!(
        "{} simulations ({} already complete, {} run now): {} succeeded, {} infrastructure errors, cost ${:.4}",
        s.planned, s.skipped, s.completed, s.successes, s.infra_errors, s.cost
    );
    if let Some(stats) = &s.cache_stats {
        println!("{stats}");
    }
    println!("records: {}", s.out_dir.join("records.jsonl").display());
    Ok(ExitCode::from(if s.infra_errors == 0 {
        crate::exit::SUCCESS
    } else {
        crate::exit::FAILURES
    }))
}
