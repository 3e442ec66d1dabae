//! The scripted side of the workflow-compiler tests: a mock model that answers each request by
//! the `Stage N of 6` line its prompt opens with, and an airline plan with its subflow graphs
//! (built from three small shapes) that the tests break in the ways they check.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tauguard_compile::CompileOptions;
use tauguard_compile::workflow::{Step, StepOutcome, StepRecord, WorkflowCompileReport};
use tauguard_core::message::Usage;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{Bundle, Node, ToolCatalog, ToolClass};
use tauguard_llm::ChatRequest;

pub(super) use crate::support::prompts_dir;
pub(super) use tauguard_testkit::scripted::ScriptedModel;
use tauguard_testkit::scripted::text_reply;

/// Which step a request is, read from its prompt, and which try (0, or 1 for the repair).
#[derive(Debug, Clone)]
pub(super) struct Ask {
    pub step: &'static str,
    pub target: String,
    pub attempt: usize,
}

/// A model that answers each request by the step it asks for (the ask read from its prompt),
/// keeping every request.
pub(super) fn stage_model(
    answer: impl Fn(&Ask) -> String + Send + Sync + 'static,
) -> Arc<ScriptedModel> {
    ScriptedModel::new("mock/stages-1", &[], move |_, req| {
        let usage = Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            cached_prompt_tokens: 0,
        };
        let content = answer(&ask_of(req));
        Ok(text_reply(
            content,
            usage,
            Some(0.001),
            Duration::from_millis(1),
        ))
    })
}

/// What each request the model was sent asked for, in order.
pub(super) fn asks(model: &ScriptedModel) -> Vec<Ask> {
    model.seen().iter().map(ask_of).collect()
}

/// Every request the model was sent, with what it asked for.
pub(super) fn requests_of(model: &ScriptedModel) -> Vec<(Ask, ChatRequest)> {
    model.seen().into_iter().map(|r| (ask_of(&r), r)).collect()
}

/// Each stage's prompt opening and the step it asks for, the branch review before the subflow
/// stage whose opening it extends.
const STAGES: &[(&str, &str)] = &[
    ("Stage 1 of 6", "classify"),
    ("Stage 2 of 6", "plan"),
    ("Stage 3 of 6", "plan_review"),
    ("Stage 4 of 6 (branch review)", "branch_review"),
    ("Stage 4 of 6", "subflow"),
    ("Stage 5 of 6", "compose"),
    ("Stage 6 of 6", "mapping"),
];

fn ask_of(req: &ChatRequest) -> Ask {
    let prompt = req.messages[1].content().unwrap_or_default().to_string();
    let first = prompt.lines().next().unwrap_or_default();
    let step = STAGES
        .iter()
        .find(|(opening, _)| first.starts_with(opening))
        .map(|&(_, step)| step)
        .unwrap_or_else(|| panic!("a prompt of no known stage: {first}"));
    let target = first.split('`').nth(1).unwrap_or_default().to_string();
    Ask {
        step,
        target,
        attempt: (req.messages.len() - 2) / 2,
    }
}

pub(super) fn airline() -> Option<DomainData> {
    let dir = tauguard_testkit::tau2_dir()?;
    let data = DataDir::resolve(Some(&dir))
        .and_then(|d| DomainData::load(&d, "airline"))
        .unwrap_or_else(|e| panic!("{e}"));
    Some(data)
}

pub(super) fn options(data: &DomainData) -> CompileOptions {
    CompileOptions {
        known_tools: Some(ToolCatalog::of(data.def)),
        ..Default::default()
    }
}

/// The classification of every offered tool, as the environment has it.
pub(super) fn classification(data: &DomainData) -> String {
    let catalog = ToolCatalog::of(data.def);
    let tools: Vec<Value> = data
        .tool_schemas
        .assistant
        .iter()
        .map(|t| {
            let class = match catalog.class_of(&t.name).unwrap() {
                ToolClass::Mutating => "mutating",
                ToolClass::ReadOnly => "read_only",
                ToolClass::Other => "other",
            };
            json!({ "name": t.name, "class": class, "reason": "from its description" })
        })
        .collect();
    format!("```json\n{}\n```", json!({ "tools": tools }))
}

fn n(id: &str, kind: &str, actor: &str, extra: Value) -> Value {
    let mut node = json!({
        "id": id, "kind": kind, "actor": actor,
        "action": format!("{id} happens"), "condition": format!("{id} is done"),
    });
    node.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    node
}

fn e(from: &str, to: &str, label: Option<&str>) -> Value {
    match label {
        Some(l) => json!({ "from": from, "to": to, "label": l }),
        None => json!({ "from": from, "to": to }),
    }
}

/// start → lookup → eligible? → confirm → change (authorization) → done | refuse → refused.
fn guarded(id: &str, lookup: &str, mutating: &str) -> Value {
    json!({
        "id": id, "title": format!("{id} flow"),
        "nodes": [
            n("start", "entry", "system", json!({})),
            n("lookup", "tool_call", "agent", json!({ "tool": lookup })),
            n("eligible", "decision", "agent", json!({})),
            n("confirm", "user_input", "user", json!({})),
            n("change", "tool_authorization", "agent", json!({ "tool": mutating })),
            n("done", "exit", "system", json!({})),
            n("refuse", "agent_action", "agent", json!({})),
            n("refused", "exit", "system", json!({})),
        ],
        "edges": [
            e("start", "lookup", None), e("lookup", "eligible", None),
            e("eligible", "confirm", Some("eligible")), e("eligible", "refuse", Some("not_eligible")),
            e("confirm", "change", None), e("change", "done", None), e("refuse", "refused", None),
        ],
    })
}

/// start → which? → one subflow node per target → done.
fn router(id: &str, targets: &[&str]) -> Value {
    let mut nodes = vec![
        n("start", "entry", "system", json!({})),
        n("which", "decision", "agent", json!({})),
        n("done", "exit", "system", json!({})),
    ];
    let mut edges = vec![e("start", "which", None)];
    for t in targets {
        let run = format!("run_{t}");
        nodes.push(n(&run, "subflow", "system", json!({ "subflow": t })));
        edges.push(e("which", &run, Some(t)));
        edges.push(e(&run, "done", None));
    }
    json!({ "id": id, "title": id, "nodes": nodes, "edges": edges })
}

/// start → call → done.
fn single(id: &str, tool: &str) -> Value {
    json!({
        "id": id, "title": id,
        "nodes": [
            n("start", "entry", "system", json!({})),
            n("call", "tool_call", "agent", json!({ "tool": tool })),
            n("done", "exit", "system", json!({})),
        ],
        "edges": [e("start", "call", None), e("call", "done", None)],
    })
}

/// The scripted airline compile; `modify_runs` are the subflows modify_reservation's graph
/// actually runs.
pub(super) struct Airline {
    plan: Value,
    graphs: Vec<(String, Value)>,
}

impl Airline {
    pub(super) fn new(modify_runs: &[&str]) -> Airline {
        let sub = |id: &str, shared: bool, tools: &[&str], runs: &[&str]| {
            json!({ "id": id, "title": id, "purpose": format!("carries the {id} rules"),
                    "shared": shared, "tools": tools, "runs": runs })
        };
        let plan = json!({
            "request_types": [
                { "label": "book", "description": "Book a new reservation", "subflow": "book" },
                { "label": "modify", "description": "Change a reservation", "subflow": "modify_reservation" },
                { "label": "cancel", "description": "Cancel a reservation", "subflow": "cancel" },
                { "label": "compensation", "description": "Ask for compensation", "subflow": "compensation" },
                { "label": "out_of_scope", "description": "Anything the agent cannot handle", "subflow": "transfer" },
            ],
            "identify": "authenticate_user",
            "subflows": [
                sub("authenticate_user", true, &["get_user_details"], &[]),
                sub("change_flights", false, &["get_reservation_details", "update_reservation_flights"], &[]),
                sub("change_passengers", false, &["get_reservation_details", "update_reservation_passengers"], &[]),
                sub("change_baggage", false, &["get_reservation_details", "update_reservation_baggages"], &[]),
                sub("flight_search", false, &["search_direct_flight"], &[]),
                sub("modify_reservation", false, &["get_reservation_details"],
                    &["change_flights", "change_passengers", "change_baggage", "flight_search"]),
                sub("book", false, &["get_user_details", "book_reservation"], &[]),
                sub("cancel", false, &["get_reservation_details", "cancel_reservation"], &[]),
                sub("compensation", false, &["get_reservation_details", "send_certificate"], &[]),
                sub("transfer", false, &["transfer_to_human_agents"], &[]),
            ],
            "coverage": [
                { "tool": "book_reservation", "subflows": ["book"] },
                { "tool": "cancel_reservation", "subflows": ["cancel"] },
                { "tool": "update_reservation_flights", "subflows": ["change_flights"] },
                { "tool": "update_reservation_passengers", "subflows": ["change_passengers"] },
                { "tool": "update_reservation_baggages", "subflows": ["change_baggage"] },
                { "tool": "send_certificate", "subflows": ["compensation"] },
            ],
            "gaps": [],
        });
        let graphs = vec![
            (
                "authenticate_user",
                single("authenticate_user", "get_user_details"),
            ),
            (
                "change_flights",
                guarded(
                    "change_flights",
                    "get_reservation_details",
                    "update_reservation_flights",
                ),
            ),
            (
                "change_passengers",
                guarded(
                    "change_passengers",
                    "get_reservation_details",
                    "update_reservation_passengers",
                ),
            ),
            (
                "change_baggage",
                guarded(
                    "change_baggage",
                    "get_reservation_details",
                    "update_reservation_baggages",
                ),
            ),
            (
                "flight_search",
                single("flight_search", "search_direct_flight"),
            ),
            (
                "modify_reservation",
                router("modify_reservation", modify_runs),
            ),
            (
                "book",
                guarded("book", "get_user_details", "book_reservation"),
            ),
            (
                "cancel",
                guarded("cancel", "get_reservation_details", "cancel_reservation"),
            ),
            (
                "compensation",
                guarded(
                    "compensation",
                    "get_reservation_details",
                    "send_certificate",
                ),
            ),
            ("transfer", single("transfer", "transfer_to_human_agents")),
        ];
        Airline {
            plan,
            graphs: graphs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

    fn graph(&self, id: &str) -> Value {
        let found = self.graphs.iter().find(|(k, _)| k == id);
        found
            .unwrap_or_else(|| panic!("no scripted graph `{id}`"))
            .1
            .clone()
    }

    /// A plan without its `send_certificate` coverage entry (the audit must catch it).
    fn plan_missing_coverage(&self) -> Value {
        let mut plan = self.plan.clone();
        plan["coverage"].as_array_mut().unwrap().pop();
        plan
    }
}

/// `cancel` with its authorization moved to a read-only tool and a dangling edge.
pub(super) fn broken_cancel() -> String {
    let mut g = guarded("cancel", "get_reservation_details", "cancel_reservation");
    g["nodes"][4]["tool"] = "get_reservation_details".into();
    g["edges"]
        .as_array_mut()
        .unwrap()
        .push(e("done", "nowhere", None));
    format!("The cancel subflow:\n```json\n{g}\n```\nDone.")
}

const WORDING: &str = r#"{"classify": {"action": "Which airline request is this?", "condition": "the user said what they want", "source": "You should deny user requests that are against this policy."},
 "deny": {"action": "Deny the request", "condition": "the agent denied it"}}"#;

const MAPPING: &str = r#"{"mappings": [{"policy": "obtain the user id", "nodes": ["authenticate_user/call", "main/identify"]}], "unmapped_policy": ["baggage allowance"], "unsupported_nodes": []}"#;

/// The happy script, with the repairs the first test expects.
pub(super) fn happy(
    airline: Arc<Airline>,
    classify: String,
) -> impl Fn(&Ask) -> String + Send + Sync {
    move |ask| match (ask.step, ask.target.as_str(), ask.attempt) {
        ("classify", _, _) => classify.clone(),
        ("plan", _, 0) => airline.plan_missing_coverage().to_string(),
        ("plan", _, _) => airline.plan.to_string(),
        ("plan_review", _, _) => {
            let mut plan = airline.plan.clone();
            plan["gaps"] = json!(["baggage allowance per membership is not a step"]);
            format!("Reviewed plan:\n{plan}")
        }
        ("subflow", "cancel", 0) => broken_cancel(),
        ("subflow", id, _) => airline.graph(id).to_string(),
        ("branch_review", "book", _) => "The branches look complete.".to_string(),
        ("branch_review", "cancel", _) => {
            let mut g = airline.graph("cancel");
            g["nodes"][2]["source"] = "cancel within 24 hours of booking".into();
            g.to_string()
        }
        ("branch_review", id, _) => airline.graph(id).to_string(),
        ("compose", _, _) => WORDING.to_string(),
        ("mapping", _, _) => MAPPING.to_string(),
        other => panic!("unscripted request {other:?}"),
    }
}

/// Asserts that `record` took two calls (the ask and its one repair) and ended `outcome`, the
/// first reply rejected for `first_error`.
pub(super) fn assert_two_tries(record: &StepRecord, outcome: StepOutcome, first_error: &str) {
    assert_eq!((record.tally.outcome, record.tally.calls), (outcome, 2));
    assert!(
        record.tally.errors[0].contains(first_error),
        "{:?}",
        record.tally.errors
    );
}

/// The node `id` of the bundle's main graph.
pub(super) fn main_node<'a>(bundle: &'a Bundle, id: &str) -> &'a Node {
    bundle
        .main
        .nodes
        .iter()
        .find(|n| n.id == id)
        .unwrap_or_else(|| panic!("no node `{id}` in the main graph"))
}

pub(super) fn step<'a>(
    report: &'a WorkflowCompileReport,
    step: Step,
    target: &str,
) -> &'a StepRecord {
    report
        .steps
        .iter()
        .find(|s| s.step == step && s.target == target)
        .unwrap_or_else(|| panic!("no {step} step for `{target}`"))
}
