//! `tauguard run CONFIG`: run a config's simulations and append their records, then print
//! what they cost and what failed on the way; `tauguard run --check CONFIG` only asks the
//! config's models for what the run will need of them (reachable, tool calling, prompt fits).
//! `--shard I/N` (or `auto`, from a Slurm or Kubernetes job array) runs one shard of the
//! config's simulations; `tauguard merge` unions the shards' directories.
//! `--dry-run` validates the config and its plan and prints what the run would do. Model
//! aliases of a grid resolve from `configs/models.toml` (or `--models FILE`). After
//! a run, the run directory's columnar sidecar (`simulations.parquet`, `calls.parquet`) is
//! written from its records for `report`.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_core::count;
use tauguard_orchestrator::{
    ConfigError, Interrupt, ModelCatalog, RecordsError, RunConfig, RunError, RunOptions,
    ShardRequest, Workload, build_runtime, check_models, format_cost, run as run_config,
};

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// Run config (TOML).
    config: PathBuf,
    /// Output directory (default: results/<run.name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue an interrupted run: keep its scored records, run the rest — including the
    /// simulations that ended in an infrastructure error (their records move to
    /// superseded.jsonl).
    #[arg(long)]
    resume: bool,
    /// With --resume: keep infrastructure-error records as complete.
    #[arg(long, requires = "resume")]
    keep_infra: bool,
    /// τ²-bench data directory (default: run.data_dir, then $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Bypass the on-disk response cache.
    #[arg(long)]
    no_cache: bool,
    /// Only check the config's models: per distinct non-sim model, whether it is reachable,
    /// and per role it plays whether it calls tools and takes the role's largest prompt
    /// (exit 0 when all pass, else 2).
    #[arg(long)]
    check: bool,
    /// Run only shard I of N (0-based) of the simulations, split by a stable hash of
    /// (cell, task, trial); `auto` reads SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (or
    /// _MIN/_MAX), else JOB_COMPLETION_INDEX with TAUGUARD_SHARD_COUNT. `tauguard merge`
    /// unions the shards' output directories.
    #[arg(long, value_name = "I/N|auto")]
    shard: Option<ShardRequest>,
    /// Validate the config and its whole plan without running or writing anything, and print
    /// the cells, simulations, expected model calls per role and a cost range.
    #[arg(long, conflicts_with_all = ["check", "resume", "shard"])]
    dry_run: bool,
    /// Output of --dry-run.
    #[arg(long, value_enum, default_value = "text", requires = "dry_run")]
    format: FormatArg,
    /// Model catalog the grid's model aliases resolve from (default:
    /// <project>/configs/models.toml).
    #[arg(long, value_name = "FILE")]
    models: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

pub(crate) fn run(args: RunArgs, project: Option<&Path>) -> Result<(), CliError> {
    let mut cfg = RunConfig::load(&args.config).map_err(config_error)?;
    let project_dir = crate::project::resolve(project).bad_input()?;
    apply_catalog(&mut cfg, &args.config, args.models.as_deref(), &project_dir)?;
    let rt = build_runtime(Workload::of(&cfg)).internal()?;
    if args.check {
        let opts = RunOptions {
            data_dir: args.data_dir,
            project_dir: Some(project_dir),
            ..Default::default()
        };
        return check(&rt, &cfg, &opts);
    }
    if args.dry_run {
        let opts = RunOptions {
            data_dir: args.data_dir,
            project_dir: Some(project_dir),
            dry_run: true,
            ..Default::default()
        };
        let plan = rt
            .block_on(async { tauguard_orchestrator::RunPlan::build(cfg, &opts) })
            .map_err(run_error)?;
        let estimate = tauguard_orchestrator::estimate(&plan);
        return crate::commands::dry_run::print(&estimate, args.format == FormatArg::Json);
    }
    let interrupt = Arc::new(Interrupt::default());
    handle_signals(&rt, interrupt.clone());
    let shard = args
        .shard
        .map(ShardRequest::resolve)
        .transpose()
        .map_err(|e| CliError::BadInput(e.into()))?;
    let opts = RunOptions {
        shard,
        out_dir: args.out,
        data_dir: args.data_dir,
        resume: args.resume,
        keep_infra: args.keep_infra,
        no_cache: args.no_cache,
        project_dir: Some(project_dir),
        interrupt: Some(interrupt.clone()),
        progress: Some(crate::progress::on_stderr()),
        ..Default::default()
    };
    let s = rt.block_on(run_config(cfg, opts)).map_err(run_error)?;
    let records = s.out_dir.join("records.jsonl");
    let mut out = Output::stdout();
    out.line(format_args!(
        "{}{} ({} already complete, {} run now): {} succeeded, {}, cost {}",
        s.shard
            .map(|sh| format!("shard {sh}: "))
            .unwrap_or_default(),
        count(s.planned, "simulation"),
        s.skipped,
        s.completed,
        s.successes,
        count(s.infra_errors, "infrastructure error"),
        format_cost(s.cost)
    ))?;
    if s.http_requests > 0 || s.restarts > 0 {
        let causes: Vec<String> = s
            .http_failures
            .iter()
            .map(|(cause, n)| format!("{cause} {n}"))
            .collect();
        out.line(format_args!(
            "HTTP requests {}, failed {} ({}); simulation restarts {}; discarded {} prompt + {} completion tokens, cost {}",
            s.http_requests,
            s.http_failures.values().sum::<u64>(),
            if causes.is_empty() {
                "none".to_string()
            } else {
                causes.join(", ")
            },
            s.restarts,
            s.discarded.usage.prompt_tokens,
            s.discarded.usage.completion_tokens,
            if s.discarded.is_empty() {
                // Nothing discarded: no cost to state, priced or not.
                "none".to_string()
            } else {
                format_cost(s.discarded.cost)
            }
        ))?;
    }
    if let Some(cut) = s.truncated_line() {
        out.line(format_args!(
            "replies cut at their token limit: {cut} (`usage.<role>.truncated` in the records; `[run] truncated_replies` decides what a cut agent reply is)"
        ))?;
    }
    if let Some(e) = &s.documents_embedded {
        out.line(format_args!(
            "knowledge base embedded before the run: {} input tokens, {}{} (not in the records)",
            e.usage.prompt_tokens,
            format_cost(e.cost),
            if e.cache_hits == e.calls {
                ", from the cache"
            } else {
                ""
            }
        ))?;
    }
    if let Some(stats) = &s.cache_stats {
        out.line(stats)?;
    }
    out.line(format_args!("records: {}", records.display()))?;
    out.finish()?;
    write_sidecar(&records);
    if s.infra_errors == 0 {
        Ok(())
    } else {
        Err(CliError::Failures(anyhow!(
            "{} ended in an infrastructure error; their records in `{}` say why",
            count(s.infra_errors, "simulation"),
            records.display()
        )))
    }
}

/// Writes the columnar sidecar `report` reads instead of `records`, after `run` and `merge`
/// alike. The records stay the truth, so a sidecar that cannot be written is a warning on
/// stderr, never a failed command; a run that wrote no records file gets none.
/// Resolves the config's model aliases from the catalog (`models`, default
/// `configs/models.toml` of the project) and prices every model the catalog knows by provider
/// and id (`RunConfig::adopt_catalog_prices`). Without aliases a missing catalog is no error;
/// a malformed one always is.
pub(crate) fn apply_catalog(
    cfg: &mut RunConfig,
    config: &Path,
    models: Option<&Path>,
    project_dir: &Path,
) -> Result<(), CliError> {
    let file = models.map_or_else(
        || project_dir.join("configs/models.toml"),
        Path::to_path_buf,
    );
    if !cfg.has_aliases() && models.is_none() && !file.is_file() {
        return Ok(());
    }
    let catalog = ModelCatalog::load(&file).map_err(config_error)?;
    if cfg.has_aliases() {
        cfg.resolve_aliases(config, &catalog)
            .map_err(config_error)?;
    }
    cfg.adopt_catalog_prices(&catalog);
    Ok(())
}

pub(crate) fn write_sidecar(records: &Path) {
    if records.is_file()
        && let Err(e) = tauguard_metrics::write_sidecar(records)
    {
        eprintln!(
            "warning: sidecar of `{}` not written (report reads the records instead): {}",
            records.display(),
            tauguard_core::Chain(&e)
        );
    }
}

/// `--check`: per distinct model a `reachable:` or `rejected:` line, then one line per check
/// of each role it plays; bad input (exit 2) unless every model is reachable and passes.
fn check(rt: &tokio::runtime::Runtime, cfg: &RunConfig, opts: &RunOptions) -> Result<(), CliError> {
    let checks = rt.block_on(check_models(cfg, opts)).map_err(run_error)?;
    let mut out = Output::stdout();
    if checks.is_empty() {
        out.line("every model of the config is a sim model: nothing to check")?;
    }
    let mut failed = Vec::new();
    for c in &checks {
        let who = format!("{} `{}/{}`", c.roles, c.provider, c.model);
        match &c.result {
            Ok(note) => out.line(format_args!("reachable: {who} ({note})"))?,
            Err(reason) => {
                out.line(format_args!("rejected: {who}: {reason}"))?;
                failed.push(format!("{who}: not reachable"));
            }
        }
        for r in &c.checks {
            let kind = r.kind.as_str();
            match &r.result {
                Ok(note) => out.line(format_args!("  {}: {kind}: ok ({note})", r.role))?,
                Err(why) => {
                    out.line(format_args!("  {}: {kind}: fails ({why})", r.role))?;
                    failed.push(format!(
                        "`{}/{}` as {}: {kind}",
                        c.provider, c.model, r.role
                    ));
                }
            }
        }
    }
    out.finish()?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::BadInput(anyhow!(
            "{} of {} models failed the check: {}",
            checks.iter().filter(|c| !c.passed()).count(),
            checks.len(),
            failed.join("; ")
        )))
    }
}

/// Every config error is the user's file.
fn config_error(e: ConfigError) -> CliError {
    match e {
        ConfigError::Io { .. } | ConfigError::Invalid { .. } | ConfigError::Data(_) => {
            CliError::BadInput(e.into())
        }
    }
}

/// What a run can fail on before its simulations: all of it comes from the config, the data
/// directory, the output directory or its records (a record file that cannot be read or
/// appended to sits where `--out` or `run.name` put it).
pub(crate) fn run_error(e: RunError) -> CliError {
    match e {
        RunError::Config(e) => config_error(e),
        RunError::Records(RecordsError::Io { .. } | RecordsError::Corrupt { .. })
        | RunError::Load(_)
        | RunError::Input { .. }
        | RunError::File(_)
        | RunError::CreateOutput { .. }
        | RunError::Plan(_)
        | RunError::Prerequisites(_)
        | RunError::Oracle(_)
        | RunError::OutputExists(_)
        | RunError::Locked(_)
        | RunError::ConfigChanged { .. }
        | RunError::CellChanged { .. }
        | RunError::ShardChanged { .. }
        | RunError::Model { .. }
        | RunError::Embedding { .. }
        // The config's credentials, model name or endpoint.
        | RunError::ModelFatal { .. } => CliError::BadInput(e.into()),
        // The server, not the config, as far as anyone can tell.
        RunError::ConnectFailures { .. } | RunError::Outage { .. } => CliError::Failures(e.into()),
        RunError::Interrupted(_) => CliError::Interrupted(e.into()),
    }
}

/// Turns the first Ctrl-C or SIGTERM into `interrupt`, so the run stops and keeps its
/// accounting; a second one ends the process at once (exit 130), records already written
/// kept as they are.
fn handle_signals(rt: &tokio::runtime::Runtime, interrupt: Arc<Interrupt>) {
    rt.spawn(async move {
        let mut first = true;
        loop {
            let cause = next_signal().await;
            if !first {
                eprintln!("{cause} again: stopping now; records already written are kept");
                std::process::exit(130);
            }
            first = false;
            eprintln!(
                "{cause}: stopping; writing what the unfinished simulations spent (again to stop at once)"
            );
            interrupt.trigger(cause);
        }
    });
}

/// The name of the next Ctrl-C or SIGTERM.
async fn next_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}
