//! `tauguard export-tau2 RUN`: write one grid cell's records as an upstream `results.json`.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::{Context, anyhow};
use clap::Args;
use std::path::PathBuf;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::GuardName;
use tauguard_orchestrator::{ExportError, ExportOptions, read_records, results_json};

#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// Run directory (holding records.jsonl) or a records.jsonl file.
    run: PathBuf,
    /// Output file (default: <run>/results.json, or <run>/results_<guard>.json with --guard).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Grid configuration to export; required when the run holds several.
    #[arg(long)]
    guard: Option<String>,
    /// τ²-bench data directory (for the task objects; default $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

pub(crate) fn run(args: ExportArgs, project: Option<&std::path::Path>) -> Result<(), CliError> {
    if let Some(g) = &args.guard {
        GuardName::parse(g)
            .with_context(|| format!("--guard `{g}`"))
            .bad_input()?;
    }
    let (dir, file) = if args.run.is_dir() {
        (args.run.clone(), args.run.join("records.jsonl"))
    } else {
        (
            args.run.parent().map(PathBuf::from).unwrap_or_default(),
            args.run.clone(),
        )
    };
    let records = read_records(&file).bad_input()?;
    let domain = records
        .first()
        .map(|r| r.domain.clone())
        .ok_or_else(|| CliError::BadInput(anyhow!("`{}` holds no records", file.display())))?;
    let data = DataDir::resolve(args.data_dir.as_deref())
        .and_then(|dir| DomainData::load(&dir, &domain))
        .bad_input()?;
    let options = export_options(project);
    let doc =
        results_json(&records, &data, args.guard.as_deref(), &options).map_err(|e| match e {
            // Each names what in the records does not fit the command line or the data.
            ExportError::Empty(_)
            | ExportError::SeveralCells(_)
            | ExportError::DomainMismatch { .. }
            | ExportError::BadTime { .. } => {
                CliError::BadInput(anyhow::Error::new(e).context(format!("`{}`", file.display())))
            }
        })?;
    let out = args.out.unwrap_or_else(|| match &args.guard {
        Some(g) => dir.join(format!("results_{g}.json")),
        None => dir.join("results.json"),
    });
    let text = serde_json::to_string_pretty(&doc).internal()?;
    // Written beside `out` and renamed into place, so a reader never sees half a file; on
    // any failure (a full disk, `out` a directory) the partial file is removed.
    let tmp = out.with_extension("json.tmp");
    let written = std::fs::write(&tmp, text)
        .with_context(|| format!("cannot write `{}`", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, &out)
                .with_context(|| format!("cannot move `{}` to `{}`", tmp.display(), out.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.bad_input()?;
    let mut stdout = Output::stdout();
    stdout.line(out.display())?;
    stdout.finish()
}

/// `info.git_commit`: the project checkout's commit when git tells it, else tauguard's version
/// (upstream requires a string; the records do not say which commit ran them).
fn export_options(project: Option<&std::path::Path>) -> ExportOptions {
    let commit = crate::project::resolve(project).ok().and_then(|dir| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let commit = text.trim();
        (out.status.success() && !commit.is_empty()).then(|| commit.to_string())
    });
    match commit {
        Some(git_commit) => ExportOptions { git_commit },
        None => ExportOptions::default(),
    }
}
