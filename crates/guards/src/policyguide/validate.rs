//! The workflow validator: the checks a bundle must pass before a guide traverses it.
//!
//! Each rule guards against one way a traversal goes wrong: a tool the domain does not have
//! (the guide would authorize nothing real), a mutating tool without an authorization node
//! (the guide could never let it run, or would let it run unchecked), a read-only tool on an
//! authorization node (an authorization for a call no guard intercepts), a dangling edge or a
//! node unreachable from the entry (a step no request can reach), a node with no way to an
//! exit (a request that can never finish), a decision whose branches cannot be told apart, a
//! subflow that is missing, unused or recursive. Every problem is reported, not just the first,
//! each as one line naming the graph, the node and the rule.

use super::workflow::{Bundle, Graph, NodeKind, SCHEMA_VERSION};
use crate::catalog::{ToolCatalog, ToolClass};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt;

/// The rule a problem breaks (its name is what a report line shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Schema,
    DuplicateId,
    ToolInventory,
    ToolClass,
    AuthorizationCoverage,
    SubflowComposition,
    BranchCount,
    DanglingEdge,
    Reachability,
    ExitReachability,
}

impl Rule {
    /// Every rule, in declaration order: the checks a bundle is run through (`tauguard
    /// validate workflow --all` reports how many of them a bundle passes).
    pub const ALL: [Rule; 10] = [
        Rule::Schema,
        Rule::DuplicateId,
        Rule::ToolInventory,
        Rule::ToolClass,
        Rule::AuthorizationCoverage,
        Rule::SubflowComposition,
        Rule::BranchCount,
        Rule::DanglingEdge,
        Rule::Reachability,
        Rule::ExitReachability,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Schema => "schema",
            Rule::DuplicateId => "duplicate-id",
            Rule::ToolInventory => "tool-inventory",
            Rule::ToolClass => "tool-class",
            Rule::AuthorizationCoverage => "authorization-coverage",
            Rule::SubflowComposition => "subflow-composition",
            Rule::BranchCount => "branch-count",
            Rule::DanglingEdge => "dangling-edge",
            Rule::Reachability => "reachability",
            Rule::ExitReachability => "exit-reachability",
        }
    }
}

/// One broken rule, located by graph and (when it concerns one) node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub graph: String,
    pub node: Option<String>,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "graph `{}`", self.graph)?;
        if let Some(node) = &self.node {
            write!(f, ", node `{node}`")?;
        }
        write!(f, ": [{}] {}", self.rule.as_str(), self.message)
    }
}

/// A bundle's size, counted across the main graph and every subflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sizes {
    pub graphs: usize,
    pub nodes: usize,
    pub edges: usize,
    pub authorization_nodes: usize,
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} nodes, {} authorization nodes, {} edges, {} graphs (main + {} subflows)",
            self.nodes,
            self.authorization_nodes,
            self.edges,
            self.graphs,
            self.graphs.saturating_sub(1)
        )
    }
}

/// The validator's verdict: every problem found, and the bundle's sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub problems: Vec<Problem>,
    pub sizes: Sizes,
}

impl Report {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks `bundle` against the domain's tool catalogue and the graph rules of the module docs.
pub fn validate(bundle: &Bundle, catalog: &ToolCatalog) -> Report {
    let mut v = Validator::default();
    v.bundle_level(bundle, catalog);
    for graph in bundle.graphs() {
        v.graph(graph, catalog);
    }
    v.coverage(bundle, catalog);
    v.composition(bundle);
    let sizes = Sizes {
        graphs: 1 + bundle.subflows.len(),
        nodes: bundle.graphs().map(|g| g.nodes.len()).sum(),
        edges: bundle.graphs().map(|g| g.edges.len()).sum(),
        authorization_nodes: bundle
            .graphs()
            .flat_map(|g| &g.nodes)
            .filter(|n| n.kind == NodeKind::ToolAuthorization)
            .count(),
    };
    Report {
        problems: v.problems,
        sizes,
    }
}

#[derive(Default)]
struct Validator {
    problems: Vec<Problem>,
}

impl Validator {
    fn push(&mut self, graph: &str, node: Option<&str>, rule: Rule, message: String) {
        self.problems.push(Problem {
            graph: graph.to_string(),
            node: node.map(str::to_string),
            rule,
            message,
        });
    }

    fn bundle_level(&mut self, bundle: &Bundle, catalog: &ToolCatalog) {
        let main = bundle.main.id.as_str();
        if bundle.schema != SCHEMA_VERSION {
            let msg = format!(
                "schema version {} is not the supported version {SCHEMA_VERSION}",
                bundle.schema
            );
            self.push(main, None, Rule::Schema, msg);
        }
        if bundle.domain != catalog.domain {
            let msg = format!(
                "bundle is for domain `{}` but is validated against domain `{}`",
                bundle.domain, catalog.domain
            );
            self.push(main, None, Rule::Schema, msg);
        }
        let mut seen = BTreeSet::new();
        for g in bundle.graphs() {
            if !seen.insert(g.id.as_str()) {
                let msg = "graph id is used by more than one graph".to_string();
                self.push(&g.id, None, Rule::DuplicateId, msg);
            }
        }
    }

    fn graph(&mut self, g: &Graph, catalog: &ToolCatalog) {
        let gid = g.id.as_str();
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            if index.insert(n.id.as_str(), i).is_some() {
                let msg = "node id is used twice in this graph".to_string();
                self.push(gid, Some(&n.id), Rule::DuplicateId, msg);
            }
            self.node_fields(gid, n, catalog);
        }
        let entries: Vec<&str> = g
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Entry)
            .map(|n| n.id.as_str())
            .collect();
        if entries.len() != 1 {
            let msg = format!(
                "a graph needs exactly 1 entry node, found {}",
                entries.len()
            );
            self.push(gid, None, Rule::Schema, msg);
        }
        if !g.nodes.iter().any(|n| n.kind == NodeKind::Exit) {
            let msg = "a graph needs at least 1 exit node, found none".to_string();
            self.push(gid, None, Rule::Schema, msg);
        }

        let mut out: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
        let mut rev: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
        let mut labels: Vec<Vec<Option<&str>>> = vec![Vec::new(); g.nodes.len()];
        for e in &g.edges {
            let (from, to) = (index.get(e.from.as_str()), index.get(e.to.as_str()));
            for (end, id) in [("from", &e.from), ("to", &e.to)] {
                if !index.contains_key(id.as_str()) {
                    let msg = format!(
                        "edge `{}` -> `{}` has an unknown `{end}` node `{id}`",
                        e.from, e.to
                    );
                    self.push(gid, None, Rule::DanglingEdge, msg);
                }
            }
            if let (Some(&f), Some(&t)) = (from, to) {
                out[f].push(t);
                rev[t].push(f);
                labels[f].push(e.label.as_deref());
            }
        }
        for (i, n) in g.nodes.iter().enumerate() {
            self.branches(gid, &n.id, n.kind, &labels[i]);
        }
        if let [entry] = entries[..] {
            let reached = search(&out, [index[entry]]);
            for (i, n) in g.nodes.iter().enumerate() {
                if !reached[i] {
                    let msg = format!("not reachable from the entry node `{entry}`");
                    self.push(gid, Some(&n.id), Rule::Reachability, msg);
                }
            }
        }
        let exits = (0..g.nodes.len()).filter(|&i| g.nodes[i].kind == NodeKind::Exit);
        let finishes = search(&rev, exits);
        for (i, n) in g.nodes.iter().enumerate() {
            if !finishes[i] {
                let msg = "no path from this node to an exit node".to_string();
                self.push(gid, Some(&n.id), Rule::ExitReachability, msg);
            }
        }
    }

    fn node_fields(&mut self, gid: &str, n: &super::workflow::Node, catalog: &ToolCatalog) {
        let id = Some(n.id.as_str());
        let kind = n.kind.as_str();
        for (field, text) in [("action", &n.action), ("condition", &n.condition)] {
            if text.trim().is_empty() {
                let msg = format!("`{field}` is empty; every node states it");
                self.push(gid, id, Rule::Schema, msg);
            }
        }
        let is_tool = matches!(n.kind, NodeKind::ToolCall | NodeKind::ToolAuthorization);
        match (&n.tool, is_tool) {
            (None, true) => {
                let msg = format!("a `{kind}` node needs a `tool`");
                self.push(gid, id, Rule::Schema, msg);
            }
            (Some(t), false) => {
                let msg = format!("a `{kind}` node takes no `tool` (has `{t}`)");
                self.push(gid, id, Rule::Schema, msg);
            }
            (Some(t), true) => self.tool(gid, n.id.as_str(), n.kind, t, catalog),
            (None, false) => {}
        }
        match (&n.subflow, n.kind == NodeKind::Subflow) {
            (None, true) => {
                let msg = "a `subflow` node needs a `subflow` id".to_string();
                self.push(gid, id, Rule::Schema, msg);
            }
            (Some(s), false) => {
                let msg = format!("a `{kind}` node takes no `subflow` (has `{s}`)");
                self.push(gid, id, Rule::Schema, msg);
            }
            _ => {}
        }
    }

    fn tool(&mut self, gid: &str, id: &str, kind: NodeKind, tool: &str, catalog: &ToolCatalog) {
        let Some(class) = catalog.class_of(tool) else {
            let msg = format!(
                "tool `{tool}` is not an agent tool of domain `{}`",
                catalog.domain
            );
            return self.push(gid, Some(id), Rule::ToolInventory, msg);
        };
        let bad = match kind {
            NodeKind::ToolAuthorization => class != ToolClass::Mutating,
            _ => class == ToolClass::Mutating,
        };
        if bad {
            let wants = if kind == NodeKind::ToolAuthorization {
                "a mutating tool"
            } else {
                "a non-mutating tool (mutating tools belong on `tool_authorization` nodes)"
            };
            let msg = format!(
                "`{}` node names {} tool `{tool}`; it takes {wants}",
                kind.as_str(),
                class.as_str()
            );
            self.push(gid, Some(id), Rule::ToolClass, msg);
        }
    }

    fn branches(&mut self, gid: &str, id: &str, kind: NodeKind, labels: &[Option<&str>]) {
        let n = labels.len();
        let msg = match kind {
            NodeKind::Entry if n != 1 => Some(format!("an entry has exactly 1 out-edge, not {n}")),
            NodeKind::Exit if n != 0 => Some(format!("an exit has no out-edges, not {n}")),
            NodeKind::Decision if n < 2 => {
                Some(format!("a decision has at least 2 out-edges, not {n}"))
            }
            NodeKind::Decision => {
                let mut seen = BTreeSet::new();
                let mut msg = None;
                for l in labels {
                    match l.map(str::trim) {
                        None | Some("") => {
                            msg = Some("every out-edge of a decision needs a label".to_string());
                            break;
                        }
                        Some(l) if !seen.insert(l) => {
                            msg = Some(format!("two out-edges of a decision share label `{l}`"));
                            break;
                        }
                        Some(_) => {}
                    }
                }
                msg
            }
            NodeKind::Entry | NodeKind::Exit => None,
            _ if n == 0 => Some(format!(
                "a `{}` node has at least 1 out-edge, not 0",
                kind.as_str()
            )),
            _ => None,
        };
        if let Some(msg) = msg {
            self.push(gid, Some(id), Rule::BranchCount, msg);
        }
    }

    fn coverage(&mut self, bundle: &Bundle, catalog: &ToolCatalog) {
        let authorized: BTreeSet<&str> = bundle
            .graphs()
            .flat_map(|g| &g.nodes)
            .filter(|n| n.kind == NodeKind::ToolAuthorization)
            .filter_map(|n| n.tool.as_deref())
            .collect();
        for tool in &catalog.mutating {
            if !authorized.contains(tool.as_str()) {
                let msg = format!("mutating tool `{tool}` has no `tool_authorization` node");
                self.push(&bundle.main.id, None, Rule::AuthorizationCoverage, msg);
            }
        }
    }

    fn composition(&mut self, bundle: &Bundle) {
        let ids: BTreeSet<&str> = bundle.subflows.iter().map(|g| g.id.as_str()).collect();
        // Which subflows each graph runs.
        let mut calls: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for g in bundle.graphs() {
            for n in g.nodes.iter().filter(|n| n.kind == NodeKind::Subflow) {
                let Some(target) = n.subflow.as_deref() else {
                    continue;
                };
                if ids.contains(target) {
                    calls.entry(g.id.as_str()).or_default().push(target);
                } else {
                    let msg = format!("runs subflow `{target}`, which the bundle does not define");
                    self.push(&g.id, Some(&n.id), Rule::SubflowComposition, msg);
                }
            }
        }
        // Unused: not reachable from the main graph through subflow nodes.
        let mut used = BTreeSet::new();
        let mut queue = VecDeque::from([bundle.main.id.as_str()]);
        while let Some(g) = queue.pop_front() {
            for &t in calls.get(g).into_iter().flatten() {
                if used.insert(t) {
                    queue.push_back(t);
                }
            }
        }
        for id in ids.difference(&used) {
            let msg = "subflow is never run from the main graph (directly or through subflows)";
            self.push(id, None, Rule::SubflowComposition, msg.to_string());
        }
        // Recursion: a subflow that can run itself again.
        for &start in &ids {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&str> = calls.get(start).cloned().unwrap_or_default();
            while let Some(g) = stack.pop() {
                if g == start {
                    let msg = "subflow runs itself (directly or through other subflows)";
                    self.push(start, None, Rule::SubflowComposition, msg.to_string());
                    break;
                }
                if seen.insert(g) {
                    stack.extend(calls.get(g).into_iter().flatten());
                }
            }
        }
    }
}

/// Every node reachable from `starts` along `adj`.
fn search(adj: &[Vec<usize>], starts: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut seen = vec![false; adj.len()];
    let mut queue: VecDeque<usize> = starts.into_iter().collect();
    for &s in &queue {
        seen[s] = true;
    }
    while let Some(i) = queue.pop_front() {
        for &j in &adj[i] {
            if !seen[j] {
                seen[j] = true;
                queue.push_back(j);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn all_lists_every_rule_once_in_declaration_order() {
        // A rule added after `ExitReachability` and left out of `ALL` fails the length check.
        assert_eq!(Rule::ALL.len(), Rule::ExitReachability as usize + 1);
        for (i, rule) in Rule::ALL.iter().enumerate() {
            assert_eq!(*rule as usize, i, "{}", rule.as_str());
        }
    }
}
