//! τ²-bench environments with upstream-exact semantics.
//!
//! A domain is loaded once from a data directory into an immutable base snapshot
//! ([`DomainData`]); every simulation or replay takes a fresh [`Environment`] from it, which
//! shares the base records and copies only what it writes. Gold replay ([`replay_gold`]) and
//! the canonical database hash ([`db_hash`]) are the ground truth every reward rests on.
//!
//! Domains: [`airline`], [`banking_knowledge`], [`retail`], [`telecom`], each registered once
//! in [`registry`].
//! The embedding seam of dense retrieval: [`DenseIndex`].
//! Shared by all of them: `tooling` (tool declarations and Python-style argument binding),
//! `py` (the Python semantics of raw arguments: one name per behaviour) and [`Table`]
//! (copy-on-write maps).
//!
//! # Public surface
//!
//! The crate's names are re-exported here, their modules private, except two kinds of
//! module kept public because their paths are the API: [`registry`], whose functions
//! (`registry::get`, `registry::DOMAINS`, `registry::mutating_tools`, …) other crates call by
//! that path in some 26 files, and the domain folders, the namespaces of each domain's
//! types (`airline::AirlineBase`, `banking_knowledge::BankEnv`, …) that tests address.
//!
//! # Domain folder layout
//!
//! Every domain folder has the same shape, so a reader who knows one knows where to look in
//! the others:
//!
//! * `mod.rs` — the registry entry (a [`Domain`] value), the loaded base ([`DomainBase`]) and
//!   the live environment ([`Environment`]); a domain without a user database gives these as
//!   its database's `AgentOnlyDb` impl (`agent_only`), which writes them once for all such;
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

mod agent_only;
pub mod airline;
pub mod banking_knowledge;
mod calculate;
mod collection;
mod data;
mod dense;
mod environment;
mod gold;
mod hash;
mod initial_state;
pub(crate) mod py;
pub mod registry;
mod replay;
pub mod retail;
mod table;
pub mod telecom;
mod tooling;
#[cfg(feature = "toy-domain")]
pub mod toy;

pub use data::{
    DATA_DIR_ENV, DEFAULT_DATA_DIR, DataDir, DomainData, LoadError, ToolSchemas, load_task_file,
};
pub use dense::{DenseIndex, PendingQuery, UpstreamEmbedder};
pub use environment::{Changes, DomainBase, Environment, EnvironmentObject, ToolResult, ToolValue};
pub use gold::{GoldReplay, GoldStep, gold_env, initial_env, replay_gold, run_gold_actions};
pub use hash::db_hash;
pub use initial_state::{InitialStateError, MergeError, apply_initial_state};
pub use registry::{DOMAINS, Domain};
pub use replay::{Drift, ReplayError, outputs_equal, replay_tool_calls};
pub use table::Table;
pub use tooling::{Param, SchemaDef, ToolDef, ToolError};
