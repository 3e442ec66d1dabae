//! The run as a batch: build the plan, open the output, start simulations as concurrency
//! allows, append each record as it finishes, and report progress (a bar on a terminal, a
//! line every few seconds otherwise). Failures are data: a simulation that keeps failing after
//! its retries becomes an `infrastructure_error` record. Two failures end the run instead,
//! keeping the records written so far: a fatal model error (credentials, permissions, unknown
//! model — no later call can succeed; that simulation is not recorded, so `--resume` redoes
//! it), and an outage: `run.max_consecutive_connect_failures` attempts in a row that could not
//! connect, or as many server errors (`max_consecutive_server_errors`), calls rate-limited
//! beyond their retries (`max_consecutive_rate_limited`) or time-outs and stalls
//! (`max_consecutive_timeouts`) with no 2xx answer between, counted across simulations by one
//! run-wide watch — so a dead server costs a few attempts, not every simulation's retries,
//! and `--resume` finishes the run once it is back.

use crate::assemble::assemble_record;
use crate::attempt::{AttemptError, run_attempts};
use crate::config::RunConfig;
use crate::interrupt::{InFlight, Interrupt};
use crate::plan::{RunPlan, SimIndex};
use crate::records::RecordsError;
use crate::run_dir::RunDir;
use crate::shard::Shard;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tauguard_core::count;
use tauguard_core::record::{RoleUsage, SimulationRecord};
use tauguard_llm::{CallTally, ConnectWatch, LlmError, Outage};

pub use crate::run_error::RunError;

/// Options from the command line.
#[derive(Clone, Default)]
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

/// Runs a config to completion (or to `stop_after`).
pub async fn run(cfg: RunConfig, opts: RunOptions) -> Result<RunSummary, RunError> {
    let plan = Arc::new(RunPlan::build(cfg, &opts)?);
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("results").join(&plan.cfg.run.name));
    let cells = plan
        .cells
        .iter()
        .map(|c| (c.id.as_str(), (c.hash.as_str(), &c.spec)))
        .collect();
    let (_run_dir, writer, done) = RunDir::open(
        &out_dir,
        &plan.cfg,
        &cells,
        opts.resume,
        !opts.keep_infra,
        opts.shard,
    )?;
    // The whole plan, in a shard's directory too: what `merge` counts a union against.
    crate::plan_file::PlanFile::of(&plan).write(&out_dir)?;
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
    let mut summary = RunSummary {
        out_dir: out_dir.clone(),
        shard: opts.shard,
        planned,
        skipped: planned - jobs.len(),
        // Nothing spent yet is a real zero only when every model has a price.
        cost: (!has_unpriced_model(&plan)).then_some(0.0),
        ..Default::default()
    };
    if let Some(n) = opts.stop_after {
        jobs.truncate(n);
    }
    let concurrency = plan.cfg.run.concurrency;
    let watch = plan
        .models
        .factory
        .is_some()
        .then(|| ConnectWatch::with_limits(plan.cfg.run.outage_limits()));
    let writer = Arc::new(tokio::sync::Mutex::new(writer));
    let mut set = tokio::task::JoinSet::new();
    // Set by a simulation that ends the run, before it frees its slot: no later one starts.
    let stop = Arc::new(AtomicBool::new(false));
    // Records appended by this invocation, joined or not: what an outage stop reports.
    let appended = Arc::new(AtomicUsize::new(0));
    // Simulations start as slots free up, so memory follows `concurrency`, not the size of
    // the grid.
    let total = jobs.len() as u64;
    let mut pending = jobs.into_iter().enumerate();
    // The tallies of simulations without a record yet: what an early stop writes out.
    let in_flight = Arc::new(InFlight::default());
    let spawn = |set: &mut tokio::task::JoinSet<_>, (n, at): (usize, SimIndex)| {
        let (plan, writer, watch, stop, appended, in_flight) = (
            plan.clone(),
            writer.clone(),
            watch.clone(),
            stop.clone(),
            appended.clone(),
            in_flight.clone(),
        );
        set.spawn(async move {
            if stop.load(Ordering::SeqCst) || has_tripped(&watch) {
                return Ok(Finished::Skipped);
            }
            let tally = CallTally::new(watch.clone());
            in_flight.start(n, at, tally.clone());
            match simulate(&plan, at, tally).await {
                Finished::Record(record) => {
                    // Checked under the writer's lock, which an early stop takes to count
                    // the records: once the run is stopping nothing more is written (the
                    // simulation is left to `--resume`, its spend to `interrupted.jsonl`),
                    // so the count it reports is exact.
                    let mut w = writer.lock().await;
                    if has_tripped(&watch) || stop.load(Ordering::SeqCst) {
                        return Ok(Finished::Skipped);
                    }
                    w.append(&record)?;
                    in_flight.finish(n);
                    appended.fetch_add(1, Ordering::SeqCst);
                    Ok(Finished::Record(record))
                }
                other => {
                    stop.store(true, Ordering::SeqCst);
                    Ok::<Finished, RecordsError>(other)
                }
            }
        });
    };
    for at in pending.by_ref().take(concurrency) {
        spawn(&mut set, at);
    }
    // Drawn only on a terminal; elsewhere a plain line every few seconds.
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {msg} · eta {eta}")
            .expect("static template parses"),
    );
    let plain = !std::io::stderr().is_terminal();
    let every = Duration::from_secs(PROGRESS_EVERY_SECS);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let progress = |s: &RunSummary| progress_line(s, total, concurrency);
    let interrupt = opts.interrupt.clone();
    // Stops the run: nothing new starts or is recorded; the spend of the simulations in
    // flight goes to `interrupted.jsonl`. Returns the records this invocation appended, and
    // how many simulations were cut off with what cost.
    let stop_now = |set: &mut tokio::task::JoinSet<_>, by: String| {
        stop.store(true, Ordering::SeqCst);
        set.abort_all();
        bar.finish_and_clear();
        let (writer, appended, in_flight, plan, out) = (
            writer.clone(),
            appended.clone(),
            in_flight.clone(),
            plan.clone(),
            out_dir.clone(),
        );
        async move {
            let _no_more_records = writer.lock().await;
            let cut = in_flight.write(&plan, &out, &by)?;
            Ok::<_, RunError>((appended.load(Ordering::SeqCst), cut))
        }
    };
    loop {
        let joined = tokio::select! {
            j = set.join_next() => match j {
                Some(j) => j,
                None => break,
            },
            () = interrupted(interrupt.as_deref()) => {
                let cause = interrupt.as_ref().and_then(|i| i.cause()).unwrap_or_default();
                let (completed, (n_cut, cut_cost)) = stop_now(&mut set, cause.clone()).await?;
                let spent = summary.cost.zip(cut_cost).map(|(a, b)| a + b);
                return Err(RunError::Interrupted(Box::new(crate::interrupt::Interrupted {
                    cause,
                    kept: format!(
                        "{} of {}",
                        summary.skipped + completed,
                        count(planned, "simulation")
                    ),
                    completed,
                    in_flight: n_cut,
                    in_flight_cost: cut_cost,
                    cost: spent,
                    resume: resume_command(&plan.cfg, &opts, &out_dir),
                    out: out_dir,
                })));
            }
            () = tripped(watch.as_deref()) => {
                let (completed, _) = stop_now(&mut set, "outage".into()).await?;
                let w = watch.as_deref().expect("only a watch trips");
                let trip = w.trip().expect("the watch tripped");
                let resume = resume_command(&plan.cfg, &opts, &out_dir);
                let (limit, endpoint) = (trip.limit, trip.endpoint);
                return Err(match trip.cause {
                    Outage::Connect => RunError::ConnectFailures {
                        limit,
                        endpoint,
                        completed,
                        out: out_dir,
                        resume,
                    },
                    cause => RunError::Outage {
                        cause,
                        limit,
                        endpoint,
                        completed,
                        out: out_dir,
                        resume,
                    },
                });
            }
            _ = tick.tick(), if plain => {
                eprintln!("progress: {}", progress(&summary));
                continue;
            }
        };
        if let Some(at) = pending.next() {
            spawn(&mut set, at);
        }
        let record = match joined.expect("simulation task panicked")? {
            Finished::Record(r) => r,
            Finished::Skipped => continue,
            Finished::Fatal(e) => {
                stop_now(&mut set, "fatal_model_error".into()).await?;
                return Err(RunError::ModelFatal {
                    hint: fatal_hint(&plan.cfg, &e),
                    error: e.to_string(),
                    completed: summary.completed,
                    out: out_dir,
                });
            }
        };
        summary.add(&record);
        bar.inc(1);
        bar.set_message(progress(&summary));
    }
    bar.finish_and_clear();
    // Every record on disk before the run reports success (the early exits above keep
    // theirs through the writer's drop, which syncs too).
    writer.lock().await.finish()?;
    if opts.shard.is_none() {
        crate::plan_file::settle_merge(&out_dir)?;
    }
    summary.cache_stats = plan
        .models
        .factory
        .as_ref()
        .and_then(|f| f.cache_stats())
        .map(|s| s.to_string());
    Ok(summary)
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

/// Seconds between progress lines when stderr is not a terminal.
const PROGRESS_EVERY_SECS: u64 = 5;

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

/// Whether the run's outage watch has tripped.
fn has_tripped(watch: &Option<Arc<ConnectWatch>>) -> bool {
    watch.as_ref().is_some_and(|w| w.trip().is_some())
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

/// A simulation's end: its record, or a fatal error that ends the run; or never started,
/// because the run is ending.
enum Finished {
    Record(Box<SimulationRecord>),
    Fatal(AttemptError),
    Skipped,
}

/// One simulation: its attempts, then its record (none after a fatal error).
async fn simulate(plan: &RunPlan, at: SimIndex, tally: CallTally) -> Finished {
    let started_at = now_stamp();
    let t0 = Instant::now();
    let mut attempts = run_attempts(plan, at, tally).await;
    match attempts.outcome {
        Err(f) if f.error.is_fatal() => Finished::Fatal(f.error),
        outcome => {
            attempts.outcome = outcome;
            let wall = t0.elapsed().as_secs_f64();
            Finished::Record(Box::new(assemble_record(
                plan, at, attempts, started_at, wall,
            )))
        }
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
