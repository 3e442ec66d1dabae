//! The run as a batch: build the plan, open the output, start simulations as concurrency
//! allows, append each record as it finishes, and report progress through [`Progress`] (the
//! binary draws a bar or prints lines). Failures are data: a simulation that keeps failing after
//! its retries becomes an `infrastructure_error` record. Two failures end the run instead,
//! keeping the records written so far: a fatal model error (credentials, permissions, unknown
//! model — no later call can succeed; that simulation is not recorded, so `--resume` redoes
//! it), and an outage: `run.max_consecutive_connect_failures` attempts in a row that could not
//! connect, or as many server errors (`max_consecutive_server_errors`), calls rate-limited
//! beyond their retries (`max_consecutive_rate_limited`) or time-outs and stalls
//! (`max_consecutive_timeouts`) with no 2xx answer between, counted across simulations by one
//! run-wide watch — so a dead server costs a few attempts, not every simulation's retries,
//! and `--resume` finishes the run once it is back.

use crate::attempt::AttemptError;
use crate::config::RunConfig;
use crate::interrupt::Interrupt;
use crate::plan::{RunPlan, SimIndex};
use crate::records::RecordWriter;
use crate::run_dir::RunDir;
use crate::shard::Shard;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tauguard_core::count;
use tauguard_core::record::{RoleUsage, SimulationRecord};
use tauguard_llm::{ConnectWatch, LlmError};

mod batch;

pub use crate::run_error::RunError;
use batch::{Batch, Finished};

/// Options from the command line.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub out_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub resume: bool,
    /// On `resume`, keep infrastructure-error records as complete instead of running their
    /// simulations again (`--keep-infra`).
    pub keep_infra: bool,
    /// Project root holding `configs/prompts` and `tasks/` (default: working directory).
    pub project_dir: Option<PathBuf>,
    /// Stop after this many simulations (tests use it to emulate a killed run).
    pub stop_after: Option<usize>,
    /// Bypass the response cache (`--no-cache`).
    pub no_cache: bool,
    /// Run only this shard's simulations (`--shard I/N`; see [`crate::shard`]).
    pub shard: Option<Shard>,
    /// Build the plan for `--dry-run`: models are built but never called, without a cache
    /// and without requiring their API keys to be set.
    pub dry_run: bool,
    /// Stops the run when triggered (the binary's Ctrl-C and SIGTERM handler).
    pub interrupt: Option<Arc<Interrupt>>,
    /// Shows the run's progress (the binary's bar or progress lines); `None` = silent.
    pub progress: Option<Arc<dyn Progress>>,
}

/// What happened, for the closing lines of `tauguard run`.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub out_dir: PathBuf,
    /// The shard run, when `--shard` was given; `planned` counts only its simulations.
    pub shard: Option<Shard>,
    pub planned: usize,
    pub skipped: usize,
    pub completed: usize,
    pub infra_errors: usize,
    pub successes: usize,
    /// Dollars spent: the records' usage and their discarded attempts; `None` when a model
    /// without a price was called, and before the first record when the plan has one.
    pub cost: Option<f64>,
    /// HTTP requests sent and failed exchanges by cause, over the records.
    pub http_requests: u64,
    pub http_failures: BTreeMap<String, u64>,
    /// Whole-simulation attempts discarded and restarted.
    pub restarts: usize,
    /// Tokens and cost of discarded attempts and failed calls.
    pub discarded: RoleUsage,
    /// The response cache's closing line, when HTTP models were used.
    pub cache_stats: Option<String>,
    /// The knowledge-base documents embedded before the first simulation (calls, tokens,
    /// cost; a rerun's are cache hits), when a domain embeds: in no record.
    pub documents_embedded: Option<RoleUsage>,
    /// Replies cut at their token limit and their retries, per role, over the records and
    /// their discarded attempts (roles with none left out).
    pub truncated: BTreeMap<String, Truncated>,
}

/// A role's replies cut at the token limit in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Truncated {
    pub replies: u64,
    /// Of them, asked again with a larger limit (`truncated_replies = "retry"`).
    pub retried: u64,
}

impl RunSummary {
    /// `agent 6 (6 retried), guard 2`: the roles with cut replies; `None` when there are none.
    pub fn truncated_line(&self) -> Option<String> {
        let parts: Vec<String> = self
            .truncated
            .iter()
            .map(|(role, t)| match t.retried {
                0 => format!("{role} {}", t.replies),
                r => format!("{role} {} ({r} retried)", t.replies),
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// How a run shows where it stands. The binary implements it (a bar on a terminal, a plain
/// line every few seconds elsewhere); a run without one is silent.
pub trait Progress: Send + Sync + std::fmt::Debug {
    /// How often [`Progress::heartbeat`] is called; `None` = never.
    fn heartbeat_every(&self) -> Option<Duration>;
    /// The run has `total` simulations to do.
    fn start(&self, total: u64);
    /// A record was counted; `line` says where the run stands.
    fn advance(&self, line: &str);
    /// Where the run stands, on the heartbeat.
    fn heartbeat(&self, line: &str);
    /// The run ends or stops: nothing more is shown.
    fn finish(&self);
}

/// Runs a config to completion (or to `stop_after`).
pub async fn run(cfg: RunConfig, opts: RunOptions) -> Result<RunSummary, RunError> {
    let plan = Arc::new(RunPlan::build(cfg, &opts)?);
    let documents =
        crate::embeddings::embed_documents(&plan.domains, plan.models.embeddings.as_ref()).await?;
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&plan.cfg.run.name));
    let (_run_dir, writer, jobs, mut summary) = open_run(&plan, &opts, &out_dir)?;
    summary.documents_embedded = documents;
    let concurrency = plan.cfg.run.concurrency;
    let batch = Batch::new(plan, writer, &opts, out_dir);
    let mut set = tokio::task::JoinSet::new();
    // Simulations start as slots free up, so memory follows `concurrency`, not the size of
    // the grid.
    let total = jobs.len() as u64;
    let mut pending = jobs.into_iter().enumerate();
    for at in pending.by_ref().take(concurrency) {
        batch.spawn(&mut set, at);
    }
    let progress = opts.progress.clone();
    if let Some(p) = &progress {
        p.start(total);
    }
    let mut tick = progress
        .as_ref()
        .and_then(|p| p.heartbeat_every())
        .map(|every| {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            tick
        });
    let line = |s: &RunSummary| progress_line(s, total, concurrency);
    loop {
        let joined = tokio::select! {
            j = set.join_next() => match j {
                Some(j) => j,
                None => break,
            },
            () = interrupted(opts.interrupt.as_deref()) => {
                return Err(batch.interrupted(&mut set, &summary, &opts).await);
            }
            () = tripped(batch.watch.as_deref()) => {
                return Err(batch.outage(&mut set, &opts).await);
            }
            () = beat(tick.as_mut()) => {
                if let Some(p) = &progress {
                    p.heartbeat(&line(&summary));
                }
                continue;
            }
        };
        if let Some(at) = pending.next() {
            batch.spawn(&mut set, at);
        }
        let record = match joined.expect("simulation task panicked")? {
            Finished::Record(r) => r,
            Finished::Skipped => continue,
            Finished::Fatal(e) => return Err(batch.fatal(&mut set, &summary, e).await),
        };
        summary.add(&record);
        if let Some(p) = &progress {
            p.advance(&line(&summary));
        }
    }
    batch.finish(summary).await
}

/// Opens the output (resuming it as asked) and writes the plan there; the simulations left
/// to run, and the summary counting what is planned and already done.
fn open_run(
    plan: &RunPlan,
    opts: &RunOptions,
    out_dir: &Path,
) -> Result<(RunDir, RecordWriter, Vec<SimIndex>, RunSummary), RunError> {
    let cells = plan
        .cells
        .iter()
        .map(|c| (c.id.as_str(), (c.hash.as_str(), &c.spec)))
        .collect();
    let (run_dir, writer, done) = RunDir::open(
        out_dir,
        &plan.cfg,
        &cells,
        opts.resume,
        !opts.keep_infra,
        opts.shard,
    )?;
    // The whole plan, in a shard's directory too: what `merge` counts a union against.
    crate::plan_file::PlanFile::of(plan).write(out_dir)?;
    let mut planned = 0;
    let mut jobs: Vec<SimIndex> = plan
        .simulations()
        .filter(|at| {
            let key = plan.key(*at);
            let mine = opts.shard.is_none_or(|s| s.owns(&key));
            planned += usize::from(mine);
            mine && !done.contains(&key)
        })
        .collect();
    let summary = RunSummary {
        out_dir: out_dir.to_path_buf(),
        shard: opts.shard,
        planned,
        skipped: planned - jobs.len(),
        // Nothing spent yet is a real zero only when every model has a price.
        cost: (!has_unpriced_model(plan)).then_some(0.0),
        ..Default::default()
    };
    if let Some(n) = opts.stop_after {
        jobs.truncate(n);
    }
    Ok((run_dir, writer, jobs, summary))
}

/// Completes at each heartbeat; never without one.
async fn beat(tick: Option<&mut tokio::time::Interval>) {
    match tick {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// `3/1400 simulations done · 4 running · 0 failed · 2 HTTP failures · 1 restart · cost
/// $0.0123`: what the run has done of its `total` simulations, every count with its noun.
fn progress_line(s: &RunSummary, total: u64, concurrency: usize) -> String {
    let running = (total as usize - s.completed).min(concurrency);
    let failures: u64 = s.http_failures.values().sum();
    format!(
        "{}/{} done · {running} running · {} failed · {} · {} · cost {}",
        s.completed,
        count(total, "simulation"),
        s.infra_errors,
        count(failures, "HTTP failure"),
        count(s.restarts, "restart"),
        format_cost(s.cost)
    )
}

impl RunSummary {
    /// Counts one finished record.
    fn add(&mut self, record: &SimulationRecord) {
        self.completed += 1;
        self.infra_errors += usize::from(record.is_infra_error());
        self.successes += usize::from(record.succeeded());
        let a = &record.attempts;
        self.http_requests += a.http_requests;
        for (cause, n) in &a.http_failures {
            *self.http_failures.entry(cause.clone()).or_default() += n;
        }
        self.restarts += a.restarts.len();
        self.discarded.add(&a.discarded);
        let restarts = a.restarts.iter().flat_map(|r| &r.usage);
        for (role, u) in record.usage.iter().chain(restarts) {
            if u.truncated > 0 || u.truncation_retries > 0 {
                let t = self.truncated.entry(role.clone()).or_default();
                t.replies += u.truncated;
                t.retried += u.truncation_retries;
            }
        }
        // The records say what was spent: from the first one on, the sum of theirs.
        let mut spent = RoleUsage {
            cost: if self.completed == 1 {
                Some(0.0)
            } else {
                self.cost
            },
            calls: 1,
            ..Default::default()
        };
        for u in record.usage.values().chain([&a.discarded]) {
            spent.add(u);
        }
        self.cost = spent.cost;
    }
}

/// Whether some model of the plan (an agent, the user simulator, the judge, a verifier) is
/// called over HTTP without a price: until records say otherwise, the run's cost is unknown.
fn has_unpriced_model(plan: &RunPlan) -> bool {
    let cfg = &plan.cfg;
    let agents = plan.agents.iter().map(|a| &a.section);
    let verifiers = plan.axes.verifiers.iter().filter_map(|v| v.model.as_ref());
    agents
        .chain([&cfg.models.user])
        .chain(cfg.models.judge.as_ref())
        .chain(verifiers)
        .any(|m| !m.is_sim() && cfg.llm.prices.get(&m.model).is_none())
}

/// Dollars with four decimals, or `unknown`.
pub fn format_cost(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!("${c:.4}"),
        None => "unknown".into(),
    }
}

/// What to check after a fatal model error: the key variable, the model name, the endpoint.
fn fatal_hint(cfg: &RunConfig, e: &AttemptError) -> String {
    let Some((provider, model)) = e.llm().and_then(provider_and_model) else {
        return "check the config's credentials and model names".into();
    };
    let p = cfg.llm.provider(provider).ok();
    let key = match p.as_ref().and_then(|p| p.api_key_env.clone()) {
        Some(var) => format!("the API key in `{var}` (api_key_env of provider `{provider}`)"),
        None => format!("provider `{provider}`'s api_key_env (none is set, so no key is sent)"),
    };
    let url = p.map(|p| p.resolved_base_url()).unwrap_or_default();
    format!("check {key}, the model name `{model}` and the base URL `{url}`")
}

fn provider_and_model(e: &LlmError) -> Option<(&str, &str)> {
    match e {
        LlmError::Rejected {
            provider, model, ..
        }
        | LlmError::RateLimited {
            provider, model, ..
        }
        | LlmError::Server {
            provider, model, ..
        } => Some((provider, model)),
        _ => None,
    }
}

/// `tauguard run <config> --resume --out <dir>` (with the shard, when one was run).
fn resume_command(cfg: &RunConfig, opts: &RunOptions, out: &std::path::Path) -> String {
    let config = cfg
        .source
        .as_ref()
        .map_or_else(|| "CONFIG".into(), |p| p.display().to_string());
    let shard = opts
        .shard
        .map(|s| format!(" --shard {s}"))
        .unwrap_or_default();
    format!(
        "tauguard run {config} --resume --out {}{shard}",
        out.display()
    )
}

/// Completes when `interrupt` is triggered; never without one.
async fn interrupted(interrupt: Option<&Interrupt>) {
    match interrupt {
        Some(i) => i.triggered().await,
        None => std::future::pending().await,
    }
}

/// Completes when `watch` trips; never without one.
async fn tripped(watch: Option<&ConnectWatch>) {
    match watch {
        Some(w) => w.tripped().await,
        None => std::future::pending().await,
    }
}

/// Unix seconds, as records' `started_at` gives them.
pub(crate) fn now_stamp() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}", d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_gives_each_count_its_noun() {
        let mut s = RunSummary {
            cost: None,
            ..Default::default()
        };
        assert_eq!(
            progress_line(&s, 1, 4),
            "0/1 simulation done · 1 running · 0 failed · 0 HTTP failures · 0 restarts · cost unknown"
        );
        s.completed = 1;
        s.restarts = 1;
        s.http_failures.insert("timeout".into(), 1);
        s.cost = Some(0.5);
        assert_eq!(
            progress_line(&s, 1400, 4),
            "1/1400 simulations done · 4 running · 0 failed · 1 HTTP failure · 1 restart · cost $0.5000"
        );
    }
}
