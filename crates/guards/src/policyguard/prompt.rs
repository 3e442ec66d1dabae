//! Verifier prompt templates: `<prompts_dir>/verifier/{system,request,repair}.jinja`, loaded
//! and rendered by the family's one template loader ([`super::templates`]).
//!
//! Layout of one verifier request:
//! 1. system message = the **static prefix** (`system.jinja`): role, what the verifier sees,
//!    judging rules, the output contract, then the policy block (raw policy and/or the general
//!    rules). It depends only on the variant, strictness, domain, policy text and general
//!    rules, so it is byte-identical across all calls of one config and domain (prefix
//!    caching).
//! 2. user message = the **dynamic part** (`request.jinja`): the formatted history (dialogue
//!    stripped for `pg-raw-traj`), the pending call and, for checklist variants, the pending
//!    tool's checklist. PolicyGuard gives the verifier the pending action's checklist, not
//!    every tool's: the other tools' items are noise for this call, and since the pending
//!    tool changes from call to call, its checklist belongs here, after the cached prefix.
//! 3. on a repair retry: the unusable reply as an assistant message, then `repair.jinja`.

use super::checklist::{DomainChecklists, RequirementType, ToolChecklist};
use super::history::HistoryEntry;
use serde::Serialize;

/// Template file names under `<prompts_dir>/verifier/`.
pub(crate) const SYSTEM_TEMPLATE: &str = "system.jinja";
pub(crate) const REQUEST_TEMPLATE: &str = "request.jinja";
pub(crate) const REPAIR_TEMPLATE: &str = "repair.jinja";
/// The three, in the order [`super::guard_prompts::GuardPrompts::load`] takes them.
pub(crate) const TEMPLATES: [&str; 3] = [SYSTEM_TEMPLATE, REQUEST_TEMPLATE, REPAIR_TEMPLATE];

/// What the static prefix depends on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PrefixVars<'a> {
    pub domain: &'a str,
    /// The user–agent dialogue is visible (false for `pg-raw-traj`).
    pub dialogue: bool,
    pub strict: bool,
    /// Checklist block present (checklist variants).
    pub checklist: bool,
    /// Raw policy text; `None` for `pg-checklist-only`.
    pub policy: Option<&'a str>,
    pub general_rules: Vec<RuleView<'a>>,
}

/// A general rule or a constraint, as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RuleView<'a> {
    pub name: &'a str,
    pub rule: &'a str,
    pub hint: Option<&'a str>,
}

/// A checklist requirement, as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RequirementView<'a> {
    pub name: &'a str,
    /// `data` or `procedural`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// For data requirements: the read tools whose result proves it.
    pub tools: Vec<&'a str>,
    pub hint: &'a str,
}

/// One tool's checklist, as the template sees it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChecklistView<'a> {
    pub tool: &'a str,
    pub description: Option<&'a str>,
    pub constraints: Vec<RuleView<'a>>,
    pub requirements: Vec<RequirementView<'a>>,
}

impl<'a> PrefixVars<'a> {
    pub(crate) fn new(
        domain: &'a str,
        dialogue: bool,
        strict: bool,
        checklists: Option<&'a DomainChecklists>,
        policy: Option<&'a str>,
    ) -> Self {
        let general_rules = checklists
            .map(|c| {
                c.general
                    .iter()
                    .map(|r| RuleView {
                        name: &r.name,
                        rule: &r.rule,
                        hint: r.hint.as_deref(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        PrefixVars {
            domain,
            dialogue,
            strict,
            checklist: checklists.is_some(),
            policy,
            general_rules,
        }
    }
}

impl<'a> ChecklistView<'a> {
    pub(crate) fn new(t: &'a ToolChecklist) -> Self {
        ChecklistView {
            tool: &t.tool,
            description: t.description.as_deref(),
            constraints: t
                .constraints
                .iter()
                .map(|k| RuleView {
                    name: &k.name,
                    rule: &k.rule,
                    hint: k.hint.as_deref(),
                })
                .collect(),
            requirements: t
                .requirements
                .iter()
                .map(|q| RequirementView {
                    name: &q.name,
                    kind: match q.kind {
                        RequirementType::Data => "data",
                        RequirementType::Procedural => "procedural",
                    },
                    tools: q.proving_tools().collect(),
                    hint: &q.hint,
                })
                .collect(),
        }
    }
}

/// What the dynamic part depends on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RequestVars<'a> {
    pub dialogue: bool,
    pub checklist: bool,
    /// The raw policy is part of the prefix.
    pub policy: bool,
    pub history: &'a [HistoryEntry],
    pub tool: &'a str,
    /// Compact JSON of the pending call's arguments.
    pub arguments: String,
    /// The pending tool's checklist (checklist variants, when the tool has one).
    pub tool_checklist: Option<ChecklistView<'a>>,
}
