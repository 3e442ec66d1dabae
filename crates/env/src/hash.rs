//! The τ²-bench database hash: SHA-256 of `json.dumps(dump, sort_keys=True)` (§7.2.3).

use serde_json::Value;
use sha2::{Digest, Sha256};
use tauguard_core::pyjson;

/// Lower-case hex SHA-256 of the canonical sorted-key Python JSON of `dump`.
pub fn db_hash(dump: &Value) -> String {
    let canonical = pyjson::dumps_sorted(dump);
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
