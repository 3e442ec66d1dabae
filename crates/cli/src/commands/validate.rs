//! `tauguard validate workflow FILE --domain D`: check a workflow bundle before a guide uses it.
//!
//! A bundle that fails validation is bad input (exit 2), like any malformed artifact: the
//! report lists every problem, one line each, so an author fixes them all in one pass. On
//! success the bundle's sizes are printed (nodes and authorization nodes across the main graph
//! and its subflows), which is what the README compares with the paper's.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use tauguard_guards::catalog::ToolCatalog;
use tauguard_guards::policyguide::{Bundle, validate};

#[derive(Subcommand, Debug)]
pub enum ValidateCommand {
    /// Validate a PolicyGuide workflow bundle (JSON) against a domain's tools.
    Workflow(WorkflowArgs),
}

#[derive(Args, Debug)]
pub struct WorkflowArgs {
    /// The bundle file, e.g. tasks/airline/workflow/bundle.json.
    file: PathBuf,
    /// Domain whose agent tools the bundle must use and cover.
    #[arg(long)]
    domain: String,
}

pub fn run(cmd: ValidateCommand) -> Result<(), CliError> {
    match cmd {
        ValidateCommand::Workflow(args) => workflow(args),
    }
}

fn workflow(args: WorkflowArgs) -> Result<(), CliError> {
    let catalog = ToolCatalog::builtin(&args.domain)
        .ok_or_else(|| anyhow!("unknown domain `{}`", args.domain))
        .bad_input()?;
    let bundle = Bundle::load(&args.file).bad_input()?;
    let report = validate(&bundle, &catalog);
    let mut out = Output::stdout();
    for problem in &report.problems {
        out.line(problem.to_string())?;
    }
    if report.is_valid() {
        out.line(format!(
            "{}: valid workflow bundle for domain `{}`: {}",
            args.file.display(),
            args.domain,
            report.sizes
        ))?;
    }
    out.finish()?;
    if report.is_valid() {
        Ok(())
    } else {
        Err(CliError::BadInput(anyhow!(
            "workflow bundle {} has {} problem(s) (listed above)",
            args.file.display(),
            report.problems.len()
        )))
    }
}
