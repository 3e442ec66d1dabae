//! Stage 4's checks on one generated subflow: the reply must deserialize as the bundle's own
//! [`Graph`] type (unknown fields are errors), carry the planned id, run only the subflows the
//! plan lets it run, authorize the mutating tools the plan gave it, and pass every validator
//! rule that concerns a single graph. Checking each subflow on its own means a repair turn can
//! name exactly what is wrong with it, instead of the whole bundle failing at the end.

use super::compose::node;
use super::plan::{Plan, PlannedSubflow};
use crate::extract::parse_json;
use tauguard_guards::{
    Actor, Bundle, Edge, Graph, NodeKind, Rule, SCHEMA_VERSION, ToolCatalog, ToolClass, validate,
};

const SHAPE: &str = "one graph object {\"id\", \"title\", \"nodes\": [...], \"edges\": [...]}";

/// Parses and checks the subflow `planned` of `plan`.
pub(super) fn parse(
    reply: &str,
    planned: &PlannedSubflow,
    plan: &Plan,
    catalog: &ToolCatalog,
) -> Result<Graph, String> {
    let graph: Graph = parse_json(reply, SHAPE)?;
    let problems = check(&graph, planned, plan, catalog);
    if problems.is_empty() {
        Ok(graph)
    } else {
        Err(problems.join("\n"))
    }
}

/// Every problem of `graph` as the subflow `planned`, one line each.
pub(super) fn check(
    graph: &Graph,
    planned: &PlannedSubflow,
    plan: &Plan,
    catalog: &ToolCatalog,
) -> Vec<String> {
    let mut problems = Vec::new();
    if graph.id != planned.id {
        problems.push(format!(
            "`id` is `{}`, but this subflow is `{}`",
            graph.id, planned.id
        ));
        return problems;
    }
    for n in graph.nodes.iter().filter(|n| n.kind == NodeKind::Subflow) {
        let Some(target) = n.subflow.as_deref() else {
            continue; // the validator below names the missing id
        };
        if !planned.runs.iter().any(|r| r == target) {
            let allowed = if planned.runs.is_empty() {
                "none".to_string()
            } else {
                planned.runs.join(", ")
            };
            problems.push(format!(
                "graph `{}`, node `{}`: runs subflow `{target}`, which the plan does not let `{}` run (allowed: {allowed})",
                graph.id, n.id, graph.id
            ));
        }
    }
    for tool in &planned.tools {
        let authorized = graph
            .nodes
            .iter()
            .any(|n| n.kind == NodeKind::ToolAuthorization && n.tool.as_deref() == Some(tool));
        if catalog.class_of(tool) == Some(ToolClass::Mutating) && !authorized {
            problems.push(format!(
                "graph `{}`: the plan gives mutating tool `{tool}` to this subflow, but no `tool_authorization` node names it",
                graph.id
            ));
        }
    }
    // The single-graph rules of the validator, on a bundle where this subflow is run from a
    // stub main graph and the subflows it may run are placeholders.
    let placeholders = planned
        .runs
        .iter()
        .filter(|r| plan.subflow(r).is_some() && **r != graph.id)
        .map(|r| stub(r, None));
    let bundle = Bundle {
        schema: SCHEMA_VERSION,
        domain: catalog.domain.clone(),
        main: stub("main", Some(&graph.id)),
        subflows: std::iter::once(graph.clone()).chain(placeholders).collect(),
    };
    let report = validate(&bundle, catalog);
    problems.extend(
        report
            .problems
            .iter()
            .filter(|p| p.graph == graph.id && p.rule != Rule::AuthorizationCoverage)
            .map(|p| p.to_string()),
    );
    problems
}

/// A graph `entry → [run subflow] → exit`.
fn stub(id: &str, runs: Option<&str>) -> Graph {
    let mut nodes = vec![node(
        "entry",
        NodeKind::Entry,
        Actor::System,
        "start",
        "started",
    )];
    let mut edges = Vec::new();
    let mut last = "entry";
    if let Some(target) = runs {
        let mut run = node("run", NodeKind::Subflow, Actor::System, "run", "ran");
        run.subflow = Some(target.to_string());
        nodes.push(run);
        edges.push(edge("entry", "run", None));
        last = "run";
    }
    nodes.push(node("exit", NodeKind::Exit, Actor::System, "end", "ended"));
    edges.push(edge(last, "exit", None));
    Graph {
        id: id.to_string(),
        title: String::new(),
        nodes,
        edges,
    }
}

pub(super) fn edge(from: &str, to: &str, label: Option<&str>) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        label: label.map(str::to_string),
    }
}
