//! The domain registry: every fact about a domain that more than one crate needs, behind one
//! trait, and the one list of domains tauguard implements.
//!
//! Adding a domain means a folder under `env/src/` whose `mod.rs` implements [`Domain`], one
//! line in [`DOMAINS`], and its guard artifacts under `tasks/<domain>/`. Nothing else in the
//! workspace matches on domain names.

use crate::data::{LoadError, read_json, read_text};
use crate::environment::DomainBase;
use crate::tooling::ToolDef;
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tauguard_core::{Requestor, Task, ToolKind};

/// A domain's options as a run config gives them (`[run] domain_options`, a grid axis):
/// option name → value. Only the options a domain declares ([`Domain::options`]) are valid.
pub type DomainOptions = BTreeMap<String, String>;

/// One option a domain accepts.
#[derive(Debug, Clone, Copy)]
pub struct DomainOption {
    pub name: &'static str,
    /// The value when the config gives none.
    pub default: &'static str,
    /// Upstream's value when its run config gives none: the comparability stamp's reference.
    pub upstream_default: &'static str,
    /// The values tauguard runs, so a config (a `[grid.domain_options]` axis) is checked
    /// before any data is read; the domain's loading may still refuse one the data lacks.
    pub values: &'static [&'static str],
    /// What the option chooses, for help texts and errors.
    pub about: &'static str,
}

/// What a domain contributes to a loaded domain besides its tasks.
#[derive(Debug)]
pub struct DomainParts {
    pub base: Arc<dyn DomainBase>,
    /// The policy text the agent's system prompt embeds.
    pub policy: String,
    /// The tool schemas file (used when it exists; else the declarations' own schemas).
    pub tools_file: PathBuf,
}

/// Tasks in load order and split name → task ids.
pub type TasksAndSplits = (Vec<Task>, IndexMap<String, Vec<String>>);

/// What the harness must know about a domain that is fixed for the domain: each domain
/// declares these once, as a static read by [`Domain::facts`], and the trait's accessors
/// read them, so a domain implements only what it computes (its loading).
#[derive(Debug)]
pub struct DomainFacts {
    /// The name used in configs, data directories and records.
    pub name: &'static str,
    /// The agent's toolkit (tools and helper methods) in upstream registration order.
    pub agent_tools: &'static [ToolDef],
    /// The user's toolkit, empty where the user simulator has no tools.
    pub user_tools: &'static [ToolDef],
    /// Top-level collections of the agent database (what a rule's `record` lookup may read).
    pub collections: &'static [&'static str],
    /// The fixed "now" the policy is written against, as an ISO date-time (`None` when the
    /// domain has no clock).
    pub clock: Option<&'static str>,
    /// Agent-side reads that establish who the user is.
    pub identity_reads: &'static [&'static str],
    /// Whether a task's gold actions form an ordered procedure (graded as a trace).
    pub ordered_gold_trace: bool,
    /// The user-device steps the domain's troubleshooting workflow puts around an action:
    /// what to have the user check before it and what to have them check after it. A domain
    /// without a device workflow has none; a policy-following sim agent performs them.
    pub device_workflow: &'static [WorkflowStep],
    /// Whether the declarations ([`DomainFacts::agent_tools`], [`DomainFacts::user_tools`])
    /// carry the model-facing schemas, so a data directory without a schemas file still
    /// loads. A domain whose schemas depend on an option (banking_knowledge's retrieval
    /// variant) reads them from the data only.
    pub builtin_schemas: bool,
    /// The options this domain accepts.
    pub options: &'static [DomainOption],
}

impl DomainFacts {
    /// The facts a domain states only where it differs: no user tools, no ordered trace, no
    /// device workflow, built-in schemas, no options. Name, agent tools, collections, clock
    /// and identity reads are the domain's own.
    pub const DEFAULT: DomainFacts = DomainFacts {
        name: "",
        agent_tools: &[],
        user_tools: &[],
        collections: &[],
        clock: None,
        identity_reads: &[],
        ordered_gold_trace: false,
        device_workflow: &[],
        builtin_schemas: true,
        options: &[],
    };
}

/// One domain: how to load it and what the rest of the harness must know about it.
pub trait Domain: Send + Sync {
    /// What is fixed about the domain.
    fn facts(&self) -> &'static DomainFacts;

    /// The name used in configs, data directories and records.
    fn name(&self) -> &'static str {
        self.facts().name
    }

    /// Parses the domain database(s) under `dir` into an immutable base snapshot.
    fn load_base(&self, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError>;

    /// The policy text the agent's system prompt embeds (`policy.md` unless the domain
    /// assembles its own).
    fn load_policy(&self, dir: &Path) -> Result<String, LoadError> {
        read_text(&dir.join("policy.md"))
    }

    /// One side's toolkit (tools and helper methods) in upstream registration order.
    fn toolkit(&self, side: Requestor) -> &'static [ToolDef] {
        match side {
            Requestor::Assistant => self.facts().agent_tools,
            Requestor::User => self.facts().user_tools,
        }
    }

    /// See [`DomainFacts::collections`].
    fn collections(&self) -> &'static [&'static str] {
        self.facts().collections
    }

    /// See [`DomainFacts::clock`].
    fn clock(&self) -> Option<&'static str> {
        self.facts().clock
    }

    /// See [`DomainFacts::identity_reads`].
    fn identity_reads(&self) -> &'static [&'static str] {
        self.facts().identity_reads
    }

    /// See [`DomainFacts::ordered_gold_trace`].
    fn ordered_gold_trace(&self) -> bool {
        self.facts().ordered_gold_trace
    }

    /// See [`DomainFacts::device_workflow`].
    fn device_workflow(&self) -> &'static [WorkflowStep] {
        self.facts().device_workflow
    }

    /// See [`DomainFacts::builtin_schemas`].
    fn builtin_schemas(&self) -> bool {
        self.facts().builtin_schemas
    }

    /// See [`DomainFacts::options`].
    fn options(&self) -> &'static [DomainOption] {
        self.facts().options
    }

    /// Base, policy and schemas file under `options` (already checked against
    /// [`Domain::options`]): `load_base`, `load_policy` and `tools.json` unless the domain
    /// configures them.
    fn load_parts(&self, dir: &Path, options: &DomainOptions) -> Result<DomainParts, LoadError> {
        let _ = options;
        Ok(DomainParts {
            base: self.load_base(dir)?,
            policy: self.load_policy(dir)?,
            tools_file: dir.join("tools.json"),
        })
    }

    /// The tasks (`tasks.json`) and splits (`split_tasks.json`, none when absent).
    fn load_tasks(&self, dir: &Path) -> Result<TasksAndSplits, LoadError> {
        let tasks = crate::data::load_task_file(&dir.join("tasks.json"))?;
        let split_path = dir.join("split_tasks.json");
        let splits = if split_path.exists() {
            read_json(&split_path)?
        } else {
            IndexMap::new()
        };
        Ok((tasks, splits))
    }
}

/// `options` with every declared option present (defaults filled in), or an error naming an
/// option the domain does not take.
pub fn resolve_options(
    domain: &dyn Domain,
    options: &DomainOptions,
) -> Result<DomainOptions, LoadError> {
    let declared = domain.options();
    if let Some(bad) = options
        .keys()
        .find(|k| !declared.iter().any(|o| o.name == k.as_str()))
    {
        let known: Vec<&str> = declared.iter().map(|o| o.name).collect();
        return Err(LoadError::UnknownOption {
            domain: domain.name().to_string(),
            option: bad.clone(),
            known: if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            },
        });
    }
    Ok(declared
        .iter()
        .map(|o| {
            let value = options
                .get(o.name)
                .cloned()
                .unwrap_or_else(|| o.default.to_string());
            (o.name.to_string(), value)
        })
        .collect())
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
    &crate::banking_knowledge::BANKING_KNOWLEDGE,
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
            err.contains("`bank`") && err.contains("airline, banking_knowledge, retail, telecom"),
            "{err}"
        );
    }
}
