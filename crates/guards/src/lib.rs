//! Runtime policy guards.
//!
//! A guard sits between the agent and the environment. The orchestrator calls
//! [`Guard::on_mutating_call`] for every mutating call before it executes (read-only calls
//! bypass guards); on [`Verdict::Block`] the call does not execute and the agent receives the
//! remediation as that call's tool result. [`Guard::before_agent_turn`] lets a guard inject
//! guidance before the agent answers a user turn.
//!
//! Configurations: `baseline` (no guard), [`toolguard`] (argument-level rules, no dialogue),
//! the PolicyGuard verifier family ([`policyguard`]: `pg-raw`, `pg-raw-traj`, `pg-checklist`,
//! `pg-checklist-only`, strict mode; with its offline sim verifier and checklists),
//! [`hybrid`] (rules first, verifier after), and the PolicyGuide workflow guide
//! ([`policyguide`]: `policyguide` over the frozen graph, `policyguide-raw` over the raw
//! policy). Every artifact family is checked against one tool catalogue per domain
//! ([`catalog`]). A guard written in another language speaks the external guard protocol
//! ([`external`]) and sits behind the same seam.

pub mod artifact_diff;
pub mod artifact_set;
pub mod block_all;
pub mod catalog;
pub mod external;
pub mod factory;
pub mod hybrid;
pub mod policyguard;
pub mod policyguide;
pub mod provenance;
pub mod seam;
pub mod toolguard;

pub use factory::{GUARDS, GuardEntry, GuardName, GuardOptions, KNOWN_GUARDS, build_guard};
pub use seam::{
    Decision, Guard, GuardContext, GuardError, GuardState, Guidance, ModelPrompt, SessionEnd,
};
pub use tauguard_core::record::Verdict;
