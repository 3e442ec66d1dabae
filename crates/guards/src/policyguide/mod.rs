//! PolicyGuide: a workflow-graph guide that checks an agent's progress through a domain's
//! procedures at user-turn boundaries.
//!
//! - Offline: the frozen workflow bundle of a domain ([`workflow`]: its JSON schema, loading),
//!   and the validator every bundle must pass before a guide may use it ([`validate`]); the
//!   six-stage compiler that writes a new bundle from a policy with a model is the
//!   `tauguard-compile` crate. The frozen bundles live in `tasks/<domain>/workflow/bundle.json`.
//! - Online: the bundle indexed for traversal ([`flow`]), the request state code holds
//!   ([`state`]), the guide guard that runs a verifier at user-turn boundaries and intercepts
//!   unauthorized mutating calls ([`guide`]), the frozen bundle loaded and validated for it
//!   ([`frozen`]), its two verifiers — the LLM guide ([`llm`]: one chat completion per trigger
//!   over the graph or, for the raw-policy ablation, the policy alone) and the offline one
//!   ([`sim`]) — the in-agent comparisons ([`in_agent`]) and their construction from a project
//!   ([`build`]).

pub(crate) mod build;
pub(crate) mod flow;
pub(crate) mod frozen;
pub(crate) mod guide;
pub(crate) mod in_agent;
pub(crate) mod llm;
pub(crate) mod sim;
pub(crate) mod state;
pub mod validate;
pub(crate) mod workflow;

pub use validate::{Problem, Report, Rule, Sizes, validate};
pub use workflow::{Actor, Bundle, Edge, Graph, Node, NodeKind, SCHEMA_VERSION, WorkflowError};

#[cfg(test)]
mod tests;
