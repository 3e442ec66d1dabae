//! The frozen workflow bundles ask for no more than the benchmark does: every gold action
//! sequence of every task of every registered domain with guard artifacts is a valid path
//! through its domain's graph.
//!
//! Gold sequences list the calls the evaluation checks, mostly without the reads before
//! them, so a path may add reads — but only the reads the call-NMR oracle
//! (`tasks/<domain>/nmr_oracle.toml`, the independent read ground truth) requires of the
//! mutating tool. A gold mutating call is on a valid path when one authorization node of its
//! tool has every step every path to it passes licensed:
//! - a `tool_call` of a read-only tool: an earlier gold call, a read the oracle requires, or
//!   one member of an `any_of` group no other required step already took (the oracle asks
//!   for one of the group, so a graph asking for two over-requires);
//! - a `tool_authorization` or a `tool_call` of a mutating tool: an earlier gold call;
//! - a `tool_call` of a tool that yields no fact (`calculate`): always;
//! - a `subflow`: a way through it whose tool steps are earlier gold calls or reads the
//!   oracle names for the tool.

use std::collections::BTreeSet;
use tauguard_core::Requestor;
use tauguard_env::registry::DOMAINS;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{Flow, NodeKind, ToolCatalog, ToolClass, bundle_path, load_flow};
use tauguard_orchestrator::{NmrOracle, OracleTool};

/// Why one authorization node of a gold call's tool is not on a valid path (empty: it is).
fn unlicensed(
    flow: &Flow,
    catalog: &ToolCatalog,
    auth: &str,
    earlier: &BTreeSet<String>,
    oracle: &OracleTool,
) -> Vec<String> {
    let named = |t: &str| {
        oracle.reads.iter().any(|r| r == t) || oracle.any_of.iter().flatten().any(|r| r == t)
    };
    let factless = |t: &str| catalog.class_of(t) == Some(ToolClass::Other);
    let mut groups_taken = vec![false; oracle.any_of.len()];
    let mut bad = Vec::new();
    for step in flow.required_steps(auth) {
        let Some((_, n)) = flow.node(&step) else {
            continue;
        };
        let tool = n.tool.as_deref().unwrap_or_default();
        match n.kind {
            NodeKind::ToolCall | NodeKind::ToolAuthorization => {
                if earlier.contains(tool) || factless(tool) {
                    continue;
                }
                let read = n.kind == NodeKind::ToolCall
                    && catalog.class_of(tool) == Some(ToolClass::ReadOnly);
                if read && oracle.reads.iter().any(|r| r == tool) {
                    continue;
                }
                let group = oracle
                    .any_of
                    .iter()
                    .position(|g| g.iter().any(|r| r == tool));
                match group {
                    Some(g) if read && !groups_taken[g] => groups_taken[g] = true,
                    Some(_) if read => bad.push(format!(
                        "{step}: `{tool}` is a second read of an oracle any_of group"
                    )),
                    _ => bad.push(format!("{step}: `{tool}`")),
                }
            }
            NodeKind::Subflow => {
                let g = n.subflow.as_deref().unwrap_or_default();
                let made = |t: &str| earlier.contains(t) || named(t) || factless(t);
                if !flow.way_through(g, &made) {
                    bad.push(format!(
                        "{step}: no way through `{g}` with the gold calls and the oracle's reads"
                    ));
                }
            }
            _ => {}
        }
    }
    bad
}

/// The invalid gold calls of one domain, as `task tool: why` lines, and how many were checked.
fn invalid_gold_calls(data: &DomainData, flow: &Flow, oracle: &NmrOracle) -> (usize, Vec<String>) {
    let catalog = ToolCatalog::of(data.def);
    let none = OracleTool::default();
    let mut checked = 0;
    let mut invalid = Vec::new();
    for task in &data.tasks {
        let mut earlier = BTreeSet::new();
        for action in task.gold_actions() {
            let agent = action.requestor == Requestor::Assistant;
            if agent && catalog.mutating.contains(&action.name) {
                checked += 1;
                let auths: Vec<&String> = flow
                    .authorizations()
                    .iter()
                    .filter(|(_, t)| **t == action.name)
                    .map(|(a, _)| a)
                    .collect();
                let o = oracle.tools.get(&action.name).unwrap_or(&none);
                let reasons: Vec<Vec<String>> = auths
                    .iter()
                    .map(|a| unlicensed(flow, &catalog, a, &earlier, o))
                    .collect();
                match reasons.iter().min_by_key(|r| r.len()) {
                    None => invalid.push(format!(
                        "task {} {}: no authorization node",
                        task.id, action.name
                    )),
                    Some(r) if !r.is_empty() => invalid.push(format!(
                        "task {} {}: {}",
                        task.id,
                        action.name,
                        r.join("; ")
                    )),
                    Some(_) => {}
                }
            }
            if agent {
                earlier.insert(action.name.clone());
            }
        }
    }
    (checked, invalid)
}

#[test]
fn every_gold_action_sequence_is_a_valid_path_through_its_domains_graph() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let data_dir = DataDir::resolve(Some(&dir)).unwrap();
    let tasks_dir = tauguard_testkit::workspace_root().join("tasks");
    let mut domains = 0;
    for domain in DOMAINS {
        let name = domain.name();
        // A registered domain with no guard artifacts (the toy domain) has no graph to walk.
        if !tasks_dir.join(name).is_dir() {
            assert!(!bundle_path(&tasks_dir, name).exists());
            continue;
        }
        domains += 1;
        let data = DomainData::load(&data_dir, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let flow = load_flow(&tasks_dir, &ToolCatalog::of(*domain))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let oracle = NmrOracle::load_domain(&tasks_dir, name)
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: no nmr_oracle.toml"));
        let (checked, invalid) = invalid_gold_calls(&data, &flow, &oracle);
        assert!(checked > 0, "{name}: no gold mutating call to check");
        assert!(
            invalid.is_empty(),
            "{name}: {} of {checked} gold mutating calls are on no valid path:\n{}",
            invalid.len(),
            invalid.join("\n")
        );
    }
    assert!(domains >= 4, "only {domains} domains with a bundle");
}

/// The check can fail: the telecom graph with its old over-requirement put back (a second
/// bill read, `get_details_by_id` after `get_bills_for_customer`, before a payment request)
/// is refused, and so is a read the oracle never names.
#[test]
fn a_read_the_oracle_does_not_ask_for_is_an_over_requirement() {
    let tasks_dir = tauguard_testkit::workspace_root().join("tasks");
    let catalog = ToolCatalog::builtin("telecom").unwrap();
    let oracle = NmrOracle::load_domain(&tasks_dir, "telecom")
        .unwrap()
        .unwrap();
    let pay = &oracle.tools["send_payment_request"];
    let text = std::fs::read_to_string(bundle_path(&tasks_dir, "telecom")).unwrap();
    let with_read = |tool: &str| {
        let mut b: serde_json::Value = serde_json::from_str(&text).unwrap();
        let g = b["subflows"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|g| g["id"] == "pay_overdue_bill")
            .unwrap();
        g["nodes"].as_array_mut().unwrap().push(serde_json::json!({
            "id": "extra_read", "kind": "tool_call", "actor": "agent", "tool": tool,
            "action": "Read again", "condition": "The read succeeded"
        }));
        let edges = g["edges"].as_array_mut().unwrap();
        let e = edges
            .iter_mut()
            .find(|e| e["from"] == "read_bills")
            .expect("the bills are read first");
        let next = e["to"].clone();
        e["to"] = "extra_read".into();
        edges.push(serde_json::json!({"from": "extra_read", "to": next}));
        Flow::new(serde_json::from_value(b).unwrap())
    };
    let auth = |flow: &Flow| {
        flow.authorizations()
            .iter()
            .find(|(_, t)| *t == "send_payment_request")
            .map(|(a, _)| a.clone())
            .unwrap()
    };
    let none = BTreeSet::new();
    let frozen = load_flow(&tasks_dir, &catalog).unwrap();
    assert_eq!(
        unlicensed(&frozen, &catalog, &auth(&frozen), &none, pay),
        Vec::<String>::new()
    );
    let second = with_read("get_details_by_id");
    let bad = unlicensed(&second, &catalog, &auth(&second), &none, pay);
    assert!(
        bad.len() == 1 && bad[0].contains("second read of an oracle any_of group"),
        "{bad:?}"
    );
    let other = with_read("get_data_usage");
    let bad = unlicensed(&other, &catalog, &auth(&other), &none, pay);
    assert!(
        bad.len() == 1 && bad[0].contains("`get_data_usage`"),
        "{bad:?}"
    );
    // An earlier gold call licenses it.
    let earlier: BTreeSet<String> = ["get_data_usage".to_string()].into();
    assert!(unlicensed(&other, &catalog, &auth(&other), &earlier, pay).is_empty());
}
