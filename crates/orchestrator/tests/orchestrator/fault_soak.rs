//! A fault soak: a thousand simulations whose agent answers over HTTP from a loopback
//! OpenAI-compatible server of our own that gets about three requests in ten wrong — 429 with
//! `Retry-After`, 500, 503, stalls beyond the stall limit, bodies that are not JSON, empty
//! replies, malformed tool-call arguments, unknown tool names. Every fault must be accounted
//! for in the records (requests, failures by cause, restarts by kind, tokens used and
//! discarded), every simulation must have exactly one record, and nothing may hang. Then the
//! server goes down for good: the run must stop on `run.max_consecutive_server_errors`,
//! keeping what it wrote, and `--resume` must finish every simulation once the server is
//! back. It runs in CI with the rest of `cargo test --workspace`.

use crate::support::{fixture_dir, http_failures, opts, parse, run_with};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tauguard_core::record::SimulationRecord;
use tauguard_llm::Outage;
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::read_records;
use tauguard_orchestrator::{RunError, RunOptions, RunSummary};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, chat_completion};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

/// Tokens every reply the server completes reports.
const PROMPT_TOKENS: u64 = 12;
const COMPLETION_TOKENS: u64 = 5;

/// The tool name no domain has.
const UNKNOWN_TOOL: &str = "no_such_tool";

/// The kinds of faults, in the order of their slots in [`SCHEDULE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    RateLimited,
    ServerError500,
    Unavailable503,
    Stall,
    BadJson,
    Empty,
    MalformedArguments,
    UnknownTool,
}

/// The fault of each arrival slot, period 30: nine faults (30 %), never two side by side.
const SCHEDULE: [(u64, Fault); 9] = [
    (2, Fault::RateLimited),
    (5, Fault::ServerError500),
    (8, Fault::Unavailable503),
    (11, Fault::Stall),
    (14, Fault::BadJson),
    (17, Fault::Empty),
    (20, Fault::MalformedArguments),
    (23, Fault::UnknownTool),
    (27, Fault::RateLimited),
];

/// What the server did, counted as it answered.
#[derive(Default)]
struct Served {
    total: AtomicU64,
    by_fault: std::sync::Mutex<BTreeMap<Fault, u64>>,
    /// Prompt tokens of the replies a client got (stalled ones are given up on unread).
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    /// Inject the schedule's faults (else every reply is a good one).
    faulty: AtomicBool,
    /// Answer 503 to everything, as a server that is down.
    down: AtomicBool,
}

impl Served {
    fn count(&self, fault: Fault) -> u64 {
        self.by_fault
            .lock()
            .unwrap()
            .get(&fault)
            .copied()
            .unwrap_or(0)
    }
}

fn completion(message: serde_json::Value, finish: &str) -> serde_json::Value {
    chat_completion("m", finish, message, (PROMPT_TOKENS, COMPLETION_TOKENS))
}

fn tool_call(name: &str, arguments: &str) -> serde_json::Value {
    completion(
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
        ]}),
        "tool_calls",
    )
}

/// The soak's server: the schedule's faults by arrival order while `faulty`, 503 while `down`.
struct Faulty(Arc<Served>);

impl Faulty {
    fn billed(&self, body: serde_json::Value) -> ResponseTemplate {
        self.0
            .prompt_tokens
            .fetch_add(PROMPT_TOKENS, Ordering::SeqCst);
        let c = &self.0.completion_tokens;
        c.fetch_add(COMPLETION_TOKENS, Ordering::SeqCst);
        ResponseTemplate::new(200).set_body_json(body)
    }
}

impl Respond for Faulty {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.total.fetch_add(1, Ordering::SeqCst);
        if self.0.down.load(Ordering::SeqCst) {
            return ResponseTemplate::new(503).set_body_string("down for maintenance");
        }
        let fault = SCHEDULE
            .iter()
            .find(|(slot, _)| *slot == n % 30)
            .map(|(_, f)| *f)
            .filter(|_| self.0.faulty.load(Ordering::SeqCst));
        let Some(fault) = fault else {
            return self.billed(completion(
                serde_json::json!({"role": "assistant", "content": "Could you tell me more?"}),
                "stop",
            ));
        };
        *self.0.by_fault.lock().unwrap().entry(fault).or_default() += 1;
        match fault {
            Fault::RateLimited => ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string("slow down"),
            Fault::ServerError500 => ResponseTemplate::new(500).set_body_string("overloaded"),
            Fault::Unavailable503 => ResponseTemplate::new(503).set_body_string("unavailable"),
            // Well past the stall limit, well within the per-attempt time-out: only the stall
            // detector gives up on it.
            Fault::Stall => ResponseTemplate::new(200)
                .set_body_json(completion(
                    serde_json::json!({"role": "assistant",
                    "content": "late"}),
                    "stop",
                ))
                .set_delay(Duration::from_secs(3)),
            Fault::BadJson => ResponseTemplate::new(200).set_body_string("{\"choices\": ["),
            Fault::Empty => self.billed(completion(
                serde_json::json!({"role": "assistant", "content": ""}),
                "stop",
            )),
            Fault::MalformedArguments => {
                self.billed(tool_call("get_user_details", "{\"user_id\": \"mia_"))
            }
            Fault::UnknownTool => self.billed(tool_call(UNKNOWN_TOOL, "{}")),
        }
    }
}

/// A fixture-domain run of `trials` × 5 tasks, its agent on the mock provider, which stalls
/// out after 1 s and retries in milliseconds.
fn config(server: &str, trials: u32) -> RunConfig {
    let provider = MockProvider::new("mock", server)
        .lines("max_concurrency = 64\ntimeout_secs = 30\nstall_secs = 1")
        .retry(
            "max_attempts = 3\ninitial_backoff_secs = 0.001\nmax_backoff_secs = 0.002\n\
             max_retry_after_secs = 0.002\njitter = false",
        );
    let builder = SimConfig::new("soak", "airline", &fixture_dir())
        .seed(300)
        .trials(trials)
        .run_line(
            "max_steps = 6\nmax_retries = 3\nconcurrency = 64\nmax_consecutive_server_errors = 20",
        )
        .agent("provider = \"mock\"\nmodel = \"m\"")
        .provider(provider);
    parse("soak.toml", &builder)
}

fn run_to(cfg: RunConfig, out: &Path, resume: bool) -> Result<RunSummary, RunError> {
    let opts = RunOptions {
        resume,
        no_cache: true,
        ..opts(out)
    };
    run_with(cfg, opts)
}

fn start_server(served: &Arc<Served>) -> Loopback {
    Loopback::mount(
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(Faulty(served.clone())),
    )
}

/// The kind of the failure that ended each discarded attempt, and each infrastructure
/// record's last attempt.
fn ended_by(records: &[SimulationRecord]) -> BTreeMap<String, u64> {
    let mut kinds = BTreeMap::new();
    for r in records {
        for f in &r.attempts.restarts {
            *kinds.entry(f.kind.clone()).or_default() += 1;
        }
        if r.is_infra_error() {
            let error = r.error.as_deref().unwrap_or_default();
            let kind = match &r.attempts.unusable_output {
                Some(u) => u.kind.clone(),
                None => [
                    ("unparsable response", "invalid_response"),
                    ("rate limited (HTTP 429)", "rate_limited"),
                    ("server error (HTTP 5", "server_error"),
                    ("request timed out", "timeout"),
                ]
                .iter()
                .find(|(text, _)| error.contains(text))
                .map_or_else(|| format!("other: {error}"), |(_, k)| (*k).to_string()),
            };
            *kinds.entry(kind).or_default() += 1;
        }
    }
    kinds
}

/// Every planned simulation has exactly one record.
fn assert_one_record_each(records: &[SimulationRecord], planned: usize) {
    let mut keys: Vec<_> = records.iter().map(|r| (&r.task_id, r.trial)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!((records.len(), keys.len()), (planned, planned));
}

#[test]
fn a_thousand_simulations_against_a_faulty_server_account_for_every_fault() {
    let started = Instant::now();
    let served = Arc::new(Served::default());
    served.faulty.store(true, Ordering::SeqCst);
    let server = start_server(&served);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("soak");
    let summary = run_to(config(&server.uri(), 200), &out, false).unwrap();
    let records = read_records(&out.join("records.jsonl")).unwrap();
    assert_eq!((summary.planned, summary.completed), (1000, 1000));
    assert_one_record_each(&records, 1000);

    // Requests served = HTTP attempts recorded.
    let total = served.total.load(Ordering::SeqCst);
    let requests: u64 = records.iter().map(|r| r.attempts.http_requests).sum();
    assert_eq!(requests, total);
    assert_eq!(summary.http_requests, total);
    // Failed exchanges by cause = faults injected of that type; every kind was injected.
    for (_, fault) in SCHEDULE {
        assert!(served.count(fault) > 0, "{fault:?} never injected");
    }
    let count = |f: Fault| served.count(f);
    assert_eq!(
        http_failures(&records, "rate_limited"),
        count(Fault::RateLimited)
    );
    assert_eq!(
        http_failures(&records, "server_error"),
        count(Fault::ServerError500) + count(Fault::Unavailable503)
    );
    assert_eq!(http_failures(&records, "timeout"), count(Fault::Stall));
    assert_eq!(
        http_failures(&records, "invalid_response"),
        count(Fault::BadJson)
    );
    // Unusable replies are failed exchanges too, of their own causes.
    assert_eq!(
        http_failures(&records, "empty_response"),
        count(Fault::Empty)
    );
    assert_eq!(
        http_failures(&records, "malformed_tool_arguments"),
        count(Fault::MalformedArguments)
    );
    let injected_http = count(Fault::RateLimited)
        + count(Fault::ServerError500)
        + count(Fault::Unavailable503)
        + count(Fault::Stall);
    assert_eq!(
        summary.http_failures.values().sum::<u64>(),
        injected_http
            + count(Fault::BadJson)
            + count(Fault::Empty)
            + count(Fault::MalformedArguments),
        "no failure the server did not inject: {:?}",
        summary.http_failures
    );
    // A reply the simulation cannot use ends its attempt: a restart, or the last attempt
    // of an infrastructure record. Calls that spent their retries on HTTP faults end
    // attempts too, never more often than those faults were served.
    let ended = ended_by(&records);
    let kind = |k: &str| ended.get(k).copied().unwrap_or(0);
    assert_eq!(kind("invalid_response"), count(Fault::BadJson), "{ended:?}");
    assert_eq!(kind("empty_response"), count(Fault::Empty), "{ended:?}");
    assert_eq!(
        kind("malformed_tool_arguments"),
        count(Fault::MalformedArguments),
        "{ended:?}"
    );
    let gave_up = kind("rate_limited") + kind("server_error") + kind("timeout");
    let known = gave_up
        + kind("invalid_response")
        + kind("empty_response")
        + kind("malformed_tool_arguments");
    assert_eq!(
        ended.values().sum::<u64>(),
        known,
        "no attempt ended otherwise: {ended:?}"
    );
    assert!(
        gave_up * 3 <= injected_http,
        "a call gives up after 3 attempts"
    );
    assert_eq!(
        summary.restarts as u64 + summary.infra_errors as u64,
        ended.values().sum::<u64>()
    );
    // An unknown tool is the agent's mistake, answered by the environment, kept in the
    // trajectory (of the record, or of the attempt it was part of).
    let trajectories = records.iter().flat_map(|r| {
        std::iter::once(&r.messages).chain(r.attempts.restarts.iter().map(|f| &f.messages))
    });
    let unknown = trajectories
        .flatten()
        .flat_map(|m| m.tool_calls())
        .filter(|c| c.name == UNKNOWN_TOOL)
        .count() as u64;
    assert_eq!(unknown, count(Fault::UnknownTool));
    // Tokens served = used + discarded.
    let (mut prompt, mut completion) = (0, 0);
    for r in &records {
        let used = r.usage.get("agent").map(|u| u.usage).unwrap_or_default();
        let discarded = r.attempts.discarded.usage;
        prompt += used.prompt_tokens + discarded.prompt_tokens;
        completion += used.completion_tokens + discarded.completion_tokens;
    }
    assert_eq!(prompt, served.prompt_tokens.load(Ordering::SeqCst));
    assert_eq!(completion, served.completion_tokens.load(Ordering::SeqCst));
    let soak = started.elapsed();

    // The server goes down mid-run: the run stops on the server-error limit.
    let out = tmp.path().join("outage");
    served.faulty.store(false, Ordering::SeqCst);
    let flip = {
        let served = served.clone();
        let at = served.total.load(Ordering::SeqCst) + 150;
        std::thread::spawn(move || {
            while served.total.load(Ordering::SeqCst) < at {
                std::thread::sleep(Duration::from_millis(1));
            }
            served.down.store(true, Ordering::SeqCst);
        })
    };
    let err = run_to(config(&server.uri(), 40), &out, false).unwrap_err();
    flip.join().unwrap();
    let RunError::Outage {
        cause,
        limit,
        endpoint,
        completed,
        ..
    } = &err
    else {
        panic!("expected an outage stop, got: {err}");
    };
    assert_eq!((*cause, *limit), (Outage::ServerErrors, 20));
    assert_eq!(
        endpoint,
        &format!("model `m` of provider `mock` at {}", server.uri())
    );
    assert!(*completed < 200, "{completed}");
    let message = err.to_string();
    assert!(
        message.contains("20 HTTP attempts were answered with a server error (5xx) in a row"),
        "{message}"
    );
    assert!(message.contains("run.max_consecutive_server_errors"));
    assert!(
        message.contains(&format!(
            "resume with `tauguard run soak.toml --resume --out {}`",
            out.display()
        )),
        "{message}"
    );
    let kept = read_records(&out.join("records.jsonl")).unwrap_or_default();
    assert_eq!(kept.len(), *completed, "the records written are kept");

    // Back up: resume completes every simulation, redoing any the outage failed.
    served.down.store(false, Ordering::SeqCst);
    let resumed = run_to(config(&server.uri(), 40), &out, true).unwrap();
    let infra_before = kept.iter().filter(|r| r.is_infra_error()).count();
    assert_eq!(resumed.skipped, kept.len() - infra_before);
    assert_eq!(resumed.infra_errors, 0);
    let records = read_records(&out.join("records.jsonl")).unwrap();
    assert_one_record_each(&records, 200);
    assert!(
        records.iter().all(|r| !r.is_infra_error()),
        "nothing left for a resume to redo"
    );
    let whole = started.elapsed();
    eprintln!("fault soak: 1000 simulations in {soak:?}, with the outage and resume {whole:?}");
    assert!(
        whole < Duration::from_secs(120),
        "the soak must stay under 2 minutes, took {whole:?}"
    );
    drop(server);
}
