//! The orchestrator integration tests as one binary: offline runs end to end, grids from
//! config files, runs against a loopback HTTP provider, a fault soak against a faulty one,
//! the toy domain, the honesty of the offline stand-ins, the LLM guide's guidance in the
//! loop, replies cut at the token limit, the frozen graphs against the gold action sequences,
//! and the stated origin of every guard artifact.

#![allow(
    clippy::too_many_lines,
    reason = "a test's steps read in order (clippy.toml: tests are exempt)"
)]

mod fault_soak;
mod grid;
mod network_run;
mod offline_honesty;
mod outage_resume;
mod policyguide_llm;
mod provenance_files;
mod run;
mod support;
mod toy_domain;
mod truncation;
mod upstream_requests;
mod workflow_gold_paths;
