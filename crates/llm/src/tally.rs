//! What happened inside model calls, for whoever runs them: HTTP requests sent, failed
//! exchanges by cause, calls that gave up and what those were billed for ([`CallStats`]), and a
//! run-wide watch on consecutive signs of an outage ([`ConnectWatch`]: connection failures,
//! server errors, calls rate-limited beyond their retries, time-outs and stalls), which lets
//! the caller stop a run against a server that is down instead of spending every
//! simulation's retries on it.
//!
//! A caller opens a [`CallTally`] and runs its calls inside [`CallTally::scope`] (the
//! orchestrator opens one per simulation); `http.rs` and `remote.rs` report into the tally of
//! the task they run on. Calls made outside any scope report nowhere. A scope covers a tokio
//! task's future, so concurrent simulations on one runtime keep separate tallies.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tauguard_core::interrupted::BilledUsage;
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
    /// Everything the servers reported billing in this scope, answered calls and failed ones
    /// alike, per model: what an interrupted simulation had spent when it was cut off, which
    /// no record holds.
    pub billed: BTreeMap<String, BilledUsage>,
}

/// Adds `usage` priced `cost` to a running sum whose price is `sum_cost`; `first` when the
/// sum is still empty (its price is then the new one, known or not).
fn add_spend(sum: &mut Usage, sum_cost: &mut Option<f64>, usage: &Usage, cost: Option<f64>) {
    let first = *sum == Usage::default();
    sum.prompt_tokens += usage.prompt_tokens;
    sum.completion_tokens += usage.completion_tokens;
    sum.cached_prompt_tokens += usage.cached_prompt_tokens;
    *sum_cost = match (first, *sum_cost, cost) {
        (true, _, c) => c,
        (false, Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
}

impl CallStats {
    fn add_failed_spend(&mut self, usage: &Usage, cost: Option<f64>) {
        if *usage == Usage::default() {
            return;
        }
        add_spend(&mut self.failed_usage, &mut self.failed_cost, usage, cost);
    }

    fn add_billed(&mut self, model: &str, usage: &Usage, cost: Option<f64>) {
        if *usage == Usage::default() {
            return;
        }
        let b = self.billed.entry(model.to_string()).or_default();
        b.calls += 1;
        add_spend(&mut b.usage, &mut b.cost, usage, cost);
    }

    /// The price of everything billed; `None` when some billed call had no price.
    pub fn billed_cost(&self) -> Option<f64> {
        self.billed
            .values()
            .try_fold(0.0, |sum, b| Some(sum + b.cost?))
    }
}

/// A kind of outage the run-wide watch counts, each with its own `[run]` limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// HTTP attempts that could not connect (refused, DNS, connect time-out).
    Connect,
    /// HTTP attempts answered with a server error (5xx, 408, 409).
    ServerErrors,
    /// Calls still rate-limited (HTTP 429) when their retries were spent.
    RateLimited,
    /// HTTP attempts that timed out, or stalled before the response headers.
    Timeouts,
}

impl Outage {
    const ALL: [Outage; 4] = [
        Outage::Connect,
        Outage::ServerErrors,
        Outage::RateLimited,
        Outage::Timeouts,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The `[run]` key that sets this kind's limit.
    pub fn config_key(self) -> &'static str {
        match self {
            Outage::Connect => "max_consecutive_connect_failures",
            Outage::ServerErrors => "max_consecutive_server_errors",
            Outage::RateLimited => "max_consecutive_rate_limited",
            Outage::Timeouts => "max_consecutive_timeouts",
        }
    }

    /// What was counted, in a sentence: `20 {what} in a row`.
    pub fn what(self) -> &'static str {
        match self {
            Outage::Connect => "HTTP attempts could not connect",
            Outage::ServerErrors => "HTTP attempts were answered with a server error (5xx)",
            Outage::RateLimited => "calls were still rate-limited (HTTP 429) after their retries",
            Outage::Timeouts => "HTTP attempts timed out or stalled before the response headers",
        }
    }
}

/// The limits of a [`ConnectWatch`], per kind of outage; `0` = never trips.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutageLimits {
    pub connect: u32,
    pub server_errors: u32,
    pub rate_limited: u32,
    pub timeouts: u32,
}

impl OutageLimits {
    fn of(&self, kind: Outage) -> u32 {
        match kind {
            Outage::Connect => self.connect,
            Outage::ServerErrors => self.server_errors,
            Outage::RateLimited => self.rate_limited,
            Outage::Timeouts => self.timeouts,
        }
    }
}

/// Why a watch tripped: the kind, its limit, and the endpoint of the last failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trip {
    pub cause: Outage,
    pub limit: u32,
    /// `provider \`name\` at <base URL>` (connection failures) or `model \`m\` of provider
    /// \`name\` at <base URL>` (the others).
    pub endpoint: String,
}

/// Consecutive outage signs across every scope sharing the watch, one count per [`Outage`]
/// kind: attempts that could not connect (any attempt that reaches a server resets that
/// count), and server errors, calls rate-limited beyond their retries, and time-outs or
/// stalls (an attempt answered with a 2xx status resets these three). Once a count reaches
/// its limit the watch trips, and stays tripped on that first cause.
#[derive(Debug)]
pub struct ConnectWatch {
    limits: OutageLimits,
    state: Mutex<WatchState>,
    tripped: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct WatchState {
    counts: [u32; 4],
    trip: Option<Trip>,
}

impl ConnectWatch {
    /// A watch that trips after `limit` consecutive connection failures (`0` = never), and on
    /// no other outage.
    pub fn new(limit: u32) -> Arc<ConnectWatch> {
        ConnectWatch::with_limits(OutageLimits {
            connect: limit,
            ..Default::default()
        })
    }

    /// A watch with a limit per kind of outage.
    pub fn with_limits(limits: OutageLimits) -> Arc<ConnectWatch> {
        Arc::new(ConnectWatch {
            limits,
            state: Mutex::new(WatchState::default()),
            tripped: tokio::sync::Notify::new(),
        })
    }

    /// The configured limits.
    pub fn limits(&self) -> OutageLimits {
        self.limits
    }

    /// Why the watch tripped, once it has.
    pub fn trip(&self) -> Option<Trip> {
        self.state.lock().ok().and_then(|s| s.trip.clone())
    }

    /// Completes when the watch trips (at once if it already has).
    pub async fn tripped(&self) {
        loop {
            let notified = self.tripped.notified();
            if self.trip().is_some() {
                return;
            }
            notified.await;
        }
    }

    fn failed(&self, kind: Outage, endpoint: String) {
        let limit = self.limits.of(kind);
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let n = &mut s.counts[kind.index()];
        *n = n.saturating_add(1);
        if limit > 0 && *n >= limit && s.trip.is_none() {
            s.trip = Some(Trip {
                cause: kind,
                limit,
                endpoint,
            });
            drop(s);
            self.tripped.notify_waiters();
        }
    }

    fn reset(&self, kinds: &[Outage]) {
        if let Ok(mut s) = self.state.lock() {
            for k in kinds {
                s.counts[k.index()] = 0;
            }
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

    /// The run-wide watch this tally reports outage signs to.
    pub fn watch(&self) -> Option<&Arc<ConnectWatch>> {
        self.watch.as_ref()
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

/// One call gave up; its exchanges had reported `usage`, priced `cost` (billed already:
/// [`call_billed`] counts every exchange's usage when `http.rs` receives it).
pub(crate) fn call_failed(usage: &Usage, cost: Option<f64>) {
    with_stats(|s| {
        s.failed_calls += 1;
        s.add_failed_spend(usage, cost);
    });
}

/// The exchanges of one call to `model` reported `usage`, priced `cost`: its answer and its
/// failed attempts, or only the failed attempts when it gave up.
pub(crate) fn call_billed(model: &str, usage: &Usage, cost: Option<f64>) {
    with_stats(|s| s.add_billed(model, usage, cost));
}

/// An attempt could not connect to `endpoint`.
pub(crate) fn connect_failed(endpoint: impl FnOnce() -> String) {
    outage(Outage::Connect, endpoint);
}

/// A sign of an outage of `kind` at `endpoint` (never [`Outage::Connect`]'s reset).
pub(crate) fn outage(kind: Outage, endpoint: impl FnOnce() -> String) {
    with_current(|t| {
        if let Some(w) = &t.watch {
            w.failed(kind, endpoint());
        }
    });
}

/// An attempt reached the server (whatever it answered).
pub(crate) fn server_reached() {
    with_current(|t| {
        if let Some(w) = &t.watch {
            w.reset(&[Outage::Connect]);
        }
    });
}

/// An attempt was answered with a 2xx status: the server is up and serving.
pub(crate) fn answered() {
    with_current(|t| {
        if let Some(w) = &t.watch {
            w.reset(&Outage::ALL);
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
        assert_eq!(watch.trip(), None);
        b.scope(async {
            request_sent();
            request_sent();
            exchange_failed("rate_limited");
            call_billed(
                "m",
                &Usage {
                    prompt_tokens: 3,
                    ..Default::default()
                },
                Some(0.5),
            );
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
        let trip = watch.trip().unwrap();
        assert_eq!((trip.cause, trip.limit), (Outage::Connect, 3));
        assert_eq!(trip.endpoint, "provider `p` at http://h");
        watch.tripped().await;
        let (sa, sb) = (a.stats(), b.stats());
        assert_eq!((sa.requests, sa.failures.get("timeout")), (1, Some(&1)));
        assert_eq!((sb.requests, sb.failed_calls), (2, 1));
        assert_eq!(sb.failures.get("rate_limited"), Some(&1));
        assert_eq!(
            (sb.failed_usage.prompt_tokens, sb.failed_cost),
            (3, Some(0.5))
        );
        assert_eq!(sb.billed["m"].usage.prompt_tokens, 3);
        assert_eq!(sb.billed_cost(), Some(0.5));
    }

    #[tokio::test]
    async fn billed_usage_sums_per_model_and_turns_unknown_once_unpriced() {
        let t = CallTally::new(None);
        let u = |p| Usage {
            prompt_tokens: p,
            completion_tokens: 1,
            ..Default::default()
        };
        t.scope(async {
            call_billed("a", &u(10), Some(0.25));
            call_billed("a", &u(5), Some(0.5));
            call_billed("b", &Usage::default(), None); // nothing billed: not counted
        })
        .await;
        let s = t.stats();
        assert_eq!(
            (s.billed["a"].calls, s.billed["a"].usage.prompt_tokens),
            (2, 15)
        );
        assert!(!s.billed.contains_key("b"));
        assert_eq!(s.billed_cost(), Some(0.75));
        t.scope(async { call_billed("b", &u(1), None) }).await;
        assert_eq!(t.stats().billed_cost(), None);
    }

    #[tokio::test]
    async fn each_outage_kind_counts_apart_and_a_2xx_resets_them() {
        let watch = ConnectWatch::with_limits(OutageLimits {
            connect: 0,
            server_errors: 3,
            rate_limited: 2,
            timeouts: 2,
        });
        let t = CallTally::new(Some(watch.clone()));
        t.scope(async {
            for _ in 0..5 {
                connect_failed(|| "c".into()); // limit 0: never trips
            }
            outage(Outage::ServerErrors, || "s".into());
            outage(Outage::ServerErrors, || "s".into());
            outage(Outage::Timeouts, || "t".into());
            server_reached(); // resets only the connection count
            outage(Outage::RateLimited, || "r".into());
            answered();
            outage(Outage::ServerErrors, || "s".into());
            outage(Outage::Timeouts, || "t".into());
            outage(Outage::RateLimited, || "r".into());
        })
        .await;
        assert_eq!(watch.trip(), None, "the 2xx reset every count");
        t.scope(async {
            outage(Outage::RateLimited, || {
                "model `m` of provider `p` at u".into()
            });
            outage(Outage::ServerErrors, || "s".into());
            outage(Outage::ServerErrors, || "s".into());
        })
        .await;
        let trip = watch.trip().unwrap();
        assert_eq!((trip.cause, trip.limit), (Outage::RateLimited, 2));
        assert_eq!(trip.endpoint, "model `m` of provider `p` at u");
        assert_eq!(trip.cause.config_key(), "max_consecutive_rate_limited");
        watch.tripped().await;
    }
}
