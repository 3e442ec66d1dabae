//! `tauguard compile checklist` and `tauguard compile workflow`: run the 4-step checklist
//! pipeline or the 6-stage workflow pipeline with a model and write a new artifact set (never
//! over an existing one unless `--overwrite`, and never over the frozen workflow bundle), with
//! a `provenance.toml` beside it saying it was compiled, by which command, model and date, and
//! where its compile report is — what a run on the set records as its origin.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::{Context, anyhow};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use tauguard_compile::checklist::{CompileError, compile_checklists_with};
use tauguard_compile::workflow::{WorkflowCompileError, compile_workflow};
use tauguard_compile::{CompileInput, CompileOptions};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{Origin, PROVENANCE_FILE, Provenance, ToolCatalog};
use tauguard_llm::ChatModel;
use tauguard_llm::{LlmConfig, ModelFactory, ModelSpec};

#[derive(Subcommand, Debug)]
pub(crate) enum CompileCommand {
    /// Compile per-tool checklists and general rules from a domain's policy.
    Checklist(CompileArgs),
    /// Compile a PolicyGuide workflow bundle (main graph plus subflows) from a domain's policy.
    Workflow(CompileArgs),
}

#[derive(Args, Debug)]
pub(crate) struct CompileArgs {
    #[arg(long)]
    domain: String,
    /// Model as `PROVIDER/MODEL` (e.g. `openai/gpt-5.4`); providers come from `--llm-config`
    /// or the built-in openai, anthropic and gemini entries.
    #[arg(long)]
    model: String,
    /// TOML file with an `[llm]`-shaped table (providers, prices, cache) at its top level.
    #[arg(long)]
    llm_config: Option<PathBuf>,
    /// Output directory (default: <project>/tasks/<domain>/checklist.compiled, or
    /// workflow.compiled for `compile workflow`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the artifacts of a non-empty output directory.
    #[arg(long)]
    overwrite: bool,
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Prompt directory holding `compile/` templates (`compile/workflow/` for `compile
    /// workflow`; default: <project>/configs/prompts).
    #[arg(long)]
    prompts: Option<PathBuf>,
}

pub(crate) fn run(cmd: CompileCommand, project: Option<&std::path::Path>) -> Result<(), CliError> {
    let (args, workflow) = match cmd {
        CompileCommand::Checklist(args) => (args, false),
        CompileCommand::Workflow(args) => (args, true),
    };
    let setup = Setup::new(&args, project, workflow)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .internal()?;
    let mut stdout = Output::stdout();
    let Setup {
        data,
        chat,
        options,
        prompts,
        out,
    } = setup;
    let input = CompileInput {
        model: chat.as_ref(),
        domain: data.domain,
        policy: &data.policy,
        tools: &data.tool_schemas.assistant,
        prompts_dir: &prompts,
    };
    if workflow {
        let report = rt
            .block_on(compile_workflow(input, &out, &options))
            .map_err(workflow_error)?;
        write_provenance(&out, data.domain, &args.model, true)?;
        let last = report.stages.last().map(|s| s.result.as_str());
        stdout.line(format_args!(
            "workflow bundle: {}, {} model calls, {} repairs → {}",
            last.unwrap_or_default(),
            report.usage.calls,
            report.repairs,
            out.display()
        ))?;
    } else {
        let report = rt
            .block_on(compile_checklists_with(input, &out, &options))
            .map_err(compile_error)?;
        write_provenance(&out, data.domain, &args.model, false)?;
        stdout.line(format_args!(
            "{} tool checklists and {} general rules, {} repairs, {} reviews changed → {}",
            report.counts.tools,
            report.counts.general_rules,
            report.repairs,
            report.reviews_changed,
            out.display()
        ))?;
    }
    stdout.finish()
}

/// Writes `provenance.toml` beside a compile's output: compiled by this command, with this
/// model, today (UTC), and the compile report, so a run on the set (`[guard] artifacts`)
/// records that origin and `validate` prints it.
fn write_provenance(
    out: &std::path::Path,
    domain: &str,
    model: &str,
    workflow: bool,
) -> Result<(), CliError> {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or_default();
    let (y, m, d) = tauguard_orchestrator::civil_from_days(days as i64);
    let (command, kinds): (&str, &[(&str, &[&str])]) = if workflow {
        ("workflow", &[("workflow", &["bundle.json"])])
    } else {
        (
            "checklist",
            &[
                ("checklists", &["*.yaml"]),
                ("general_rules", &["general_rules.yaml"]),
            ],
        )
    };
    let origin = Origin::Compiled {
        compiler: format!("tauguard {} compile {command}", env!("CARGO_PKG_VERSION")),
        model: model.to_string(),
        date: format!("{y:04}-{m:02}-{d:02}"),
        report: "compile_report.json".into(),
    };
    let path = out.join(PROVENANCE_FILE);
    std::fs::write(&path, Provenance::compiled(domain, kinds, &origin))
        .with_context(|| format!("cannot write `{}`", path.display()))
        .map_err(CliError::Failures)
}

/// What both pipelines need, resolved from the command line before any model call.
struct Setup {
    data: DomainData,
    chat: std::sync::Arc<dyn ChatModel>,
    options: CompileOptions,
    prompts: PathBuf,
    out: PathBuf,
}

impl Setup {
    fn new(
        args: &CompileArgs,
        project: Option<&std::path::Path>,
        workflow: bool,
    ) -> Result<Setup, CliError> {
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
        // The project is needed for what the command line leaves to it, and for a workflow
        // compile to know which directory holds the frozen bundle.
        let project_dir = match (&args.prompts, &args.out) {
            (Some(_), Some(_)) if !workflow => None,
            (Some(_), Some(_)) => crate::project::resolve(project).ok(),
            _ => Some(crate::project::resolve(project).bad_input()?),
        };
        let in_project = |p: &str| project_dir.as_ref().map(|d| d.join(p)).unwrap_or_default();
        let prompts = args
            .prompts
            .clone()
            .unwrap_or_else(|| in_project("configs/prompts"));
        let artifact = if workflow {
            "workflow.compiled"
        } else {
            "checklist.compiled"
        };
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| in_project("tasks").join(data.domain).join(artifact));
        if workflow && let Some(dir) = &project_dir {
            let frozen = dir.join("tasks").join(data.domain).join("workflow");
            if same_dir(&out, &frozen) {
                return Err(CliError::BadInput(anyhow!(
                    "--out `{}` is the frozen workflow bundle of `{}`; a compile never writes there (even with --overwrite): choose another directory",
                    out.display(),
                    data.domain
                )));
            }
        }
        Ok(Setup {
            data,
            chat,
            options,
            prompts,
            out,
        })
    }
}

/// Whether two paths name the same directory (symlinks and `..` resolved where they exist).
fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    let norm = |p: &std::path::Path| {
        p.canonicalize()
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    norm(a) == norm(b)
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
        CompileError::Output(_) | CompileError::Prompt { .. } => CliError::BadInput(e.into()),
        CompileError::Model { .. } | CompileError::Invalid { .. } | CompileError::Artifact(_) => {
            CliError::Failures(e.into())
        }
        CompileError::Draft { .. } => CliError::Internal(e.into()),
    }
}

/// As [`compile_error`], for the workflow pipeline: an invalid compiled bundle is a failure of
/// the run (the model's graphs), like an invalid reply.
fn workflow_error(e: WorkflowCompileError) -> CliError {
    match e {
        WorkflowCompileError::Output(_) | WorkflowCompileError::Prompt(_) => {
            CliError::BadInput(e.into())
        }
        WorkflowCompileError::Model { .. }
        | WorkflowCompileError::Invalid { .. }
        | WorkflowCompileError::InvalidBundle { .. } => CliError::Failures(e.into()),
        WorkflowCompileError::Reload(_) => CliError::Internal(e.into()),
    }
}
