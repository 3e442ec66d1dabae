//! Replies cut at the token limit, against a loopback server answering `finish_reason:
//! "length"`: every reply keeps its stop reason in the record and each cut one is counted in
//! its role's usage and the run summary; `[run] truncated_replies` makes a cut agent reply a
//! recorded reply, a scored `agent_error`, or a retry with twice the limit; the verifier and
//! the guide send their own token limits, never the paired agent's; and a cache replay keeps
//! the answer's latency apart from its own.

use crate::support::{fixture_dir, parse, run_records, run_to};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tauguard_core::Message;
use tauguard_core::message::TokenLimitRetry;
use tauguard_core::record::SimulationRecord;
use tauguard_guards::{DEFAULT_GUIDE_MAX_TOKENS, DEFAULT_VERIFIER_MAX_TOKENS};
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::RunSummary;
use tauguard_testkit::{Loopback, MockProvider, SimConfig, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// The agent's token limit in these runs, and what a cut reply used of it.
const AGENT_LIMIT: u64 = 160;

/// Half a JSON object: what a reply cut at its limit sends the user.
const HALF: &str = "{\"reply\": \"Your reservation FXA001 is";

fn chat(content: Option<&str>, calls: Value, finish: &str, completion: u64) -> Value {
    let mut message = json!({"role": "assistant", "content": content});
    if calls.as_array().is_some_and(|c| !c.is_empty()) {
        message["tool_calls"] = calls;
    }
    chat_completion("m", finish, message, (50, completion))
}

/// Answers every request with `answer(body)` and keeps the bodies.
struct Recording {
    bodies: Arc<Mutex<Vec<Value>>>,
    answer: fn(&Value) -> Value,
    delay: Duration,
}

impl Respond for Recording {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let reply = (self.answer)(&body);
        self.bodies.lock().unwrap().push(body);
        ResponseTemplate::new(200)
            .set_body_json(reply)
            .set_delay(self.delay)
    }
}

/// A loopback server on a runtime of its own, and the request bodies it received.
struct Server {
    server: Loopback,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Server {
    fn start(answer: fn(&Value) -> Value, delay: Duration) -> Server {
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let server = Loopback::serve(Recording {
            bodies: bodies.clone(),
            answer,
            delay,
        });
        Server { server, bodies }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// A fixture-domain config: the mock agent with the given token limit, the sim user, `[run]`
/// extras, and whatever `tail` adds (`[guard]`, `[grid]`, `[llm.cache]`).
fn config(server: &str, run_extra: &str, tail: &str) -> RunConfig {
    let builder = SimConfig::new("cut", "airline", &fixture_dir())
        .seed(300)
        .run_line("task_ids = [\"f1\"]\nmax_steps = 8\nmax_retries = 0")
        .run_line(run_extra)
        .agent(&format!(
            "provider = \"mock\"\nmodel = \"m\"\nmax_tokens = {AGENT_LIMIT}"
        ))
        .provider(
            MockProvider::new("mock", server)
                .lines("timeout_secs = 5")
                .retry("max_attempts = 1"),
        )
        .tail(tail);
    parse("cut.toml", &builder)
}

fn run_cut(cfg: RunConfig, out: &Path) -> RunSummary {
    run_to(cfg, out).unwrap_or_else(|e| panic!("{e}"))
}

/// The agent's messages of a trajectory, the fixed greeting left out.
fn agent_messages(r: &SimulationRecord) -> Vec<&tauguard_core::message::ParticipantMessage> {
    r.messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(p) if p.usage.is_some() => Some(p),
            _ => None,
        })
        .collect()
}

fn always_cut(_: &Value) -> Value {
    chat(Some(HALF), json!([]), "length", AGENT_LIMIT)
}

#[test]
fn cut_replies_are_recorded_with_their_stop_reason_and_counted() {
    let server = Server::start(always_cut, Duration::ZERO);
    let out = tempfile::tempdir().unwrap();
    let summary = run_cut(config(&server.server.uri(), "", ""), out.path());
    let recs = run_records(out.path());
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(
        r.termination_reason.as_str(),
        "max_steps",
        "recorded as is: the run goes on"
    );
    let replies = agent_messages(r);
    assert!(!replies.is_empty());
    for m in &replies {
        assert_eq!(m.finish_reason.as_deref(), Some("length"));
        assert_eq!(m.content.as_deref(), Some(HALF));
        assert_eq!(m.token_limit_retry, None);
    }
    let agent = &r.usage["agent"];
    assert_eq!(agent.truncated, agent.calls, "every agent reply was cut");
    assert_eq!(agent.truncated, replies.len() as u64);
    assert_eq!(agent.truncation_retries, 0);
    // The sim user's replies keep theirs too, and none was cut.
    let user_reasons: Vec<_> = r
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User(p) => Some(p.finish_reason.as_deref()),
            _ => None,
        })
        .collect();
    assert!(
        user_reasons.iter().all(|f| *f == Some("stop")),
        "{user_reasons:?}"
    );
    assert_eq!(r.usage["user"].truncated, 0);
    // The summary names the role and the count.
    assert_eq!(summary.truncated["agent"].replies, agent.truncated);
    let line = summary.truncated_line().expect("some reply was cut");
    assert_eq!(line, format!("agent {}", agent.truncated));
    assert!(!summary.truncated.contains_key("user"));
    // The stop reason is a tauguard field: the upstream export has no such key.
    let data = tauguard_env::DomainData::load(
        &tauguard_env::DataDir::resolve(Some(&fixture_dir())).unwrap(),
        "airline",
    )
    .unwrap();
    let exported = tauguard_orchestrator::results_json(
        &recs,
        &data,
        None,
        &tauguard_orchestrator::ExportOptions::default(),
    )
    .unwrap();
    let text = exported["simulations"].to_string();
    assert!(
        text.contains("Your reservation FXA001 is"),
        "the cut reply is exported"
    );
    assert!(!text.contains("finish_reason"), "{text}");
}

#[test]
fn under_agent_error_a_cut_agent_reply_ends_the_simulation_scored() {
    let server = Server::start(always_cut, Duration::ZERO);
    let out = tempfile::tempdir().unwrap();
    let cfg = config(
        &server.server.uri(),
        "truncated_replies = \"agent_error\"",
        "",
    );
    let summary = run_cut(cfg, out.path());
    assert_eq!((summary.completed, summary.infra_errors), (1, 0));
    let r = &run_records(out.path())[0];
    assert_eq!(r.termination_reason.as_str(), "agent_error");
    assert_eq!(r.reward.as_ref().map(|w| w.reward), Some(0.0));
    let error = r.error.as_deref().unwrap();
    assert!(
        error.contains("agent model: reply cut at its token limit (finish reason `length`, 160 completion tokens of max_tokens 160)"),
        "{error}"
    );
    // The cut reply left the trajectory; the record keeps it as the output that ended it.
    assert!(agent_messages(r).is_empty());
    let u = r.attempts.unusable_output.as_ref().unwrap();
    assert_eq!(
        (u.role.as_str(), u.kind.as_str()),
        ("agent", "truncated_reply")
    );
    assert_eq!(u.raw.as_deref(), Some(HALF));
    assert_eq!(u.finish_reason.as_deref(), Some("length"));
    assert!(
        r.attempts.restarts.is_empty(),
        "scored at once, never restarted"
    );
    assert_eq!((r.usage["agent"].calls, r.usage["agent"].truncated), (1, 1));
    assert_eq!(r.cell["truncated_replies"], json!("agent_error"));
}

/// Cuts a reply sent with the agent's limit or less; answers whole with a larger one.
fn cut_below_double(body: &Value) -> Value {
    match body["max_tokens"].as_u64() {
        Some(limit) if limit > AGENT_LIMIT => {
            chat(Some("How else can I help?"), json!([]), "stop", 40)
        }
        _ => always_cut(body),
    }
}

#[test]
fn under_retry_a_cut_agent_reply_is_asked_again_with_twice_the_limit() {
    let server = Server::start(cut_below_double, Duration::ZERO);
    let out = tempfile::tempdir().unwrap();
    let cfg = config(&server.server.uri(), "truncated_replies = \"retry\"", "");
    let summary = run_cut(cfg, out.path());
    let r = &run_records(out.path())[0];
    assert_eq!(r.termination_reason.as_str(), "max_steps");
    let replies = agent_messages(r);
    assert!(!replies.is_empty());
    for m in &replies {
        assert_eq!(m.finish_reason.as_deref(), Some("stop"));
        assert_eq!(m.content.as_deref(), Some("How else can I help?"));
        assert_eq!(
            m.token_limit_retry,
            Some(TokenLimitRetry {
                max_tokens: Some(160),
                finish_reason: "length".into(),
                completion_tokens: 160,
                retry_max_tokens: 320,
            })
        );
    }
    let n = replies.len() as u64;
    let agent = &r.usage["agent"];
    assert_eq!(
        (agent.calls, agent.truncated, agent.truncation_retries),
        (2 * n, n, n),
        "each turn: one cut reply, one retry"
    );
    assert_eq!(
        agent.usage.completion_tokens,
        n * (160 + 40),
        "both were billed"
    );
    let limits: Vec<u64> = server
        .bodies()
        .iter()
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(
        limits,
        [160, 320].repeat(n as usize),
        "retried at once, once"
    );
    assert_eq!(
        summary.truncated_line().unwrap(),
        format!("agent {n} ({n} retried)")
    );
}

/// The verifier's, the guide's and the agent's requests told apart by their system prompts;
/// the agent cancels the reservation, then says it is done.
fn by_role(body: &Value) -> Value {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    if system.contains("compliance verifier") {
        let v = json!({"requirements": [], "verdict": "PASS", "agent_message": ""});
        return chat(Some(&v.to_string()), json!([]), "stop", 30);
    }
    if system.contains("workflow guide") {
        let g = json!({"requests": [], "remediation": ""});
        return chat(Some(&g.to_string()), json!([]), "stop", 30);
    }
    let called = body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    if called {
        return chat(Some("Done: it is cancelled."), json!([]), "stop", 10);
    }
    let call = json!([{"id": "c1", "type": "function", "function":
        {"name": "cancel_reservation", "arguments": "{\"reservation_id\": \"FXA001\"}"}}]);
    chat(None, call, "tool_calls", 20)
}

/// The token limit of each request, by which role's prompt sent it.
fn limits_by_role(bodies: &[Value]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let (mut agent, mut verifier, mut guide) = (Vec::new(), Vec::new(), Vec::new());
    for b in bodies {
        let system = b["messages"][0]["content"].as_str().unwrap_or_default();
        let limit = b["max_tokens"]
            .as_u64()
            .expect("every request sets a limit");
        if system.contains("compliance verifier") {
            verifier.push(limit);
        } else if system.contains("workflow guide") {
            guide.push(limit);
        } else {
            agent.push(limit);
        }
    }
    (agent, verifier, guide)
}

/// Runs pg-raw and policyguide into `out` with `guard` (a `[guard]` table or nothing); returns
/// the token limits the agent's, the verifier's and the guide's requests were sent with.
fn limits_sent(guard: &str, out: &Path) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let server = Server::start(by_role, Duration::ZERO);
    let tail = format!("{guard}[grid]\nguards = [\"pg-raw\", \"policyguide\"]\n");
    run_cut(config(&server.server.uri(), "", &tail), out);
    limits_by_role(&server.bodies())
}

#[test]
fn the_paired_verifier_and_guide_send_their_own_token_limits() {
    let out = tempfile::tempdir().unwrap();
    let (agent, verifier, guide) = limits_sent("", out.path());
    assert!(!agent.is_empty() && !verifier.is_empty() && !guide.is_empty());
    assert!(agent.iter().all(|l| *l == AGENT_LIMIT), "{agent:?}");
    assert!(
        verifier
            .iter()
            .all(|l| *l == u64::from(DEFAULT_VERIFIER_MAX_TOKENS)),
        "{verifier:?}"
    );
    assert!(
        guide
            .iter()
            .all(|l| *l == u64::from(DEFAULT_GUIDE_MAX_TOKENS)),
        "{guide:?}"
    );
    // Each cell's settings name the limit its guard's requests were sent with.
    for r in run_records(out.path()) {
        let expected = match r.guard.as_str() {
            "pg-raw" => DEFAULT_VERIFIER_MAX_TOKENS,
            _ => DEFAULT_GUIDE_MAX_TOKENS,
        };
        assert_eq!(
            r.cell["verifier.max_tokens"],
            json!(expected),
            "{}",
            r.guard
        );
        assert_eq!(r.cell["agent.max_tokens"], json!(AGENT_LIMIT));
    }

    // `[guard]` sets them.
    let out = tempfile::tempdir().unwrap();
    let set = "[guard]\nverifier_max_tokens = 3000\nguide_max_tokens = 1500\n";
    let (agent, verifier, guide) = limits_sent(set, out.path());
    assert!(agent.iter().all(|l| *l == AGENT_LIMIT), "{agent:?}");
    assert!(
        !verifier.is_empty() && verifier.iter().all(|l| *l == 3000),
        "{verifier:?}"
    );
    assert!(
        !guide.is_empty() && guide.iter().all(|l| *l == 1500),
        "{guide:?}"
    );
}

/// Answers slowly enough that a replay's own time cannot be mistaken for the answer's.
const ANSWER_DELAY: Duration = Duration::from_millis(120);

fn whole(_: &Value) -> Value {
    chat(Some("Could you tell me more?"), json!([]), "stop", 5)
}

#[test]
fn a_cache_replay_records_the_answers_latency_apart_from_its_own() {
    let server = Server::start(whole, ANSWER_DELAY);
    let cache = tempfile::tempdir().unwrap();
    let tail = format!(
        "[llm.cache]\ndir = \"{}\"\nmode = \"read_write\"\n",
        cache.path().display()
    );
    let first = tempfile::tempdir().unwrap();
    run_cut(config(&server.server.uri(), "", &tail), first.path());
    let sent = server.bodies().len();
    let second = tempfile::tempdir().unwrap();
    run_cut(config(&server.server.uri(), "", &tail), second.path());
    assert_eq!(
        server.bodies().len(),
        sent,
        "the rerun is served from the cache"
    );

    let (a, b) = (
        &run_records(first.path())[0],
        &run_records(second.path())[0],
    );
    let (ua, ub) = (&a.usage["agent"], &b.usage["agent"]);
    assert_eq!((ua.cache_hits, ub.cache_hits), (0, ua.calls));
    assert_eq!(ua.original_latency_seconds, 0.0);
    assert!(ua.latency_seconds >= ANSWER_DELAY.as_secs_f64() * ua.calls as f64);
    // The replay's latency is its own; the answer's is kept beside it.
    assert!(
        (ub.original_latency_seconds - ua.latency_seconds).abs() < 1e-9,
        "{} vs {}",
        ub.original_latency_seconds,
        ua.latency_seconds
    );
    assert!(
        ub.latency_seconds < ANSWER_DELAY.as_secs_f64(),
        "{}",
        ub.latency_seconds
    );
    for (ma, mb) in agent_messages(a).iter().zip(agent_messages(b)) {
        assert_eq!(
            mb.original_generation_time_seconds,
            ma.generation_time_seconds
        );
        assert_eq!(ma.original_generation_time_seconds, None);
        assert!(mb.generation_time_seconds < ma.generation_time_seconds);
    }
}
