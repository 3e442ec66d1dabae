//! `tauguard merge DIR... --out DIR`: union the run directories of a run's shards (`run
//! --shard I/N`) into one new run directory, and say what was pooled, dropped and missing.
//! The merged directory gets the columnar sidecar `report` reads, written as after `tauguard
//! run` (a sidecar that cannot be written is a warning; the merged records stay).

use crate::exit::CliError;
use crate::output::Output;
use clap::Args;
use std::path::PathBuf;
use tauguard_orchestrator::merge::{MergeError, merge};
use tauguard_orchestrator::records::RecordsError;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Run directories to merge (shards of one config, each holding records.jsonl and
    /// config.json); never modified.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// The merged run directory: must not exist yet, or be empty.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: MergeArgs) -> Result<(), CliError> {
    let s = merge(&args.dirs, &args.out).map_err(merge_error)?;
    let mut out = Output::stdout();
    for i in &s.inputs {
        out.line(format_args!(
            "{}: {} records{}",
            i.path.display(),
            i.records,
            i.shard.map(|s| format!(" (shard {s})")).unwrap_or_default()
        ))?;
    }
    out.line(format_args!(
        "merged {} records from {} directories into {}; {} duplicates dropped ({} of them infrastructure errors replaced by a scored record)",
        s.written,
        s.inputs.len(),
        s.out.display(),
        s.duplicates,
        s.infra_replaced
    ))?;
    out.finish()?;
    super::run::write_sidecar(&s.out.join("records.jsonl"));
    if !s.missing_shards.is_empty() {
        let names: Vec<String> = s.missing_shards.iter().map(|s| s.to_string()).collect();
        eprintln!(
            "warning: no input holds shard {} of the run; `tauguard run CONFIG --resume --out {}` runs what they would have",
            names.join(", "),
            s.out.display()
        );
    }
    Ok(())
}

/// Every merge error is about the directories the command line names.
fn merge_error(e: MergeError) -> CliError {
    match e {
        MergeError::NoInputs
        | MergeError::Repeated(_)
        | MergeError::NotARun { .. }
        | MergeError::Running(_)
        | MergeError::Records(RecordsError::Io { .. } | RecordsError::Corrupt { .. })
        | MergeError::Io { .. }
        | MergeError::Config { .. }
        | MergeError::ConfigDiffers { .. }
        | MergeError::CellDiffers { .. }
        | MergeError::OutNotEmpty(_) => CliError::BadInput(e.into()),
    }
}
