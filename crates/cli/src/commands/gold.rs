//! `tauguard gold`: replay gold actions and print parity-fixture-shaped JSON lines.

use crate::exit;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tauguard_env::{DataDir, DomainData};

#[derive(Args, Debug)]
pub struct GoldArgs {
    /// τ²-bench data directory (default: $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Domain: airline, retail or telecom.
    #[arg(long)]
    domain: String,
    /// Task split to replay.
    #[arg(long, default_value = "base")]
    split: String,
}

pub fn run(args: GoldArgs) -> anyhow::Result<ExitCode> {
    let dir = DataDir::resolve(args.data_dir.as_deref())?;
    let data = DomainData::load(&dir, &args.domain)?;
    let tasks = data.select_tasks(Some(&args.split), None, None)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = 0usize;
    for task in tasks {
        match tauguard_env::gold::replay_gold(&data, task) {
            Ok(replay) => writeln!(out, "{}", serde_json::to_string(&replay.to_json())?)?,
            Err(e) => {
                failed += 1;
                eprintln!("error: task `{}`: {e}", task.id);
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::from(if failed == 0 {
        exit::SUCCESS
    } else {
        exit::FAILURES
    }))
}
