//! The seam between a domain's dense retrieval and the embedding model, which lives above
//! this crate (the orchestrator owns it; tool calls here are synchronous and never wait on
//! the network).
//!
//! A domain whose retrieval embeds (banking_knowledge's `*_embeddings*` variants) exposes a
//! [`DenseIndex`] through [`crate::DomainBase::dense`]. Before any simulation runs, the
//! caller embeds [`DenseIndex::documents`] once and hands the vectors to
//! [`DenseIndex::install`]. Before it executes a tool call, it asks
//! [`DenseIndex::pending_query`] whether the call needs a text embedded; if so it embeds the
//! text and hands the vector to [`DenseIndex::install_query`], and the tool then ranks from
//! it. The index is shared by every environment of the base, like upstream's per-process
//! query-embedding cache.

use serde_json::{Map, Value};

/// The embedding model upstream uses for a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamEmbedder {
    /// τ²-bench's `embedder_type`: `openai` or `openrouter`.
    pub embedder_type: &'static str,
    /// The model name upstream sends (`text-embedding-3-large`, `qwen/qwen3-embedding-8b`).
    pub model: &'static str,
    /// The `encoding_format` upstream's request carries (`base64`, the OpenAI SDK's default
    /// when the caller names none, or `float`).
    pub encoding_format: &'static str,
    /// The alias of `configs/models.toml` naming that model.
    pub alias: &'static str,
}

/// A text a tool call needs embedded before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingQuery {
    /// What the index files the ranking under (the tool's query argument).
    pub key: String,
    /// The text to embed (upstream's query formatting applied).
    pub text: String,
}

/// A dense retrieval index waiting for, or holding, its vectors.
pub trait DenseIndex: Send + Sync {
    /// Upstream's embedding model for this index.
    fn upstream(&self) -> UpstreamEmbedder;

    /// The texts embedded once per run, in index order.
    fn documents(&self) -> Vec<String>;

    /// Whether [`DenseIndex::install`] has run.
    fn installed(&self) -> bool;

    /// Installs one vector per document, in [`DenseIndex::documents`] order; an error names
    /// what does not fit (count, dimensions).
    fn install(&self, vectors: Vec<Vec<f64>>) -> Result<(), String>;

    /// The text tool `tool` called with `args` needs embedded, when it needs one that is not
    /// embedded yet (`None` for other tools and for arguments the tool refuses anyway).
    fn pending_query(&self, tool: &str, args: &Map<String, Value>) -> Option<PendingQuery>;

    /// The vector of a [`PendingQuery::text`], filed under its key; an error names a vector
    /// of the wrong dimension.
    fn install_query(&self, key: &str, vector: &[f64]) -> Result<(), String>;
}
