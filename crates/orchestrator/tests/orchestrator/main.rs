//! The orchestrator integration tests as one binary: offline runs end to end, runs against a
//! loopback HTTP provider, the toy domain, and the honesty of the offline stand-ins.

mod network_run;
mod offline_honesty;
mod run;
mod toy_domain;
