//! The workflow inside the agent instead of beside it — the comparisons that isolate what the
//! external guide adds, on the very same frozen graph:
//!
//! - [`SelfGuided`] (`policyguide-self`): the graph is appended to the agent's system prompt;
//!   no verifier, no request state, no interception.
//! - [`FlowAgent`] (`flowagent`): the graph compiled into an in-agent controller. Its program
//!   (the graph, in the agent's prompt) drives the agent; before each reply to a user turn the
//!   controller lists the state-changing actions whose required tool calls are not made yet
//!   (pre-decision guidance), and after the agent picks a state-changing action it validates
//!   the action's dependencies (post-decision validation), rejecting it at most once per tool
//!   and user turn so the agent cannot be locked out. The controller is code over the
//!   graph's structure: it checks which calls were made, never what the user said or whether
//!   the conditions in the graph's text hold — that judgement is what the guide's verifier
//!   adds.

use super::flow::Flow;
use super::workflow::NodeKind;
use crate::policyguard::sim::evidence::{CallRecord, call_records, succeeded};
use crate::seam::{Advice, Decision, Guard, GuardContext, Guidance, Ruling};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tauguard_core::ToolCall;
use tauguard_core::record::{GuideEvent, GuideTrigger, RequirementResult, RoleUsage};

/// `policyguide-self`: the graph handed to the agent, nothing else.
#[derive(Debug)]
pub(crate) struct SelfGuided {
    name: String,
    instructions: Arc<str>,
}

impl SelfGuided {
    /// `instructions`: the rendered `workflow/self.jinja` (graph included).
    pub(crate) fn new(name: impl Into<String>, instructions: Arc<str>) -> SelfGuided {
        SelfGuided {
            name: name.into(),
            instructions,
        }
    }
}

impl Guard for SelfGuided {
    fn name(&self) -> &str {
        &self.name
    }

    fn judges_calls(&self) -> bool {
        false
    }

    fn on_mutating_call<'a>(
        &'a self,
        _ctx: &'a GuardContext<'a>,
        _call: &'a ToolCall,
    ) -> Ruling<'a> {
        Decision::pass(Vec::new()).into_ruling()
    }

    fn agent_instructions(&self) -> Option<Arc<str>> {
        Some(self.instructions.clone())
    }
}

/// What a mutating tool depends on: per authorization node of the tool, the alternatives of
/// each required step (one tool, or any tool of a required subflow).
type Dependencies = BTreeMap<String, Vec<Vec<Vec<String>>>>;

/// `flowagent`: the graph as an in-agent controller.
#[derive(Debug)]
pub(crate) struct FlowAgent {
    name: String,
    instructions: Arc<str>,
    deps: Dependencies,
}

/// Per simulation: tools rejected in the current user-turn region.
#[derive(Default)]
struct Rejected(BTreeSet<String>);

impl FlowAgent {
    /// `instructions`: the rendered `workflow/flowagent.jinja` (graph included).
    /// Dependencies are the read-only calls (`read_only`) and earlier mutations the graph
    /// requires before each authorization; a call that yields no fact (`calculate`) is none.
    pub(crate) fn new(
        name: impl Into<String>,
        flow: &Flow,
        read_only: &BTreeSet<String>,
        instructions: Arc<str>,
    ) -> FlowAgent {
        let mut deps: Dependencies = BTreeMap::new();
        for (auth, tool) in flow.authorizations() {
            let mut steps = Vec::new();
            for step in flow.required_steps(auth) {
                let Some((_, n)) = flow.node(&step) else {
                    continue;
                };
                match n.kind {
                    NodeKind::ToolCall => {
                        steps.extend(
                            n.tool
                                .clone()
                                .filter(|t| read_only.contains(t))
                                .map(|t| vec![t]),
                        );
                    }
                    NodeKind::ToolAuthorization => {
                        steps.extend(n.tool.clone().map(|t| vec![t]));
                    }
                    NodeKind::Subflow => {
                        let mut tools = flow.tree_tools(n.subflow.as_deref().unwrap_or_default());
                        tools.retain(|t| read_only.contains(t));
                        if !tools.is_empty() {
                            steps.push(tools);
                        }
                    }
                    _ => {}
                }
            }
            deps.entry(tool.clone()).or_default().push(steps);
        }
        FlowAgent {
            name: name.into(),
            instructions,
            deps,
        }
    }

    /// The steps `tool` still misses: those of its authorization node closest to done;
    /// empty when one of its nodes has every dependency made.
    fn missing(&self, records: &[CallRecord<'_>], tool: &str) -> Vec<Vec<String>> {
        let made = |alts: &Vec<String>| alts.iter().any(|t| succeeded(records, t).next().is_some());
        self.deps
            .get(tool)
            .into_iter()
            .flatten()
            .map(|steps| {
                steps
                    .iter()
                    .filter(|s| !made(s))
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .min_by_key(Vec::len)
            .unwrap_or_default()
    }
}

fn describe(missing: &[Vec<String>]) -> String {
    missing
        .iter()
        .map(|alts| {
            alts.iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        })
        .collect::<Vec<_>>()
        .join(", then ")
}

impl Guard for FlowAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn agent_instructions(&self) -> Option<Arc<str>> {
        Some(self.instructions.clone())
    }

    fn before_agent_turn<'a>(&'a self, ctx: &'a GuardContext<'a>) -> Advice<'a> {
        Box::pin(async move {
            ctx.state.with(|r: &mut Rejected| r.0.clear());
            let mut available = Vec::new();
            let mut waiting = Vec::new();
            // The history's calls, read once for every tool.
            let records = call_records(ctx.history, None);
            for tool in self.deps.keys() {
                let missing = self.missing(&records, tool);
                if missing.is_empty() {
                    available.push(tool.clone());
                } else {
                    waiting.push(format!("`{tool}` needs {}", describe(&missing)));
                }
            }
            let mut text = String::from("Controller: ");
            if available.is_empty() {
                text.push_str("no state-changing action is available yet.");
            } else {
                let names: Vec<String> = available.iter().map(|t| format!("`{t}`")).collect();
                text.push_str(&format!("available now: {}.", names.join(", ")));
            }
            if !waiting.is_empty() {
                text.push_str(&format!(" Not yet: {}.", waiting.join("; ")));
            }
            Ok(Some(Guidance {
                event: GuideEvent {
                    guard: self.name.clone(),
                    trigger: GuideTrigger::UserTurn,
                    at_message: ctx.at_message,
                    requests: Vec::new(),
                    enabled_tools: available,
                    guidance: Some(text),
                    rejected: Vec::new(),
                    usage: RoleUsage::default(),
                    verdict_source: Default::default(),
                    fail_reason: None,
                    fail_http_status: None,
                    info: Some(json!({"controller": "flowagent"})),
                },
            }))
        })
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(async move {
            let missing = self.missing(&call_records(ctx.history, None), &call.name);
            let requirement = |met: bool, reason: String| RequirementResult {
                name: "dependencies".into(),
                met,
                reason,
            };
            if missing.is_empty() {
                return Ok(Decision::pass(vec![requirement(
                    true,
                    "every required earlier call was made".into(),
                )]));
            }
            let first = ctx
                .state
                .with(|r: &mut Rejected| r.0.insert(call.name.clone()));
            let reason = format!("`{}` needs {} first", call.name, describe(&missing));
            if !first {
                let mut d = Decision::pass(vec![requirement(false, reason)]);
                d.info = Some(json!({"controller": "let through after one rejection"}));
                return Ok(d);
            }
            Ok(Decision::block(
                vec![requirement(false, reason.clone())],
                format!("Controller: this action is not valid yet: {reason}."),
            ))
        })
    }
}
