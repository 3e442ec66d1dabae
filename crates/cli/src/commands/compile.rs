//! `tauguard compile checklist`: run the 4-step checklist pipeline with a model and write a
//! new artifact set (never over an existing one unless `--overwrite`).

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::{Context, anyhow};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::catalog::ToolCatalog;
use tauguard_guards::policyguard::compile::{
    CompileError, CompileOptions, compile_checklists_with,
};
use tauguard_llm::{LlmConfig, ModelFactory, ModelSpec};

#[derive(Subcommand, Debug)]
pub enum CompileCommand {
    /// Compile per-tool checklists and general rules from a domain's policy.
    Checklist(ChecklistArgs),
}

#[derive(Args, Debug)]
pub struct ChecklistArgs {
    #[arg(long)]
    domain: String,
    /// Model as `PROVIDER/MODEL` (e.g. `openai/gpt-5.4`); providers come from `--llm-config`
    /// or the built-in openai, anthropic and gemini entries.
    #[arg(long)]
    model: String,
    /// TOML file with an `[llm]`-shaped table (providers, prices, cache) at its top level.
    #[arg(long)]
    llm_config: Option<PathBuf>,
    /// Output directory (default: <project>/tasks/<domain>/checklist.compiled).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the artifacts of a non-empty output directory.
    #[arg(long)]
    overwrite: bool,
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Prompt directory holding `compile/` templates (default: <project>/configs/prompts).
    #[arg(long)]
    prompts: Option<PathBuf>,
}

pub fn run(cmd: CompileCommand, project: Option<&std::path::Path>) -> Result<(), CliError> {
    let CompileCommand::Checklist(args) = cmd;
    let (provider, model) = model_arg("--model", &args.model)?;
    let llm = llm_config(args.llm_config.as_deref())?;
    let data = DataDir::resolve(args.data_dir.as_deref())
        .and_then(|dir| DomainData::load(&dir, &args.domain))
        .bad_input()?;
    // Sampling comes from the model's capabilities and `--llm-config`, never forced here:
    // reasoning models reject a temperature.
    let spec = ModelSpec::new(&provider, &model);
    // Building a model only reads configuration (providers, key variables).
    let chat = ModelFactory::new(llm)
        .bad_input()?
        .build(&spec)
        .with_context(|| format!("--model `{}`", args.model))
        .bad_input()?;
    let options = CompileOptions {
        overwrite: args.overwrite,
        known_tools: Some(ToolCatalog::of(data.def)),
        ..Default::default()
    };
    // The project is needed only for what the command line leaves to it.
    let project_dir = match (&args.prompts, &args.out) {
        (Some(_), Some(_)) => None,
        _ => Some(crate::project::resolve(project).bad_input()?),
    };
    let in_project = |p: &str| project_dir.as_ref().map(|d| d.join(p)).unwrap_or_default();
    let prompts = args
        .prompts
        .clone()
        .unwrap_or_else(|| in_project("configs/prompts"));
    let out = args.out.clone().unwrap_or_else(|| {
        in_project("tasks")
            .join(data.domain)
            .join("checklist.compiled")
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .internal()?;
    let report = rt
        .block_on(compile_checklists_with(
            chat.as_ref(),
            &data.policy,
            &data.tool_schemas.assistant,
            data.domain,
            &prompts,
            &out,
            &options,
        ))
        .map_err(compile_error)?;
    let mut stdout = Output::stdout();
    stdout.line(format_args!(
        "{} checklists, {} repairs, {} reviews changed → {}",
        report.files.len(),
        report.repairs,
        report.reviews_changed,
        out.display()
    ))?;
    stdout.finish()
}

/// `PROVIDER/MODEL` as `flag` takes it.
pub(crate) fn model_arg(flag: &str, value: &str) -> Result<(String, String), CliError> {
    value
        .split_once('/')
        .filter(|(p, m)| !p.is_empty() && !m.is_empty())
        .map(|(p, m)| (p.to_string(), m.to_string()))
        .ok_or_else(|| {
            CliError::BadInput(anyhow!(
                "{flag} `{value}`: expected PROVIDER/MODEL (e.g. `openai/{}`)",
                value.trim_matches('/')
            ))
        })
}

/// The `[llm]`-shaped table of `--llm-config`, or the built-in providers without one.
pub(crate) fn llm_config(path: Option<&std::path::Path>) -> Result<LlmConfig, CliError> {
    match path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--llm-config: cannot read `{}`", p.display()))
                .bad_input()?;
            toml::from_str(&text)
                .map_err(|e| anyhow!("--llm-config `{}`: {}", p.display(), e.message()))
                .bad_input()
        }
        None => Ok(LlmConfig::default()),
    }
}

/// Paths and templates come from the command line; what the model returns (or fails to) is
/// a failure of the run, not of its input and not a bug.
fn compile_error(e: CompileError) -> CliError {
    match e {
        CompileError::OutputNotEmpty(_) | CompileError::Prompt { .. } | CompileError::Io { .. } => {
            CliError::BadInput(e.into())
        }
        CompileError::Model { .. } | CompileError::Invalid { .. } | CompileError::Artifact(_) => {
            CliError::Failures(e.into())
        }
    }
}
