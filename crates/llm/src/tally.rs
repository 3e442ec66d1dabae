//! What happened inside model calls, for whoever runs them: HTTP requests sent, failed
//! exchanges by cause, calls that gave up and what those were billed for ([`CallStats`]), and a
//! watch on consecutive connection failures ([`ConnectWatch`]).
//!
//! A caller opens a [`CallTally`] and runs its calls inside [`CallTally::scope`] (the
//! orchestrator opens one per simulation); `http.rs` and `remote.rs` report into the tally of
//! the task they run on. Calls made outside any scope report nowhere. A scope covers a tokio
//! task's future, so concurrent simulations on one runtime keep separate tallies.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use tauguard_core::message::Usage;

/// Counts of one scope's model calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallStats {
    /// HTTP requests sent (every attempt of every call).
    pub requests: u64,
    /// Failed exchanges by cause ([`crate::LlmError::kind_name`]: `rate_limited`,
    /// `server_error`, `timeout`, `connection`, `invalid_response`, `rejected`, ...). Each was
    /// either retried or ended its call.
    pub failures: BTreeMap<&'static str, u64>,
    /// Calls that failed after their attempts (the caller saw an error).
    pub failed_calls: u64,
    /// Tokens the failed calls' exchanges reported (billed, then thrown away).
    pub failed_usage: Usage,
    /// Their price; `None` once one of them had no price.
    pub failed_cost: Option<f64>,
}

impl CallStats {
    fn add_failed_spend(&mut self, usage: &Usage, cost: Option<f64>) {
        if *usage == Usage::default() {
            return;
        }
        let first = self.failed_usage == Usage::default();
        self.failed_usage.prompt_tokens += usage.prompt_tokens;
        self.failed_usage.completion_tokens += usage.completion_tokens;
        self.failed_usage.cached_prompt_tokens += usage.cached_prompt_tokens;
        self.failed_cost = match (first, self.failed_cost, cost) {
            (true, _, c) => c,
            (false, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// Consecutive attempts that could not connect (refused, DNS, connect time-out), across every
/// scope sharing the watch. Any attempt that reaches a server resets the count. Once the count
/// reaches the limit the watch trips, and stays tripped.
#[derive(Debug)]
pub struct ConnectWatch {
    limit: u32,
    consecutive: AtomicU32,
    /// `provider \`name\` at <base URL>` of the last failure.
    last: Mutex<Option<String>>,
    tripped: tokio::sync::Notify,
}

impl ConnectWatch {
    /// A watch that trips after `limit` consecutive connection failures (`0` = never).
    pub fn new(limit: u32) -> Arc<ConnectWatch> {
        Arc::new(ConnectWatch {
            limit,
            consecutive: AtomicU32::new(0),
            last: Mutex::new(None),
            tripped: tokio::sync::Notify::new(),
        })
    }

    /// The configured limit.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// The endpoint of the last connection failure once the watch has tripped.
    pub fn tripped_at(&self) -> Option<String> {
        if self.limit == 0 || self.consecutive.load(Ordering::SeqCst) < self.limit {
            return None;
        }
        self.last.lock().ok().and_then(|l| l.clone())
    }

    /// Completes when the watch trips (at once if it already has).
    pub async fn tripped(&self) {
        loop {
            let notified = self.tripped.notified();
            if self.tripped_at().is_some() {
                return;
            }
            notified.await;
        }
    }

    fn failed(&self, endpoint: String) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(endpoint);
        }
        let n = self.consecutive.fetch_add(1, Ordering::SeqCst) + 1;
        if self.limit > 0 && n >= self.limit {
            self.tripped.notify_waiters();
        }
    }

    fn reached(&self) {
        if self.limit == 0 || self.consecutive.load(Ordering::SeqCst) < self.limit {
            self.consecutive.store(0, Ordering::SeqCst);
        }
    }
}

/// The tally of one scope, and the run-wide connection watch it reports to.
#[derive(Debug, Clone)]
pub struct CallTally {
    stats: Arc<Mutex<CallStats>>,
    watch: Option<Arc<ConnectWatch>>,
}

tokio::task_local! {
    static CURRENT: CallTally;
}

impl CallTally {
    /// An empty tally reporting connection failures to `watch`, when given.
    pub fn new(watch: Option<Arc<ConnectWatch>>) -> CallTally {
        CallTally {
            stats: Arc::new(Mutex::new(CallStats::default())),
            watch,
        }
    }

    /// Runs `fut` with this tally as the one its model calls report to.
    pub async fn scope<F: Future>(&self, fut: F) -> F::Output {
        CURRENT.scope(self.clone(), fut).await
    }

    /// What was counted so far.
    pub fn stats(&self) -> CallStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

fn with_current(f: impl FnOnce(&CallTally)) {
    let _ = CURRENT.try_with(|t| f(t));
}

fn with_stats(f: impl FnOnce(&mut CallStats)) {
    with_current(|t| {
        if let Ok(mut s) = t.stats.lock() {
            f(&mut s);
        }
    });
}

/// One HTTP request is about to be sent.
pub(crate) fn request_sent() {
    with_stats(|s| s.requests += 1);
}

/// One exchange failed with an error of kind `cause`.
pub(crate) fn exchange_failed(cause: &'static str) {
    with_stats(|s| *s.failures.entry(cause).or_default() += 1);
}

/// One call gave up; its exchanges had reported `usage`, priced `cost`.
pub(crate) fn call_failed(usage: &Usage, cost: Option<f64>) {
    with_stats(|s| {
        s.failed_calls += 1;
        s.add_failed_spend(usage, cost);
    });
}

/// An attempt could not connect to `endpoint`.
pub(crate) fn connect_failed(endpoint: impl FnOnce() -> String) {
    with_current(|t| {
        if let Some(w) = &t.watch {
            w.failed(endpoint());
        }
    });
}

/// An attempt reached the server (whatever it answered).
pub(crate) fn server_reached() {
    with_current(|t| {
        if let Some(w) = &t.watch {
            w.reached();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn scopes_count_apart_and_the_watch_trips_on_consecutive_failures() {
        let watch = ConnectWatch::new(3);
        let (a, b) = (
            CallTally::new(Some(watch.clone())),
            CallTally::new(Some(watch.clone())),
        );
        a.scope(async {
            request_sent();
            exchange_failed("timeout");
            connect_failed(|| "x".into());
            connect_failed(|| "x".into());
            server_reached();
        })
        .await;
        assert_eq!(watch.tripped_at(), None);
        b.scope(async {
            request_sent();
            request_sent();
            exchange_failed("rate_limited");
            call_failed(
                &Usage {
                    prompt_tokens: 3,
                    ..Default::default()
                },
                Some(0.5),
            );
            for _ in 0..3 {
                connect_failed(|| "provider `p` at http://h".into());
            }
        })
        .await;
        request_sent(); // outside any scope: counted nowhere
        assert_eq!(
            watch.tripped_at().as_deref(),
            Some("provider `p` at http://h")
        );
        watch.tripped().await;
        let (sa, sb) = (a.stats(), b.stats());
        assert_eq!((sa.requests, sa.failures.get("timeout")), (1, Some(&1)));
        assert_eq!((sb.requests, sb.failed_calls), (2, 1));
        assert_eq!(sb.failures.get("rate_limited"), Some(&1));
        assert_eq!(
            (sb.failed_usage.prompt_tokens, sb.failed_cost),
            (3, Some(0.5))
        );
    }
}
