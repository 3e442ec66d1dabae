//! Provider adapters against a local wiremock server: realistic tool-calling payloads for each
//! API, retries (429 with `Retry-After`, 500, time-outs), limits, malformed arguments, empty
//! replies, key hygiene, the response cache, and conformance of the bodies the production
//! path sends (`conformance.rs`). No network beyond 127.0.0.1.

mod accounting;
mod anthropic;
mod cache;
mod common;
mod conformance;
mod embeddings;
mod gemini;
mod openai;
mod resilience;
