//! Stages 2 and 3: the workflow plan — request types, shared procedures, the subflows in the
//! order they are written, and the coverage audit — and the checks a plan must pass before any
//! subflow is generated from it. Catching a missing mutating tool or a subflow nobody runs
//! here costs one repair turn; catching it after every subflow was written costs them all.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use tauguard_guards::{ToolCatalog, ToolClass};

/// The branch label of the main graph's refusal path; a request type may not take it.
pub const DENY_LABEL: &str = "against_policy";

/// The plan the model writes in stage 2 and corrects in stage 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The kinds of request the main graph's classifier tells apart.
    pub request_types: Vec<RequestType>,
    /// A subflow the main graph runs before classifying (e.g. authenticating the user when
    /// every request needs it); `null` when none.
    #[serde(default)]
    pub identify: Option<String>,
    /// Every subflow, listed after the subflows it runs.
    pub subflows: Vec<PlannedSubflow>,
    /// Per mutating tool, the subflows that authorize it.
    pub coverage: Vec<Coverage>,
    /// Policy statements the plan does not cover, as the model sees them.
    #[serde(default)]
    pub gaps: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestType {
    /// The classifier's branch label (snake_case).
    pub label: String,
    pub description: String,
    /// The subflow a request of this type runs.
    pub subflow: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedSubflow {
    pub id: String,
    pub title: String,
    /// What the subflow achieves and which policy rules it carries.
    pub purpose: String,
    /// A shared procedure: run by other subflows (or as the identify step).
    #[serde(default)]
    pub shared: bool,
    /// The agent tools its steps call or authorize.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Subflows it may run (each listed earlier in `subflows`).
    #[serde(default)]
    pub runs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub tool: String,
    pub subflows: Vec<String>,
}

impl Plan {
    pub fn subflow(&self, id: &str) -> Option<&PlannedSubflow> {
        self.subflows.iter().find(|s| s.id == id)
    }

    /// The plan's subflows marked shared.
    pub fn shared(&self) -> impl Iterator<Item = &PlannedSubflow> {
        self.subflows.iter().filter(|s| s.shared)
    }
}

/// A graph or node id: lowercase ASCII letters, digits and `_`, starting with a letter.
pub(super) fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Every problem of `plan` against the domain's catalogue, one line each, located by JSON
/// path; empty when the plan is usable.
pub(super) fn check(plan: &Plan, catalog: &ToolCatalog) -> Vec<String> {
    let mut problems = Vec::new();
    let mut p = |at: String, msg: String| problems.push(format!("{at}: {msg}"));
    let position = check_subflows(plan, catalog, &mut p);
    check_request_types(plan, &position, &mut p);
    check_reachability(plan, &mut p);
    check_coverage(plan, catalog, &mut p);
    problems
}

/// Subflows: ids, tools, and the ordering of `runs`; each subflow's position in the plan.
fn check_subflows<'p>(
    plan: &'p Plan,
    catalog: &ToolCatalog,
    p: &mut impl FnMut(String, String),
) -> BTreeMap<&'p str, usize> {
    let mut position: BTreeMap<&str, usize> = BTreeMap::new();
    if plan.subflows.is_empty() {
        p("subflows".into(), "the plan has no subflows".into());
    }
    for (i, s) in plan.subflows.iter().enumerate() {
        if !is_id(&s.id) || s.id == "main" {
            let msg = format!("`{}` is not a usable id (snake_case, not `main`)", s.id);
            p(format!("subflows[{i}].id"), msg);
        }
        if position.insert(&s.id, i).is_some() {
            p(
                format!("subflows[{i}].id"),
                format!("`{}` is listed twice", s.id),
            );
        }
        if s.purpose.trim().is_empty() {
            p(format!("subflows[{i}].purpose"), "is empty".into());
        }
        for (j, t) in s.tools.iter().enumerate() {
            if catalog.class_of(t).is_none() {
                let msg = format!("`{t}` is not an agent tool of domain `{}`", catalog.domain);
                p(format!("subflows[{i}].tools[{j}]"), msg);
            }
        }
    }
    for (i, s) in plan.subflows.iter().enumerate() {
        for (j, r) in s.runs.iter().enumerate() {
            let at = format!("subflows[{i}].runs[{j}]");
            match position.get(r.as_str()) {
                None => p(at, format!("`{r}` is not a planned subflow")),
                Some(&k) if k >= i => p(
                    at,
                    format!(
                        "`{r}` is listed at or after `{}`; list a subflow after the ones it runs",
                        s.id
                    ),
                ),
                Some(_) => {}
            }
        }
    }
    position
}

/// Request types (labels, descriptions, their subflows) and the identify step.
fn check_request_types(
    plan: &Plan,
    position: &BTreeMap<&str, usize>,
    p: &mut impl FnMut(String, String),
) {
    if plan.request_types.is_empty() {
        p(
            "request_types".into(),
            "the plan has no request types".into(),
        );
    }
    let mut labels = BTreeSet::new();
    for (i, r) in plan.request_types.iter().enumerate() {
        if !is_id(&r.label) || r.label == DENY_LABEL {
            let msg = format!(
                "`{}` is not a usable label (snake_case; `{DENY_LABEL}` is the refusal branch)",
                r.label
            );
            p(format!("request_types[{i}].label"), msg);
        } else if !labels.insert(r.label.as_str()) {
            let msg = format!("`{}` is used by two request types", r.label);
            p(format!("request_types[{i}].label"), msg);
        }
        if r.description.trim().is_empty() {
            p(format!("request_types[{i}].description"), "is empty".into());
        }
        if !position.contains_key(r.subflow.as_str()) {
            let msg = format!("`{}` is not a planned subflow", r.subflow);
            p(format!("request_types[{i}].subflow"), msg);
        }
    }
    if let Some(id) = &plan.identify
        && !position.contains_key(id.as_str())
    {
        p(
            "identify".into(),
            format!("`{id}` is not a planned subflow"),
        );
    }
}

/// Every subflow is reachable from the main graph, and a shared one is run by someone.
fn check_reachability(plan: &Plan, p: &mut impl FnMut(String, String)) {
    let mut reached: BTreeSet<&str> = plan
        .request_types
        .iter()
        .map(|r| r.subflow.as_str())
        .chain(plan.identify.as_deref())
        .collect();
    for s in plan.subflows.iter().rev() {
        if reached.contains(s.id.as_str()) {
            reached.extend(s.runs.iter().map(String::as_str));
        }
    }
    let run_by_others: BTreeSet<&str> = plan
        .subflows
        .iter()
        .flat_map(|s| s.runs.iter().map(String::as_str))
        .chain(plan.identify.as_deref())
        .collect();
    for (i, s) in plan.subflows.iter().enumerate() {
        if !reached.contains(s.id.as_str()) {
            let msg = format!(
                "`{}` is neither a request type's subflow, the identify subflow, nor run by one",
                s.id
            );
            p(format!("subflows[{i}]"), msg);
        }
        if s.shared && !run_by_others.contains(s.id.as_str()) {
            let msg = format!(
                "`{}` is marked shared but no subflow runs it and it is not the identify step",
                s.id
            );
            p(format!("subflows[{i}].shared"), msg);
        }
    }
}

/// The coverage audit: every mutating tool authorized by a subflow that lists it.
fn check_coverage(plan: &Plan, catalog: &ToolCatalog, p: &mut impl FnMut(String, String)) {
    for (i, c) in plan.coverage.iter().enumerate() {
        if catalog.class_of(&c.tool) != Some(ToolClass::Mutating) {
            let msg = format!("`{}` is not a mutating tool of the domain", c.tool);
            p(format!("coverage[{i}].tool"), msg);
            continue;
        }
        if c.subflows.is_empty() {
            let msg = format!("no subflow authorizes `{}`", c.tool);
            p(format!("coverage[{i}].subflows"), msg);
        }
        for (j, id) in c.subflows.iter().enumerate() {
            match plan.subflow(id) {
                None => p(
                    format!("coverage[{i}].subflows[{j}]"),
                    format!("`{id}` is not a planned subflow"),
                ),
                Some(s) if !s.tools.contains(&c.tool) => p(
                    format!("coverage[{i}].subflows[{j}]"),
                    format!("subflow `{id}` does not list `{}` in its tools", c.tool),
                ),
                Some(_) => {}
            }
        }
    }
    for tool in &catalog.mutating {
        if !plan.coverage.iter().any(|c| &c.tool == tool) {
            let msg = format!(
                "mutating tool `{tool}` has no coverage entry (every mutating tool needs a subflow that authorizes it)"
            );
            p("coverage".into(), msg);
        }
    }
}

/// Parses and checks a plan reply.
pub(super) fn parse(reply: &str, catalog: &ToolCatalog) -> Result<Plan, String> {
    let plan: Plan = crate::extract::parse_json(
        reply,
        "a plan object {\"request_types\", \"identify\", \"subflows\", \"coverage\", \"gaps\"}",
    )?;
    let problems = check(&plan, catalog);
    if problems.is_empty() {
        Ok(plan)
    } else {
        Err(problems.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> ToolCatalog {
        ToolCatalog::new("d", ["change", "refund"], ["lookup"], ["transfer"])
    }

    fn plan() -> Plan {
        serde_json::from_value(serde_json::json!({
            "request_types": [{"label": "change", "description": "change it", "subflow": "change_flow"}],
            "identify": "verify",
            "subflows": [
                {"id": "verify", "title": "v", "purpose": "who", "shared": true, "tools": ["lookup"]},
                {"id": "refund_flow", "title": "r", "purpose": "refunds", "tools": ["refund"]},
                {"id": "change_flow", "title": "c", "purpose": "changes", "tools": ["lookup", "change"],
                 "runs": ["refund_flow"]}
            ],
            "coverage": [
                {"tool": "change", "subflows": ["change_flow"]},
                {"tool": "refund", "subflows": ["refund_flow"]}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn a_sound_plan_has_no_problems() {
        assert_eq!(check(&plan(), &catalog()), Vec::<String>::new());
    }

    #[test]
    fn ordering_labels_reachability_and_coverage_are_checked() {
        let mut p = plan();
        p.subflows.swap(1, 2); // change_flow now runs a subflow listed after it
        p.request_types[0].label = DENY_LABEL.into();
        p.subflows[0].tools.push("teleport".into());
        p.coverage[0].subflows = vec!["refund_flow".into()];
        p.coverage.pop();
        p.identify = None;
        let problems = check(&p, &catalog());
        let has = |s: &str| problems.iter().any(|p| p.contains(s));
        assert!(
            has("subflows[1].runs[0]: `refund_flow` is listed at or after `change_flow`"),
            "{problems:#?}"
        );
        assert!(
            has("request_types[0].label: `against_policy` is not a usable label"),
            "{problems:#?}"
        );
        assert!(
            has("subflows[0].tools[1]: `teleport` is not an agent tool"),
            "{problems:#?}"
        );
        assert!(
            has("coverage[0].subflows[0]: subflow `refund_flow` does not list `change`"),
            "{problems:#?}"
        );
        assert!(
            has("mutating tool `refund` has no coverage entry"),
            "{problems:#?}"
        );
        assert!(
            has("subflows[0]: `verify` is neither a request type's subflow"),
            "{problems:#?}"
        );
        assert!(
            has("subflows[0].shared: `verify` is marked shared"),
            "{problems:#?}"
        );
    }
}
