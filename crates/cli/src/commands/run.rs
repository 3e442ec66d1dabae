//! `tauguard run CONFIG`: run a config's simulations and append their records.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::Args;
use std::path::PathBuf;
use tauguard_orchestrator::config::{ConfigError, RunConfig};
use tauguard_orchestrator::records::RecordsError;
use tauguard_orchestrator::runner::{RunError, RunOptions, run as run_config};
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

pub fn run(args: RunArgs, project: Option<&std::path::Path>) -> Result<(), CliError> {
    let cfg = RunConfig::load(&args.config).map_err(config_error)?;
    let project_dir = crate::project::resolve(project).bad_input()?;
    let rt = runtime::build(runtime::Workload::of(&cfg)).internal()?;
    let opts = RunOptions {
        out_dir: args.out,
        data_dir: args.data_dir,
        resume: args.resume,
        no_cache: args.no_cache,
        project_dir: Some(project_dir),
        ..Default::default()
    };
    let s = rt.block_on(run_config(cfg, opts)).map_err(run_error)?;
    let records = s.out_dir.join("records.jsonl");
    let mut out = Output::stdout();
    out.line(format_args!(
        "{} simulations ({} already complete, {} run now): {} succeeded, {} infrastructure errors, cost ${:.4}",
        s.planned, s.skipped, s.completed, s.successes, s.infra_errors, s.cost
    ))?;
    if let Some(stats) = &s.cache_stats {
        out.line(stats)?;
    }
    out.line(format_args!("records: {}", records.display()))?;
    out.finish()?;
    if s.infra_errors == 0 {
        Ok(())
    } else {
        Err(CliError::Failures(anyhow!(
            "{} simulations ended in an infrastructure error; their records in `{}` say why",
            s.infra_errors,
            records.display()
        )))
    }
}

/// Every config error is the user's file.
fn config_error(e: ConfigError) -> CliError {
    match e {
        ConfigError::Io { .. } | ConfigError::Invalid { .. } => CliError::BadInput(e.into()),
    }
}

/// What a run can fail on before its simulations: all of it comes from the config, the data
/// directory, the output directory or its records (a record file that cannot be read or
/// appended to sits where `--out` or `run.name` put it).
fn run_error(e: RunError) -> CliError {
    match e {
        RunError::Config(e) => config_error(e),
        RunError::Records(RecordsError::Io { .. } | RecordsError::Corrupt { .. })
        | RunError::Load(_)
        | RunError::Input { .. }
        | RunError::OutputExists(_)
        | RunError::Locked(_)
        | RunError::ConfigChanged { .. }
        | RunError::Model { .. } => CliError::BadInput(e.into()),
    }
}
