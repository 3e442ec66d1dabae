//! Retries of transient failures: exponential backoff with jitter (`backon`) that honours a
//! server's `Retry-After` / `retry-after-ms`.
//!
//! The delay before a retry is the larger of the backoff step and the server's hint, the hint
//! capped at `max_retry_after_secs`. Only [`LlmError::is_transient`] errors are retried; the
//! last error is returned once `max_attempts` attempts are spent. The caller (`http.rs`)
//! releases its concurrency slot before each sleep.

use crate::config::RetryConfig;
use crate::error::LlmError;
use backon::{ExponentialBuilder, Retryable};
use reqwest::header::HeaderMap;
use std::future::Future;
use std::time::{Duration, SystemTime};

/// Checked retry settings.
#[derive(Debug, Clone)]
pub(crate) struct RetryPolicy {
    max_attempts: u32,
    initial: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
    jitter: bool,
}

impl RetryPolicy {
    /// `cfg` must have passed [`crate::config::ProviderConfig::validate`].
    pub(crate) fn from_config(cfg: &RetryConfig) -> RetryPolicy {
        let secs = |s: f64| Duration::try_from_secs_f64(s).unwrap_or(Duration::ZERO);
        RetryPolicy {
            max_attempts: cfg.max_attempts.max(1),
            initial: secs(cfg.initial_backoff_secs),
            max_backoff: secs(cfg.max_backoff_secs),
            max_retry_after: secs(cfg.max_retry_after_secs),
            jitter: cfg.jitter,
        }
    }

    fn backoff(&self) -> ExponentialBuilder {
        let b = ExponentialBuilder::default()
            .with_factor(2.0)
            .with_min_delay(self.initial)
            .with_max_delay(self.max_backoff.max(self.initial))
            .with_max_times(self.max_attempts.saturating_sub(1) as usize);
        if self.jitter { b.with_jitter() } else { b }
    }

    /// The sleep before the next attempt: `None` when attempts are spent.
    fn delay(&self, err: &LlmError, backoff: Option<Duration>) -> Option<Duration> {
        let step = backoff?;
        Some(match err.retry_after() {
            Some(hint) => step.max(hint.min(self.max_retry_after)),
            None => step,
        })
    }

    /// Runs `attempt` until it succeeds, fails permanently, or attempts are spent.
    pub(crate) async fn run<T, F, Fut>(&self, attempt: F) -> Result<T, LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, LlmError>>,
    {
        attempt
            .retry(self.backoff())
            .sleep(tokio::time::sleep)
            .when(LlmError::is_transient)
            .adjust(|err, step| self.delay(err, step))
            .await
    }
}

/// The server's wait hint: `retry-after-ms` (milliseconds, OpenAI/Anthropic), else
/// `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3). Past dates give zero.
pub(crate) fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header_str(headers, "retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("valid header"));
        }
        h
    }

    #[test]
    fn retry_after_seconds_date_and_ms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(7));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &later)]), now),
            Some(Duration::from_secs(7))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(7));
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", &earlier)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after(
                &headers(&[("retry-after", "9"), ("retry-after-ms", "250")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_retry_after(&headers(&[("retry-after", "soon")]), now),
            None
        );
        assert_eq!(parse_retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn delay_takes_the_larger_of_backoff_and_capped_hint() {
        let p = RetryPolicy::from_config(&RetryConfig {
            max_attempts: 3,
            initial_backoff_secs: 0.01,
            max_backoff_secs: 0.1,
            max_retry_after_secs: 2.0,
            jitter: false,
        });
        let limited = |s: u64| LlmError::RateLimited {
            provider: "p".into(),
            model: "m".into(),
            retry_after: Some(Duration::from_secs(s)),
            body: String::new(),
            should_retry: None,
        };
        let step = Some(Duration::from_millis(10));
        assert_eq!(p.delay(&limited(1), step), Some(Duration::from_secs(1)));
        assert_eq!(p.delay(&limited(60), step), Some(Duration::from_secs(2)));
        assert_eq!(p.delay(&limited(1), None), None);
    }
}
