//! The orchestrator integration tests as one binary: offline runs end to end, grids from
//! config files, runs against a loopback HTTP provider, a fault soak against a faulty one,
//! the toy domain, the honesty of the offline stand-ins, the LLM guide's guidance in the
//! loop, and replies cut at the token limit.

mod fault_soak;
mod grid;
mod network_run;
mod offline_honesty;
mod outage_resume;
mod policyguide_llm;
mod run;
mod toy_domain;
mod truncation;
mod upstream_requests;
mod workflow_gold_paths;
