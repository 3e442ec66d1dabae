//! The run as a batch: build the plan, open the output, start simulations as concurrency
//! allows, append each record as it finishes, and report progress. Failures are data: a
//! simulation that keeps failing after its retries becomes an `infrastructure_error` record,
//! never an aborted run.

use crate::assemble::assemble_record;
use crate::attempt::run_attempts;
use crate::config::{ConfigError, RunConfig};
use crate::plan::{RunPlan, SimIndex};
use crate::records::RecordsError;
use crate::run_dir::RunDir;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tauguard_core::record::SimulationRecord;
use tauguard_env::LoadError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error("`{path}`: {message}")]
    Input { path: PathBuf, message: String },
    #[error(
        "output `{0}` already holds records; pass --resume to continue it or choose another --out"
    )]
    OutputExists(PathBuf),
    #[error("`{role}` model: {message}")]
    Model { role: String, message: String },
    #[error("output `{0}` is in use by another tauguard run")]
    Locked(PathBuf),
    #[error(
        "output `{path}` holds a run of another configuration; these keys differ: {}\n  hint: choose another --out, or undo the change",
        keys.join(", ")
    )]
    ConfigChanged { path: PathBuf, keys: Vec<String> },
}

/// Options from the command line.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub out_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub resume: bool,
    /// Project root holding `configs/prompts` and `tasks/` (default: working directory).
    pub project_dir: Option<PathBuf>,
    /// Stop after this many simulations (tests use it to emulate a killed run).
    pub stop_after: Option<usize>,
    /// Bypass the response cache (`--no-cache`).
    pub no_cache: bool,
}

/// What happened, for the closing lines of `tauguard run`.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub out_dir: PathBuf,
    pub planned: usize,
    pub skipped: usize,
    pub completed: usize,
    pub infra_errors: usize,
    pub successes: usize,
    pub cost: f64,
    /// The response cache's closing line, when HTTP models were used.
    pub cache_stats: Option<String>,
}

/// Runs a config to completion (or to `stop_after`).
pub async fn run(cfg: RunConfig, opts: RunOptions) -> Result<RunSummary, RunError> {
    let plan = Arc::new(RunPlan::build(cfg, &opts)?);
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&plan.cfg.run.name));
    let (_run_dir, writer, done) = RunDir::open(&out_dir, &plan.cfg, opts.resume)?;
    let mut jobs: Vec<SimIndex> = plan
        .simulations()
        .filter(|at| {
            let cell = &plan.cells[at.cell];
            let task = &plan.domains[cell.domain].tasks[at.task];
            !done.contains(&(cell.id.clone(), task.id.clone(), at.trial))
        })
        .collect();
    let planned = plan.planned();
    let mut summary = RunSummary {
        out_dir: out_dir.clone(),
        planned,
        skipped: planned - jobs.len(),
        ..Default::default()
    };
    if let Some(n) = opts.stop_after {
        jobs.truncate(n);
    }
    let concurrency = plan.cfg.run.concurrency;
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    let sem = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut set = tokio::task::JoinSet::new();
    for at in jobs {
        let (plan, writer, sem) = (plan.clone(), writer.clone(), sem.clone());
        set.spawn(async move {
            let _permit = sem
                .acquire_owned()
                .await
                .expect("semaphore is never closed");
            let record = simulate(&plan, at).await;
            writer.lock().await.append(&record)?;
            Ok::<SimulationRecord, RecordsError>(record)
        });
    }
    let total = set.len() as u64;
    // Drawn only on a terminal; hidden when stderr is redirected.
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} · eta {eta}")
            .expect("static template parses"),
    );
    while let Some(joined) = set.join_next().await {
        let record = joined.expect("simulation task panicked")?;
        summary.completed += 1;
        summary.infra_errors += usize::from(record.is_infra_error());
        summary.successes += usize::from(record.succeeded());
        summary.cost += record.usage.values().filter_map(|u| u.cost).sum::<f64>();
        let running = (total as usize - summary.completed).min(concurrency);
        bar.set_message(format!(
            "done {} · running {running} · failed {} · cost ${:.4}",
            summary.completed, summary.infra_errors, summary.cost
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    summary.cache_stats = plan
        .models
        .factory
        .as_ref()
        .and_then(|f| f.cache_stats())
        .map(|s| s.to_string());
    Ok(summary)
}

/// One simulation: its attempts, then its record.
async fn simulate(plan: &RunPlan, at: SimIndex) -> SimulationRecord {
    let started_at = now_stamp();
    let t0 = Instant::now();
    let attempts = run_attempts(plan, at).await;
    assemble_record(plan, at, attempts, started_at, t0.elapsed().as_secs_f64())
}

fn now_stamp() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}", d.as_secs())
}
