//! Stage 5 and the pruning of stage 6: the main graph is built in code from the plan — entry,
//! the user stating the request, the optional identify subflow, the classifier decision with
//! one labelled branch and subflow node per request type plus the refusal branch, one exit —
//! because its shape follows from the plan mechanically and code cannot get it wrong. The
//! model only words the classifier and the refusal (what code cannot phrase from the policy).

use super::plan::{DENY_LABEL, Plan};
use super::subflow::edge;
use crate::extract::parse_json;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};
use tauguard_guards::{Actor, Graph, Node, NodeKind};

/// What a node says: its action, when it is satisfied, and the policy text it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeText {
    pub action: String,
    pub condition: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The model's wording of the main graph's two policy-bearing nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wording {
    pub classify: NodeText,
    pub deny: NodeText,
}

impl Wording {
    /// The code's own wording, used when the model's stays invalid.
    pub fn default_for(plan: &Plan) -> Wording {
        let labels: Vec<&str> = plan
            .request_types
            .iter()
            .map(|r| r.label.as_str())
            .chain([DENY_LABEL])
            .collect();
        Wording {
            classify: NodeText {
                action: format!("Which kind of request is it ({})?", labels.join(", ")),
                condition: "the user's messages show which kind of request it is".to_string(),
                source: None,
            },
            deny: NodeText {
                action: "Refuse the request as against the policy".to_string(),
                condition: "the agent refused without calling a tool that changes data".to_string(),
                source: None,
            },
        }
    }
}

/// Parses the compose reply: both texts present and non-empty.
pub(super) fn parse_wording(reply: &str) -> Result<Wording, String> {
    let w: Wording = parse_json(
        reply,
        "{\"classify\": {\"action\", \"condition\", \"source\"}, \"deny\": {...}}",
    )?;
    let mut problems = Vec::new();
    for (name, text) in [("classify", &w.classify), ("deny", &w.deny)] {
        for (field, value) in [("action", &text.action), ("condition", &text.condition)] {
            if value.trim().is_empty() {
                problems.push(format!("{name}.{field}: is empty"));
            }
        }
    }
    if problems.is_empty() {
        Ok(w)
    } else {
        Err(problems.join("\n"))
    }
}

/// A node without tool, subflow or source.
pub(super) fn node(id: &str, kind: NodeKind, actor: Actor, action: &str, condition: &str) -> Node {
    Node {
        id: id.to_string(),
        kind,
        actor,
        action: action.to_string(),
        condition: condition.to_string(),
        tool: None,
        subflow: None,
        source: None,
    }
}

fn subflow_node(id: &str, subflow: &str, action: String, source: Option<&str>) -> Node {
    let condition = format!("subflow `{subflow}` reached an exit");
    let mut n = node(id, NodeKind::Subflow, Actor::System, &action, &condition);
    n.subflow = Some(subflow.to_string());
    n.source = source.map(str::to_string);
    n
}

/// The main graph of `plan` with `wording`.
pub(super) fn main_graph(plan: &Plan, wording: &Wording, title: &str) -> Graph {
    let mut nodes = vec![
        node(
            "start",
            NodeKind::Entry,
            Actor::System,
            "A user turn opens a new request",
            "the conversation or a new request has started",
        ),
        node(
            "state_request",
            NodeKind::UserInput,
            Actor::User,
            "The user states what they need",
            "a request appears in a user message",
        ),
    ];
    let mut edges = vec![edge("start", "state_request", None)];
    let mut last = "state_request";
    if let Some(id) = &plan.identify {
        let action = format!("Run `{id}` before anything else is done for the request");
        nodes.push(subflow_node("identify", id, action, None));
        edges.push(edge(last, "identify", None));
        last = "identify";
    }
    let mut classify = node(
        "classify",
        NodeKind::Decision,
        Actor::Agent,
        &wording.classify.action,
        &wording.classify.condition,
    );
    classify.source = wording.classify.source.clone();
    nodes.push(classify);
    edges.push(edge(last, "classify", None));
    for r in &plan.request_types {
        let id = format!("run_{}", r.label);
        let action = format!("Run `{}`: {}", r.subflow, r.description.trim());
        nodes.push(subflow_node(&id, &r.subflow, action, r.source.as_deref()));
        edges.push(edge("classify", &id, Some(&r.label)));
        edges.push(edge(&id, "done", None));
    }
    let mut deny = node(
        "deny",
        NodeKind::AgentAction,
        Actor::Agent,
        &wording.deny.action,
        &wording.deny.condition,
    );
    deny.source = wording.deny.source.clone();
    nodes.push(deny);
    edges.push(edge("classify", "deny", Some(DENY_LABEL)));
    edges.push(edge("deny", "done", None));
    nodes.push(node(
        "done",
        NodeKind::Exit,
        Actor::System,
        "The request is finished",
        "its subflow or the refusal finished",
    ));
    Graph {
        id: "main".to_string(),
        title: title.to_string(),
        nodes,
        edges,
    }
}

/// Keeps the subflows some node runs — from the main graph, directly or through other
/// subflows — in their order; returns them and the ids of the others.
pub(super) fn prune(main: &Graph, subflows: Vec<Graph>) -> (Vec<Graph>, Vec<String>) {
    let runs = |g: &Graph| -> Vec<String> {
        g.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Subflow)
            .filter_map(|n| n.subflow.clone())
            .collect()
    };
    let mut used = BTreeSet::new();
    let mut queue: VecDeque<String> = runs(main).into();
    while let Some(id) = queue.pop_front() {
        if used.insert(id.clone())
            && let Some(g) = subflows.iter().find(|g| g.id == id)
        {
            queue.extend(runs(g));
        }
    }
    let (kept, pruned): (Vec<Graph>, Vec<Graph>) =
        subflows.into_iter().partition(|g| used.contains(&g.id));
    (kept, pruned.into_iter().map(|g| g.id).collect())
}
