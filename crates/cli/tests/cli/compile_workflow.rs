//! `tauguard compile workflow` through the binary: bad input (a `--model` without provider, an
//! unknown domain, a non-empty `--out` without `--overwrite`, the frozen bundle's directory
//! even with it) exits 2 before any model request; a model whose replies never parse fails
//! stage 1 after exactly one repair, exits 1 and writes nothing; and a loopback model that
//! answers each stage compiles the toy domain into a bundle `tauguard validate workflow`
//! accepts.

use crate::support::{assert_contains_all, s, tauguard_status};
use std::path::Path;
use tauguard_testkit::{Loopback, MockProvider, assistant_text, chat_completion};
use wiremock::ResponseTemplate;

/// A loopback OpenAI-style server answering every request with a reply that is no JSON.
fn prose_server() -> Loopback {
    let prose = assistant_text("I would rather describe the tools in prose.");
    Loopback::serve(ResponseTemplate::new(200).set_body_json(chat_completion(
        "m",
        "stop",
        prose,
        (9, 1),
    )))
}

/// An `--llm-config` with provider `local` at `url`, needing no key.
fn llm_config(dir: &Path, url: &str) -> String {
    let path = dir.join("llm.toml");
    std::fs::write(&path, MockProvider::new("local", url).toml("providers")).unwrap();
    s(&path).to_string()
}

/// `compile workflow` of `domain` from the fixtures with the model `local/m` of `llm_config`
/// and `extra` arguments.
fn compile_on(domain: &str, llm_config: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "compile",
        "workflow",
        "--domain",
        domain,
        "--data-dir",
        "tasks/fixtures",
        "--model",
        "local/m",
        "--llm-config",
        llm_config,
    ];
    args.extend_from_slice(extra);
    tauguard_status(&args)
}

fn compile(extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "compile",
        "workflow",
        "--domain",
        "airline",
        "--data-dir",
        "tasks/fixtures",
    ];
    args.extend_from_slice(extra);
    tauguard_status(&args)
}

#[test]
fn a_model_without_provider_is_bad_input() {
    let (code, _, stderr) = compile(&["--model", "gpt-5"]);
    assert_eq!(code, 2, "{stderr}");
    assert_contains_all(&stderr, &["--model `gpt-5`", "PROVIDER/MODEL"]);
}

#[test]
fn an_unknown_domain_is_bad_input() {
    let (code, _, stderr) = tauguard_status(&[
        "compile",
        "workflow",
        "--domain",
        "bank",
        "--model",
        "openai/gpt-5",
        "--data-dir",
        "tasks/fixtures",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown domain `bank`"), "{stderr}");
}

#[test]
fn a_non_empty_out_and_the_frozen_bundle_are_refused_before_any_request() {
    let server = prose_server();
    let tmp = tempfile::tempdir().unwrap();
    let config = llm_config(tmp.path(), &server.uri());
    let out = tmp.path().join("wf");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep").unwrap();
    let out_arg = s(&out);
    let (code, _, stderr) = compile_on("airline", &config, &["--out", out_arg]);
    assert_eq!(code, 2, "{stderr}");
    assert_contains_all(&stderr, &[out_arg, "is not empty", "overwriting"]);

    let frozen = ["--out", "tasks/airline/workflow", "--overwrite"];
    let (code, _, stderr) = compile_on("airline", &config, &frozen);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("frozen workflow bundle of `airline`"),
        "{stderr}"
    );
    assert!(
        tauguard_testkit::workspace_root()
            .join("tasks/airline/workflow/bundle.json")
            .is_file()
    );
    assert_eq!(server.received().len(), 0);
}

#[test]
fn replies_that_never_parse_fail_stage_1_after_one_repair() {
    let server = prose_server();
    let tmp = tempfile::tempdir().unwrap();
    let config = llm_config(tmp.path(), &server.uri());
    let out = tmp.path().join("wf");
    let (code, _, stderr) = compile_on("airline", &config, &["--out", s(&out)]);
    assert_eq!(code, 1, "{stderr}");
    assert_contains_all(
        &stderr,
        &[
            "stage 1 (tools), classify `tools`: no valid reply after one repair",
            "no JSON object",
        ],
    );
    assert_eq!(server.received().len(), 2);
    assert!(!out.exists(), "nothing is written on failure");
}

/// Answers each request by the `Stage N of 6` line of its prompt, for the toy lending library:
/// a member check up front, borrowing, returning, and hand-offs.
struct ToyStages;

fn node(id: &str, kind: &str, extra: serde_json::Value) -> serde_json::Value {
    let actor = match kind {
        "user_input" => "user",
        "entry" | "exit" | "subflow" => "system",
        _ => "agent",
    };
    let mut n = serde_json::json!({
        "id": id, "kind": kind, "actor": actor,
        "action": format!("{id} happens"), "condition": format!("{id} is done"),
    });
    n.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    n
}

/// start → check (lookup) → ok? → confirm → authorize → done | refuse → refused.
fn toy_graph(id: &str, lookup: &str, mutating: &str) -> serde_json::Value {
    use serde_json::json;
    json!({
        "id": id, "title": id,
        "nodes": [
            node("start", "entry", json!({})),
            node("check", "tool_call", json!({ "tool": lookup })),
            node("ok", "decision", json!({})),
            node("confirm", "user_input", json!({})),
            node("authorize", "tool_authorization", json!({ "tool": mutating })),
            node("done", "exit", json!({})),
            node("refuse", "agent_action", json!({})),
            node("refused", "exit", json!({})),
        ],
        "edges": [
            {"from": "start", "to": "check"}, {"from": "check", "to": "ok"},
            {"from": "ok", "to": "confirm", "label": "allowed"},
            {"from": "ok", "to": "refuse", "label": "not_allowed"},
            {"from": "confirm", "to": "authorize"}, {"from": "authorize", "to": "done"},
            {"from": "refuse", "to": "refused"},
        ],
    })
}

fn toy_single(id: &str, tool: &str) -> serde_json::Value {
    use serde_json::json;
    json!({
        "id": id, "title": id,
        "nodes": [node("start", "entry", json!({})), node("call", "tool_call", json!({ "tool": tool })),
                  node("done", "exit", json!({}))],
        "edges": [{"from": "start", "to": "call"}, {"from": "call", "to": "done"}],
    })
}

impl ToyStages {
    fn answer(prompt: &str) -> serde_json::Value {
        use serde_json::json;
        let first = prompt.lines().next().unwrap_or_default();
        let target = first.split('`').nth(1).unwrap_or_default();
        let stage = |n: &str| first.starts_with(&format!("Stage {n} of 6"));
        if stage("1") {
            json!({"tools": [
                {"name": "get_member_details", "class": "read_only"},
                {"name": "get_book_details", "class": "read_only"},
                {"name": "borrow_book", "class": "mutating"},
                {"name": "return_book", "class": "mutating"},
                {"name": "transfer_to_human_agents", "class": "other"},
            ]})
        } else if stage("2") || stage("3") {
            json!({
                "request_types": [
                    {"label": "borrow", "description": "Borrow a book", "subflow": "borrow"},
                    {"label": "return", "description": "Return a book", "subflow": "return_loan"},
                    {"label": "out_of_scope", "description": "Anything else", "subflow": "transfer"},
                ],
                "identify": "verify_member",
                "subflows": [
                    {"id": "verify_member", "title": "Verify", "purpose": "who the member is", "shared": true, "tools": ["get_member_details"]},
                    {"id": "borrow", "title": "Borrow", "purpose": "loan rules", "tools": ["get_book_details", "borrow_book"]},
                    {"id": "return_loan", "title": "Return", "purpose": "return rules", "tools": ["get_book_details", "return_book"]},
                    {"id": "transfer", "title": "Transfer", "purpose": "hand-off", "tools": ["transfer_to_human_agents"]},
                ],
                "coverage": [
                    {"tool": "borrow_book", "subflows": ["borrow"]},
                    {"tool": "return_book", "subflows": ["return_loan"]},
                ],
                "gaps": [],
            })
        } else if stage("4") {
            match target {
                "verify_member" => toy_single(target, "get_member_details"),
                "borrow" => toy_graph(target, "get_book_details", "borrow_book"),
                "return_loan" => toy_graph(target, "get_book_details", "return_book"),
                "transfer" => toy_single(target, "transfer_to_human_agents"),
                other => panic!("unplanned subflow {other}"),
            }
        } else if stage("5") {
            json!({"classify": {"action": "Borrow, return or other?", "condition": "the member said"},
                   "deny": {"action": "Refuse", "condition": "refused"}})
        } else if stage("6") {
            json!({"mappings": [{"policy": "check the member", "nodes": ["verify_member/call"]}]})
        } else {
            panic!("a prompt of no known stage: {first}")
        }
    }
}

impl wiremock::Respond for ToyStages {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
        let content = format!("```json\n{}\n```", ToyStages::answer(prompt));
        ResponseTemplate::new(200).set_body_json(chat_completion(
            "m",
            "stop",
            assistant_text(&content),
            (50, 10),
        ))
    }
}

#[test]
fn the_toy_domain_compiles_to_a_bundle_that_validate_workflow_accepts() {
    let server = Loopback::serve(ToyStages);
    let tmp = tempfile::tempdir().unwrap();
    let config = llm_config(tmp.path(), &server.uri());
    let out = tmp.path().join("wf");
    let (code, stdout, stderr) = compile_on("toy", &config, &["--out", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert_contains_all(
        &stdout,
        &["valid against the environment catalogue", s(&out)],
    );
    // 1 classify + 1 plan + 1 review + 4 × (subflow + branch review) + 1 compose + 1 mapping.
    assert_eq!(server.received().len(), 13);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compile_report.json")).unwrap())
            .unwrap();
    let stages: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        [
            "tools",
            "plan",
            "plan_review",
            "subflows",
            "compose",
            "validate"
        ]
    );
    let bundle = out.join("bundle.json");
    let (code, stdout, stderr) =
        tauguard_status(&["validate", "workflow", s(&bundle), "--domain", "toy"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("valid workflow bundle for domain `toy`"),
        "{stdout}"
    );
}
