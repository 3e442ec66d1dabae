//! The orchestrator integration tests as one binary: offline runs end to end, runs against a
//! loopback HTTP provider, and the toy domain.

mod network_run;
mod run;
mod toy_domain;
