//! Provider adapters against a local wiremock server: realistic tool-calling payloads for each
//! API, retries (429 with `Retry-After`, 500, time-outs), limits, malformed arguments, empty
//! replies, key hygiene and the response cache. No network beyond 127.0.0.1.

mod anthropic;
mod cache;
mod common;
mod gemini;
mod openai;
mod resilience;
