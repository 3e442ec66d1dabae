//! The tool catalogue of a domain: which agent-side tools change state, which only look facts
//! up, which are neither, and which database collections exist. Every guard artifact is
//! checked against it — a checklist or rule file may only constrain a mutating tool, a `data`
//! requirement or a lookup may only name a read-only tool, a `record` lookup may only read a
//! known collection — so the loaders of both artifact families share this one type.
//!
//! It is built from the domain registry ([`ToolCatalog::builtin`], [`ToolCatalog::of`]), from
//! a toolkit or a live environment for callers that hold one, or from explicit sets (the
//! checklist compiler's own classification, which is a model's answer and may disagree with
//! the registry).

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use tauguard_core::{Requestor, ToolKind};
use tauguard_env::registry::Domain;
use tauguard_env::{Environment, ToolDef};

/// How a tool relates to the guard artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolClass {
    /// Changes the environment: has a checklist and rules, intercepted by guards.
    #[serde(alias = "write", alias = "mutate")]
    Mutating,
    /// Looks facts up: may prove a `data` requirement or serve a rule's lookup.
    #[serde(alias = "read-only", alias = "readonly", alias = "read")]
    ReadOnly,
    /// Neither (calculators, transfers, think): never proves anything, never has a checklist.
    #[serde(alias = "generic", alias = "neither")]
    Other,
}

impl ToolClass {
    /// The class in words, as artifact errors show it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolClass::Mutating => "mutating",
            ToolClass::ReadOnly => "read-only",
            ToolClass::Other => "generic (neither mutating nor read-only)",
        }
    }

    /// The class as tool lists sent to a guard name it (its serde name): `mutating`,
    /// `read_only`, `other`.
    pub fn key(self) -> &'static str {
        match self {
            ToolClass::Mutating => "mutating",
            ToolClass::ReadOnly => "read_only",
            ToolClass::Other => "other",
        }
    }

    /// τ²-bench tool kinds: `write` → mutating, `read` → read-only, anything else → other.
    pub fn of_kind(kind: ToolKind) -> ToolClass {
        match kind {
            ToolKind::Write => ToolClass::Mutating,
            ToolKind::Read => ToolClass::ReadOnly,
            ToolKind::Think | ToolKind::Generic => ToolClass::Other,
        }
    }
}

/// The agent-side tools and database collections of one domain.
///
/// Serialized as the checklist compiler's report shows its classification; `collections` is
/// left out when empty (a classification knows no collections).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCatalog {
    pub domain: String,
    /// Tools that change state: the tools a checklist or rule file may constrain.
    pub mutating: BTreeSet<String>,
    /// Tools that only read: what a `data` requirement or a lookup may call.
    pub read_only: BTreeSet<String>,
    /// Known tools that are neither (e.g. `calculate`, `transfer_to_human_agents`).
    #[serde(default)]
    pub other: BTreeSet<String>,
    /// Top-level collections of the agent database: what a rule's `record` lookup may read.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub collections: BTreeSet<String>,
}

impl ToolCatalog {
    /// Explicit tool sets, no collections (a classification, or a test's small domain).
    pub fn new<M, R, O>(domain: impl Into<String>, mutating: M, read_only: R, other: O) -> Self
    where
        M: IntoIterator,
        M::Item: Into<String>,
        R: IntoIterator,
        R::Item: Into<String>,
        O: IntoIterator,
        O::Item: Into<String>,
    {
        ToolCatalog {
            domain: domain.into(),
            mutating: mutating.into_iter().map(Into::into).collect(),
            read_only: read_only.into_iter().map(Into::into).collect(),
            other: other.into_iter().map(Into::into).collect(),
            collections: BTreeSet::new(),
        }
    }

    /// The catalogue of a registered domain, so artifacts load without the data directory.
    pub fn builtin(domain: &str) -> Option<ToolCatalog> {
        tauguard_env::registry::get(domain).map(ToolCatalog::of)
    }

    /// The catalogue of a registry entry: its agent-side toolkit and its collections.
    pub fn of(domain: &dyn Domain) -> ToolCatalog {
        let mut catalog =
            ToolCatalog::from_toolkit(domain.name(), domain.toolkit(Requestor::Assistant));
        catalog.collections = domain.collections().iter().map(|c| c.to_string()).collect();
        catalog
    }

    /// The tools of a toolkit (e.g. `env.toolkit(Requestor::Assistant)`); helper methods that
    /// are not tools are skipped. A toolkit knows no collections.
    pub fn from_toolkit(domain: impl Into<String>, toolkit: &[ToolDef]) -> ToolCatalog {
        let mut catalog = ToolCatalog {
            domain: domain.into(),
            ..Default::default()
        };
        for t in toolkit.iter().filter(|t| t.is_tool) {
            catalog.insert(t.name, ToolClass::of_kind(t.kind));
        }
        catalog
    }

    /// The catalogue of a live environment: its agent-side tools and the top-level keys of its
    /// agent database.
    pub fn from_env(env: &dyn Environment) -> ToolCatalog {
        let mut catalog =
            ToolCatalog::from_toolkit(env.domain(), env.toolkit(Requestor::Assistant));
        if let serde_json::Value::Object(o) = env.agent_db() {
            catalog.collections = o.keys().cloned().collect();
        }
        catalog
    }

    /// Files `tool` under `class`.
    pub fn insert(&mut self, tool: impl Into<String>, class: ToolClass) {
        let set = match class {
            ToolClass::Mutating => &mut self.mutating,
            ToolClass::ReadOnly => &mut self.read_only,
            ToolClass::Other => &mut self.other,
        };
        set.insert(tool.into());
    }

    /// Class of a known tool; `None` for names the domain does not have.
    pub fn class_of(&self, tool: &str) -> Option<ToolClass> {
        if self.mutating.contains(tool) {
            Some(ToolClass::Mutating)
        } else if self.read_only.contains(tool) {
            Some(ToolClass::ReadOnly)
        } else if self.other.contains(tool) {
            Some(ToolClass::Other)
        } else {
            None
        }
    }

    /// The tools of `class`, comma-separated, or `none` (for error messages).
    pub fn known_list(&self, class: ToolClass) -> String {
        let set = match class {
            ToolClass::Mutating => &self.mutating,
            ToolClass::ReadOnly => &self.read_only,
            ToolClass::Other => &self.other,
        };
        if set.is_empty() {
            "none".to_string()
        } else {
            set.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_catalogue_classifies_every_agent_tool_once() {
        for domain in tauguard_env::registry::DOMAINS {
            let catalog = ToolCatalog::of(*domain);
            let tools: Vec<&ToolDef> = domain
                .toolkit(Requestor::Assistant)
                .iter()
                .filter(|t| t.is_tool)
                .collect();
            assert_eq!(
                catalog.mutating.len() + catalog.read_only.len() + catalog.other.len(),
                tools.len(),
                "{}",
                domain.name()
            );
            for t in tools {
                assert_eq!(catalog.class_of(t.name), Some(ToolClass::of_kind(t.kind)));
            }
            assert!(
                tauguard_env::registry::mutating_tools(*domain)
                    .all(|t| catalog.mutating.contains(t))
            );
            assert_eq!(catalog.collections.len(), domain.collections().len());
        }
    }

    #[test]
    fn a_classification_serializes_without_collections() {
        let c = ToolCatalog::new("d", ["a"], ["b"], ["c"]);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"domain":"d","mutating":["a"],"read_only":["b"],"other":["c"]}"#
        );
        let mut with = c.clone();
        with.collections.insert("users".into());
        let back: ToolCatalog =
            serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(back, with);
        assert_eq!(c.known_list(ToolClass::ReadOnly), "b");
        assert_eq!(ToolCatalog::default().known_list(ToolClass::Other), "none");
    }

    #[test]
    fn a_class_key_is_its_serde_name() {
        for class in [ToolClass::Mutating, ToolClass::ReadOnly, ToolClass::Other] {
            assert_eq!(serde_json::to_value(class).unwrap(), class.key());
        }
    }
}
