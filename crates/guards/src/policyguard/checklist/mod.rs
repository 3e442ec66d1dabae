//! Checklist artifacts: one YAML file per mutating tool plus `general_rules.yaml`, under
//! `tasks/<domain>/checklist/`. The types here are the schema; loading and validation (with
//! the file and field named on any error) live beside them.
//!
//! - [`load_domain_checklists`] reads a directory and rejects anything that breaks the schema:
//!   unknown keys, wrong types, a checklist for an unknown or non-mutating tool, a file whose
//!   `tool` differs from its name, a `data` requirement that names no tool or a tool that is
//!   not read-only, duplicate or non-snake_case names, a mutating tool without a checklist.
//!   Every error names the file and the field path (`requirements[1].tool`).
//! - [`write_domain_checklists`] writes the same layout back.
//! - [`parse_tool_checklist`] / [`parse_general_rules`] validate one document from text (the
//!   checklist compiler uses them on model replies).

mod files;
pub(crate) mod validate;

pub use files::{
    general_rules_to_yaml, load_domain_checklists, tool_checklist_to_yaml, write_domain_checklists,
};
pub(crate) use validate::ArtifactError;

use serde::{Deserialize, Serialize};

/// File name of the cross-tool rules of a domain.
pub const GENERAL_RULES_FILE: &str = "general_rules.yaml";

/// Requirement kinds of the PolicyGuard checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequirementType {
    /// Proven by a specific read-only tool's result (named in `tool`).
    Data,
    /// A dialogue predicate (e.g. the user said "yes" after the last summary).
    Procedural,
}

/// A named rule in words with an optional hint: a tool's hard constraints and the cross-tool
/// general rules are written alike in the artifacts, so they are one type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatedRule {
    pub name: String,
    /// The rule in words.
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A hard rule on the call itself (e.g. at most 5 passengers).
pub type Constraint = StatedRule;

/// A named prerequisite the verifier judges MET / NOT MET.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: RequirementType,
    /// For `data` requirements: the read-only tool whose result proves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// For `data` requirements: other read-only tools whose result proves it equally well
    /// (e.g. `get_item_details` beside `get_product_details`). Empty for most requirements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternative_tools: Vec<String>,
    /// How to verify it.
    pub hint: String,
}

impl Requirement {
    /// The tools whose result proves a `data` requirement: `tool` then `alternative_tools`.
    pub fn proving_tools(&self) -> impl Iterator<Item = &str> {
        self.tool
            .as_deref()
            .into_iter()
            .chain(self.alternative_tools.iter().map(String::as_str))
    }
}

/// The checklist of one mutating tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChecklist {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub requirements: Vec<Requirement>,
}

/// A cross-tool rule (identity once per session, conversation norms, transfer rules).
pub type GeneralRule = StatedRule;

/// `general_rules.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneralRules {
    pub rules: Vec<GeneralRule>,
}

/// All checklist artifacts of one domain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DomainChecklists {
    /// Mutating tool name → its checklist.
    pub tools: std::collections::BTreeMap<String, ToolChecklist>,
    pub general: Vec<GeneralRule>,
}

impl DomainChecklists {
    /// The checklist of `tool`, if it has one.
    pub fn get(&self, tool: &str) -> Option<&ToolChecklist> {
        self.tools.get(tool)
    }

    /// Requirements over all tools.
    pub fn requirement_count(&self) -> usize {
        self.tools.values().map(|c| c.requirements.len()).sum()
    }

    /// Constraints over all tools.
    pub fn constraint_count(&self) -> usize {
        self.tools.values().map(|c| c.constraints.len()).sum()
    }
}
