//! τ²-bench environments with upstream-exact semantics.
//!
//! A domain is loaded once from a data directory into an immutable base snapshot
//! ([`DomainData`]); every simulation or replay takes a fresh [`Environment`] from it, which
//! shares the base records and copies only what it writes. Gold replay ([`gold`]) and the
//! canonical database hash ([`hash`]) are the ground truth every reward rests on.
//!
//! Domains: [`airline`], [`banking_knowledge`], [`retail`], [`telecom`], each registered once
//! in [`registry`].
//! The embedding seam of dense retrieval: [`dense`].
//! Shared by all of them: [`tooling`] (tool declarations and Python-style argument binding),
//! `py` (the Python semantics of raw arguments: one name per behaviour) and [`table`]
//! (copy-on-write maps).
//!
//! # Domain folder layout
//!
//! Every domain folder has the same shape, so a reader who knows one knows where to look in
//! the others:
//!
//! * `mod.rs` — the registry entry (a [`Domain`] value), the loaded base ([`DomainBase`]) and
//!   the live environment ([`Environment`]);
//! * `defs.rs` — the tool declarations, the [`ToolDef`] tables in upstream registration order;
//! * `tools.rs` — agent-side dispatch: a tool name and its bound arguments to a body;
//! * topical files for the tool bodies and their helpers (e.g. airline `booking`, `updates`,
//!   `queries`; retail `orders`, `queries`, `users`; telecom `billing`, `apps`), with
//!   upstream's record lookups in `lookup.rs`;
//! * `model.rs` — the records (telecom also `user_model.rs`, the phone's records);
//! * `validate.rs` — where the domain reproduces pydantic validation (airline, telecom);
//! * `device_tools.rs` — telecom only: the user-side toolkit (no other domain gives the user
//!   simulator tools).
//!
//! With the `toy-domain` feature (tests only), `toy` adds a fourth, invented domain — a
//! lending library — registered by one line in [`registry::DOMAINS`].

pub mod airline;
pub mod banking_knowledge;
pub mod calculate;
pub mod data;
pub mod dense;
pub mod environment;
pub mod gold;
pub mod hash;
pub mod initial_state;
pub(crate) mod py;
pub mod registry;
pub mod replay;
pub mod retail;
pub mod table;
pub mod telecom;
pub mod tooling;
#[cfg(feature = "toy-domain")]
pub mod toy;

pub use data::{DataDir, DomainData, LoadError};
pub use environment::{Changes, DomainBase, Environment, ToolValue};
pub use registry::{DOMAINS, Domain};
pub use tooling::{Param, SchemaDef, ToolDef, ToolError};
