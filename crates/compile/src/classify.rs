//! Step 1 of either compiler: the model's classification of the domain's tools, parsed into a
//! [`ToolCatalog`] and compared with the environment's own catalogue. The checklist compiler's
//! step 1 and the workflow compiler's stage 1 read their reply with this parser, so both
//! compilers accept the same reply shapes.

use crate::extract;
use serde::Deserialize;
use std::collections::BTreeSet;
use tauguard_core::ToolSpec;
use tauguard_guards::{ToolCatalog, ToolClass};

/// A tool's description on one line, as either compiler's prompts show it.
pub(crate) fn one_line_description(spec: &ToolSpec) -> String {
    spec.description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Step 1's reply: `{"tools": [{"name", "class", "reason"}]}` as the prompt asks, or the
/// grouped shape `{"mutating": [...], "read_only": [...], "other": [...]}` models also give.
#[derive(Deserialize)]
#[serde(untagged)]
enum ClassificationReply {
    Listed {
        tools: Vec<ClassifiedTool>,
    },
    Grouped {
        mutating: Vec<String>,
        #[serde(alias = "read-only", alias = "readonly")]
        read_only: Vec<String>,
        #[serde(default)]
        other: Vec<String>,
    },
}

impl ClassificationReply {
    fn into_list(self) -> Vec<ClassifiedTool> {
        match self {
            ClassificationReply::Listed { tools } => tools,
            ClassificationReply::Grouped {
                mutating,
                read_only,
                other,
            } => {
                let tag = |names: Vec<String>, class: ToolClass| {
                    names.into_iter().map(move |name| ClassifiedTool {
                        name,
                        class,
                        reason: None,
                    })
                };
                tag(mutating, ToolClass::Mutating)
                    .chain(tag(read_only, ToolClass::ReadOnly))
                    .chain(tag(other, ToolClass::Other))
                    .collect()
            }
        }
    }
}

#[derive(Deserialize)]
struct ClassifiedTool {
    name: String,
    class: ToolClass,
    #[serde(default)]
    #[allow(dead_code)]
    reason: Option<String>,
}

/// Step 1's reply → the domain's tool classes. Every offered tool exactly once, no others,
/// at least one mutating tool.
pub(crate) fn parse_classification(
    reply: &str,
    domain: &str,
    tools: &[ToolSpec],
) -> Result<ToolCatalog, String> {
    let mut first_error = None;
    for candidate in extract::json_candidates(reply) {
        match serde_json::from_str::<ClassificationReply>(&candidate) {
            Ok(parsed) => return classification_of(parsed, domain, tools),
            Err(e) => {
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    Err(format!(
        "no JSON object of the form {{\"tools\": [{{\"name\", \"class\", \"reason\"}}]}} found ({})",
        first_error.unwrap_or_else(|| "empty reply".into())
    ))
}

fn classification_of(
    parsed: ClassificationReply,
    domain: &str,
    tools: &[ToolSpec],
) -> Result<ToolCatalog, String> {
    let offered: BTreeSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let mut info = ToolCatalog {
        domain: domain.to_string(),
        ..Default::default()
    };
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    let listed = parsed.into_list();
    for (i, t) in listed.iter().enumerate() {
        if !offered.contains(t.name.as_str()) {
            problems.push(format!(
                "tools[{i}].name: `{}` is not one of the offered tools",
                t.name
            ));
            continue;
        }
        if !seen.insert(t.name.as_str()) {
            problems.push(format!("tools[{i}].name: `{}` is classified twice", t.name));
            continue;
        }
        info.insert(t.name.clone(), t.class);
    }
    let missing: Vec<&str> = offered.difference(&seen).copied().collect();
    if !missing.is_empty() {
        problems.push(format!("tools: not classified: {}", missing.join(", ")));
    }
    if problems.is_empty() && info.mutating.is_empty() {
        problems.push("tools: no tool is classified as mutating".to_string());
    }
    if problems.is_empty() {
        Ok(info)
    } else {
        Err(problems.join("\n"))
    }
}

pub(crate) fn mismatches(compiled: &ToolCatalog, known: &ToolCatalog) -> Vec<String> {
    let names: BTreeSet<&String> = [&compiled.mutating, &compiled.read_only, &compiled.other]
        .into_iter()
        .chain([&known.mutating, &known.read_only, &known.other])
        .flatten()
        .collect();
    let show = |c: Option<ToolClass>| c.map_or("absent", ToolClass::as_str);
    names
        .into_iter()
        .filter_map(|n| {
            let (a, b) = (compiled.class_of(n), known.class_of(n));
            (a != b).then(|| format!("{n}: compiled {}, environment {}", show(a), show(b)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: serde_json::json!({}),
        }
    }

    #[test]
    fn classification_requires_every_tool_once() {
        let tools = [spec("a"), spec("b")];
        let ok = parse_classification(
            "```json\n{\"tools\": [{\"name\": \"a\", \"class\": \"mutating\"}, {\"name\": \"b\", \"class\": \"read_only\"}]}\n```",
            "d",
            &tools,
        )
        .unwrap();
        assert!(ok.mutating.contains("a") && ok.read_only.contains("b"));
        let err = parse_classification(
            "{\"tools\": [{\"name\": \"a\", \"class\": \"mutating\"}, {\"name\": \"c\", \"class\": \"other\"}]}",
            "d",
            &tools,
        )
        .unwrap_err();
        assert!(
            err.contains("tools[1].name") && err.contains("not classified: b"),
            "{err}"
        );
        let err = parse_classification(
            "{\"tools\": [{\"name\": \"a\", \"class\": \"dangerous\"}]}",
            "d",
            &tools,
        )
        .unwrap_err();
        assert!(err.contains("no JSON object"), "{err}");
    }

    #[test]
    fn classification_accepts_the_grouped_shape_and_class_aliases() {
        let tools = [spec("a"), spec("b"), spec("c")];
        let info = parse_classification(
            "Classification:\n{\"mutating\": [\"a\"], \"read-only\": [\"b\"], \"other\": [\"c\"]}",
            "d",
            &tools,
        )
        .unwrap();
        assert_eq!(info, ToolCatalog::new("d", ["a"], ["b"], ["c"]));
        let info = parse_classification(
            "{\"tools\": [{\"name\": \"a\", \"class\": \"write\"}, {\"name\": \"b\", \"class\": \"read-only\"}, {\"name\": \"c\", \"class\": \"generic\"}]}",
            "d",
            &tools,
        )
        .unwrap();
        assert_eq!(info, ToolCatalog::new("d", ["a"], ["b"], ["c"]));
    }

    #[test]
    fn mismatches_are_listed() {
        let a = ToolCatalog::new("d", ["x"], ["y"], Vec::<String>::new());
        let b = ToolCatalog::new("d", ["x", "y"], Vec::<String>::new(), ["z"]);
        assert_eq!(
            mismatches(&a, &b),
            [
                "y: compiled read-only, environment mutating",
                "z: compiled absent, environment generic (neither mutating nor read-only)"
            ]
        );
    }
}
