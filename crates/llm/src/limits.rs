//! Client-side limits shared by every model of one provider: a bounded number of requests in
//! flight (tokio `Semaphore`) and an optional requests-per-minute rate (`governor`).
//!
//! A slot is held for one HTTP attempt only (not across retry sleeps). The rate token is taken
//! after the slot, right before the request goes out, so waiting for a slot never burns tokens.

use crate::config::ProviderConfig;
use crate::error::LlmError;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};

pub(crate) struct Limits {
    slots: Semaphore,
    rate: Option<DefaultDirectRateLimiter>,
}

impl Limits {
    /// `cfg` must have passed [`ProviderConfig::validate`].
    pub(crate) fn new(cfg: &ProviderConfig) -> Limits {
        let rate = cfg.requests_per_minute.and_then(|rpm| {
            let period = Duration::from_secs_f64(60.0 / f64::from(rpm.max(1)));
            let burst = NonZeroU32::new(cfg.burst.unwrap_or(1)).unwrap_or(NonZeroU32::MIN);
            Quota::with_period(period).map(|q| RateLimiter::direct(q.allow_burst(burst)))
        });
        Limits {
            slots: Semaphore::new(cfg.max_concurrency.max(1)),
            rate,
        }
    }

    /// Waits for a free slot, then for the rate limit; the slot is released on drop.
    pub(crate) async fn acquire(&self) -> Result<SemaphorePermit<'_>, LlmError> {
        let permit = self
            .slots
            .acquire()
            .await
            .map_err(|_| LlmError::Config("provider concurrency limiter was closed".into()))?;
        if let Some(rate) = &self.rate {
            rate.until_ready().await;
        }
        Ok(permit)
    }
}
