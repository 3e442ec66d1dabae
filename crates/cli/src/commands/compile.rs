//! `tauguard compile checklist`: run the 4-step checklist pipeline with a model and write a
//! new artifact set (never over an existing one unless `--overwrite`).

use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tauguard_core::Requestor;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::checklist::DomainToolInfo;
use tauguard_guards::compile::{CompileOptions, compile_checklists_with};
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
    /// Output directory (default: tasks/<domain>/checklist.compiled).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the artifacts of a non-empty output directory.
    #[arg(long)]
    overwrite: bool,
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Prompt directory holding `compile/` templates.
    #[arg(long, default_value = "configs/prompts")]
    prompts: PathBuf,
}

pub fn run(cmd: CompileCommand) -> anyhow::Result<ExitCode> {
    let CompileCommand::Checklist(args) = cmd;
    let (provider, model) = args
        .model
        .split_once('/')
        .with_context(|| format!("--model `{}` must be PROVIDER/MODEL", args.model))?;
    let llm: LlmConfig = match &args.llm_config {
        Some(p) => toml::from_str(
            &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
        )
        .with_context(|| format!("parsing {}", p.display()))?,
        None => LlmConfig::default(),
    };
    let data = DomainData::load(&DataDir::resolve(args.data_dir.as_deref())?, &args.domain)?;
    let spec = ModelSpec {
        temperature: Some(0.0),
        ..ModelSpec::new(provider, model)
    };
    let chat = ModelFactory::new(llm)?.build(&spec)?;
    let probe = data.fresh_env();
    let options = CompileOptions {
        overwrite: args.overwrite,
        known_tools: Some(DomainToolInfo::from_toolkit(
            data.domain,
            probe.toolkit(Requestor::Assistant),
        )),
        ..Default::default()
    };
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from("tasks")
            .join(data.domain)
            .join("checklist.compiled")
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = rt.block_on(compile_checklists_with(
        chat.as_ref(),
        &data.policy,
        &data.tool_schemas.assistant,
        data.domain,
        &args.prompts,
        &out,
        &options,
    ))?;
    println!(
        "{} checklists, {} repairs, {} reviews changed → {}",
        report.files.len(),
        report.repairs,
        report.reviews_changed,
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
