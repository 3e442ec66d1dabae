//! Shared helpers of the env integration tests: locating the τ²-bench data directory and the
//! upstream parity fixtures, and writing tool arguments.

#![allow(dead_code)]

use serde_json::{Map, Value};
use tauguard_env::{DataDir, DomainData};

/// A tool call's keyword arguments, written as a JSON object literal.
pub(crate) fn args(v: Value) -> Map<String, Value> {
    v.as_object().expect("arguments are an object").clone()
}

/// The τ²-bench data directory (see `tauguard_testkit::tau2_dir`: skips visibly without it,
/// fails under CI).
pub(crate) fn data_dir() -> Option<DataDir> {
    let dir = tauguard_testkit::tau2_dir()?;
    Some(DataDir::resolve(Some(&dir)).unwrap_or_else(|e| panic!("{e}")))
}

/// The project's own fixture data directory (always present).
pub(crate) fn fixture_dir() -> DataDir {
    DataDir::resolve(Some(&tauguard_testkit::fixtures_dir())).expect("tasks/fixtures exists")
}

/// The names of the assistant tools the data's schemas file declares, in its order.
pub(crate) fn assistant_schema_names(data: &DomainData) -> Vec<&str> {
    data.tool_schemas
        .assistant
        .iter()
        .map(|s| s.name.as_str())
        .collect()
}

pub(crate) fn load(domain: &str) -> Option<DomainData> {
    let dir = data_dir()?;
    Some(DomainData::load(&dir, domain).unwrap_or_else(|e| panic!("loading {domain}: {e}")))
}

/// Reference lines of `reference/<domain>_gold_train.jsonl`.
pub(crate) fn reference(domain: &str) -> Option<Vec<serde_json::Value>> {
    let dir = data_dir()?;
    let path = dir
        .path()
        .join(format!("reference/{domain}_gold_train.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(
        text.lines()
            .map(|l| serde_json::from_str(l).expect("reference line is JSON"))
            .collect(),
    )
}
