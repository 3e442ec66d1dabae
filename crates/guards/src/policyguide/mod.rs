//! PolicyGuide: a workflow-graph guide that checks an agent's progress through a domain's
//! procedures at user-turn boundaries.
//!
//! So far this holds the offline half: the frozen workflow bundle of a domain ([`workflow`]:
//! its JSON schema, loading), the validator every bundle must pass before a guide may use it
//! ([`validate`]), and the six-stage compiler that writes a new bundle from a policy with a
//! model ([`compile`]). The frozen bundles live in `tasks/<domain>/workflow/bundle.json`.

pub mod compile;
pub mod validate;
pub mod workflow;

pub use validate::{Problem, Report, Rule, Sizes, validate};
pub use workflow::{Actor, Bundle, Edge, Graph, Node, NodeKind, SCHEMA_VERSION, WorkflowError};

#[cfg(test)]
mod tests;
