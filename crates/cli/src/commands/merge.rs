//! `tauguard merge DIR... --out DIR`: union the run directories of a run's shards (`run
//! --shard I/N`) into one new run directory, and say what was pooled, dropped and missing.
//! A union lacking planned simulations is refused (exit 2) unless `--allow-incomplete`.
//! The merged directory gets the columnar sidecar `report` reads, written as after `tauguard
//! run` (a sidecar that cannot be written is a warning; the merged records stay).

use crate::exit::CliError;
use crate::output::Output;
use clap::Args;
use std::path::PathBuf;
use tauguard_orchestrator::{MergeError, MergeOptions, RecordsError, merge};

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// Run directories to merge (shards of one config, each holding records.jsonl and
    /// config.json); never modified.
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// The merged run directory: must not exist yet, or be empty.
    #[arg(long)]
    out: PathBuf,
    /// Write the union even when it lacks simulations of the plan (a shard not given, or one
    /// that did not finish); `merge.json` then says `"complete": false` and `report` flags
    /// every table. `tauguard run CONFIG --resume --out DIR` on it runs what is missing.
    #[arg(long)]
    allow_incomplete: bool,
}

pub(crate) fn run(args: MergeArgs) -> Result<(), CliError> {
    let options = MergeOptions {
        allow_incomplete: args.allow_incomplete,
    };
    let s = merge(&args.dirs, &args.out, options).map_err(merge_error)?;
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
    match &s.gaps {
        Some(g) if !g.is_complete() => eprintln!(
            "warning: written incomplete: {}; `tauguard run CONFIG --resume --out {}` runs what is missing",
            g.describe(),
            s.out.display()
        ),
        Some(_) => {}
        None => eprintln!(
            "warning: no input has a plan.json, so the union's completeness is unknown (merge.json says `\"complete\": null`)"
        ),
    }
    Ok(())
}

/// Every merge error is about the directories the command line names.
fn merge_error(e: MergeError) -> CliError {
    match e {
        MergeError::NoInputs
        | MergeError::Repeated(_)
        | MergeError::NotARun { .. }
        | MergeError::Unresolved { .. }
        | MergeError::Running(_)
        | MergeError::Records(RecordsError::Io { .. } | RecordsError::Corrupt { .. })
        | MergeError::File(_)
        | MergeError::Config { .. }
        | MergeError::ConfigDiffers { .. }
        | MergeError::CellDiffers { .. }
        | MergeError::OutNotEmpty(_)
        | MergeError::Plan(_)
        | MergeError::PlanDiffers { .. }
        | MergeError::NoPlan
        | MergeError::Incomplete { .. } => CliError::BadInput(e.into()),
    }
}
