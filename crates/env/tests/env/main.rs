//! The env integration tests as one binary (one link instead of one per file): per-domain
//! tool behaviour against upstream's texts, and gold-replay parity with the upstream fixtures.

mod airline;
mod common;
mod parity;
mod retail;
mod telecom;
