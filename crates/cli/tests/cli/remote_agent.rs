//! A remote agent: an agent that runs its own loop behind a Chat-Completions-shaped endpoint,
//! reached as an `openai`-kind provider, instead of tauguard's model-driven agent. A tiny
//! scripted one (it tries to cancel a reservation, then answers in words) completes airline
//! tasks through the built-in `block-all` guard: every call it makes is judged, blocked and
//! popped from the trajectory exactly as for a built-in agent, and its usage is recorded as
//! the agent's. With `identify = true` the server's own account of the agent (its `/models`
//! entry) is part of the cell, so a changed agent cannot be resumed onto.

use crate::support::{assert_contains_all, records, s, tauguard_in_env};
use serde_json::{Value, json};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, chat_completion};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

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
        ResponseTemplate::new(200).set_body_json(chat_completion(
            "scripted-agent-1.0",
            finish,
            message,
            (100, 10),
        ))
    }
}

/// Writes the run config: `num_tasks` airline tasks under `block-all`, the agent behind
/// `uri`, `provider_extra` appended to its provider table.
fn write_config(
    dir: &std::path::Path,
    uri: &str,
    num_tasks: usize,
    provider_extra: &str,
) -> std::path::PathBuf {
    let provider = MockProvider::new("remote", &format!("{uri}/v1"))
        .lines("timeout_secs = 5")
        .lines(provider_extra);
    SimConfig::new("remote", "airline", &tauguard_testkit::tau2_candidate())
        .run_line(&format!(
            "num_tasks = {num_tasks}\nmax_steps = 30\nmax_retries = 0"
        ))
        .agent("provider = \"remote\"\nmodel = \"scripted-agent\"")
        .provider(provider)
        .guards(&["block-all"])
        .write(&dir.join("remote.toml"))
}

/// `tauguard run CFG --out OUT --no-cache [--resume]`: (exit code, stdout, stderr).
fn run(cfg: &std::path::Path, out: &std::path::Path, resume: bool) -> (i32, String, String) {
    let mut args = vec!["run", s(cfg), "--out", s(out), "--no-cache"];
    if resume {
        args.push("--resume");
    }
    tauguard_in_env(&args, &[])
}

/// A fresh [`run`] of `cfg` into `out` that succeeds with one record per task; its records.
fn first_run(cfg: &std::path::Path, out: &std::path::Path, tasks: usize) -> Vec<Value> {
    let (code, _, err) = run(cfg, out, false);
    assert_eq!(code, 0, "{err}");
    let recs = records(out);
    assert_eq!(recs.len(), tasks);
    recs
}

#[test]
fn a_remote_agent_runs_through_a_built_in_guard_like_a_built_in_agent() {
    let server = Loopback::serve(ScriptedAgent);
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), &server.uri(), 3, "");
    let recs = first_run(&cfg, &tmp.path().join("run"), 3);
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

/// A `/models` list naming the scripted agent at `version`, stamped with the request time as
/// vLLM and llama.cpp do.
fn models_list(version: &str) -> ResponseTemplate {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    ResponseTemplate::new(200).set_body_json(json!({"object": "list", "data": [
        {"id": "scripted-agent", "object": "model", "created": now, "owned_by": "lab",
         "version": version}
    ]}))
}

/// Mounts the scripted agent on `server`, with its `/models` entry at `version`.
fn mount_agent(server: &Loopback, version: &str) {
    server.add(
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .respond_with(models_list(version)),
    );
    server.add(Mock::given(method("POST")).respond_with(ScriptedAgent));
}

#[test]
fn an_identified_remote_agent_is_part_of_the_cell_and_a_changed_one_is_not_resumed() {
    let server = Loopback::start();
    mount_agent(&server, "1.0");
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), &server.uri(), 2, "identify = true\n");
    let out = tmp.path().join("run");
    let recs = first_run(&cfg, &out, 2);
    for r in &recs {
        // The server's entry, without the request-time `created` and the constant `object`.
        assert_eq!(
            r["cell"]["agent.identity"],
            json!({"id": "scripted-agent", "owned_by": "lab", "version": "1.0"})
        );
    }
    // The same agent again (only `created` moved): the run is complete, nothing reruns.
    let (code, stdout, err) = run(&cfg, &out, true);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("(2 already complete, 0 run now)"),
        "{stdout}"
    );
    // The server now reports another build: its cell is not the recorded one.
    server.reset();
    mount_agent(&server, "1.1");
    let (code, _, err) = run(&cfg, &out, true);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("agent.identity"), "{err}");
    let after = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    assert_eq!(after.lines().count(), 2, "no record is lost or added");
    // A server that cannot say who it is stops the run before anything is written.
    server.reset();
    server.add(Mock::given(method("POST")).respond_with(ScriptedAgent));
    let fresh = tmp.path().join("fresh");
    let (code, _, err) = run(&cfg, &fresh, false);
    assert_ne!(code, 0, "{err}");
    assert_contains_all(&err, &["cannot identify `scripted-agent`", "HTTP 404"]);
    assert!(!fresh.join("records.jsonl").exists());
}
