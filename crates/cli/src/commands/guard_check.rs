//! `tauguard guard-check -- CMD` / `--url URL`: the external guard protocol's conformance suite
//! (`tauguard_guards::conformance`) on a guard program, one line per check, each
//! failing check with the message that broke it. Exit 1 when any check fails.

use crate::exit::CliError;
use std::time::Duration;
use tauguard_guards::{conformance::Outcome, conformance::Target, conformance::check};

#[derive(clap::Args, Debug)]
pub(crate) struct GuardCheckArgs {
    /// Seconds the guard has to answer each request.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// A guard served over HTTP, instead of a program to start.
    #[arg(long, conflicts_with = "command")]
    pub url: Option<String>,
    /// The guard program and its arguments (after `--`).
    #[arg(last = true, required_unless_present = "url")]
    pub command: Vec<String>,
}

pub(crate) fn run(args: GuardCheckArgs) -> Result<(), CliError> {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(CliError::BadInput(anyhow::anyhow!(
            "--timeout: must be a positive number of seconds, got {}",
            args.timeout
        )));
    }
    let target = match args.url {
        Some(url) => Target::Url(url),
        None => Target::Command(args.command),
    };
    let checks = check(&target, Duration::from_secs_f64(args.timeout));
    let mut failed = Vec::new();
    for c in &checks {
        match &c.outcome {
            Outcome::Pass(note) => println!("PASS  {}: {note}", c.name),
            Outcome::Skipped(why) => println!("SKIP  {}: {why}", c.name),
            Outcome::Fail { problem, offending } => {
                println!("FAIL  {}: {problem}", c.name);
                if let Some(line) = offending {
                    println!("      message: {line}");
                }
                failed.push(c.name);
            }
        }
    }
    if failed.is_empty() {
        println!("{} checks passed", checks.len());
        Ok(())
    } else {
        Err(CliError::Failures(anyhow::anyhow!(
            "guard-check: {} of {} checks failed: {}",
            failed.len(),
            checks.len(),
            failed.join(", ")
        )))
    }
}
