//! The simulations of one run in flight: what they share (the plan, the record writer, the
//! outage watch, the stop flag and the tallies an early stop reads), starting each one, and
//! the errors an interrupt, an outage or a fatal model error end the run with.

use super::{Progress, RunError, RunOptions, RunSummary, fatal_hint, now_stamp, resume_command};
use crate::assemble::assemble_record;
use crate::attempt::{AttemptError, run_attempts};
use crate::interrupt::InFlight;
use crate::plan::{RunPlan, SimIndex};
use crate::records::{RecordWriter, RecordsError};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;
use tauguard_core::count;
use tauguard_core::record::SimulationRecord;
use tauguard_llm::{CallTally, ConnectWatch, Outage};

pub(super) type Jobs = tokio::task::JoinSet<Result<Finished, RecordsError>>;

/// What the simulations of a run share: the plan, the record writer, the outage watch, and
/// the flags and tallies an early stop reads.
pub(super) struct Batch {
    plan: Arc<RunPlan>,
    writer: Arc<tokio::sync::Mutex<RecordWriter>>,
    pub(super) watch: Option<Arc<ConnectWatch>>,
    /// Set by a simulation that ends the run, before it frees its slot: no later one starts.
    stop: Arc<AtomicBool>,
    /// Records appended by this invocation, joined or not: what an outage stop reports.
    appended: Arc<AtomicUsize>,
    /// The tallies of simulations without a record yet: what an early stop writes out.
    in_flight: Arc<InFlight>,
    progress: Option<Arc<dyn Progress>>,
    out_dir: PathBuf,
}

impl Batch {
    pub(super) fn new(
        plan: Arc<RunPlan>,
        writer: RecordWriter,
        opts: &RunOptions,
        out_dir: PathBuf,
    ) -> Self {
        let watch = plan
            .models
            .factory
            .is_some()
            .then(|| ConnectWatch::with_limits(plan.cfg.run.outage_limits()));
        Batch {
            plan,
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            watch,
            stop: Arc::new(AtomicBool::new(false)),
            appended: Arc::new(AtomicUsize::new(0)),
            in_flight: Arc::new(InFlight::default()),
            progress: opts.progress.clone(),
            out_dir,
        }
    }

    /// Starts simulation `n` of the run, which appends its record unless the run is stopping.
    pub(super) fn spawn(&self, set: &mut Jobs, (n, at): (usize, SimIndex)) {
        let (plan, writer, watch, stop, appended, in_flight) = (
            self.plan.clone(),
            self.writer.clone(),
            self.watch.clone(),
            self.stop.clone(),
            self.appended.clone(),
            self.in_flight.clone(),
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
    }

    /// Stops the run: nothing new starts or is recorded; the spend of the simulations in
    /// flight goes to `interrupted.jsonl`. Returns the records this invocation appended, and
    /// how many simulations were cut off with what cost.
    async fn stop_now(
        &self,
        set: &mut Jobs,
        by: &str,
    ) -> Result<(usize, (usize, Option<f64>)), RunError> {
        self.stop.store(true, Ordering::SeqCst);
        set.abort_all();
        if let Some(p) = &self.progress {
            p.finish();
        }
        let _no_more_records = self.writer.lock().await;
        let cut = self.in_flight.write(&self.plan, &self.out_dir, by)?;
        Ok((self.appended.load(Ordering::SeqCst), cut))
    }

    /// The run stopped by its interrupt (Ctrl-C, SIGTERM), with what it kept and spent.
    pub(super) async fn interrupted(
        &self,
        set: &mut Jobs,
        summary: &RunSummary,
        opts: &RunOptions,
    ) -> RunError {
        let interrupt = opts.interrupt.as_ref();
        let cause = interrupt.and_then(|i| i.cause()).unwrap_or_default();
        let (completed, (n_cut, cut_cost)) = match self.stop_now(set, &cause).await {
            Ok(stopped) => stopped,
            Err(e) => return e,
        };
        let spent = summary.cost.zip(cut_cost).map(|(a, b)| a + b);
        RunError::Interrupted(Box::new(crate::interrupt::Interrupted {
            cause,
            kept: format!(
                "{} of {}",
                summary.skipped + completed,
                count(summary.planned, "simulation")
            ),
            completed,
            in_flight: n_cut,
            in_flight_cost: cut_cost,
            cost: spent,
            resume: resume_command(&self.plan.cfg, opts, &self.out_dir),
            out: self.out_dir.clone(),
        }))
    }

    /// The run stopped by its outage watch.
    pub(super) async fn outage(&self, set: &mut Jobs, opts: &RunOptions) -> RunError {
        let completed = match self.stop_now(set, "outage").await {
            Ok((completed, _)) => completed,
            Err(e) => return e,
        };
        let w = self.watch.as_deref().expect("only a watch trips");
        let trip = w.trip().expect("the watch tripped");
        let resume = resume_command(&self.plan.cfg, opts, &self.out_dir);
        let (limit, endpoint, out) = (trip.limit, trip.endpoint, self.out_dir.clone());
        match trip.cause {
            Outage::Connect => RunError::ConnectFailures {
                limit,
                endpoint,
                completed,
                out,
                resume,
            },
            cause => RunError::Outage {
                cause,
                limit,
                endpoint,
                completed,
                out,
                resume,
            },
        }
    }

    /// The run stopped by a fatal model error.
    pub(super) async fn fatal(
        &self,
        set: &mut Jobs,
        summary: &RunSummary,
        e: AttemptError,
    ) -> RunError {
        if let Err(stopping) = self.stop_now(set, "fatal_model_error").await {
            return stopping;
        }
        RunError::ModelFatal {
            hint: fatal_hint(&self.plan.cfg, &e),
            error: Box::new(e),
            completed: summary.completed,
            out: self.out_dir.clone(),
        }
    }

    /// Every record on disk before the run reports success (the early exits keep theirs
    /// through the writer's drop, which syncs too), and the merge settled.
    pub(super) async fn finish(self, mut summary: RunSummary) -> Result<RunSummary, RunError> {
        if let Some(p) = &self.progress {
            p.finish();
        }
        self.writer.lock().await.finish()?;
        if summary.shard.is_none() {
            crate::plan_file::settle_merge(&self.out_dir)?;
        }
        summary.cache_stats = self
            .plan
            .models
            .factory
            .as_ref()
            .and_then(|f| f.cache_stats())
            .map(|s| s.to_string());
        Ok(summary)
    }
}

/// Whether the run's outage watch has tripped.
fn has_tripped(watch: &Option<Arc<ConnectWatch>>) -> bool {
    watch.as_ref().is_some_and(|w| w.trip().is_some())
}

/// A simulation's end: its record, or a fatal error that ends the run; or never started,
/// because the run is ending.
pub(super) enum Finished {
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
