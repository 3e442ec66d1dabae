//! Record selection for `compare --a … --b …`: a side is the records matching every
//! `key=value` condition. Keys are record fields (`domain`, `guard`, `agent`, `user`, `run`,
//! `cell`, `task`) or any cell setting records carry (`verifier.model`, `guard.strict`, …).

use crate::error::{MetricsError, SelectorFinding};
use crate::summary::SimSummary;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
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
                    finding: SelectorFinding::NotKeyValue(part.to_string()),
                })?;
            conditions.push((k.trim().to_string(), v.trim().to_string()));
        }
        if conditions.is_empty() {
            return Err(MetricsError::BadSelector {
                selector: text.to_string(),
                finding: SelectorFinding::Empty,
            });
        }
        Ok(Selector { conditions })
    }

    /// Whether `r` meets every condition.
    pub fn matches<T: Selectable>(&self, r: &T) -> bool {
        self.conditions
            .iter()
            .all(|(k, v)| r.field(k).is_some_and(|x| x == v.as_str()))
    }

    /// The records (or summaries) meeting every condition; a key that no record has is an
    /// error (a typo must not select nothing silently).
    pub fn select<T: Selectable + Clone>(&self, records: &[T]) -> Result<Vec<T>, MetricsError> {
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
                || records.iter().any(|r| r.cell_settings().contains_key(k));
            if !known {
                return Err(MetricsError::BadSelector {
                    selector: self.to_string(),
                    finding: SelectorFinding::UnknownKey {
                        key: k.clone(),
                        fields: FIELDS.join(", "),
                    },
                });
            }
        }
        Ok(records
            .iter()
            .filter(|r| self.matches(*r))
            .cloned()
            .collect())
    }
}

/// What a selector reads: a record or its summary.
pub trait Selectable {
    /// The record fields a selector names (`domain`, `guard`, `agent`, …).
    fn fields(&self) -> [&str; 7];
    /// The cell settings.
    fn cell_settings(&self) -> &BTreeMap<String, Value>;

    /// The value of a selector key: a record field or a cell setting.
    fn field(&self, key: &str) -> Option<Cow<'_, str>> {
        let [domain, guard, agent, user, run, cell, task] = self.fields();
        let plain = |s| Some(Cow::Borrowed(s));
        match key {
            "domain" => plain(domain),
            "guard" => plain(guard),
            "agent" | "agent_model" => plain(agent),
            "user" | "user_model" => plain(user),
            "run" | "run_id" => plain(run),
            "cell" | "cell_hash" => plain(cell),
            "task" | "task_id" => plain(task),
            other => self.cell_settings().get(other).map(|v| match v {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                v => Cow::Owned(v.to_string()),
            }),
        }
    }
}

impl Selectable for SimulationRecord {
    fn fields(&self) -> [&str; 7] {
        [
            &self.domain,
            &self.guard,
            &self.agent_model,
            &self.user_model,
            &self.run_id,
            &self.cell_hash,
            &self.task_id,
        ]
    }

    fn cell_settings(&self) -> &BTreeMap<String, Value> {
        &self.cell
    }
}

impl Selectable for SimSummary {
    fn fields(&self) -> [&str; 7] {
        let c = &self.cell;
        [
            &c.domain,
            &c.guard,
            &c.agent_model,
            &c.user_model,
            &c.run_id,
            &c.cell_hash,
            &self.task_id,
        ]
    }

    fn cell_settings(&self) -> &BTreeMap<String, Value> {
        &self.cell.cell
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
