//! A guard's `model_prompt` is what it sends: the LLM guide's and the PolicyGuard verifier's
//! system message byte for byte, and a request no shorter than any they render over an empty
//! conversation — the size the dry run sets against a model's context window and `run
//! --check` sends. Guards that call no model have none.

use crate::guide_support::*;
use crate::support::root;
use serde_json::{Map, json};
use std::sync::Arc;
use tauguard_core::ToolCall;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{Guard, GuardInputs, GuardName, GuardOptions, build_guard};
use tauguard_llm::ChatModel;
use tauguard_llm::RoleModel;

fn build(name: &str, data: &DomainData, model: Option<Arc<ScriptedModel>>) -> Arc<dyn Guard> {
    let verifier = match model {
        Some(m) => RoleModel::Built(m as Arc<dyn ChatModel>),
        None => RoleModel::Sim,
    };
    build_guard(
        GuardName::parse(name).unwrap(),
        GuardOptions::default(),
        &GuardInputs {
            tasks_dir: root().join("tasks"),
            prompts_dir: root().join("configs/prompts"),
            data,
            verifier,
            artifacts: None,
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
    .expect("not the baseline")
}

fn pending(tool: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: tool.into(),
        arguments: Map::new(),
        requestor: Default::default(),
    }
}

fn fixture_airline() -> DomainData {
    let dir = DataDir::resolve(Some(&root().join("tasks/fixtures"))).unwrap();
    DomainData::load(&dir, "airline").unwrap()
}

#[tokio::test]
async fn the_guides_model_prompt_is_its_prefix_and_its_longest_empty_request() {
    let data = fixture_airline();
    let ok = reply(json!([]), "");
    let tools: Vec<String> = graph_flow().authorizations().values().cloned().collect();
    let replies: Vec<&str> = std::iter::repeat_n(ok.as_str(), tools.len() + 1).collect();
    let model = guide_model(&replies);
    let guard = build("policyguide", &data, Some(model.clone()));
    let prompt = guard.model_prompt().expect("an LLM guide calls a model");
    let sim = Sim::new(guard.as_ref());
    sim.turn(&[]).await.unwrap();
    // An interception of every authorized tool over an empty conversation (each retry is
    // let through by the gate, so each tool is intercepted once per fresh state).
    for tool in &tools {
        Sim::new(guard.as_ref()).call(&[], &pending(tool)).await;
    }
    let seen = model.seen();
    assert_eq!(seen.len(), tools.len() + 1);
    for req in &seen {
        assert_eq!(system_text(req), prompt.system, "the prefix sent");
    }
    let longest = seen.iter().map(|r| user_text(r).len()).max().unwrap();
    assert_eq!(prompt.request.len(), longest);
    assert_eq!(prompt.chars(), prompt.system.len() + longest);
    assert!(squash(&prompt.system).contains(&squash(&data.policy)));
}

#[tokio::test]
async fn the_verifiers_model_prompt_is_its_prefix_and_its_longest_empty_request() {
    let data = fixture_airline();
    let pass = r#"{"requirements": [], "verdict": "PASS"}"#;
    let mutating: Vec<String> = tauguard_guards::ToolCatalog::of(data.def)
        .mutating
        .into_iter()
        .collect();
    let replies: Vec<&str> = std::iter::repeat_n(pass, 2 * mutating.len()).collect();
    let model = guide_model(&replies);
    let guard = build("pg-checklist", &data, Some(model.clone()));
    let prompt = guard.model_prompt().expect("an LLM verifier calls a model");
    for tool in &mutating {
        Sim::new(guard.as_ref()).call(&[], &pending(tool)).await;
    }
    // First attempts only (a repair turn would add the reply and the repair prompt).
    let first: Vec<_> = model
        .seen()
        .into_iter()
        .filter(|r| r.messages.len() == 2)
        .collect();
    assert_eq!(first.len(), mutating.len());
    for req in &first {
        assert_eq!(system_text(req), prompt.system, "the prefix sent");
    }
    let longest = first.iter().map(|r| user_text(r).len()).max().unwrap();
    assert_eq!(prompt.request.len(), longest);

    // The hybrid guard's is its verifier's.
    let hybrid = build("hybrid", &data, Some(guide_model(&[])));
    assert_eq!(hybrid.model_prompt(), Some(prompt));
}

#[test]
fn guards_without_a_model_have_no_model_prompt() {
    let data = fixture_airline();
    for name in [
        "toolguard",
        "block-all",
        "pg-checklist",
        "policyguide",
        "flowagent",
    ] {
        assert_eq!(build(name, &data, None).model_prompt(), None, "{name}");
    }
}
