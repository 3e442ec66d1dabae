//! The domain prerequisite file (`tasks/<domain>/prerequisites.toml`) applied to simulations:
//! which reads a compliant sim agent makes before each mutating gold call (resolved against
//! the environment state at that point of the gold replay), and which prerequisites an
//! executed call lacked (the ground truth behind call-NMR).

use crate::views::agent_view;
use serde_json::{Map, Value};
use std::collections::HashSet;
use tauguard_core::record::CallAttempt;
use tauguard_core::{Message, Requestor, Task, ToolKind};
use tauguard_env::DomainData;
use tauguard_env::gold::initial_env;
use tauguard_guards::policyguard::Variant;
use tauguard_guards::policyguard::checklist::DomainChecklists;
use tauguard_guards::policyguard::prerequisites::{Prerequisites, ToolPrerequisites};
use tauguard_guards::policyguard::sim::SimVerifier;
use tauguard_sim::agent::PlannedRead;

/// Required parameters of a read tool, from the schemas the agent sees.
fn required_params(data: &DomainData, tool: &str) -> Vec<String> {
    data.tool_schemas
        .assistant
        .iter()
        .find(|t| t.name == tool)
        .map(|t| t.required_parameters())
        .unwrap_or_default()
}

/// Arguments for `tool` taken from the call's arguments or from fields of earlier read
/// results; `None` when a required parameter has no known value.
fn resolve(
    data: &DomainData,
    tool: &str,
    call: &Map<String, Value>,
    results: &[Value],
) -> Option<Map<String, Value>> {
    let mut args = Map::new();
    for p in required_params(data, tool) {
        let v = call
            .get(&p)
            .cloned()
            .or_else(|| results.iter().find_map(|r| r.get(&p).cloned()))?;
        args.insert(p, v);
    }
    Some(args)
}

/// Reads the policy requires before each agent-side mutating gold call of `task`.
pub fn plan_prerequisite_reads(
    data: &DomainData,
    task: &Task,
    prereqs: &Prerequisites,
    mutating: &HashSet<String>,
) -> Vec<Vec<PlannedRead>> {
    let Ok(mut env) = initial_env(data, task) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in task.gold_actions() {
        let is_mut = a.requestor == Requestor::Assistant && mutating.contains(&a.name);
        if is_mut {
            let p = prereqs.tools.get(&a.name).cloned().unwrap_or_default();
            out.push(reads_for(data, env.as_ref(), &a.arguments, &p));
        }
        let _ = env.dispatch(a.requestor, &a.name, &a.arguments);
    }
    out
}

fn reads_for(
    data: &DomainData,
    env: &dyn tauguard_env::Environment,
    call: &Map<String, Value>,
    p: &ToolPrerequisites,
) -> Vec<PlannedRead> {
    let mut reads: Vec<PlannedRead> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let push = |tool: &str,
                args: Map<String, Value>,
                reads: &mut Vec<PlannedRead>,
                results: &mut Vec<Value>| {
        if reads.iter().any(|r| r.tool == tool && r.arguments == args) {
            return;
        }
        let mut copy = env.snapshot();
        if let Ok(v) = copy.dispatch(Requestor::Assistant, tool, &args) {
            let value = match v {
                tauguard_env::ToolValue::Text(t) => serde_json::from_str(&t).unwrap_or(Value::Null),
                other => other.into_json(),
            };
            results.push(value);
            reads.push(PlannedRead {
                tool: tool.to_string(),
                arguments: args,
                identity: p.identity_reads.iter().any(|i| i == tool),
            });
        }
    };
    for link in &p.argument_links {
        if let Some(v) = call.get(&link.argument) {
            let mut args = Map::new();
            args.insert(link.read_argument.clone(), v.clone());
            push(&link.read, args, &mut reads, &mut results);
        }
    }
    for tool in &p.required_reads {
        if !reads.iter().any(|r| &r.tool == tool)
            && let Some(args) = resolve(data, tool, call, &results)
        {
            push(tool, args, &mut reads, &mut results);
        }
    }
    for group in &p.required_any_reads {
        if !reads.iter().any(|r| group.contains(&r.tool))
            && let Some((tool, args)) = group
                .iter()
                .find_map(|t| resolve(data, t, call, &results).map(|a| (t, a)))
        {
            push(tool, args, &mut reads, &mut results);
        }
    }
    if !p.identity_reads.is_empty()
        && !reads.iter().any(|r| r.identity)
        && let Some((tool, args)) = p
            .identity_reads
            .iter()
            .find_map(|t| resolve(data, t, call, &results).map(|a| (t, a)))
    {
        push(tool, args, &mut reads, &mut results);
    }
    // Identity first, as the policy orders it.
    reads.sort_by_key(|r| !r.identity);
    reads
}

/// Fills `missing_prerequisites` of every attempt whose call is in `messages`: the hard
/// requirements of the prerequisite file (identity, reads, argument links, confirmation) NOT
/// MET at that point. Given the agent's view, that is every attempt, blocked ones included,
/// each judged on the history the agent had.
pub fn label_missing_prerequisites(
    attempts: &mut [CallAttempt],
    messages: &[Message],
    prereqs: &Prerequisites,
    data: &DomainData,
) {
    let checker = SimVerifier::new(
        Variant::Raw,
        false,
        prereqs.clone(),
        DomainChecklists::default(),
    );
    let probe = data.fresh_env();
    let mutating =
        |tool: &str| probe.tool_kind(Requestor::Assistant, tool) == Some(ToolKind::Write);
    for a in attempts.iter_mut() {
        let Some(idx) = messages
            .iter()
            .position(|m| m.tool_calls().iter().any(|c| c.id == a.call_id))
        else {
            continue;
        };
        let Some(call) = messages[idx]
            .tool_calls()
            .iter()
            .find(|c| c.id == a.call_id)
        else {
            continue;
        };
        let history = agent_view("", &messages[..=idx]);
        let eval = checker.evaluate(&history, call, &mutating);
        a.missing_prerequisites = Some(
            eval.requirements
                .iter()
                .filter(|r| r.hard && !r.result.met)
                .map(|r| r.result.name.clone())
                .collect(),
        );
    }
}
