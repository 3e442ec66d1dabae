//! The orchestrator integration tests as one binary: offline runs end to end, grids from config files, runs against a
//! loopback HTTP provider, the toy domain, and the honesty of the offline stand-ins.

mod grid;
mod network_run;
mod offline_honesty;
mod run;
mod toy_domain;
