//! The domain registry: every fact about a domain that more than one crate needs, behind one
//! trait, and the one list of domains tauguard implements.
//!
//! Adding a domain means a folder under `env/src/` whose `mod.rs` implements [`Domain`], one
//! line in [`DOMAINS`], and its guard artifacts under `tasks/<domain>/`. Nothing else in the
//! workspace matches on domain names.

use crate::data::{LoadError, read_text};
use crate::environment::DomainBase;
use crate::tooling::ToolDef;
use std::path::Path;
use std::sync::Arc;
use tauguard_core::{Requestor, ToolKind};

/// One domain: how to load it and what the rest of the harness must know about it.
pub trait Domain: Send + Sync {
    /// The name used in configs, data directories and records.
    fn name(&self) -> &'static str;

    /// Parses the domain database(s) under `dir` into an immutable base snapshot.
    fn load_base(&self, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError>;

    /// The policy text the agent's system prompt embeds (`policy.md` unless the domain
    /// assembles its own).
    fn load_policy(&self, dir: &Path) -> Result<String, LoadError> {
        read_text(&dir.join("policy.md"))
    }

    /// One side's toolkit (tools and helper methods) in upstream registration order.
    fn toolkit(&self, side: Requestor) -> &'static [ToolDef];

    /// Top-level collections of the agent database (what a rule's `record` lookup may read).
    fn collections(&self) -> &'static [&'static str];

    /// The fixed "now" the policy is written against, as an ISO date-time (`None` when the
    /// domain has no clock).
    fn clock(&self) -> Option<&'static str>;

    /// Agent-side reads that establish who the user is.
    fn identity_reads(&self) -> &'static [&'static str];

    /// Whether a task's gold actions form an ordered procedure (graded as a trace).
    fn ordered_gold_trace(&self) -> bool {
        false
    }

    /// The user-device steps the domain's troubleshooting workflow puts around an action:
    /// what to have the user check before it and what to have them check after it. A domain
    /// without a device workflow has none; a policy-following sim agent performs them.
    fn device_workflow(&self) -> &'static [WorkflowStep] {
        &[]
    }
}

/// One action of a domain's troubleshooting workflow with the device steps around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkflowStep {
    /// The action (a device tool of the user, or an agent tool).
    pub action: &'static str,
    /// Device checks the workflow has the user make before the action: tool name and the
    /// action's arguments the check takes (same name).
    pub diagnose: &'static [(&'static str, &'static [&'static str])],
    /// Device checks the workflow has the user make after it to verify the fix.
    pub verify: &'static [&'static str],
}

impl std::fmt::Debug for dyn Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Domain({})", self.name())
    }
}

/// Every domain tauguard implements, in the order help texts list them.
pub static DOMAINS: &[&dyn Domain] = &[
    &crate::airline::AIRLINE,
    &crate::retail::RETAIL,
    &crate::telecom::TELECOM,
    #[cfg(feature = "toy-domain")]
    &crate::toy::TOY,
];

/// The registered domain called `name`.
pub fn get(name: &str) -> Option<&'static dyn Domain> {
    DOMAINS.iter().copied().find(|d| d.name() == name)
}

/// The registered domain called `name`, or an error listing the known ones.
pub fn require(name: &str) -> Result<&'static dyn Domain, LoadError> {
    get(name).ok_or_else(|| LoadError::UnknownDomain {
        name: name.to_string(),
        known: known_names(),
    })
}

/// The registered names, comma-separated (for error messages).
pub fn known_names() -> String {
    DOMAINS
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Agent-side tools that change state, in registration order.
pub fn mutating_tools(domain: &dyn Domain) -> impl Iterator<Item = &'static str> {
    tools_of_kind(domain, ToolKind::Write)
}

/// Agent-side read-only tools, in registration order.
pub fn read_only_tools(domain: &dyn Domain) -> impl Iterator<Item = &'static str> {
    tools_of_kind(domain, ToolKind::Read)
}

fn tools_of_kind(domain: &dyn Domain, kind: ToolKind) -> impl Iterator<Item = &'static str> {
    domain
        .toolkit(Requestor::Assistant)
        .iter()
        .filter(move |t| t.is_tool && t.kind == kind)
        .map(|t| t.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_resolve() {
        let mut seen = std::collections::HashSet::new();
        for d in DOMAINS {
            assert!(seen.insert(d.name()), "duplicate domain {}", d.name());
            assert_eq!(get(d.name()).unwrap().name(), d.name());
            assert!(
                mutating_tools(*d).next().is_some(),
                "{} has no mutating tool",
                d.name()
            );
        }
        let err = require("bank").unwrap_err().to_string();
        assert!(
            err.contains("`bank`") && err.contains("airline, retail, telecom"),
            "{err}"
        );
    }
}
