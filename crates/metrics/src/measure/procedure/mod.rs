//! Process validity: whether a trajectory followed its domain's policy procedure, not only
//! whether it ended in the right state (`docs/process-validity.md` defines it). Specs come
//! from the caller (`spec.rs`), trajectories from records (`evaluate.rs`), dialogue
//! predicates the matchers cannot decide from a judge (`judge.rs`); `summary.rs` attaches the
//! outcome to each simulation's summary so reports read summaries only.

pub mod evaluate;
pub(crate) mod judge;
pub(crate) mod spec;
mod trajectory;
pub(crate) mod validation;

pub use evaluate::{Judgement, Position, ProcessVerdict, Violation, evaluate};
pub use judge::{DialogueJudge, JudgeKind, StandInJudge};
pub use spec::{Check, Level, ProcedureBook, ProcedureSpec, Requirement, SpecError, SpecProblem};
