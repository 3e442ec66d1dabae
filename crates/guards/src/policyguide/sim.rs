//! The offline guide verifier: one rule-based "generation" per trigger, deciding only from
//! what it is given — the flow (the workflow graph, or the raw policy's degenerate flow), the
//! conversation and the request state.
//!
//! - **Reconcile.** A request opens when a user message names a branch of the main graph's
//!   request classifier (the branch label's words), or when the agent attempts a mutating
//!   call no request covers (the call shows the request). Requests are keyed by the subflow
//!   the branch runs.
//! - **Traverse.** A request's procedure is the steps every path to its authorization nodes
//!   passes ([`Flow::required_steps`]). A step is judged from evidence only: a `tool_call` of a
//!   read-only tool (or an earlier `tool_authorization`) by a successful call of its tool (a
//!   call of a tool that yields no fact, such as `calculate`, counts as met); a `subflow` by a
//!   way through it whose tool steps were all made; a `user_input` that asks for consent (its
//!   text speaks of a yes, confirming or consent) by the user's explicit yes after the agent's
//!   last summary. Speech and decisions cannot be judged offline and count as satisfied. The
//!   request stops at its first unsatisfied step, whose action is the remediation.
//! - **Decide.** An authorization node is granted when all its steps are satisfied.
//!
//! A request already in the state advances from its saved position (its card's node): the
//! steps of a procedure before that node were judged satisfied at an earlier generation and
//! are not judged again, and the authorizations it holds stay held until their call has run —
//! so a second summary after the user's yes does not send a granted request back to its
//! consent step, while a second call of the tool walks the procedure again.
//!
//! At an authorized call, [`GuideVerifier::outside_authorization`] judges the arguments with
//! the PolicyGuard sim verifier reading the guide's own text (the graph's node texts, or the
//! raw policy): a rule or prerequisite that text does not state is never checked.

use super::flow::{Flow, node_ref};
use super::guide::{GuideReply, GuideRequest, GuideVerifier};
use super::state::RequestUpdate;
use super::workflow::NodeKind;
use crate::catalog::ToolCatalog;
use crate::policyguard::sim::SimVerifier;
use crate::policyguard::sim::evidence::{call_records, confirmation, succeeded};
use crate::seam::{GuardContext, GuardError};
use serde_json::json;
use std::collections::{BTreeSet, HashSet};
use tauguard_core::dialogue::is_guidance;
use tauguard_core::record::{GuideTrigger, RequestCard, RequestStatus, Verdict};
use tauguard_core::{Message, ToolCall};
use tauguard_llm::BoxFuture;
use tauguard_llm::SIM_PROVIDER;

/// The offline guide verifier.
#[derive(Debug)]
pub(crate) struct SimGuide {
    /// Per classifier branch: its label's words and the subflow it runs.
    branches: Vec<Branch>,
    /// Judges the arguments of authorized calls against the guide's own text.
    judge: SimVerifier,
    mutating: BTreeSet<String>,
    /// The domain's read-only tools: the only calls whose results are facts.
    read_only: BTreeSet<String>,
}

#[derive(Debug)]
struct Branch {
    label: String,
    words: Vec<String>,
    /// Authorization nodes in the target's call tree.
    authorizations: Vec<String>,
}

/// Words of a label that are too generic to name a request.
const GENERIC: &[&str] = &["scope", "against", "policy", "request", "user", "data"];

fn stem(w: &str) -> String {
    w.chars().take(5).collect()
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4)
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

impl SimGuide {
    /// `judge` reads the guide's text: for the graph, [`graph_text`]; for the raw-policy
    /// ablation, the policy.
    pub(crate) fn new(flow: &Flow, judge: SimVerifier, catalog: &ToolCatalog) -> SimGuide {
        let main = &flow.bundle().main;
        let mut branches = Vec::new();
        for n in main.nodes.iter().filter(|n| n.kind == NodeKind::Decision) {
            let here = node_ref(&main.id, &n.id);
            for (to, label) in flow.successors(&here) {
                let Some(label) = label else { continue };
                let Some((_, node)) = flow.node(&to) else {
                    continue;
                };
                let target = node.subflow.clone().unwrap_or(to.clone());
                let authorizations = tree_authorizations(flow, &target, &to);
                if authorizations.is_empty() && node.subflow.is_none() {
                    continue;
                }
                let words = words(label)
                    .into_iter()
                    .filter(|w| !GENERIC.iter().any(|g| stem(g) == *w))
                    .collect();
                branches.push(Branch {
                    label: label.to_string(),
                    words,
                    authorizations,
                });
            }
        }
        SimGuide {
            branches,
            judge,
            mutating: catalog.mutating.clone(),
            read_only: catalog.read_only.clone(),
        }
    }
}

/// The graph's own text, for the argument judge: every node's action, condition and quoted
/// policy source.
pub(crate) fn graph_text(flow: &Flow) -> String {
    let mut s = String::new();
    for g in flow.bundle().graphs() {
        for n in &g.nodes {
            for t in [Some(&n.action), Some(&n.condition), n.source.as_ref()]
                .into_iter()
                .flatten()
            {
                s.push_str(t);
                s.push('\n');
            }
        }
    }
    s
}

/// Authorization nodes reachable by running graph `target` (and the subflows it runs), or
/// the node `fallback` itself when it is one.
fn tree_authorizations(flow: &Flow, target: &str, fallback: &str) -> Vec<String> {
    if flow
        .node(fallback)
        .is_some_and(|(_, n)| n.kind == NodeKind::ToolAuthorization)
    {
        return vec![fallback.to_string()];
    }
    let mut out: Vec<String> = flow
        .tree(target)
        .into_iter()
        .filter(|(_, n)| n.kind == NodeKind::ToolAuthorization)
        .map(|(r, _)| r)
        .collect();
    out.sort();
    out
}

fn asks_consent(text: &str) -> bool {
    let t = text.to_lowercase();
    ["yes", "confirm", "consent", "agree"]
        .iter()
        .any(|w| t.contains(w))
}

/// A step not yet satisfied, and what the agent should do about it.
struct Missing {
    node: String,
    remedy: String,
}

impl SimGuide {
    /// The unsatisfied steps of `auth`'s procedure over `view`, in path order, from the
    /// request's saved position `saved`: when it is a step of this procedure, the steps before
    /// it were satisfied at an earlier generation and are not judged again.
    fn missing_steps(
        &self,
        flow: &Flow,
        view: &[Message],
        auth: &str,
        saved: Option<&str>,
    ) -> Vec<Missing> {
        let records = call_records(view, None);
        let mutating = |t: &str| self.mutating.contains(t);
        let steps = flow.required_steps(auth);
        let from = saved
            .and_then(|n| steps.iter().position(|s| s == n))
            .unwrap_or(0);
        let mut out = Vec::new();
        for step in steps.into_iter().skip(from) {
            let Some((_, n)) = flow.node(&step) else {
                continue;
            };
            let remedy = match n.kind {
                NodeKind::ToolCall | NodeKind::ToolAuthorization => {
                    let tool = n.tool.as_deref().unwrap_or_default();
                    // A step calling a tool that is neither a read nor a mutation
                    // (`calculate`) yields no fact to check: like speech, it counts as met.
                    let checkable = self.read_only.contains(tool) || self.mutating.contains(tool);
                    if !checkable || succeeded(&records, tool).next().is_some() {
                        continue;
                    }
                    format!("call `{tool}` ({})", n.action)
                }
                NodeKind::Subflow => {
                    let g = n.subflow.as_deref().unwrap_or_default();
                    let called = |t: &str| {
                        !(self.read_only.contains(t) || self.mutating.contains(t))
                            || succeeded(&records, t).next().is_some()
                    };
                    if flow.way_through(g, &called) {
                        continue;
                    }
                    let named: Vec<String> = flow
                        .tree_tools(g)
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect();
                    format!("{} first: call {}", n.action, named.join(" or "))
                }
                NodeKind::UserInput if asks_consent(&format!("{} {}", n.action, n.condition)) => {
                    if confirmation(view, &records, None, &mutating).0 {
                        continue;
                    }
                    format!(
                        "{}: list the action details to the user and get an explicit yes (confirm) before calling it",
                        n.action
                    )
                }
                _ => continue,
            };
            out.push(Missing { node: step, remedy });
        }
        out
    }

    /// The branches the user's messages name.
    fn named_branches(&self, view: &[Message]) -> Vec<usize> {
        let said: HashSet<String> = view
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => u.content.as_deref().filter(|t| !is_guidance(t)),
                _ => None,
            })
            .flat_map(words)
            .collect();
        (0..self.branches.len())
            .filter(|&b| self.branches[b].words.iter().any(|w| said.contains(w)))
            .collect()
    }

    fn reply(&self, request: &GuideRequest<'_>) -> GuideReply {
        let flow = request.flow;
        let view = request.ctx.history;
        let mut wanted = self.named_branches(view);
        if let Some(call) = request.pending {
            let covers = |b: usize| {
                self.branches[b]
                    .authorizations
                    .iter()
                    .any(|a| flow.authorizations().get(a) == Some(&call.name))
            };
            if !wanted.iter().any(|&b| covers(b))
                && let Some(b) = (0..self.branches.len()).find(|&b| covers(b))
            {
                wanted.push(b);
            }
        }
        let mut updates = Vec::new();
        let mut remedies = Vec::new();
        let known: Vec<&RequestCard> = request.cards.iter().collect();
        for b in wanted {
            let branch = &self.branches[b];
            let card = known.iter().find(|c| c.intent == branch.label);
            // A pending request keeps its authorizations and advances from its saved node.
            let saved = card.map(|c| c.node.as_str());
            let held: &[String] = card.map_or(&[], |c| c.authorizations.as_slice());
            let mut granted = Vec::new();
            // The request's position: the pending call's own procedure when a call was
            // intercepted, else the procedure closest to done (the one the conversation is
            // following), at its first unsatisfied step.
            let mut best: Option<(bool, usize, Missing)> = None;
            let records = call_records(view, None);
            for auth in &branch.authorizations {
                // Once its call has run, an authorization is used: the next call of the tool
                // walks its procedure again from the start.
                let used = flow
                    .authorizations()
                    .get(auth)
                    .is_some_and(|t| succeeded(&records, t).next().is_some());
                if held.contains(auth) && !used {
                    granted.push(auth.clone());
                    continue;
                }
                let from = if used { None } else { saved };
                let mut missing = self.missing_steps(flow, view, auth, from);
                if missing.is_empty() {
                    granted.push(auth.clone());
                    continue;
                }
                let pending_here = request
                    .pending
                    .is_some_and(|c| flow.authorizations().get(auth) == Some(&c.name));
                let rank = (!pending_here, missing.len());
                if best.as_ref().is_none_or(|(p, n, _)| rank < (*p, *n)) {
                    best = Some((rank.0, rank.1, missing.remove(0)));
                }
            }
            let first = best.map(|(_, _, m)| m);
            let tools: BTreeSet<&String> = branch
                .authorizations
                .iter()
                .filter_map(|a| flow.authorizations().get(a))
                .collect();
            let node = match &first {
                Some(m) => m.node.clone(),
                None => granted.first().cloned().unwrap_or_else(|| flow.start()),
            };
            if let Some(m) = &first {
                let named: Vec<String> = tools.iter().map(|t| format!("`{t}`")).collect();
                let id = card.map_or("new".to_string(), |c| c.id.clone());
                remedies.push(format!(
                    "Request {id} ({}): before {}, {}.",
                    branch.label,
                    named.join(" / "),
                    m.remedy
                ));
            }
            updates.push(RequestUpdate {
                id: card.map(|c| c.id.clone()),
                intent: Some(branch.label.clone()),
                node: Some(node),
                authorizations: Some(granted),
                status: Some(RequestStatus::Active),
                merge_into: None,
            });
        }
        let trigger = match request.trigger {
            GuideTrigger::UserTurn => "user_turn",
            GuideTrigger::Interception => "interception",
        };
        GuideReply {
            remediation: (!remedies.is_empty()).then(|| remedies.join(" ")),
            updates,
            info: Some(json!({"verifier": SIM_PROVIDER, "trigger": trigger})),
            ..GuideReply::default()
        }
    }
}

impl GuideVerifier for SimGuide {
    fn verify<'a>(
        &'a self,
        request: GuideRequest<'a>,
    ) -> BoxFuture<'a, Result<GuideReply, GuardError>> {
        Box::pin(async move { Ok(self.reply(&request)) })
    }

    fn outside_authorization(&self, ctx: &GuardContext<'_>, call: &ToolCall) -> Option<String> {
        let mutating = |t: &str| self.mutating.contains(t);
        let eval = self.judge.evaluate(ctx.history, call, &mutating);
        let d = self.judge.decide(call, eval);
        (d.verdict == Verdict::Block).then(|| d.remediation.unwrap_or_default())
    }
}
