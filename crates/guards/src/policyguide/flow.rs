//! A validated workflow bundle indexed for a guide: nodes by reference (`graph/node`), their
//! successors, the authorization nodes a request may be granted, the procedure steps every
//! path to an authorization passes, and one deterministic text rendering for prompts.
//!
//! The raw-policy ablation has no graph; [`Flow::raw`] builds the degenerate flow it needs
//! from the domain's mutating tools (one authorization node per tool), so the request state
//! and its checks are the same code for every variant.

use super::workflow::{Actor, Bundle, Graph, Node, NodeKind};
use crate::catalog::ToolCatalog;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// `graph/node`: how request cards, model replies and records name a node.
pub(crate) fn node_ref(graph: &str, node: &str) -> String {
    format!("{graph}/{node}")
}

/// A node's successors (node index in its graph) and their branch labels.
type Successors = Vec<(usize, Option<String>)>;

/// A bundle indexed by node reference.
#[derive(Debug, Clone)]
pub struct Flow {
    bundle: Bundle,
    /// `graph/node` → (graph index, node index).
    index: HashMap<String, (usize, usize)>,
    /// Per graph, per node: successors and their branch labels.
    out: Vec<Vec<Successors>>,
    /// Per graph: its entry node.
    entry: Vec<usize>,
    /// Authorization node reference → its tool, sorted by reference.
    authorizations: BTreeMap<String, String>,
    /// Graph id → the subflow nodes (`graph/node`) that run it.
    callers: HashMap<String, Vec<String>>,
}

impl Flow {
    /// Indexes a bundle the validator accepted (every edge joins known nodes, one entry per
    /// graph); edges to unknown nodes are ignored rather than trusted.
    pub fn new(bundle: Bundle) -> Flow {
        let graphs: Vec<&Graph> = bundle.graphs().collect();
        let mut index = HashMap::new();
        let mut out = Vec::with_capacity(graphs.len());
        let mut entry = Vec::with_capacity(graphs.len());
        let mut authorizations = BTreeMap::new();
        let mut callers: HashMap<String, Vec<String>> = HashMap::new();
        for (gi, g) in graphs.iter().enumerate() {
            let local: HashMap<&str, usize> = g
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.id.as_str(), i))
                .collect();
            for (ni, n) in g.nodes.iter().enumerate() {
                index.insert(node_ref(&g.id, &n.id), (gi, ni));
                if n.kind == NodeKind::ToolAuthorization
                    && let Some(tool) = &n.tool
                {
                    authorizations.insert(node_ref(&g.id, &n.id), tool.clone());
                }
                if n.kind == NodeKind::Subflow
                    && let Some(sub) = &n.subflow
                {
                    callers
                        .entry(sub.clone())
                        .or_default()
                        .push(node_ref(&g.id, &n.id));
                }
            }
            let mut succ = vec![Vec::new(); g.nodes.len()];
            for e in &g.edges {
                if let (Some(&f), Some(&t)) = (local.get(e.from.as_str()), local.get(e.to.as_str()))
                {
                    succ[f].push((t, e.label.clone()));
                }
            }
            out.push(succ);
            entry.push(
                g.nodes
                    .iter()
                    .position(|n| n.kind == NodeKind::Entry)
                    .unwrap_or(0),
            );
        }
        Flow {
            bundle,
            index,
            out,
            entry,
            authorizations,
            callers,
        }
    }

    /// The flow of the raw-policy ablation: no procedure, a classifier with one authorization
    /// node per mutating tool of the domain (`raw/authorize_<tool>`), so authorizations are
    /// still enumerated and filtered by code.
    pub fn raw(catalog: &ToolCatalog) -> Flow {
        let mut tools: Vec<&String> = catalog.mutating.iter().collect();
        tools.sort();
        let node = |id: String, kind, tool: Option<String>, action: String| Node {
            id,
            kind,
            actor: Actor::System,
            action,
            condition: String::new(),
            tool,
            subflow: None,
            source: None,
        };
        let mut nodes = vec![
            node("start".into(), NodeKind::Entry, None, String::new()),
            node(
                "classify".into(),
                NodeKind::Decision,
                None,
                "which action does the user ask for?".into(),
            ),
        ];
        let mut edges = vec![super::workflow::Edge {
            from: "start".into(),
            to: "classify".into(),
            label: None,
        }];
        for t in &tools {
            let id = format!("authorize_{t}");
            nodes.push(node(
                id.clone(),
                NodeKind::ToolAuthorization,
                Some(t.to_string()),
                format!("authorize `{t}`"),
            ));
            edges.push(super::workflow::Edge {
                from: "classify".into(),
                to: id.clone(),
                label: Some(t.to_string()),
            });
            edges.push(super::workflow::Edge {
                from: id,
                to: "done".into(),
                label: None,
            });
        }
        nodes.push(node("done".into(), NodeKind::Exit, None, String::new()));
        Flow::new(Bundle {
            schema: super::SCHEMA_VERSION,
            domain: catalog.domain.clone(),
            main: Graph {
                id: "raw".into(),
                title: "raw policy".into(),
                nodes,
                edges,
            },
            subflows: Vec::new(),
        })
    }

    pub fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    fn graph(&self, gi: usize) -> &Graph {
        if gi == 0 {
            &self.bundle.main
        } else {
            &self.bundle.subflows[gi - 1]
        }
    }

    /// The node a reference names, with its graph id.
    pub fn node(&self, r: &str) -> Option<(&str, &Node)> {
        let &(gi, ni) = self.index.get(r)?;
        let g = self.graph(gi);
        Some((g.id.as_str(), &g.nodes[ni]))
    }

    pub fn contains(&self, r: &str) -> bool {
        self.index.contains_key(r)
    }

    /// Where a new request starts: the main graph's entry.
    pub fn start(&self) -> String {
        self.entry_of(0)
    }

    fn entry_of(&self, gi: usize) -> String {
        let g = self.graph(gi);
        node_ref(&g.id, &g.nodes[self.entry[gi]].id)
    }

    /// The entry of a graph by id.
    pub fn graph_entry(&self, graph: &str) -> Option<String> {
        self.graphs()
            .position(|g| g.id == graph)
            .map(|gi| self.entry_of(gi))
    }

    fn graphs(&self) -> impl Iterator<Item = &Graph> {
        self.bundle.graphs()
    }

    /// Successors of a node with their branch labels (same graph).
    pub fn successors(&self, r: &str) -> Vec<(String, Option<&str>)> {
        let Some(&(gi, ni)) = self.index.get(r) else {
            return Vec::new();
        };
        let g = self.graph(gi);
        self.out[gi][ni]
            .iter()
            .map(|(t, l)| (node_ref(&g.id, &g.nodes[*t].id), l.as_deref()))
            .collect()
    }

    /// The subflow nodes that run graph `graph`.
    pub fn callers(&self, graph: &str) -> &[String] {
        self.callers.get(graph).map_or(&[], Vec::as_slice)
    }

    /// Every node of graph `graph` and of the subflows it runs (each graph once), with its
    /// reference.
    pub fn tree(&self, graph: &str) -> Vec<(String, &Node)> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![graph.to_string()];
        while let Some(g) = todo.pop() {
            if !seen.insert(g.clone()) {
                continue;
            }
            for graph in self.graphs().filter(|x| x.id == g) {
                for n in &graph.nodes {
                    if n.kind == NodeKind::Subflow {
                        todo.extend(n.subflow.clone());
                    }
                    out.push((node_ref(&graph.id, &n.id), n));
                }
            }
        }
        out
    }

    /// Tools of the `tool_call` nodes of graph `graph` and the subflows it runs, sorted.
    pub fn tree_tools(&self, graph: &str) -> Vec<String> {
        let tools: std::collections::BTreeSet<String> = self
            .tree(graph)
            .into_iter()
            .filter(|(_, n)| n.kind == NodeKind::ToolCall)
            .filter_map(|(_, n)| n.tool.clone())
            .collect();
        tools.into_iter().collect()
    }

    /// Whether graph `graph` has a way from its entry to an exit whose tool steps
    /// (`tool_call`, `tool_authorization`) all pass `made`, nested subflows judged the same
    /// way; a graph that runs itself again has no way through. An unknown graph has one.
    pub fn way_through(&self, graph: &str, made: &dyn Fn(&str) -> bool) -> bool {
        self.way_through_open(graph, made, &mut std::collections::HashSet::new())
    }

    fn way_through_open(
        &self,
        graph: &str,
        made: &dyn Fn(&str) -> bool,
        open: &mut std::collections::HashSet<String>,
    ) -> bool {
        let Some(start) = self.graph_entry(graph) else {
            return true;
        };
        if !open.insert(graph.to_string()) {
            return false;
        }
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![start];
        let mut done = false;
        while let Some(r) = todo.pop() {
            if !seen.insert(r.clone()) {
                continue;
            }
            let Some((_, n)) = self.node(&r) else {
                continue;
            };
            let passable = match n.kind {
                NodeKind::Exit => {
                    done = true;
                    break;
                }
                NodeKind::ToolCall | NodeKind::ToolAuthorization => {
                    n.tool.as_deref().is_some_and(made)
                }
                NodeKind::Subflow => {
                    self.way_through_open(n.subflow.as_deref().unwrap_or_default(), made, open)
                }
                _ => true,
            };
            if passable {
                todo.extend(self.successors(&r).into_iter().map(|(t, _)| t));
            }
        }
        open.remove(graph);
        done
    }

    /// Every authorization node and its tool: the only authorizations a request may hold.
    pub fn authorizations(&self) -> &BTreeMap<String, String> {
        &self.authorizations
    }

    /// The steps every path to `target` passes, in path order: the target's dominators in its
    /// own graph, preceded by the dominators of the subflow node that runs the graph (the
    /// first caller found, recursively up to the main graph). Entry nodes and the containing
    /// subflow nodes themselves are left out.
    pub fn required_steps(&self, target: &str) -> Vec<String> {
        let mut chain = Vec::new();
        let mut at = target.to_string();
        let mut seen = std::collections::HashSet::new();
        while let Some(&(gi, ni)) = self.index.get(&at) {
            if !seen.insert(at.clone()) {
                break;
            }
            let g = self.graph(gi);
            let mut steps: Vec<String> = self
                .dominators(gi, ni)
                .into_iter()
                .filter(|&d| d != ni && g.nodes[d].kind != NodeKind::Entry)
                .map(|d| node_ref(&g.id, &g.nodes[d].id))
                .collect();
            steps.extend(chain);
            chain = steps;
            // The subflow node that runs this graph is its container, not a step before it;
            // the steps before that node come next.
            match self.callers(&g.id).first() {
                Some(caller) if gi != 0 => at = caller.clone(),
                _ => break,
            }
        }
        chain
    }

    /// Dominators of node `ni` in graph `gi` from its entry, in path order (entry first).
    fn dominators(&self, gi: usize, ni: usize) -> Vec<usize> {
        let n = self.out[gi].len();
        let mut preds = vec![Vec::new(); n];
        for (f, succ) in self.out[gi].iter().enumerate() {
            for (t, _) in succ {
                preds[*t].push(f);
            }
        }
        let entry = self.entry[gi];
        let mut dom: Vec<Vec<bool>> = vec![vec![true; n]; n];
        dom[entry] = vec![false; n];
        dom[entry][entry] = true;
        let mut changed = true;
        while changed {
            changed = false;
            for v in 0..n {
                if v == entry {
                    continue;
                }
                let mut new = vec![preds[v].is_empty(); n];
                for (k, p) in preds[v].iter().enumerate() {
                    if k == 0 {
                        new.clone_from(&dom[*p]);
                    } else {
                        for (a, b) in new.iter_mut().zip(&dom[*p]) {
                            *a &= *b;
                        }
                    }
                }
                new[v] = true;
                if new != dom[v] {
                    dom[v] = new;
                    changed = true;
                }
            }
        }
        // Dominators form a chain; order them by how many dominators each has.
        let mut ds: Vec<usize> = (0..n).filter(|&d| dom[ni][d]).collect();
        ds.sort_by_key(|&d| dom[d].iter().filter(|x| **x).count());
        ds
    }

    /// The bundle as text for a prompt: every graph, its nodes in file order with kind, actor,
    /// tool or subflow, action and condition, and edges with labels. Deterministic, so a
    /// prompt prefix holding it is byte-stable.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for g in self.graphs() {
            let _ = writeln!(s, "## Graph `{}` — {}", g.id, g.title);
            for n in &g.nodes {
                let what = match (&n.tool, &n.subflow) {
                    (Some(t), _) => format!(" tool=`{t}`"),
                    (_, Some(f)) => format!(" subflow=`{f}`"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    s,
                    "- `{}` [{}; {}{what}] {} — satisfied when: {}",
                    node_ref(&g.id, &n.id),
                    n.kind.as_str(),
                    actor_str(n.actor),
                    n.action,
                    n.condition
                );
            }
            for e in &g.edges {
                match &e.label {
                    Some(l) => {
                        let _ = writeln!(s, "  `{}` -> `{}` [{l}]", e.from, e.to);
                    }
                    None => {
                        let _ = writeln!(s, "  `{}` -> `{}`", e.from, e.to);
                    }
                }
            }
            s.push('\n');
        }
        s
    }
}

fn actor_str(a: Actor) -> &'static str {
    match a {
        Actor::Agent => "agent",
        Actor::User => "user",
        Actor::System => "system",
    }
}
