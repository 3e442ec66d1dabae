//! A run whose agent answers over HTTP is network-bound: `tauguard run` executes it on the
//! one-thread runtime, where it must complete and write every record.

use std::path::{Path, PathBuf};
use tauguard_orchestrator::config::RunConfig;
use tauguard_orchestrator::records::read_records;
use tauguard_orchestrator::runner::{RunOptions, run};
use tauguard_orchestrator::runtime::{self, Workload};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn config(agent: &str, server: &str) -> RunConfig {
    let text = format!(
        r#"
[run]
name = "net"
domain = "airline"
num_tasks = 3
trials = 2
seed = 300
max_steps = 6
concurrency = 4
data_dir = "{}"

[models.agent]
{agent}

[models.user]
provider = "sim"
model = "sim-user"

[llm.providers.mock]
kind = "openai"
base_url = "{server}"
timeout_secs = 5
"#,
        root().join("tasks/fixtures").display()
    );
    RunConfig::parse(Path::new("net.toml"), &text).unwrap()
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
    let server_rt = tokio::runtime::Runtime::new().unwrap();
    let server = server_rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "id": "r", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Could you tell me more?"}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
            })))
            .mount(&server)
            .await;
        server
    });
    let cfg = config("provider = \"mock\"\nmodel = \"m\"", &server.uri());
    let out = tempfile::tempdir().unwrap();
    let rt = runtime::build(Workload::of(&cfg)).unwrap();
    let summary = rt
        .block_on(run(
            cfg,
            RunOptions {
                out_dir: Some(out.path().to_path_buf()),
                project_dir: Some(root()),
                ..Default::default()
            },
        ))
        .unwrap();
    assert_eq!((summary.planned, summary.completed), (6, 6));
    assert_eq!(summary.infra_errors, 0);
    let records = read_records(&out.path().join("records.jsonl")).unwrap();
    assert_eq!(records.len(), 6);
    for r in &records {
        assert_eq!(r.termination_reason, "max_steps", "{}", r.task_id);
        let agent = &r.usage["agent"];
        assert!(
            agent.calls >= 2,
            "{}: {} agent calls",
            r.task_id,
            agent.calls
        );
        assert_eq!(agent.usage.prompt_tokens, 12 * agent.calls);
    }
    drop(server_rt);
}
