//! A remote agent: an agent that runs its own loop behind a Chat-Completions-shaped endpoint,
//! reached as an `openai`-kind provider, instead of tauguard's model-driven agent. A tiny
//! scripted one (it tries to cancel a reservation, then answers in words) completes airline
//! tasks through the built-in `block-all` guard: every call it makes is judged, blocked and
//! popped from the trajectory exactly as for a built-in agent, and its usage is recorded as
//! the agent's.

use crate::support::tauguard_in_env;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The scripted agent: a cancellation on its first turn, words after a tool result.
struct ScriptedAgent;

impl Respond for ScriptedAgent {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        assert!(
            body["tools"].as_array().is_some_and(|t| !t.is_empty()),
            "the agent is sent the tool schemas"
        );
        let called = messages.iter().any(|m| m["tool_calls"].is_array());
        let message = if !called {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "cancel_reservation",
                    "arguments": "{\"reservation_id\": \"4WQ150\"}"}}]})
        } else {
            json!({"role": "assistant", "content": "I could not make that change. Is there anything else I can help with?"})
        };
        let finish = if called { "stop" } else { "tool_calls" };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "r", "object": "chat.completion", "created": 0, "model": "scripted-agent-1.0",
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        }))
    }
}

#[test]
fn a_remote_agent_runs_through_a_built_in_guard_like_a_built_in_agent() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let s = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ScriptedAgent)
            .mount(&s)
            .await;
        s
    });
    let data = tauguard_testkit::tau2_candidate().display().to_string();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("remote.toml");
    std::fs::write(
        &cfg,
        format!(
            "[run]\nname = \"remote\"\ndomain = \"airline\"\nnum_tasks = 3\nmax_steps = 30\n\
             max_retries = 0\ndata_dir = \"{data}\"\n\
             [models.agent]\nprovider = \"remote\"\nmodel = \"scripted-agent\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
             [llm.providers.remote]\nkind = \"openai\"\nbase_url = \"{}/v1\"\ntimeout_secs = 5\n\
             [grid]\nguards = [\"block-all\"]\n",
            server.uri()
        ),
    )
    .unwrap();
    let out = tmp.path().join("run");
    let (code, _, err) = tauguard_in_env(
        &[
            "run",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-cache",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let recs: Vec<Value> = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert!(r["error"].is_null(), "{}", r["error"]);
        assert_ne!(r["termination_reason"], "infrastructure_error");
        assert_eq!(r["cell"]["agent.provider"], "remote");
        // The call was judged and blocked, and popped: it never happened in the trajectory.
        let events = r["guard_events"].as_array().unwrap();
        assert!(!events.is_empty(), "{}", r["task_id"]);
        for e in events {
            assert_eq!(
                (
                    e["tool"].as_str(),
                    e["verdict"].as_str(),
                    e["executed"].as_bool()
                ),
                (Some("cancel_reservation"), Some("block"), Some(false))
            );
        }
        let executed_calls = r["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["tool_calls"].is_array())
            .count();
        assert_eq!(executed_calls, 0, "{}", r["messages"]);
        // The agent's own usage, recorded as any agent model's.
        let agent = &r["usage"]["agent"];
        assert!(agent["calls"].as_u64().unwrap() >= 2, "{agent}");
        assert_eq!(
            agent["usage"]["prompt_tokens"].as_u64().unwrap(),
            100 * agent["calls"].as_u64().unwrap()
        );
    }
}
