//! What a simulation had spent when its run stopped before its record was written: one line
//! of a run directory's `interrupted.jsonl`. A record holds everything its own simulation
//! spent, its discarded attempts included; a simulation cut off by Ctrl-C, SIGTERM or an
//! outage stop has no record, so without this line the requests it made — billed by the
//! provider all the same — would appear nowhere. `--resume` runs the simulation again from
//! the start; its line stays, because the money stays spent.

use crate::message::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The file of a run directory holding [`InterruptedAttempt`] lines.
pub const INTERRUPTED_FILE: &str = "interrupted.jsonl";

/// One simulation in flight when its run stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptedAttempt {
    pub run_id: String,
    pub config_hash: String,
    pub cell_id: String,
    pub task_id: String,
    pub trial: u32,
    /// Why the run stopped: `SIGINT`, `SIGTERM`, `outage` or `fatal_model_error`.
    pub stopped_by: String,
    /// Unix seconds when the run stopped.
    pub stopped_at: String,
    /// HTTP requests the simulation had sent, every attempt and role included.
    pub http_requests: u64,
    /// Failed exchanges by cause, as in a record's `attempts.http_failures`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub http_failures: BTreeMap<String, u64>,
    /// Tokens the servers reported per model, answered calls and failed ones alike.
    #[serde(default)]
    pub usage_by_model: BTreeMap<String, BilledUsage>,
    /// Their price in US dollars; `None` when a model that billed tokens had no price.
    pub cost: Option<f64>,
}

/// The tokens one model's server reported for a simulation's calls, and their price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BilledUsage {
    pub calls: u64,
    pub usage: Usage,
    pub cost: Option<f64>,
}
