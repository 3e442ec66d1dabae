//! Unit tests of the simulation loop (kept apart so the loop's file stays readable).

use super::*;
use std::time::Duration;
use tauguard_core::Requestor;
use tauguard_core::message::ToolCall;
use tauguard_guards::{Decision, GuardContext};
use tauguard_llm::{ChatRequest, ChatResponse};

#[test]
fn timestamps_are_seconds_and_six_digit_microseconds() {
    assert_eq!(
        timestamp(Duration::new(1_700_000_000, 5_000)),
        "1700000000.000005"
    );
    assert_eq!(timestamp(Duration::new(12, 999_999_999)), "12.999999");
    assert_eq!(timestamp(Duration::new(0, 0)), "0.000000");
    assert_eq!(
        timestamp(Duration::new(1_764_500_000, 123_456_000)),
        format!("{}.{:06}", 1_764_500_000, 123_456)
    );
}

/// A model that answers from a script, in order, and keeps every request it was sent.
struct Scripted {
    replies: std::sync::Mutex<Vec<(Option<&'static str>, Vec<ToolCall>)>>,
    seen: std::sync::Mutex<Vec<Vec<Message>>>,
}

impl Scripted {
    fn new(mut replies: Vec<(Option<&'static str>, Vec<ToolCall>)>) -> Scripted {
        replies.reverse();
        Scripted {
            replies: std::sync::Mutex::new(replies),
            seen: Default::default(),
        }
    }
}

impl ChatModel for Scripted {
    fn id(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> tauguard_llm::BoxFuture<'a, Result<ChatResponse, tauguard_llm::LlmError>> {
        self.seen.lock().unwrap().push(req.messages.to_vec());
        let (content, tool_calls) = self.replies.lock().unwrap().pop().expect("scripted");
        Box::pin(async move {
            Ok(ChatResponse {
                content: content.map(str::to_string),
                tool_calls,
                usage: Default::default(),
                cost: None,
                latency: Duration::ZERO,
                original_latency_seconds: None,
                cache_hit: false,
                attempts: 1,
                finish_reason: None,
                provider_model: None,
            })
        })
    }
}

/// Blocks every `cancel_reservation`, passes the rest.
struct NoCancel;

impl Guard for NoCancel {
    fn name(&self) -> &str {
        "no-cancel"
    }
    fn on_mutating_call<'a>(
        &'a self,
        _ctx: &'a GuardContext<'a>,
        call: &'a ToolCall,
    ) -> tauguard_llm::BoxFuture<'a, Result<Decision, tauguard_guards::GuardError>> {
        let d = if call.name == "cancel_reservation" {
            Decision::block(Vec::new(), "Confirm the cancellation with the user first.")
        } else {
            Decision::pass(Vec::new())
        };
        Box::pin(async move { Ok(d) })
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.as_object().unwrap().clone(),
        requestor: Requestor::Assistant,
    }
}

#[test]
fn a_blocked_call_reaches_the_agent_as_its_remediation_and_leaves_the_trajectory() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/fixtures");
    let data = DomainData::load(
        &tauguard_env::DataDir::resolve(Some(&dir)).unwrap(),
        "airline",
    )
    .unwrap();
    let task = data.tasks.iter().find(|t| t.id == "f1").unwrap();
    let cancel = call(
        "c1",
        "cancel_reservation",
        serde_json::json!({"reservation_id": "FXA001"}),
    );
    let lookup = call(
        "c2",
        "get_user_details",
        serde_json::json!({"user_id": "zoe_quinn_1001"}),
    );
    // One message: text, a blocked call and an executed read; then a call-only message
    // whose one call is blocked; then a text turn.
    let agent = Scripted::new(vec![
        (Some("Cancelling now."), vec![cancel.clone(), lookup]),
        (
            None,
            vec![call(
                "c3",
                "cancel_reservation",
                serde_json::json!({"reservation_id": "FXA001"}),
            )],
        ),
        (Some("Shall I cancel FXA001? (yes/no)"), vec![]),
    ]);
    let user = Scripted::new(vec![
        (Some("Cancel FXA001."), vec![]),
        (Some("###STOP###"), vec![]),
    ]);
    let spec = SimulationSpec {
        data: &data,
        task,
        trial: 0,
        seed: 1,
        agent: &agent,
        user: &user,
        agent_sampling: Sampling::default(),
        user_sampling: Sampling::default(),
        agent_system_prompt: Arc::from("agent"),
        user_system_prompt: Arc::from("user"),
        max_steps: 50,
        max_errors: 10,
        guard: Some(&NoCancel),
        embedder: None,
    };
    let out = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(run_simulation(&spec))
        .unwrap();
    let remediation = "Confirm the cancellation with the user first.";
    // The agent's next request carries its blocked call answered by the remediation.
    let seen = agent.seen.lock().unwrap();
    let answer = |req: &[Message], id: &str| {
        req.iter().find_map(|m| match m {
            Message::Tool(t) if t.id == id => Some((t.content.clone(), t.guard_blocked)),
            _ => None,
        })
    };
    assert!(seen[1].iter().any(|m| m.tool_calls().contains(&cancel)));
    assert_eq!(
        answer(&seen[1], "c1"),
        Some((remediation.to_string(), true))
    );
    assert_eq!(
        answer(&seen[2], "c3"),
        Some((remediation.to_string(), true))
    );
    // The trajectory: the text and the executed read stay; both blocked calls are gone.
    let ids: Vec<&str> = out
        .messages
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["c2"]);
    assert!(
        out.messages
            .iter()
            .any(|m| m.content() == Some("Cancelling now."))
    );
    assert!(
        !out.messages
            .iter()
            .any(|m| matches!(m, Message::Tool(t) if t.guard_blocked))
    );
    // Three agent turns asked, one of which (the call-only block) never happened.
    assert_eq!(out.agent_turns, 2);
    // The attempts, with arguments and remediation, are in the guard events.
    let blocked: Vec<_> = out.guard_events.iter().filter(|e| !e.executed).collect();
    assert_eq!(blocked.len(), 2);
    assert_eq!(blocked[0].arguments, cancel.arguments);
    assert_eq!(blocked[0].remediation.as_deref(), Some(remediation));
    assert_eq!(out.call_attempts.iter().filter(|a| !a.executed).count(), 2);
    // The user never saw a call or a remediation; the environment never cancelled.
    for req in user.seen.lock().unwrap().iter() {
        assert!(
            req.iter()
                .all(|m| !matches!(m, Message::Tool(_)) && m.tool_calls().is_empty())
        );
    }
    let fresh = data.fresh_env();
    assert!(out.final_env.unwrap().0.same_state(fresh.as_ref()));
    assert!(out.agent_view.is_some_and(|v| v.len() > out.messages.len()));
}

#[test]
fn a_failed_sync_keeps_the_tool_error_as_its_cause() {
    let e = SimulationError::Sync(tauguard_env::ToolError::value("user and agent disagree"));
    let cause = std::error::Error::source(&e).expect("the tool error is the source");
    assert_eq!(cause.to_string(), "user and agent disagree");
    assert_eq!(
        tauguard_core::chain_text(&e),
        "sync_tools: ValueError: user and agent disagree"
    );
}
