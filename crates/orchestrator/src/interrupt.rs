//! Stopping a run part-way without losing its accounting. The binary turns Ctrl-C and
//! SIGTERM into an [`Interrupt`]; the runner then starts nothing new, stops the simulations
//! in flight, and writes what each had spent to the run directory's `interrupted.jsonl`
//! ([`tauguard_core::interrupted`]) before it returns, as it does when an outage or a fatal
//! model error ends the run. The requests of an unfinished simulation were billed whatever
//! happens to its trajectory; this file is where they stay counted.

use crate::plan::{RunPlan, SimIndex};
use crate::records::RecordsError;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauguard_core::count;
use tauguard_core::interrupted::{INTERRUPTED_FILE, InterruptedAttempt};
use tauguard_llm::CallTally;

/// A request to stop a run, from outside it (a signal handler, a test).
#[derive(Debug, Default)]
pub struct Interrupt {
    cause: Mutex<Option<String>>,
    notify: tokio::sync::Notify,
}

impl Interrupt {
    /// Asks the run to stop; `cause` names why (`SIGINT`, `SIGTERM`). The first cause wins.
    pub fn trigger(&self, cause: &str) {
        if let Ok(mut c) = self.cause.lock() {
            c.get_or_insert_with(|| cause.to_string());
        }
        self.notify.notify_waiters();
    }

    /// Why the run was asked to stop, once it has been.
    pub fn cause(&self) -> Option<String> {
        self.cause.lock().ok().and_then(|c| c.clone())
    }

    /// Completes once [`Interrupt::trigger`] has been called (at once if it already was).
    pub async fn triggered(&self) {
        loop {
            let notified = self.notify.notified();
            if self.cause().is_some() {
                return;
            }
            notified.await;
        }
    }
}

/// The tallies of the simulations started and not yet recorded, by start order.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    running: Mutex<BTreeMap<usize, (SimIndex, CallTally)>>,
}

impl InFlight {
    pub(crate) fn start(&self, n: usize, at: SimIndex, tally: CallTally) {
        if let Ok(mut r) = self.running.lock() {
            r.insert(n, (at, tally));
        }
    }

    /// The simulation has its record (or never made a request): nothing of it is in flight.
    pub(crate) fn finish(&self, n: usize) {
        if let Ok(mut r) = self.running.lock() {
            r.remove(&n);
        }
    }

    /// Appends one line per simulation still in flight that had sent a request to
    /// `out/interrupted.jsonl`, synced. Call it holding the record writer's lock, so no record
    /// of these simulations can follow. Returns the lines written and their total cost
    /// (`None` when one is unknown).
    pub(crate) fn write(
        &self,
        plan: &RunPlan,
        out: &Path,
        stopped_by: &str,
    ) -> Result<(usize, Option<f64>), RecordsError> {
        let running = self.running.lock().map(|r| r.clone()).unwrap_or_default();
        let stopped_at = crate::runner::now_stamp();
        let lines: Vec<InterruptedAttempt> = running
            .values()
            .filter_map(|(at, tally)| {
                let stats = tally.stats();
                (stats.requests > 0).then(|| {
                    let (cell_id, task_id, trial) = plan.key(*at);
                    InterruptedAttempt {
                        run_id: plan.run_id.clone(),
                        config_hash: plan.config_hash.clone(),
                        cell_id,
                        task_id,
                        trial,
                        stopped_by: stopped_by.to_string(),
                        stopped_at: stopped_at.clone(),
                        http_requests: stats.requests,
                        http_failures: stats
                            .failures
                            .iter()
                            .map(|(k, v)| (k.to_string(), *v))
                            .collect(),
                        cost: stats.billed_cost(),
                        usage_by_model: stats.billed,
                    }
                })
            })
            .collect();
        let cost = lines.iter().try_fold(0.0, |sum, l| Some(sum + l.cost?));
        if lines.is_empty() {
            return Ok((0, cost));
        }
        let path = out.join(INTERRUPTED_FILE);
        let io = |e| RecordsError::Io {
            path: path.clone(),
            cause: e,
        };
        let mut text = String::new();
        for l in &lines {
            text.push_str(&serde_json::to_string(l).expect("plain data serializes"));
            text.push('\n');
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        Ok((lines.len(), cost))
    }
}

/// What an interrupted run kept and spent: the closing summary of Ctrl-C.
#[derive(Debug)]
pub struct Interrupted {
    /// `SIGINT` or `SIGTERM`.
    pub cause: String,
    /// `N of M simulations`: complete records the output holds for the plan (this shard's).
    pub kept: String,
    /// Records this invocation appended.
    pub completed: usize,
    /// Simulations cut off with requests sent, and what they had spent.
    pub in_flight: usize,
    pub in_flight_cost: Option<f64>,
    /// This invocation's spend: its records and the simulations cut off.
    pub cost: Option<f64>,
    pub out: PathBuf,
    /// The command that continues the run.
    pub resume: String,
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::runner::format_cost;
        write!(
            f,
            "run interrupted by {}: {} kept in `{}` ({} finished now); spent by this invocation {}",
            self.cause,
            self.kept,
            self.out.display(),
            self.completed,
            format_cost(self.cost)
        )?;
        if self.in_flight > 0 {
            write!(
                f,
                ", of it {} for {} cut off (`{INTERRUPTED_FILE}`)",
                format_cost(self.in_flight_cost),
                count(self.in_flight, "simulation")
            )?;
        }
        write!(f, "\n  hint: resume with `{}`", self.resume)
    }
}
