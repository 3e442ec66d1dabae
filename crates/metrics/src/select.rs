//! Record selection for `compare --a … --b …`: a side is the records matching every
//! `key=value` condition. Keys are record fields (`domain`, `guard`, `agent`, `user`, `run`,
//! `cell`, `task`) or any cell setting records carry (`verifier.model`, `guard.strict`, …).

use crate::error::MetricsError;
use serde_json::Value;
use tauguard_core::record::SimulationRecord;

/// Conditions that all must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selector {
    conditions: Vec<(String, String)>,
}

const FIELDS: &[&str] = &["domain", "guard", "agent", "user", "run", "cell", "task"];

impl Selector {
    /// Parses `key=value[,key=value…]`.
    pub fn parse(text: &str) -> Result<Selector, MetricsError> {
        let mut conditions = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| MetricsError::BadSelector {
                    selector: text.to_string(),
                    message: format!("`{part}` is not `key=value`"),
                })?;
            conditions.push((k.trim().to_string(), v.trim().to_string()));
        }
        if conditions.is_empty() {
            return Err(MetricsError::BadSelector {
                selector: text.to_string(),
                message: "no condition".into(),
            });
        }
        Ok(Selector { conditions })
    }

    fn field<'a>(r: &'a SimulationRecord, key: &str) -> Option<std::borrow::Cow<'a, str>> {
        let plain = |s: &'a str| Some(std::borrow::Cow::Borrowed(s));
        match key {
            "domain" => plain(&r.domain),
            "guard" => plain(&r.guard),
            "agent" | "agent_model" => plain(&r.agent_model),
            "user" | "user_model" => plain(&r.user_model),
            "run" | "run_id" => plain(&r.run_id),
            "cell" | "cell_hash" => plain(&r.cell_hash),
            "task" | "task_id" => plain(&r.task_id),
            other => r.cell.get(other).map(|v| match v {
                Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
                v => std::borrow::Cow::Owned(v.to_string()),
            }),
        }
    }

    /// Whether `r` meets every condition.
    pub fn matches(&self, r: &SimulationRecord) -> bool {
        self.conditions
            .iter()
            .all(|(k, v)| Self::field(r, k).is_some_and(|x| x == v.as_str()))
    }

    /// The records meeting every condition; a key that no record has is an error (a typo
    /// must not select nothing silently).
    pub fn select(
        &self,
        records: &[SimulationRecord],
    ) -> Result<Vec<SimulationRecord>, MetricsError> {
        for (k, _) in &self.conditions {
            let known = FIELDS.contains(&k.as_str())
                || [
                    "agent_model",
                    "user_model",
                    "run_id",
                    "cell_hash",
                    "task_id",
                ]
                .contains(&k.as_str())
                || records.iter().any(|r| r.cell.contains_key(k));
            if !known {
                return Err(MetricsError::BadSelector {
                    selector: self.to_string(),
                    message: format!(
                        "no record has `{k}` (fields: {}, or a cell setting such as verifier.model)",
                        FIELDS.join(", ")
                    ),
                });
            }
        }
        Ok(records
            .iter()
            .filter(|r| self.matches(r))
            .cloned()
            .collect())
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .conditions
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        f.write_str(&parts.join(","))
    }
}
