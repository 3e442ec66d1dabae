//! The LLM guide in the simulation loop: built by the guard factory from the frozen airline
//! bundle with a scripted verifier, run on the fixture airline domain with a scripted agent and
//! user. The guide's remediation reaches the agent as a guidance message before it answers the
//! user's turn, the guide event is in the outcome, and the trajectory never holds the guidance.

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tauguard_core::Message;
use tauguard_core::dialogue::GUIDANCE_PREFIX;
use tauguard_core::message::Usage;
use tauguard_core::record::{GuideTrigger, RequestStatus};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{GuardInputs, GuardName, GuardOptions, build_guard};
use tauguard_llm::ChatModel;
use tauguard_orchestrator::{Sampling, SimulationSpec, run_simulation};
use tauguard_testkit::scripted::{ScriptedModel, text_reply};

/// A model answering from a script in order and keeping every request it was sent.
fn scripted(id: &'static str, replies: &[&str]) -> Arc<ScriptedModel> {
    ScriptedModel::new(id, replies, move |next, _| {
        let content = next.unwrap_or_else(|| panic!("{id}: no scripted reply left"));
        let usage = Usage {
            prompt_tokens: 3000,
            completion_tokens: 80,
            cached_prompt_tokens: 2048,
        };
        Ok(text_reply(content, usage, None, Duration::from_millis(10)))
    })
}

const REMEDIATION: &str = "Ask the user for their user id before anything else.";

#[test]
fn guidance_reaches_the_agent_only_and_the_guide_event_is_recorded() {
    let root = tauguard_testkit::workspace_root();
    let dir = DataDir::resolve(Some(&root.join("tasks/fixtures"))).unwrap();
    let data = DomainData::load(&dir, "airline").unwrap();
    let task = data.tasks.iter().find(|t| t.id == "f1").unwrap();

    let verifier = scripted(
        "mock/guide-1",
        &[&json!({
            "requests": [{"id": null, "intent": "cancel FXA001",
                          "node": "authenticate_user/ask_user_id", "authorizations": [],
                          "status": "active", "merge_into": null}],
            "remediation": REMEDIATION,
        })
        .to_string()],
    );
    let model: Arc<dyn ChatModel> = verifier.clone();
    let guard = build_guard(
        GuardName::parse("policyguide").unwrap(),
        GuardOptions::default(),
        &GuardInputs {
            tasks_dir: root.join("tasks"),
            prompts_dir: root.join("configs/prompts"),
            data: &data,
            verifier: tauguard_llm::RoleModel::Built(model),
            artifacts: None,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .expect("policyguide is a guard");
    assert_eq!(guard.name(), "policyguide");

    let agent = scripted("mock/agent", &["Sure. What is your user id?"]);
    let user = scripted(
        "mock/user",
        &["Please cancel reservation FXA001.", "###STOP###"],
    );
    let spec = SimulationSpec {
        data: &data,
        task,
        trial: 0,
        seed: 11,
        agent: agent.as_ref(),
        user: user.as_ref(),
        agent_sampling: Sampling::default(),
        user_sampling: Sampling::default(),
        agent_system_prompt: Arc::from("agent system prompt"),
        user_system_prompt: Arc::from("user system prompt"),
        max_steps: 20,
        max_errors: 5,
        guard: Some(guard.as_ref()),
        embedder: None,
    };
    let out = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(run_simulation(&spec))
        .unwrap_or_else(|e| panic!("{e}"));

    // The agent's one request ends with the user's turn followed by the guidance.
    let asked = agent.seen();
    assert_eq!(asked.len(), 1);
    let msgs = &asked[0].messages;
    let n = msgs.len();
    assert_eq!(
        msgs[n - 2].content(),
        Some("Please cancel reservation FXA001.")
    );
    match &msgs[n - 1] {
        Message::User(p) => assert_eq!(
            p.content.as_deref(),
            Some(format!("{GUIDANCE_PREFIX}{REMEDIATION}").as_str())
        ),
        other => panic!("the guidance is a user-role message, not {other:?}"),
    }

    // The verifier read the user's turn before the agent answered it, once.
    let judged = verifier.seen();
    assert_eq!(judged.len(), 1);
    let dynamic = judged[0].messages[1].content().unwrap();
    assert!(
        dynamic.contains("USER: Please cancel reservation FXA001."),
        "{dynamic}"
    );
    assert!(!dynamic.contains("What is your user id?"));

    // The outcome holds the event, with the card code keeps and the verifier's usage.
    assert_eq!(out.guide_events.len(), 1, "the stop turn is not answered");
    let e = &out.guide_events[0];
    assert_eq!(e.guard, "policyguide");
    assert_eq!(e.trigger, GuideTrigger::UserTurn);
    assert_eq!(e.guidance.as_deref(), Some(REMEDIATION));
    assert_eq!(e.requests.len(), 1);
    assert_eq!(e.requests[0].node, "authenticate_user/ask_user_id");
    assert_eq!(e.requests[0].status, RequestStatus::Active);
    assert!(e.enabled_tools.is_empty());
    assert_eq!(e.usage.calls, 1);
    assert_eq!(e.usage.usage.cached_prompt_tokens, 2048);
    assert_eq!(e.at_message, 2, "after the greeting and the user's turn");

    // The trajectory is the dialogue without the guidance; the user never saw it either.
    let texts: Vec<&str> = out.messages.iter().filter_map(Message::content).collect();
    assert_eq!(
        texts,
        [
            "Hi! How can I help you today?",
            "Please cancel reservation FXA001.",
            "Sure. What is your user id?",
            "###STOP###",
        ]
    );
    for req in user.seen() {
        assert!(
            req.messages
                .iter()
                .filter_map(Message::content)
                .all(|t| !t.contains(GUIDANCE_PREFIX)),
            "the user never reads guidance"
        );
    }
}
