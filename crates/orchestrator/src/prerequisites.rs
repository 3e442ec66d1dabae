//! Prerequisites applied to simulations: which reads a compliant sim agent makes before each
//! mutating gold call (from `tasks/<domain>/prerequisites.toml`, resolved against the
//! environment state at that point of the gold replay), and which read prerequisites an
//! executed call lacked (from the independent call-NMR oracle, `tasks/<domain>/nmr_oracle.toml`:
//! the ground truth behind call-NMR).

use crate::nmr_oracle::NmrOracle;
use serde_json::{Map, Value};
use std::collections::HashSet;
use tauguard_core::record::CallAttempt;
use tauguard_core::{Message, Requestor, Task, ToolKind};
use tauguard_env::DomainData;
use tauguard_env::initial_env;
use tauguard_guards::{Prerequisites, ToolPrerequisites};
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

/// The first value of `key` anywhere in `v` (objects and arrays searched depth-first), so
/// a field nested in a result (`items[0].product_id`, `address.zip`) supplies a parameter.
fn deep_find<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .or_else(|| m.values().find_map(|x| deep_find(x, key))),
        Value::Array(a) => a.iter().find_map(|x| deep_find(x, key)),
        _ => None,
    }
}

/// What the planner knows when it resolves a read's arguments: the mutating call's
/// arguments, the results of the reads planned so far, and the tool's `read_arguments`.
struct Known<'a> {
    call: &'a Map<String, Value>,
    results: Vec<Value>,
    aliases:
        &'a std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>,
}

impl Known<'_> {
    /// The fields that may supply parameter `p` of `tool`: its aliases, else its own name.
    fn sources(&self, tool: &str, p: &str) -> Vec<String> {
        self.aliases
            .get(tool)
            .and_then(|m| m.get(p))
            .cloned()
            .unwrap_or_else(|| vec![p.to_string()])
    }

    fn field(&self, name: &str) -> Option<Value> {
        self.call
            .get(name)
            .or_else(|| self.results.iter().find_map(|r| deep_find(r, name)))
            .cloned()
    }

    /// Arguments for `tool` from known fields; `None` when a required parameter has none.
    fn resolve(&self, data: &DomainData, tool: &str) -> Option<Map<String, Value>> {
        let mut args = Map::new();
        for p in required_params(data, tool) {
            let v = self.sources(tool, &p).iter().find_map(|f| self.field(f))?;
            args.insert(p, v);
        }
        Some(args)
    }
}

/// Reads the policy requires before each agent-side mutating gold call of `task`.
pub(crate) fn plan_prerequisite_reads(
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

/// The planned reads of one mutating call, with what their results taught the planner.
struct Planner<'a> {
    data: &'a DomainData,
    env: &'a dyn tauguard_env::Environment,
    p: &'a ToolPrerequisites,
    known: Known<'a>,
    reads: Vec<PlannedRead>,
}

impl Planner<'_> {
    /// Runs `tool(args)` on a copy of the state and plans it when it succeeds; `helper` = only
    /// to learn another read's argument.
    fn push(&mut self, tool: &str, args: Map<String, Value>, helper: bool) -> bool {
        if self
            .reads
            .iter()
            .any(|r| r.tool == tool && r.arguments == args)
        {
            return true;
        }
        let mut copy = self.env.snapshot();
        let Ok(v) = copy.dispatch(Requestor::Assistant, tool, &args) else {
            return false;
        };
        self.known.results.push(json_of(v));
        self.reads.push(PlannedRead {
            tool: tool.to_string(),
            arguments: args,
            identity: self.p.identity_reads.iter().any(|i| i == tool),
            helper,
        });
        true
    }

    /// Plans `tool`. Each parameter takes the first of its source fields that is known or
    /// that one intermediate read supplies (the user's profile for the e-mail of an identity
    /// lookup, a line's record for its plan id), so an earlier source wins even when a later
    /// one is known already.
    fn plan(&mut self, tool: &str) -> bool {
        let mut args = Map::new();
        for p in required_params(self.data, tool) {
            let found = self
                .known
                .sources(tool, &p)
                .iter()
                .find_map(|f| self.known.field(f).or_else(|| self.via_helper(f)));
            let Some(v) = found else { return false };
            args.insert(p, v);
        }
        self.push(tool, args, false)
    }

    /// Plans the first read-only tool whose arguments are known and whose result has `field`;
    /// returns the field's value.
    fn via_helper(&mut self, field: &str) -> Option<Value> {
        let helpers: Vec<String> = self
            .data
            .tool_schemas
            .assistant
            .iter()
            .map(|t| t.name.clone())
            .filter(|t| self.env.tool_kind(Requestor::Assistant, t) == Some(ToolKind::Read))
            .collect();
        for helper in helpers {
            let Some(args) = self.known.resolve(self.data, &helper) else {
                continue;
            };
            let mut copy = self.env.snapshot();
            let Ok(v) = copy.dispatch(Requestor::Assistant, &helper, &args) else {
                continue;
            };
            let value = json_of(v);
            if let Some(found) = deep_find(&value, field).cloned()
                && self.push(&helper, args, true)
            {
                return Some(found);
            }
        }
        None
    }
}

/// A tool result as JSON (text results are parsed; unparseable text is null).
fn json_of(v: tauguard_env::ToolValue) -> Value {
    match v {
        tauguard_env::ToolValue::Text(t) => serde_json::from_str(&t).unwrap_or(Value::Null),
        other => other.into_json(),
    }
}

fn reads_for(
    data: &DomainData,
    env: &dyn tauguard_env::Environment,
    call: &Map<String, Value>,
    p: &ToolPrerequisites,
) -> Vec<PlannedRead> {
    let mut pl = Planner {
        data,
        env,
        p,
        known: Known {
            call,
            results: Vec::new(),
            aliases: &p.read_arguments,
        },
        reads: Vec::new(),
    };
    for link in &p.argument_links {
        if let Some(v) = call.get(&link.argument) {
            let mut args = Map::new();
            args.insert(link.read_argument.clone(), v.clone());
            if let Some(full) = pl.known.resolve(data, &link.read) {
                args = full.into_iter().chain(args).collect();
            }
            pl.push(&link.read, args, false);
        }
    }
    for tool in &p.required_reads {
        // A tool with its own argument sources is read for those (the plan behind the line).
        let aliased = p.read_arguments.contains_key(tool);
        if aliased || !pl.reads.iter().any(|r| &r.tool == tool) {
            pl.plan(tool);
        }
    }
    for group in &p.required_any_reads {
        if !pl.reads.iter().any(|r| group.contains(&r.tool)) {
            for t in group {
                if pl.plan(t) {
                    break;
                }
            }
        }
    }
    if !p.identity_reads.is_empty() && !pl.reads.iter().any(|r| r.identity) {
        for t in &p.identity_reads {
            if pl.plan(t) {
                break;
            }
        }
    }
    let mut reads = pl.reads;
    // Identity first, as the policy orders it.
    reads.sort_by_key(|r| !r.identity);
    reads
}

/// Fills `missing_prerequisites` of every attempt that executed: the read prerequisites of the
/// call-NMR oracle ([`crate::nmr_oracle`]) it lacked at that point. The oracle, not the
/// prerequisites file the offline guards judge with, so call-NMR is not circular. A tool the
/// oracle does not list stays unlabelled.
pub fn label_missing_prerequisites(
    attempts: &mut [CallAttempt],
    messages: &[Message],
    oracle: &NmrOracle,
) {
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
        a.missing_prerequisites = oracle.missing(&messages[..idx], call);
    }
}
