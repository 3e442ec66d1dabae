//! An outage leaves no permanent holes: simulations that ended in an infrastructure error
//! while the server was down run again on `--resume` once it is back, their old records move
//! to `superseded.jsonl`, and `records.jsonl` ends with exactly one scored record per
//! simulation. `keep_infra` (`--keep-infra`) keeps the old behaviour.

use crate::support::{fixture_dir, opts, parse, run_with};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::read_records;
use tauguard_orchestrator::{RunOptions, RunSummary};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// Answers 503 while `down` is set, else a plain text reply.
struct Switch(Arc<AtomicBool>);

impl Respond for Switch {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if self.0.load(Ordering::SeqCst) {
            return ResponseTemplate::new(503).set_body_string("down for maintenance");
        }
        let reply = chat_completion(
            "m",
            "stop",
            assistant_text("Could you tell me more?"),
            (12, 5),
        );
        ResponseTemplate::new(200).set_body_json(reply)
    }
}

fn config(server: &str) -> RunConfig {
    let builder = SimConfig::new("outage", "airline", &fixture_dir())
        .trials(2)
        .run_line(
            "num_tasks = 3\nmax_steps = 4\nmax_retries = 1\nmax_consecutive_connect_failures = 0",
        )
        .agent("provider = \"mock\"\nmodel = \"m\"")
        .provider(
            MockProvider::new("mock", server)
                .lines("timeout_secs = 2")
                .retry("max_attempts = 1"),
        );
    parse("outage.toml", &builder)
}

fn run_once(cfg: RunConfig, out: &Path, resume: bool, keep_infra: bool) -> RunSummary {
    let opts = RunOptions {
        resume,
        keep_infra,
        no_cache: true,
        ..opts(out)
    };
    run_with(cfg, opts).unwrap()
}

#[test]
fn resume_after_an_outage_redoes_its_infrastructure_errors() {
    let down = Arc::new(AtomicBool::new(true));
    let server = Loopback::serve(Switch(down.clone()));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let first = run_once(config(&server.uri()), &out, false, false);
    assert_eq!((first.planned, first.infra_errors), (6, 6));
    let records = out.join("records.jsonl");
    assert_eq!(read_records(&records).unwrap().len(), 6);

    // Still down, but told to keep them: nothing runs, nothing moves.
    let kept = run_once(config(&server.uri()), &out, true, true);
    assert_eq!(kept.skipped, 6);
    assert!(!out.join("superseded.jsonl").exists());

    // Back up: every hole is repaired.
    down.store(false, Ordering::SeqCst);
    let second = run_once(config(&server.uri()), &out, true, false);
    assert_eq!((second.skipped, second.infra_errors), (0, 0));
    let now = read_records(&records).unwrap();
    assert_eq!(now.len(), 6, "one record per simulation");
    assert!(now.iter().all(|r| !r.is_infra_error()));
    let mut keys: Vec<_> = now.iter().map(|r| (&r.task_id, r.trial)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6);
    let superseded = read_records(&out.join("superseded.jsonl")).unwrap();
    assert_eq!(superseded.len(), 6);
    assert!(superseded.iter().all(|r| r.is_infra_error()));

    // A later resume finds nothing to redo and moves nothing.
    let third = run_once(config(&server.uri()), &out, true, false);
    assert_eq!(third.skipped, 6);
    assert_eq!(
        read_records(&out.join("superseded.jsonl")).unwrap().len(),
        6
    );
    drop(server);
}
