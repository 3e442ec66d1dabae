//! How two artifact sets differ (`tauguard diff-artifacts A B`): a frozen set against a
//! compiled one, or two compiles of different models. The papers' artifacts were compiled
//! once by one model; before a run on another set means anything, one has to see what it
//! changed — per tool, which requirements and constraints it added, dropped or reworded, and
//! for the workflow how many nodes, authorization nodes and subflows it has and which tools
//! it calls or authorizes how often. Items are matched by name (requirements, constraints,
//! general rules) or id (subflows); an item under the same name with any other field different
//! is "changed".

use crate::policyguard::checklist::{DomainChecklists, GeneralRule, ToolChecklist};
use crate::policyguide::{Bundle, NodeKind};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Named items of one list on both sides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ItemsDiff {
    /// How many items each side holds.
    pub a: usize,
    pub b: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl ItemsDiff {
    /// Compares two lists of `(name, item)`.
    pub fn of<T: PartialEq>(a: &[(&str, T)], b: &[(&str, T)]) -> ItemsDiff {
        let find = |side: &[(&str, T)], n: &str| side.iter().position(|(m, _)| *m == n);
        let mut d = ItemsDiff {
            a: a.len(),
            b: b.len(),
            ..ItemsDiff::default()
        };
        for (name, item) in a {
            match find(b, name) {
                None => d.removed.push(name.to_string()),
                Some(j) if b[j].1 != *item => d.changed.push(name.to_string()),
                Some(_) => {}
            }
        }
        for (name, _) in b {
            if find(a, name).is_none() {
                d.added.push(name.to_string());
            }
        }
        d
    }

    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// `n → m`, then what was added, removed and changed; `n, same` when nothing was.
    fn text(&self) -> String {
        if self.is_same() {
            return format!("{}, same", self.a);
        }
        let mut parts = vec![format!("{} → {}", self.a, self.b)];
        for (what, list) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what} {}", list.join(", ")));
            }
        }
        parts.join("; ")
    }
}

/// One tool's checklist on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolDiff {
    pub tool: String,
    /// `both`, `only_a` or `only_b`.
    pub presence: &'static str,
    pub requirements: ItemsDiff,
    pub constraints: ItemsDiff,
    /// The description differs.
    pub description_changed: bool,
}

/// Two checklist sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChecklistDiff {
    /// Every tool either side has a checklist for, in name order.
    pub tools: Vec<ToolDiff>,
    pub general_rules: ItemsDiff,
}

fn requirements(
    c: Option<&ToolChecklist>,
) -> Vec<(&str, &crate::policyguard::checklist::Requirement)> {
    c.map(|c| {
        c.requirements
            .iter()
            .map(|r| (r.name.as_str(), r))
            .collect()
    })
    .unwrap_or_default()
}

fn constraints(
    c: Option<&ToolChecklist>,
) -> Vec<(&str, &crate::policyguard::checklist::Constraint)> {
    c.map(|c| c.constraints.iter().map(|r| (r.name.as_str(), r)).collect())
        .unwrap_or_default()
}

fn rules(g: &[GeneralRule]) -> Vec<(&str, &GeneralRule)> {
    g.iter().map(|r| (r.name.as_str(), r)).collect()
}

impl ChecklistDiff {
    pub fn of(a: &DomainChecklists, b: &DomainChecklists) -> ChecklistDiff {
        let names: BTreeSet<&String> = a.tools.keys().chain(b.tools.keys()).collect();
        let tools = names
            .into_iter()
            .map(|t| {
                let (x, y) = (a.tools.get(t), b.tools.get(t));
                ToolDiff {
                    tool: t.clone(),
                    presence: match (x, y) {
                        (Some(_), Some(_)) => "both",
                        (Some(_), None) => "only_a",
                        _ => "only_b",
                    },
                    requirements: ItemsDiff::of(&requirements(x), &requirements(y)),
                    constraints: ItemsDiff::of(&constraints(x), &constraints(y)),
                    description_changed: x.is_some()
                        && y.is_some()
                        && x.map(|c| &c.description) != y.map(|c| &c.description),
                }
            })
            .collect();
        ChecklistDiff {
            tools,
            general_rules: ItemsDiff::of(&rules(&a.general), &rules(&b.general)),
        }
    }

    pub fn is_same(&self) -> bool {
        self.general_rules.is_same()
            && self.tools.iter().all(|t| {
                t.presence == "both"
                    && t.requirements.is_same()
                    && t.constraints.is_same()
                    && !t.description_changed
            })
    }

    /// One line per tool, then the general rules.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.tools {
            out.push(match t.presence {
                "only_a" => format!(
                    "{}: only in A ({} requirements, {} constraints)",
                    t.tool, t.requirements.a, t.constraints.a
                ),
                "only_b" => format!(
                    "{}: only in B ({} requirements, {} constraints)",
                    t.tool, t.requirements.b, t.constraints.b
                ),
                _ => format!(
                    "{}: requirements {}; constraints {}{}",
                    t.tool,
                    t.requirements.text(),
                    t.constraints.text(),
                    if t.description_changed {
                        "; description changed"
                    } else {
                        ""
                    }
                ),
            });
        }
        out.push(format!("general rules: {}", self.general_rules.text()));
        out
    }
}

/// A count on both sides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub a: usize,
    pub b: usize,
}

impl Pair {
    fn text(self) -> String {
        if self.a == self.b {
            format!("{}, same", self.a)
        } else {
            format!(
                "{} → {} ({:+})",
                self.a,
                self.b,
                self.b as i64 - self.a as i64
            )
        }
    }
}

/// One subflow on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubflowDiff {
    pub id: String,
    pub nodes: Pair,
    pub authorization_nodes: Pair,
}

/// One tool's nodes on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolNodes {
    pub tool: String,
    /// `tool_call` nodes naming the tool.
    pub calls: Pair,
    /// `tool_authorization` nodes naming the tool.
    pub authorizations: Pair,
}

/// Two workflow bundles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkflowDiff {
    pub nodes: Pair,
    pub edges: Pair,
    pub authorization_nodes: Pair,
    pub subflows: Pair,
    pub subflows_added: Vec<String>,
    pub subflows_removed: Vec<String>,
    /// Subflows on both sides whose node or authorization counts differ.
    pub subflows_changed: Vec<SubflowDiff>,
    /// Tools whose call or authorization node counts differ.
    pub tools: Vec<ToolNodes>,
}

fn count(b: &Bundle, f: impl Fn(&crate::policyguide::Node) -> bool) -> usize {
    b.graphs().flat_map(|g| &g.nodes).filter(|n| f(n)).count()
}

/// Per tool: (`tool_call` nodes, `tool_authorization` nodes).
fn tool_nodes(b: &Bundle) -> BTreeMap<&str, (usize, usize)> {
    let mut out: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for n in b.graphs().flat_map(|g| &g.nodes) {
        if let Some(t) = n.tool.as_deref() {
            let e = out.entry(t).or_default();
            match n.kind {
                NodeKind::ToolCall => e.0 += 1,
                NodeKind::ToolAuthorization => e.1 += 1,
                _ => {}
            }
        }
    }
    out
}

impl WorkflowDiff {
    pub fn of(a: &Bundle, b: &Bundle) -> WorkflowDiff {
        let pair = |f: &dyn Fn(&Bundle) -> usize| Pair { a: f(a), b: f(b) };
        let auth = |n: &crate::policyguide::Node| n.kind == NodeKind::ToolAuthorization;
        let ids =
            |x: &Bundle| -> BTreeSet<String> { x.subflows.iter().map(|g| g.id.clone()).collect() };
        let (ia, ib) = (ids(a), ids(b));
        let subflows_changed = a
            .subflows
            .iter()
            .filter_map(|ga| {
                let gb = b.subflows.iter().find(|g| g.id == ga.id)?;
                let d = SubflowDiff {
                    id: ga.id.clone(),
                    nodes: Pair {
                        a: ga.nodes.len(),
                        b: gb.nodes.len(),
                    },
                    authorization_nodes: Pair {
                        a: ga.nodes.iter().filter(|n| auth(n)).count(),
                        b: gb.nodes.iter().filter(|n| auth(n)).count(),
                    },
                };
                (d.nodes.a != d.nodes.b || d.authorization_nodes.a != d.authorization_nodes.b)
                    .then_some(d)
            })
            .collect();
        let (ta, tb) = (tool_nodes(a), tool_nodes(b));
        let tools = ta
            .keys()
            .chain(tb.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter_map(|t| {
                let (x, y) = (
                    ta.get(t).copied().unwrap_or_default(),
                    tb.get(t).copied().unwrap_or_default(),
                );
                (x != y).then(|| ToolNodes {
                    tool: t.to_string(),
                    calls: Pair { a: x.0, b: y.0 },
                    authorizations: Pair { a: x.1, b: y.1 },
                })
            })
            .collect();
        WorkflowDiff {
            nodes: pair(&|x| x.graphs().map(|g| g.nodes.len()).sum()),
            edges: pair(&|x| x.graphs().map(|g| g.edges.len()).sum()),
            authorization_nodes: pair(&|x| count(x, auth)),
            subflows: pair(&|x| x.subflows.len()),
            subflows_added: ib.difference(&ia).cloned().collect(),
            subflows_removed: ia.difference(&ib).cloned().collect(),
            subflows_changed,
            tools,
        }
    }

    pub fn is_same_shape(&self) -> bool {
        self.nodes.a == self.nodes.b
            && self.edges.a == self.edges.b
            && self.subflows_added.is_empty()
            && self.subflows_removed.is_empty()
            && self.subflows_changed.is_empty()
            && self.tools.is_empty()
    }

    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![
            format!("nodes: {}", self.nodes.text()),
            format!("authorization nodes: {}", self.authorization_nodes.text()),
            format!("edges: {}", self.edges.text()),
            format!("subflows: {}", self.subflows.text()),
        ];
        if !self.subflows_added.is_empty() {
            out.push(format!(
                "subflows only in B: {}",
                self.subflows_added.join(", ")
            ));
        }
        if !self.subflows_removed.is_empty() {
            out.push(format!(
                "subflows only in A: {}",
                self.subflows_removed.join(", ")
            ));
        }
        for s in &self.subflows_changed {
            out.push(format!(
                "subflow {}: nodes {}; authorization nodes {}",
                s.id,
                s.nodes.text(),
                s.authorization_nodes.text()
            ));
        }
        for t in &self.tools {
            out.push(format!(
                "tool {}: call nodes {}; authorization nodes {}",
                t.tool,
                t.calls.text(),
                t.authorizations.text()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_matched_by_name() {
        let a = [("x", 1), ("y", 2), ("z", 3)];
        let b = [("y", 2), ("z", 4), ("w", 5)];
        let d = ItemsDiff::of(&a, &b);
        assert_eq!((d.a, d.b), (3, 3));
        assert_eq!(d.added, ["w"]);
        assert_eq!(d.removed, ["x"]);
        assert_eq!(d.changed, ["z"]);
        assert_eq!(d.text(), "3 → 3; added w; removed x; changed z");
        assert_eq!(ItemsDiff::of(&a, &a).text(), "3, same");
    }
}
