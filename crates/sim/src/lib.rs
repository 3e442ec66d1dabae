//! The offline `sim` model family: models that need no network or key, deterministic per
//! (task, trial, seed), so the whole pipeline — loop, guards, evaluation, metrics — runs
//! anywhere.
//!
//! - [`agent::SimAgent`] follows the policy procedure around the task's gold actions and
//!   injects labelled faults (ground truth for guard metrics).
//! - [`user::SimUser`] plays the task's scenario, with the confirmation behaviours of
//!   [`behaviour::UserBehaviour`] (decline, hesitate, correct); [`attacker::SimAttacker`]
//!   plays an attack task's, escalating through its persuasion strategy when the agent
//!   declines.
//! - [`judge::sim_judge`] stands in for the NL-assertion judge.
//!
//! They are pure functions of the conversation they are shown; `tauguard-llm` adapts them to
//! its `ChatModel` trait.

pub mod agent;
pub mod attacker;
pub mod behaviour;
pub mod faults;
pub mod judge;
pub mod model;
pub mod phrases;
pub mod rng;
pub mod user;

use serde_json::{Map, Value};

/// One turn of a sim model: a message or a single tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum SimTurn {
    Say(String),
    Call {
        name: String,
        arguments: Map<String, Value>,
    },
}
