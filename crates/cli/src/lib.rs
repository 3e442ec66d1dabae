//! Argument parsing and wiring for the `tauguard` binary. Commands live under `commands/`;
//! the work itself lives in the library crates.

mod commands;
mod exit;
mod output;
mod progress;
mod project;
mod repro;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "tauguard",
    version,
    about = "τ²-bench-style evaluation of LLM agents under runtime policy guards"
)]
struct Cli {
    /// Project directory holding configs/prompts/ and tasks/ (default: $TAUGUARD_HOME, then
    /// the nearest ancestor of the working directory, then of the executable, holding both).
    #[arg(long, global = true)]
    project_dir: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay every task's gold actions and print one JSON line per task.
    Gold(commands::gold::GoldArgs),
    /// Run a config's simulations and append one record per simulation.
    Run(commands::run::RunArgs),
    /// Union the run directories of a run's shards into one new run directory.
    Merge(commands::merge::MergeArgs),
    /// Write a run's records as an upstream τ²-bench results.json.
    #[command(name = "export-tau2")]
    ExportTau2(commands::export::ExportArgs),
    /// Write a run's per-simulation and per-call tables (the sidecar) as Parquet or CSV.
    ExportTable(commands::export_table::ExportTableArgs),
    /// Re-score an upstream results.json or tauguard records and report disagreements with
    /// the stored rewards.
    Evaluate(commands::evaluate::EvaluateArgs),
    /// Paper tables (Markdown, CSV, LaTeX, JSON), CSV files and plots from records.
    Report(commands::report::ReportArgs),
    /// Run one of the papers' headline experiments (configs/repro/) and print its table beside
    /// the published numbers.
    Reproduce(commands::reproduce::ReproduceArgs),
    /// McNemar test and bootstrap CIs of Pass^k differences between two configurations.
    Compare(commands::report::CompareArgs),
    /// Compile guard artifacts from a domain policy with a model.
    #[command(subcommand)]
    Compile(commands::compile::CompileCommand),
    /// Check an artifact against its schema and the domain's tools.
    #[command(subcommand)]
    Validate(commands::validate::ValidateCommand),
    /// How two artifact sets differ: checklists per tool, workflow nodes, authorizations and
    /// subflows (e.g. the frozen set against a compiled one).
    DiffArtifacts(commands::diff_artifacts::DiffArgs),
    /// A static HTML site of runs (overview, grid of outcomes, simulations), optionally served.
    View(commands::view::ViewArgs),
    /// Check an external guard program against the guard protocol (docs/guard-protocol.md).
    GuardCheck(commands::guard_check::GuardCheckArgs),
}

/// The guard configurations a config may name, one per line, from the guard table itself.
fn guards_help() -> String {
    let width = tauguard_guards::GUARDS
        .iter()
        .map(|e| e.config.len())
        .max()
        .unwrap_or(0);
    let mut out =
        String::from("Guard configurations (`[grid] guards`, `[[grid.guards]] guard`):\n");
    for e in tauguard_guards::GUARDS {
        out.push_str(&format!("  {:width$}  {}\n", e.config, e.help));
    }
    out.push_str("  (and `external = {...}` for a guard of your own: docs/guard-protocol.md)");
    out
}

/// Runs the command line and returns the process exit code (see `exit`).
pub fn run() -> ExitCode {
    let command = Cli::command().mut_subcommand("run", |c| c.after_long_help(guards_help()));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let project = cli.project_dir.as_deref();
    let outcome = match cli.command {
        Command::Gold(args) => commands::gold::run(args),
        Command::Run(args) => commands::run::run(args, project),
        Command::Merge(args) => commands::merge::run(args),
        Command::ExportTau2(args) => commands::export::run(args, project),
        Command::ExportTable(args) => commands::export_table::run(args),
        Command::Evaluate(args) => commands::evaluate::run(args, project),
        Command::Compile(cmd) => commands::compile::run(cmd, project),
        Command::Report(args) => commands::report::report(args, project),
        Command::Reproduce(args) => commands::reproduce::run(args, project),
        Command::Compare(args) => commands::report::compare(args),
        Command::Validate(cmd) => commands::validate::run(cmd, project),
        Command::DiffArtifacts(args) => commands::diff_artifacts::run(args),
        Command::View(args) => commands::view::run(args, project),
        Command::GuardCheck(args) => commands::guard_check::run(args),
    };
    if let Err(err) = &outcome {
        eprintln!("error: {:#}", err.error());
    }
    exit::code(&outcome)
}
