//! The shared vocabulary of tauguard: τ²-bench tasks, conversation messages, tool calls and
//! tool schemas, the confirmation vocabulary every party reads dialogues with, plus the Python-compatible JSON encoding every hash and tool output relies on.
//!
//! This crate imports no other tauguard crate; every other crate imports it. Environments live
//! in `tauguard-env`, metrics in `tauguard-metrics`.

pub mod comparability;
pub mod count;
pub mod dialogue;
pub mod error_chain;
pub mod interrupted;
pub mod message;
pub mod pyjson;
pub mod record;
pub mod splitmix;
pub mod task;
pub mod termination;
pub mod tool;
pub mod verdict_source;

pub use count::count;
pub use error_chain::{Chain, chain_text};
pub use message::{Message, Requestor, ToolCall};
pub use splitmix::SplitMix64;
pub use task::{Action, EnvAssertion, EnvFunctionCall, EvaluationCriteria, RewardType, Task};
pub use tool::{ToolKind, ToolSpec};
