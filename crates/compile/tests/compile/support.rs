//! What the compilers' scripted models share: the prompt templates they are run with, and the
//! shape of a plain text reply.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tauguard_core::message::Usage;
use tauguard_llm::ChatResponse;

/// `configs/prompts`, where the compile templates live.
pub(crate) fn prompts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/prompts")
}

/// A one-attempt, uncached reply of `content` that stopped by itself, with its usage, cost
/// and latency.
pub(crate) fn text_reply(
    content: String,
    usage: Usage,
    cost: f64,
    latency: Duration,
) -> ChatResponse {
    ChatResponse {
        content: Some(content),
        tool_calls: Vec::new(),
        usage,
        cost: Some(cost),
        latency,
        original_latency_seconds: None,
        cache_hit: false,
        attempts: 1,
        finish_reason: Some("stop".into()),
        provider_model: None,
    }
}
