//! Stage 6's policy↔graph mapping review: the model maps policy statements to the nodes that
//! implement them and lists what is left on either side. It judges the bundle, it does not
//! change it, so its answer goes to the report only; node references are checked so the
//! report never cites a node the bundle lacks.

use super::report::MappingReview;
use crate::extract::parse_json;
use std::collections::BTreeSet;
use tauguard_guards::Bundle;

/// One line per node: `graph/node [kind] action` (tool or subflow appended), the text the
/// mapping prompt shows.
pub(super) fn outline(bundle: &Bundle) -> String {
    let mut lines = Vec::new();
    for g in bundle.graphs() {
        for n in &g.nodes {
            let mut line = format!("{}/{} [{}] {}", g.id, n.id, n.kind.as_str(), n.action);
            if let Some(t) = &n.tool {
                line.push_str(&format!(" (tool {t})"));
            }
            if let Some(s) = &n.subflow {
                line.push_str(&format!(" (subflow {s})"));
            }
            lines.push(line);
        }
    }
    lines.join("\n")
}

/// Parses the mapping reply; every `graph/node` it names must exist in `bundle`.
pub(super) fn parse(reply: &str, bundle: &Bundle) -> Result<MappingReview, String> {
    let review: MappingReview = parse_json(
        reply,
        "{\"mappings\": [{\"policy\", \"nodes\"}], \"unmapped_policy\", \"unsupported_nodes\"}",
    )?;
    let known: BTreeSet<String> = bundle
        .graphs()
        .flat_map(|g| g.nodes.iter().map(move |n| format!("{}/{}", g.id, n.id)))
        .collect();
    let mut problems = Vec::new();
    for (i, m) in review.mappings.iter().enumerate() {
        for (j, n) in m.nodes.iter().enumerate() {
            if !known.contains(n) {
                problems.push(format!(
                    "mappings[{i}].nodes[{j}]: `{n}` is not a `graph/node` of the workflow"
                ));
            }
        }
    }
    for (i, n) in review.unsupported_nodes.iter().enumerate() {
        if !known.contains(n) {
            problems.push(format!(
                "unsupported_nodes[{i}]: `{n}` is not a `graph/node` of the workflow"
            ));
        }
    }
    if problems.is_empty() {
        Ok(review)
    } else {
        Err(problems.join("\n"))
    }
}
