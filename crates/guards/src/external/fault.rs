//! What can go wrong between tauguard and an external guard, and how each fault becomes a
//! fail-mode decision: a typed cause the metrics count, and the raw reply (or exit status and
//! stderr) in the event's `info`, so no fault is silent.

use serde_json::{Value, json};
use tauguard_core::record::{FailCause, FailReason};

/// One failed exchange with an external guard.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// No reply within the timeout.
    Timeout { secs: f64, orphans: Vec<String> },
    /// The process ended (or could not be written to, or could not be restarted).
    Crash { detail: String },
    /// The restart cap was reached: no process runs any more.
    RestartLimit { restarts: u32, last: String },
    /// A line that is not JSON.
    Malformed { raw: String },
    /// JSON that the protocol refuses (the message names the field).
    OutOfSchema { raw: String, problem: String },
    /// A reply carrying another request's id (or none).
    WrongId { raw: String, problem: String },
    /// A line no open request claims while several were open: it cannot be told whose it
    /// was, so every open request fails on it and the process is restarted.
    Unclaimed { raw: String, open: usize },
    /// An HTTP guard answered with an error status.
    Http { status: u16, body: String },
}

impl Fault {
    /// The fault's name in records (`info.external.fault`).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Fault::Timeout { .. } => "timeout",
            Fault::Crash { .. } => "crash",
            Fault::RestartLimit { .. } => "restart_limit",
            Fault::Malformed { .. } => "malformed",
            Fault::OutOfSchema { .. } => "out_of_schema",
            Fault::WrongId { .. } => "wrong_id",
            Fault::Unclaimed { .. } => "unclaimed_line",
            Fault::Http { .. } => "http_error",
        }
    }

    /// The typed cause an event records: a timeout is `timeout`, a process that is gone is
    /// `connection` (no exchange took place), a reply that is unusable is `invalid_response`.
    pub(crate) fn cause(&self) -> FailCause {
        if let Fault::Http { status, .. } = self {
            return FailCause {
                reason: FailReason::HttpError,
                http_status: Some(*status),
            };
        }
        let reason = match self {
            Fault::Http { .. } => FailReason::HttpError,
            Fault::Timeout { .. } => FailReason::Timeout,
            Fault::Crash { .. } | Fault::RestartLimit { .. } => FailReason::Connection,
            Fault::Malformed { .. }
            | Fault::OutOfSchema { .. }
            | Fault::WrongId { .. }
            | Fault::Unclaimed { .. } => FailReason::InvalidResponse,
        };
        FailCause {
            reason,
            http_status: None,
        }
    }

    /// One line saying what happened.
    pub(crate) fn describe(&self) -> String {
        match self {
            Fault::Timeout { secs, .. } => format!("no reply within {secs:.1} s"),
            Fault::Crash { detail } => detail.clone(),
            Fault::RestartLimit { restarts, last } => format!(
                "the guard process was restarted {restarts} times, the cap; not restarted again (last failure: {last})"
            ),
            Fault::Malformed { .. } => "the reply is not JSON".into(),
            Fault::OutOfSchema { problem, .. } | Fault::WrongId { problem, .. } => problem.clone(),
            Fault::Http { status, .. } => format!("the guard answered HTTP {status}"),
            Fault::Unclaimed { open, .. } => format!(
                "the guard wrote a line that no open request claims while {open} were open \
                 (not JSON, or an id none of them has); each failed on it and the process is \
                 restarted"
            ),
        }
    }

    /// The event's `info.external` object: the fault, what it says and the raw reply.
    pub(crate) fn info(&self, guard: &super::ExternalProvenance) -> Value {
        let raw = match self {
            Fault::Malformed { raw }
            | Fault::OutOfSchema { raw, .. }
            | Fault::WrongId { raw, .. }
            | Fault::Unclaimed { raw, .. }
            | Fault::Http { body: raw, .. } => Some(raw.clone()),
            _ => None,
        };
        let orphans = match self {
            Fault::Timeout { orphans, .. } if !orphans.is_empty() => Some(orphans.clone()),
            _ => None,
        };
        json!({"external": {
            "fault": self.kind(),
            "message": self.describe(),
            "raw_reply": raw,
            "unclaimed_lines": orphans,
            "source": guard.source(),
            "version": guard.version,
        }})
    }
}
