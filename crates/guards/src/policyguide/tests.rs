//! Validator tests: one small valid bundle, then one defect at a time with the exact line the
//! report must contain; and every frozen bundle under `tasks/<domain>/workflow/`.

use super::*;
use crate::catalog::ToolCatalog;
use serde_json::{Value, json};

fn catalog() -> ToolCatalog {
    ToolCatalog::new("toy", ["book"], ["lookup"], ["transfer"])
}

fn node(id: &str, kind: &str) -> Value {
    json!({"id": id, "kind": kind, "actor": "agent", "action": "do it", "condition": "done"})
}

fn tool_node(id: &str, kind: &str, tool: &str) -> Value {
    let mut n = node(id, kind);
    n["tool"] = json!(tool);
    n
}

fn edge(from: &str, to: &str, label: Option<&str>) -> Value {
    match label {
        Some(l) => json!({"from": from, "to": to, "label": l}),
        None => json!({"from": from, "to": to}),
    }
}

/// entry → lookup → decision (eligible: subflow `book` | not: exit refused); the subflow
/// confirms, authorizes `book`, exits.
fn valid() -> Value {
    let mut call = node("run_book", "subflow");
    call["subflow"] = json!("book");
    json!({
        "schema": 1,
        "domain": "toy",
        "main": {"id": "main", "nodes": [
            node("start", "entry"),
            tool_node("read", "tool_call", "lookup"),
            node("eligible", "decision"),
            call,
            node("done", "exit"),
            node("refused", "exit"),
        ], "edges": [
            edge("start", "read", None),
            edge("read", "eligible", None),
            edge("eligible", "run_book", Some("yes")),
            edge("eligible", "refused", Some("no")),
            edge("run_book", "done", None),
        ]},
        "subflows": [{"id": "book", "title": "Booking", "nodes": [
            node("s", "entry"),
            node("consent", "user_input"),
            tool_node("auth", "tool_authorization", "book"),
            node("e", "exit"),
        ], "edges": [
            edge("s", "consent", None),
            edge("consent", "auth", None),
            edge("auth", "e", None),
        ]}]
    })
}

fn report(v: Value) -> Report {
    let bundle = Bundle::parse(&v.to_string()).expect("parses");
    validate(&bundle, &catalog())
}

fn lines(v: Value) -> Vec<String> {
    report(v).problems.iter().map(|p| p.to_string()).collect()
}

#[test]
fn a_valid_bundle_passes_with_its_sizes() {
    let r = report(valid());
    assert!(r.is_valid(), "{:?}", r.problems);
    assert_eq!(r.sizes.nodes, 10);
    assert_eq!(r.sizes.authorization_nodes, 1);
    assert_eq!(r.sizes.graphs, 2);
}

#[test]
fn a_dangling_edge_is_named() {
    let mut v = valid();
    v["main"]["edges"]
        .as_array_mut()
        .unwrap()
        .push(edge("read", "nowhere", None));
    assert_eq!(
        lines(v),
        [
            "graph `main`: [dangling-edge] edge `read` -> `nowhere` has an unknown `to` node `nowhere`"
        ]
    );
}

#[test]
fn an_unreachable_node_is_named() {
    let mut v = valid();
    v["main"]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(node("orphan", "exit"));
    assert_eq!(
        lines(v),
        ["graph `main`, node `orphan`: [reachability] not reachable from the entry node `start`"]
    );
}

#[test]
fn a_node_with_no_way_out_is_named() {
    let mut v = valid();
    v["main"]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(node("stuck", "agent_action"));
    let edges = v["main"]["edges"].as_array_mut().unwrap();
    edges.push(edge("eligible", "stuck", Some("unclear")));
    edges.push(edge("stuck", "stuck", None));
    assert_eq!(
        lines(v),
        ["graph `main`, node `stuck`: [exit-reachability] no path from this node to an exit node"]
    );
}

#[test]
fn a_mutating_tool_without_an_authorization_node_is_named() {
    let mut v = valid();
    v["subflows"][0]["nodes"][2] = node("auth", "agent_action");
    assert_eq!(
        lines(v),
        [
            "graph `main`: [authorization-coverage] mutating tool `book` has no `tool_authorization` node"
        ]
    );
}

#[test]
fn a_read_only_tool_on_an_authorization_node_is_named() {
    let mut v = valid();
    v["main"]["nodes"][1] = tool_node("read", "tool_authorization", "lookup");
    assert_eq!(
        lines(v),
        [
            "graph `main`, node `read`: [tool-class] `tool_authorization` node names read-only tool `lookup`; it takes a mutating tool"
        ]
    );
}

#[test]
fn a_mutating_tool_on_a_tool_call_node_and_an_unknown_tool_are_named() {
    let mut v = valid();
    v["main"]["nodes"][1] = tool_node("read", "tool_call", "book");
    v["subflows"][0]["nodes"][1] = tool_node("consent", "tool_call", "teleport");
    let l = lines(v);
    assert_eq!(l.len(), 2, "{l:?}");
    assert!(l[0].starts_with(
        "graph `main`, node `read`: [tool-class] `tool_call` node names mutating tool `book`"
    ));
    assert_eq!(
        l[1],
        "graph `book`, node `consent`: [tool-inventory] tool `teleport` is not an agent tool of domain `toy`"
    );
}

#[test]
fn an_unknown_node_kind_fails_to_parse_at_its_path() {
    let mut v = valid();
    v["main"]["nodes"][2]["kind"] = json!("fork");
    let (at, cause) = Bundle::parse(&v.to_string()).unwrap_err();
    assert_eq!(at, "main.nodes[2].kind");
    assert!(
        cause.to_string().contains("unknown variant `fork`"),
        "{cause}"
    );
}

#[test]
fn an_unknown_field_fails_to_parse() {
    let mut v = valid();
    v["main"]["nodes"][0]["note"] = json!("x");
    let (at, cause) = Bundle::parse(&v.to_string()).unwrap_err();
    assert_eq!(at, "main.nodes[0].note");
    assert!(
        cause.to_string().contains("unknown field `note`"),
        "{cause}"
    );
}

#[test]
fn decision_branches_need_two_distinct_labels() {
    let mut v = valid();
    v["main"]["edges"][3]["label"] = json!("yes");
    assert_eq!(
        lines(v),
        [
            "graph `main`, node `eligible`: [branch-count] two out-edges of a decision share label `yes`"
        ]
    );
    let mut v = valid();
    v["main"]["edges"].as_array_mut().unwrap().remove(3);
    let l = lines(v);
    assert!(l.contains(&"graph `main`, node `eligible`: [branch-count] a decision has at least 2 out-edges, not 1".to_string()), "{l:?}");
}

#[test]
fn missing_unused_and_recursive_subflows_are_named() {
    let mut v = valid();
    v["main"]["nodes"][3]["subflow"] = json!("ghost");
    let l = lines(v);
    assert!(l.contains(&"graph `main`, node `run_book`: [subflow-composition] runs subflow `ghost`, which the bundle does not define".to_string()), "{l:?}");
    assert!(l.contains(&"graph `book`: [subflow-composition] subflow is never run from the main graph (directly or through subflows)".to_string()), "{l:?}");

    let mut v = valid();
    let mut again = node("again", "subflow");
    again["subflow"] = json!("book");
    let sub = &mut v["subflows"][0];
    sub["nodes"].as_array_mut().unwrap().push(again);
    let edges = sub["edges"].as_array_mut().unwrap();
    edges.push(edge("consent", "again", None));
    edges.push(edge("again", "e", None));
    assert_eq!(
        lines(v),
        [
            "graph `book`: [subflow-composition] subflow runs itself (directly or through other subflows)"
        ]
    );
}

#[test]
fn schema_version_and_domain_are_checked() {
    let mut v = valid();
    v["schema"] = json!(2);
    v["domain"] = json!("airline");
    assert_eq!(
        lines(v),
        [
            "graph `main`: [schema] schema version 2 is not the supported version 1",
            "graph `main`: [schema] bundle is for domain `airline` but is validated against domain `toy`",
        ]
    );
}

/// Every frozen bundle in the project passes against its domain's built-in catalogue; all
/// three domains have one, so a deleted bundle fails here rather than being skipped.
#[test]
fn every_frozen_bundle_validates() {
    let tasks = tauguard_testkit::workspace_root().join("tasks");
    let mut checked = Vec::new();
    for domain in ["airline", "retail", "telecom"] {
        let path = tasks.join(domain).join("workflow/bundle.json");
        if !path.exists() {
            continue;
        }
        let bundle = Bundle::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let catalog = ToolCatalog::builtin(domain).expect("registered domain");
        let r = validate(&bundle, &catalog);
        let problems: Vec<String> = r.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            problems.is_empty(),
            "{}:\n{}",
            path.display(),
            problems.join("\n")
        );
        checked.push(domain);
    }
    assert!(
        checked.contains(&"airline"),
        "the airline bundle is frozen: {checked:?}"
    );
}
