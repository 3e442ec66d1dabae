//! The async runtime a run executes on, chosen by what bounds its throughput.

/// What a run spends its time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Waiting for models that answer over the network. The harness's own work between two
    /// responses is small, so one thread does it all: it never wakes another thread to hand
    /// a task over, and a task's memory stays in one core's cache. At 1,000 simulations in
    /// flight this takes about a fifth off the harness's CPU (see the concurrency bench).
    Network,
    /// `sim` models only: nothing waits, so the work spreads over every core.
    Compute,
}

impl Workload {
    /// The workload of a run config: network-bound as soon as one model is not `sim`.
    pub fn of(cfg: &crate::config::RunConfig) -> Workload {
        if cfg.uses_network() {
            Workload::Network
        } else {
            Workload::Compute
        }
    }
}

/// A runtime for `workload`, with timers and I/O enabled.
pub fn build(workload: Workload) -> std::io::Result<tokio::runtime::Runtime> {
    match workload {
        Workload::Network => tokio::runtime::Builder::new_current_thread(),
        Workload::Compute => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
}
