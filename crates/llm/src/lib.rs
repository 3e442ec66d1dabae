//! Chat models for every role of a tauguard simulation (agent, user simulator, verifiers,
//! judge, compilers): the [`ChatModel`] trait and its HTTP providers.
//!
//! - `model.rs`: the trait, [`ChatRequest`], [`ChatResponse`].
//! - `openai.rs`, `anthropic.rs`, `gemini.rs` (+ `gemini_schema.rs`): wire formats.
//! - `http.rs` (endpoint, error classification, key redaction), `retry.rs` (backoff honouring
//!   `Retry-After`), `limits.rs` (rate limit + concurrency per provider), `remote.rs` (the
//!   HTTP-backed model).
//! - `embeddings.rs`: [`EmbeddingModel`] over the OpenAI protocol (`/embeddings`), on the same
//!   endpoints, limits, tally and cache directory as the chat models.
//! - `cost.rs` (price table), `usage.rs` (per-role sums), `cache.rs` (on-disk response cache),
//!   `tally.rs` (what happened inside calls: requests, failures by cause, the outage watch).
//! - `config.rs` (serde config), `provider.rs` (provider names resolved, the offline `sim`
//!   family among them; [`RoleModel`], what plays a role), `capabilities.rs` (which
//!   parameters a model takes) and `factory.rs` (config → `Arc<dyn ChatModel>`, the spec's
//!   defaults baked in).
//!
//! Invariant: this crate imports only `tauguard-core`; no API key ever reaches a record, an
//! error message, a `Debug` rendering or a cache key (keys live in a sensitive header and are
//! redacted from any quoted server text).

mod anthropic;
mod cache;
mod capabilities;
mod config;
mod cost;
mod embeddings;
mod error;
mod factory;
mod gemini;
mod gemini_schema;
mod http;
mod identity;
mod limits;
mod model;
mod openai;
mod provider;
mod remote;
mod retry;
mod tally;
mod usage;

pub use cache::{CacheMode, CacheStats, CachedModel, ResponseCache};
pub use capabilities::{Capabilities, CapabilityOverride, TokenLimit};
pub use config::{CacheConfig, LlmConfig, ModelSpec, ProviderConfig, ProviderKind, RetryConfig};
pub use cost::{ModelPrice, PriceTable};
pub use embeddings::{EmbeddingModel, Embeddings, RemoteEmbedder};
pub use error::{ErrorClass, LlmError, MalformedArguments, Spend};
pub use factory::{ModelFactory, build_model};
pub use model::{BoxFuture, ChatModel, ChatRequest, ChatResponse, cut_at_token_limit};
pub use provider::{BUILTIN_PROVIDERS, Provider, RoleModel, SIM_PROVIDER, is_sim_provider};
pub use remote::RemoteModel;
pub use tally::{CallStats, CallTally, ConnectWatch, Outage, OutageLimits, Trip};
pub use usage::{ModelUsageTracker, add_response, add_unusable};
