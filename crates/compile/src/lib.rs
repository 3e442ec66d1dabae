//! The offline compilers of guard artifacts: PolicyGuard's four-step checklist compiler
//! ([`checklist`]) and PolicyGuide's six-stage workflow compiler ([`workflow`]), each turning a
//! domain's policy and agent tools into an artifact set with a model.
//!
//! They live apart from `tauguard-guards` because they run only offline, behind `tauguard
//! compile`: the guards crate holds what a run needs — the artifact formats, their loaders and
//! validators, the template loader — and a run never links the compilers. The compilers import
//! those formats from guards, so a compiled artifact is checked by the very code that will load
//! it at run time.
//!
//! Both talk to their model through one ask-validate-repair session (`session.rs`: the same
//! request shape, repair turn, usage accounting and failure rule for every step), read replies
//! with one extraction (`extract.rs`), and parse the tool classification with one parser
//! (`classify.rs`).

pub mod checklist;
mod classify;
mod extract;
mod input;
mod output;
mod session;
pub mod workflow;

pub use input::CompileInput;
pub use output::OutputError;
pub use session::{CompileOptions, CompileUsage, StepOutcome, StepTally};
