//! Runs whose models answer over HTTP, against loopback mock servers: a network-bound run
//! completes on its one-thread runtime; a flaky server's failures are all accounted in the
//! records' `attempts` sections and the summary; an unusable reply leaves an infrastructure
//! record that explains itself (or, under `model_errors = "agent"`, a scored `agent_error`); a
//! failing verifier gives its fail-mode decision, not an infrastructure error, and its events
//! say so and why.

use crate::support::{fixture_dir, http_failures, parse, run_fresh, run_to};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tauguard_core::record::{FailReason, Verdict, VerdictSource};
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::RunError;
use tauguard_orchestrator::Workload;
use tauguard_orchestrator::read_records;
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

fn config(agent: &str, server: &str) -> RunConfig {
    let builder = SimConfig::new("net", "airline", &fixture_dir())
        .trials(2)
        .seed(300)
        .run_line("num_tasks = 3\nmax_steps = 6\nconcurrency = 4")
        .agent(agent)
        .provider(MockProvider::new("mock", server).lines("timeout_secs = 5"));
    parse("net.toml", &builder)
}

#[test]
fn a_run_is_network_bound_as_soon_as_one_model_is_not_sim() {
    let sim = config("provider = \"sim\"\nmodel = \"sim-agent\"", "http://unused");
    assert_eq!(Workload::of(&sim), Workload::Compute);
    let net = config("provider = \"mock\"\nmodel = \"m\"", "http://unused");
    assert_eq!(Workload::of(&net), Workload::Network);
}

#[test]
fn a_network_run_completes_on_its_runtime() {
    // The mock server runs on its own runtime, apart from the run's.
    let server = Loopback::mount(
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(text_reply())),
    );
    let cfg = config("provider = \"mock\"\nmodel = \"m\"", &server.uri());
    let (summary, records) = run_fresh(cfg);
    assert_eq!((summary.planned, summary.completed), (6, 6));
    assert_eq!(summary.infra_errors, 0);
    assert_eq!(records.len(), 6);
    for r in &records {
        assert_eq!(r.termination_reason.as_str(), "max_steps", "{}", r.task_id);
        let agent = &r.usage["agent"];
        assert!(
            agent.calls >= 2,
            "{}: {} agent calls",
            r.task_id,
            agent.calls
        );
        assert_eq!(agent.usage.prompt_tokens, 12 * agent.calls);
    }
    drop(server);
}

fn text_reply() -> serde_json::Value {
    chat_completion(
        "m",
        "stop",
        assistant_text("Could you tell me more?"),
        (12, 5),
    )
}

/// A fixture-domain run config with a mock provider retrying fast: trials, `[run]` extras, the agent
/// and `[guard]`/`[grid]` sections as given.
fn mock_config(server: &str, trials: u32, run_extra: &str, agent: &str, tail: &str) -> RunConfig {
    let provider = MockProvider::new("mock", server)
        .lines("timeout_secs = 0.3")
        .retry("max_attempts = 3\ninitial_backoff_secs = 0.001\nmax_backoff_secs = 0.002\njitter = false");
    let builder = SimConfig::new("net", "airline", &fixture_dir())
        .seed(300)
        .trials(trials)
        .run_line(run_extra)
        .agent(agent)
        .provider(provider)
        .tail(tail);
    parse("net.toml", &builder)
}

/// What the flaky server answered, by kind.
#[derive(Default)]
struct Served {
    total: AtomicU64,
    rate_limited: AtomicU64,
    server_error: AtomicU64,
    stalled: AtomicU64,
    bad_json: AtomicU64,
}

/// Fails about a third of the requests, by arrival order: 429, 500, a stall beyond the
/// client's time-out, and a 200 whose body is not JSON. Never two failures in a row, so
/// every HTTP call succeeds within its three attempts, except after bad JSON, which is not
/// retried at the HTTP level (the simulation restarts).
struct Flaky(Arc<Served>);

impl Respond for Flaky {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.total.fetch_add(1, Ordering::SeqCst);
        let count = |c: &AtomicU64| {
            c.fetch_add(1, Ordering::SeqCst);
        };
        match (n % 10, n % 20) {
            (1, _) => {
                count(&self.0.rate_limited);
                ResponseTemplate::new(429).set_body_string("slow down")
            }
            (4, _) => {
                count(&self.0.server_error);
                ResponseTemplate::new(500).set_body_string("overloaded")
            }
            (7, _) => {
                count(&self.0.stalled);
                ResponseTemplate::new(200)
                    .set_body_json(text_reply())
                    .set_delay(Duration::from_secs(2))
            }
            (_, 9) => {
                count(&self.0.bad_json);
                ResponseTemplate::new(200).set_body_string("{\"choices\": [")
            }
            _ => ResponseTemplate::new(200).set_body_json(text_reply()),
        }
    }
}

/// Attribution is checked as sums: over the records, HTTP requests and failures by cause
/// equal what the server received and answered by kind (one request per simulation at a
/// time, so the schedule is deterministic), and the summary holds the same sums.
#[test]
fn a_flaky_servers_failures_are_all_accounted() {
    let served = Arc::new(Served::default());
    let server = Loopback::mount(
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(Flaky(served.clone())),
    );
    let cfg = mock_config(
        &server.uri(),
        2,
        "num_tasks = 3\nmax_steps = 6\nconcurrency = 1",
        "provider = \"mock\"\nmodel = \"m\"",
        "",
    );
    let (summary, records) = run_fresh(cfg);
    assert_eq!((summary.completed, records.len()), (6, 6));
    let got = |c: &AtomicU64| c.load(Ordering::SeqCst);
    assert!(got(&served.rate_limited) > 0 && got(&served.stalled) > 0);
    assert!(
        got(&served.bad_json) > 0,
        "the run is long enough to see bad JSON"
    );
    let requests: u64 = records.iter().map(|r| r.attempts.http_requests).sum();
    assert_eq!(requests, got(&served.total));
    assert_eq!(
        http_failures(&records, "rate_limited"),
        got(&served.rate_limited)
    );
    assert_eq!(
        http_failures(&records, "server_error"),
        got(&served.server_error)
    );
    assert_eq!(http_failures(&records, "timeout"), got(&served.stalled));
    assert_eq!(
        http_failures(&records, "invalid_response"),
        got(&served.bad_json)
    );
    // Bad JSON ends its simulation attempt: each one is a restart, or the last attempt of
    // an infrastructure record.
    let restarts: Vec<_> = records.iter().flat_map(|r| &r.attempts.restarts).collect();
    let infra = records.iter().filter(|r| r.is_infra_error()).count() as u64;
    assert_eq!(restarts.len() as u64 + infra, got(&served.bad_json));
    for f in &restarts {
        assert_eq!(f.kind, "invalid_response");
        assert!(f.error.contains("unparsable response"), "{}", f.error);
        assert!(!f.messages.is_empty(), "a restart keeps its trajectory");
    }
    assert_eq!(summary.http_requests, got(&served.total));
    assert_eq!(summary.restarts, restarts.len());
    assert_eq!(
        summary.http_failures.get("timeout").copied(),
        Some(got(&served.stalled))
    );
    assert_eq!(
        summary.http_failures.values().sum::<u64>(),
        got(&served.rate_limited)
            + got(&served.server_error)
            + got(&served.stalled)
            + got(&served.bad_json)
    );
    assert_eq!(summary.cost, None, "the mock model has no price");
    drop(server);
}

/// A tool call whose arguments are not JSON, cut off by the token limit.
fn malformed_server() -> Loopback {
    let message = serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function":
            {"name": "get_user_details", "arguments": "{\"user_id\": \"mia_"}}
    ]});
    Loopback::serve(ResponseTemplate::new(200).set_body_json(chat_completion(
        "m",
        "length",
        message,
        (40, 7),
    )))
}

#[test]
fn an_unusable_reply_leaves_a_record_that_explains_itself() {
    let server = malformed_server();
    let agent = "provider = \"mock\"\nmodel = \"m\"";
    // Upstream semantics: restarted, then an infrastructure error.
    let cfg = mock_config(
        &server.uri(),
        2,
        "max_retries = 1\nnum_tasks = 1\nmax_steps = 6",
        agent,
        "",
    );
    let (summary, records) = run_fresh(cfg);
    assert_eq!((summary.completed, summary.infra_errors), (2, 2));
    for r in &records {
        assert_eq!(r.termination_reason.as_str(), "infrastructure_error");
        let error = r.error.as_deref().unwrap();
        assert!(error.contains("get_user_details"), "{error}");
        assert!(
            !r.messages.is_empty(),
            "the trajectory up to the failure is kept"
        );
        let u = r.attempts.unusable_output.as_ref().unwrap();
        assert_eq!(u.role, "agent");
        assert_eq!(u.kind, "malformed_tool_arguments");
        assert_eq!(u.tool.as_deref(), Some("get_user_details"));
        assert_eq!(u.raw.as_deref(), Some("{\"user_id\": \"mia_"));
        assert_eq!(u.finish_reason.as_deref(), Some("length"));
        assert_eq!(
            r.usage["agent"].usage.prompt_tokens, 40,
            "the reply was billed"
        );
        assert_eq!(r.attempts.restarts.len(), 1);
        let first = &r.attempts.restarts[0];
        assert_eq!(first.kind, "malformed_tool_arguments");
        assert_eq!(first.usage["agent"].usage.completion_tokens, 7);
        assert_eq!(r.attempts.discarded.usage.prompt_tokens, 40);
        assert_eq!(r.attempts.http_requests, 2);
    }
    // Counted against the agent: scored at once, no restart.
    let cfg = mock_config(
        &server.uri(),
        2,
        "max_retries = 3\nnum_tasks = 1\nmax_steps = 6\nmodel_errors = \"agent\"",
        agent,
        "",
    );
    let (summary, records) = run_fresh(cfg);
    assert_eq!((summary.completed, summary.infra_errors), (2, 0));
    for r in records {
        assert_eq!(r.termination_reason.as_str(), "agent_error");
        assert_eq!(r.reward.as_ref().map(|w| w.reward), Some(0.0));
        assert!(r.error.as_deref().unwrap().contains("not a JSON object"));
        assert!(r.attempts.restarts.is_empty());
        assert_eq!(r.attempts.http_requests, 1);
        let u = r.attempts.unusable_output.as_ref().unwrap();
        assert_eq!(u.finish_reason.as_deref(), Some("length"));
    }
    drop(server);
}

#[test]
fn a_verifier_that_fails_gives_its_fail_mode_decision() {
    let server = Loopback::serve(ResponseTemplate::new(500).set_body_string("upstream down"));
    let cfg = mock_config(
        &server.uri(),
        1,
        "num_tasks = 4\nmax_steps = 40",
        "provider = \"sim\"\nmodel = \"sim-agent\"",
        "[guard]\nfail_mode = \"closed\"\nverifier = { provider = \"mock\", model = \"v\" }\n\n[grid]\nguards = [\"pg-raw\"]\n",
    );
    let (summary, records) = run_fresh(cfg);
    assert_eq!(summary.infra_errors, 0);
    let events: Vec<_> = records.iter().flat_map(|r| &r.guard_events).collect();
    assert!(!events.is_empty(), "the sim agent makes mutating calls");
    for e in events {
        assert_eq!(e.verdict, Verdict::Block);
        let info = e.info.as_ref().unwrap();
        assert_eq!(info["fail_mode_used"], serde_json::json!(true));
        assert_eq!(info["fail_mode"], serde_json::json!("closed"));
        let error = info["model_error"].as_str().unwrap();
        assert!(error.contains("HTTP 500"), "{error}");
        assert_eq!(e.verdict_source, VerdictSource::FailMode);
        assert_eq!(e.fail_reason, Some(FailReason::HttpError));
        assert_eq!(
            e.fail_http_status,
            Some(500),
            "the status the retries ended on"
        );
        assert_eq!(info["failed_attempts"][0]["http_status"], 500);
    }
    let failed: u64 = records.iter().map(|r| r.attempts.failed_calls).sum();
    let decided: u64 = records.iter().map(|r| r.guard_events.len() as u64).sum();
    assert_eq!(failed, decided, "one failed verifier call per decision");
    drop(server);
}

#[test]
fn a_server_that_refuses_connections_stops_the_run() {
    // Port 9 (discard) is closed on the loopback interface of any test machine.
    let cfg = mock_config(
        "http://127.0.0.1:9",
        2,
        "num_tasks = 3\nmax_steps = 6\nconcurrency = 1\nmax_consecutive_connect_failures = 5",
        "provider = \"mock\"\nmodel = \"m\"",
        "",
    );
    let out = tempfile::tempdir().unwrap();
    let err = run_to(cfg, out.path()).unwrap_err();
    let RunError::ConnectFailures {
        limit,
        endpoint,
        completed,
        ..
    } = &err
    else {
        panic!("expected a connection stop, got: {err}");
    };
    assert_eq!((*limit, *completed), (5, 0));
    assert_eq!(endpoint, "provider `mock` at http://127.0.0.1:9");
    let message = err.to_string();
    assert!(message.contains("5 attempts in a row could not connect to provider `mock`"));
    let records = read_records(&out.path().join("records.jsonl")).unwrap_or_default();
    assert!(records.is_empty());
}

#[test]
fn a_rejected_request_is_recorded_once_not_restarted() {
    let server = Loopback::serve(ResponseTemplate::new(400).set_body_string(
        r#"{"error": {"type": "invalid_request_error", "message": "bad tools"}}"#,
    ));
    let cfg = mock_config(
        &server.uri(),
        1,
        "num_tasks = 1\nmax_steps = 6\nmax_retries = 3",
        "provider = \"mock\"\nmodel = \"m\"",
        "",
    );
    let (summary, records) = run_fresh(cfg);
    assert_eq!(summary.infra_errors, 1);
    let r = &records[0];
    assert!(r.error.as_deref().unwrap().contains("HTTP 400"));
    assert!(
        r.attempts.restarts.is_empty(),
        "the same request would fail again"
    );
    assert_eq!(r.attempts.http_requests, 1);
    assert_eq!(r.attempts.http_failures.get("rejected"), Some(&1));
    let received = server.received();
    assert_eq!(received.len(), 1);
}
