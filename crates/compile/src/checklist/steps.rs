//! The four steps of the checklist compiler, one function each, over one [`Run`] with the
//! compiling model: classify the tools, draft a checklist per mutating tool, draft the
//! general rules, and review every document.

use super::{CompileError, Run, Step, ToolView, parse_yaml_reply, prompts};
use crate::classify::{mismatches, parse_classification};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tauguard_core::ToolSpec;
use tauguard_guards::{
    DomainChecklists, GENERAL_RULES_FILE, GeneralRule, ToolCatalog, ToolChecklist,
    general_rules_to_yaml, parse_general_rules, parse_tool_checklist, tool_checklist_to_yaml,
};

/// The top-level keys a tool checklist's YAML starts with.
const TOOL_CHECKLIST_KEYS: &[&str] = &["tool", "description", "constraints", "requirements"];

/// A compile in progress: the run with the model (its session holds the system prompt), and
/// the domain's policy text.
pub(super) struct Steps<'r, 'a> {
    pub run: &'r mut Run<'a>,
    pub domain: &'a str,
    pub policy: &'a str,
}

/// Step 1's outcome: the classification, its disagreements with the environment's
/// catalogue, and the tools by class as the prompts show them.
pub(super) struct Classified<'v> {
    pub info: ToolCatalog,
    pub mismatches: Vec<String>,
    pub read_only: Vec<&'v ToolView>,
    pub mutating: Vec<&'v ToolView>,
}

/// Validates a reply as the checklist of the tool written to `file`.
fn tool_checklist_reply<'p>(
    file: &'p Path,
    info: &'p ToolCatalog,
) -> impl Fn(&str) -> Result<ToolChecklist, String> + 'p {
    move |reply| {
        parse_yaml_reply(reply, TOOL_CHECKLIST_KEYS, |doc| {
            parse_tool_checklist(doc, file, info)
        })
    }
}

/// Validates a reply as the general rules written to `file`.
fn general_rules_reply(file: &Path) -> impl Fn(&str) -> Result<Vec<GeneralRule>, String> + '_ {
    move |reply| {
        parse_yaml_reply(reply, &["rules"], |doc| parse_general_rules(doc, file)).map(|g| g.rules)
    }
}

impl Steps<'_, '_> {
    /// Step 1 (classify): mutating, read-only and other tools (a JSON reply).
    pub(super) async fn classify<'v>(
        &mut self,
        tools: &[ToolSpec],
        views: &'v [ToolView],
    ) -> Result<Classified<'v>, CompileError> {
        let domain = self.domain;
        let vars = serde_json::json!({ "domain": domain, "policy": self.policy, "tools": views });
        let user = self.run.session.prompts.render(prompts::CLASSIFY, &vars)?;
        let info = self
            .run
            .ask(Step::Classify, "tools", user, "JSON", true, |reply| {
                parse_classification(reply, domain, tools)
            })
            .await?
            .expect("required steps never fall back");
        let classification_mismatches = self
            .run
            .session
            .options
            .known_tools
            .as_ref()
            .map(|k| mismatches(&info, k))
            .unwrap_or_default();
        let read_only: Vec<&ToolView> = views
            .iter()
            .filter(|t| info.read_only.contains(&t.name))
            .collect();
        let mutating: Vec<&ToolView> = views
            .iter()
            .filter(|t| info.mutating.contains(&t.name))
            .collect();
        Ok(Classified {
            info,
            mismatches: classification_mismatches,
            read_only,
            mutating,
        })
    }

    /// Step 2 (tool checklist): one checklist per mutating tool.
    pub(super) async fn draft_tool_checklists(
        &mut self,
        tools: &Classified<'_>,
    ) -> Result<DomainChecklists, CompileError> {
        let mut drafts = DomainChecklists::default();
        for tool in &tools.mutating {
            let others: Vec<&str> = tools
                .mutating
                .iter()
                .map(|t| t.name.as_str())
                .filter(|n| *n != tool.name.as_str())
                .collect();
            let vars = serde_json::json!({
                "domain": self.domain, "policy": self.policy, "tool": tool,
                "read_only_tools": tools.read_only, "other_mutating": others,
            });
            let user = self
                .run
                .session
                .prompts
                .render(prompts::TOOL_CHECKLIST, &vars)?;
            let file = PathBuf::from(format!("{}.yaml", tool.name));
            let checklist = self
                .run
                .ask(
                    Step::ToolChecklist,
                    &tool.name,
                    user,
                    "YAML",
                    false,
                    tool_checklist_reply(&file, &tools.info),
                )
                .await?
                .expect("required steps never fall back");
            drafts.tools.insert(tool.name.clone(), checklist);
        }
        Ok(drafts)
    }

    /// Step 3 (general rules): the cross-tool rules.
    pub(super) async fn draft_general_rules(
        &mut self,
        tools: &Classified<'_>,
    ) -> Result<Vec<GeneralRule>, CompileError> {
        let mutating_names: Vec<&str> = tools.mutating.iter().map(|t| t.name.as_str()).collect();
        let vars = serde_json::json!({
            "domain": self.domain, "policy": self.policy, "mutating_tools": mutating_names,
            "read_only_tools": tools.read_only,
        });
        let user = self
            .run
            .session
            .prompts
            .render(prompts::GENERAL_RULES, &vars)?;
        let general_file = PathBuf::from(GENERAL_RULES_FILE);
        Ok(self
            .run
            .ask(
                Step::GeneralRules,
                "general_rules",
                user,
                "YAML",
                false,
                general_rules_reply(&general_file),
            )
            .await?
            .expect("required steps never fall back"))
    }

    /// Step 4 (review): every document reviewed against the policy; a review that stays
    /// invalid keeps the draft.
    pub(super) async fn review(
        &mut self,
        tools: &Classified<'_>,
        drafts: &DomainChecklists,
    ) -> Result<DomainChecklists, CompileError> {
        let mut reviewed = DomainChecklists::default();
        for tool in &tools.mutating {
            let draft = &drafts.tools[&tool.name];
            let checklist = self.review_tool_checklist(tools, tool, draft).await?;
            reviewed.tools.insert(tool.name.clone(), checklist);
        }
        reviewed.general = self.review_general_rules(tools, &drafts.general).await?;
        Ok(reviewed)
    }

    /// The review of one tool's checklist.
    async fn review_tool_checklist(
        &mut self,
        tools: &Classified<'_>,
        tool: &ToolView,
        draft: &ToolChecklist,
    ) -> Result<ToolChecklist, CompileError> {
        let draft_yaml = tool_checklist_to_yaml(draft).map_err(|cause| CompileError::Draft {
            step: Step::Review,
            target: tool.name.clone(),
            cause,
        })?;
        let vars = serde_json::json!({
            "domain": self.domain, "policy": self.policy, "target": "tool", "tool": tool,
            "read_only_tools": tools.read_only, "draft": draft_yaml.trim_end(),
        });
        let user = self.run.session.prompts.render(prompts::REVIEW, &vars)?;
        let file = PathBuf::from(format!("{}.yaml", tool.name));
        let result = self
            .run
            .ask(
                Step::Review,
                &tool.name,
                user,
                "YAML",
                false,
                tool_checklist_reply(&file, &tools.info),
            )
            .await?;
        Ok(self.run.settle_review(result, draft))
    }

    /// The review of the general rules.
    async fn review_general_rules(
        &mut self,
        tools: &Classified<'_>,
        draft: &Vec<GeneralRule>,
    ) -> Result<Vec<GeneralRule>, CompileError> {
        let draft_yaml = general_rules_to_yaml(draft).map_err(|cause| CompileError::Draft {
            step: Step::Review,
            target: "general_rules".into(),
            cause,
        })?;
        let vars = serde_json::json!({
            "domain": self.domain, "policy": self.policy, "target": "general_rules",
            "tool": Value::Null, "read_only_tools": tools.read_only,
            "draft": draft_yaml.trim_end(),
        });
        let user = self.run.session.prompts.render(prompts::REVIEW, &vars)?;
        let general_file = PathBuf::from(GENERAL_RULES_FILE);
        let result = self
            .run
            .ask(
                Step::Review,
                "general_rules",
                user,
                "YAML",
                false,
                general_rules_reply(&general_file),
            )
            .await?;
        Ok(self.run.settle_review(result, draft))
    }
}
