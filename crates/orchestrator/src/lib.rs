//! The engine: one simulation is user simulator ↔ agent ↔ (guard) ↔ environment until a stop,
//! then a reward. This crate owns the loop, evaluation, the run (config → records) and the
//! record files.

pub mod config;
pub mod evaluate;
pub mod export;
pub mod judge;
pub mod prerequisites;
pub mod prompts;
pub mod records;
pub mod runner;
pub mod runtime;
pub mod seeds;
pub mod simulation;
pub mod views;
