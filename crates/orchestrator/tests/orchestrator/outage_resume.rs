//! An outage leaves no permanent holes: simulations that ended in an infrastructure error
//! while the server was down run again on `--resume` once it is back, their old records move
//! to `superseded.jsonl`, and `records.jsonl` ends with exactly one scored record per
//! simulation. `keep_infra` (`--keep-infra`) keeps the old behaviour.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tauguard_orchestrator::{
    RunConfig, RunOptions, RunSummary, Workload, build_runtime, read_records, run,
};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers 503 while `down` is set, else a plain text reply.
struct Switch(Arc<AtomicBool>);

impl Respond for Switch {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if self.0.load(Ordering::SeqCst) {
            return ResponseTemplate::new(503).set_body_string("down for maintenance");
        }
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "r", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Could you tell me more?"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
        }))
    }
}

fn config(server: &str) -> RunConfig {
    let text = format!(
        r#"
[run]
name = "outage"
domain = "airline"
num_tasks = 3
trials = 2
max_steps = 4
max_retries = 1
max_consecutive_connect_failures = 0
data_dir = "{}"

[models.agent]
provider = "mock"
model = "m"

[models.user]
provider = "sim"
model = "sim-user"

[llm.providers.mock]
kind = "openai"
base_url = "{server}"
timeout_secs = 2

[llm.providers.mock.retry]
max_attempts = 1
"#,
        tauguard_testkit::workspace_root()
            .join("tasks/fixtures")
            .display()
    );
    RunConfig::parse(Path::new("outage.toml"), &text).unwrap()
}

fn run_once(cfg: RunConfig, out: &Path, resume: bool, keep_infra: bool) -> RunSummary {
    let rt = build_runtime(Workload::of(&cfg)).unwrap();
    rt.block_on(run(
        cfg,
        RunOptions {
            out_dir: Some(out.to_path_buf()),
            project_dir: Some(tauguard_testkit::workspace_root()),
            resume,
            keep_infra,
            no_cache: true,
            ..Default::default()
        },
    ))
    .unwrap()
}

#[test]
fn resume_after_an_outage_redoes_its_infrastructure_errors() {
    let server_rt = tokio::runtime::Runtime::new().unwrap();
    let down = Arc::new(AtomicBool::new(true));
    let server = server_rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Switch(down.clone()))
            .mount(&server)
            .await;
        server
    });
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
    drop(server_rt);
}
