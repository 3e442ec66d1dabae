//! τ²-bench environments with upstream-exact semantics.
//!
//! A domain is loaded once from a data directory into an immutable base snapshot
//! ([`DomainData`]); every simulation or replay takes a fresh [`Environment`] from it, which
//! shares the base records and copies only what it writes. Gold replay ([`gold`]) and the
//! canonical database hash ([`hash`]) are the ground truth every reward rests on.
//!
//! Domains: [`airline`], [`retail`], [`telecom`], each registered once in [`registry`]. Tool-call plumbing shared by all of them:
//! [`tooling`] (Python-style argument binding and errors) and [`table`] (copy-on-write maps).

pub mod airline;
pub mod calculate;
pub mod data;
pub mod environment;
pub mod gold;
pub mod hash;
pub mod initial_state;
pub mod registry;
pub mod replay;
pub mod retail;
pub mod table;
pub mod telecom;
pub mod tooling;

pub use data::{DataDir, DomainData, LoadError};
pub use environment::{Changes, DomainBase, Environment, ToolValue};
pub use registry::{DOMAINS, Domain};
pub use tooling::{Param, ToolDef, ToolError};
