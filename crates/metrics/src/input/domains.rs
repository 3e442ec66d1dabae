//! Per-domain facts metrics need when a record does not carry them: which agent-side tools
//! mutate state (for the PV / Mut slice of imported τ²-bench tasks and for their call attempts)
//! and whether the gold actions form an ordered trace (telecom).
//!
//! The table is data, `assets/domains.json`, embedded at build time; a caller may pass its own
//! table in the same shape (`DomainTable::from_json`).

use crate::error::{DomainTableCause, MetricsError};
use serde::Deserialize;
use std::collections::BTreeMap;
use tauguard_core::Requestor;
use tauguard_core::record::Slice;

const BUILTIN: &str = include_str!("../../assets/domains.json");

/// What metrics know about one domain.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainInfo {
    /// Agent-side tools that change the environment.
    pub mutating: Vec<String>,
    /// Whether the task's gold actions are an ordered trace (PolicyGuide Table 5).
    #[serde(default)]
    pub ordered_trace: bool,
}

/// Domain name → `DomainInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainTable {
    domains: BTreeMap<String, DomainInfo>,
}

impl Default for DomainTable {
    fn default() -> Self {
        DomainTable::builtin()
    }
}

impl DomainTable {
    /// The embedded table for airline, retail and telecom.
    pub fn builtin() -> DomainTable {
        DomainTable::from_json(BUILTIN).expect("the embedded domains.json is valid")
    }

    /// Parses a table: an object keyed by domain, each `{"mutating": [...], "ordered_trace":
    /// bool}`; keys starting with `_` are comments.
    pub fn from_json(text: &str) -> Result<DomainTable, MetricsError> {
        let raw: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| MetricsError::BadDomainTable(e.into()))?;
        let mut domains = BTreeMap::new();
        for (name, value) in raw {
            if name.starts_with('_') {
                continue;
            }
            let info: DomainInfo = serde_json::from_value(value).map_err(|cause| {
                MetricsError::BadDomainTable(DomainTableCause::Domain {
                    domain: name.clone(),
                    cause,
                })
            })?;
            domains.insert(name, info);
        }
        Ok(DomainTable { domains })
    }

    /// The facts of one domain, if known.
    pub fn get(&self, domain: &str) -> Option<&DomainInfo> {
        self.domains.get(domain)
    }

    /// Known domain names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.domains.keys().map(String::as_str)
    }
}

impl DomainInfo {
    /// Whether an agent-side call of `tool` mutates state.
    pub fn is_mutating(&self, tool: &str) -> bool {
        self.mutating.iter().any(|t| t == tool)
    }

    /// The PolicyGuard slice of a task from its gold actions `(name, requestor)`: PV when no
    /// gold action is an agent-side mutating call (correct behaviour is refusal), Mut otherwise
    /// (PolicyGuard Table 2: airline 24 PV / 26 Mut).
    pub fn slice_of<'a>(&self, gold: impl IntoIterator<Item = (&'a str, Requestor)>) -> Slice {
        let mutates = gold
            .into_iter()
            .any(|(name, requestor)| requestor == Requestor::Assistant && self.is_mutating(name));
        if mutates { Slice::Mut } else { Slice::Pv }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_has_four_domains() {
        let t = DomainTable::builtin();
        assert_eq!(
            t.names().collect::<Vec<_>>(),
            ["airline", "banking_knowledge", "retail", "telecom"]
        );
        assert_eq!(t.get("airline").unwrap().mutating.len(), 6);
        assert_eq!(t.get("retail").unwrap().mutating.len(), 7);
        assert!(t.get("telecom").unwrap().ordered_trace);
    }

    #[test]
    fn user_side_calls_never_make_a_task_mut() {
        let info = DomainTable::builtin().get("telecom").unwrap().clone();
        let gold = [
            ("toggle_roaming", Requestor::User),
            ("enable_roaming", Requestor::User),
        ];
        assert_eq!(info.slice_of(gold), Slice::Pv);
        assert_eq!(
            info.slice_of([("enable_roaming", Requestor::Assistant)]),
            Slice::Mut
        );
    }

    #[test]
    fn malformed_table_is_an_error() {
        assert!(DomainTable::from_json(r#"{"x": {"mutating": 3}}"#).is_err());
        assert!(DomainTable::from_json("[").is_err());
    }
}
