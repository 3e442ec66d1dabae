//! The env integration tests as one binary (one link instead of one per file): per-domain
//! tool behaviour against upstream's texts, built-in tool schemas against upstream's
//! `tools.json`, and gold-replay parity with the upstream fixtures.

#![allow(
    clippy::too_many_lines,
    reason = "a test's steps read in order (clippy.toml: tests are exempt)"
)]

mod airline;
mod banking_knowledge;
mod builtin_schemas;
mod common;
mod parity;
mod retail;
mod telecom;
