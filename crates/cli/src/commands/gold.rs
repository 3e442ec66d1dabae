//! `tauguard gold`: replay gold actions and print parity-fixture-shaped JSON lines.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::Args;
use std::path::PathBuf;
use tauguard_env::{DataDir, DomainData};

#[derive(Args, Debug)]
pub(crate) struct GoldArgs {
    /// τ²-bench data directory (default: $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Domain, by its registered name (an unknown name lists the known ones).
    #[arg(long)]
    domain: String,
    /// Task split to replay.
    #[arg(long, default_value = "base")]
    split: String,
}

pub(crate) fn run(args: GoldArgs) -> Result<(), CliError> {
    let dir = DataDir::resolve(args.data_dir.as_deref()).bad_input()?;
    let data = DomainData::load(&dir, &args.domain).bad_input()?;
    let tasks = data
        .select_tasks(Some(&args.split), None, None)
        .bad_input()?;
    let mut out = Output::stdout();
    let mut failed = 0usize;
    let total = tasks.len();
    for task in tasks {
        match tauguard_env::replay_gold(&data, task) {
            Ok(replay) => out.line(serde_json::to_string(&replay.to_json()).internal()?)?,
            Err(e) => {
                failed += 1;
                eprintln!("error: task `{}`: {}", task.id, tauguard_core::Chain(&e));
            }
        }
    }
    out.finish()?;
    if failed == 0 {
        Ok(())
    } else {
        Err(CliError::Failures(anyhow!(
            "{failed} of {total} tasks of domain `{}` failed to replay (named above)",
            args.domain
        )))
    }
}
