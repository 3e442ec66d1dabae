//! `tauguard compile workflow` through the binary: bad input (a `--model` without provider, an
//! unknown domain, a non-empty `--out` without `--overwrite`, the frozen bundle's directory
//! even with it) exits 2 before any model request; a model whose replies never parse fails
//! stage 1 after exactly one repair, exits 1 and writes nothing.

use crate::support::tauguard_status;
use std::path::Path;

/// A loopback OpenAI-style server answering every request with a reply that is no JSON.
fn prose_server() -> (tokio::runtime::Runtime, wiremock::MockServer) {
    use wiremock::{Mock, MockServer, ResponseTemplate, matchers::method};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        let reply = ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "r", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "I would rather describe the tools in prose."}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}
        }));
        Mock::given(method("POST"))
            .respond_with(reply)
            .mount(&server)
            .await;
        server
    });
    (rt, server)
}

/// An `--llm-config` with provider `local` at `url`, needing no key.
fn llm_config(dir: &Path, url: &str) -> String {
    let path = dir.join("llm.toml");
    std::fs::write(
        &path,
        format!("[providers.local]\nkind = \"openai\"\nbase_url = \"{url}\"\n"),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn compile(extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "compile",
        "workflow",
        "--domain",
        "airline",
        "--data-dir",
        "tasks/fixtures",
    ];
    args.extend_from_slice(extra);
    tauguard_status(&args)
}

#[test]
fn a_model_without_provider_is_bad_input() {
    let (code, _, stderr) = compile(&["--model", "gpt-5"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--model `gpt-5`") && stderr.contains("PROVIDER/MODEL"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_domain_is_bad_input() {
    let (code, _, stderr) = tauguard_status(&[
        "compile",
        "workflow",
        "--domain",
        "bank",
        "--model",
        "openai/gpt-5",
        "--data-dir",
        "tasks/fixtures",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown domain `bank`"), "{stderr}");
}

#[test]
fn a_non_empty_out_and_the_frozen_bundle_are_refused_before_any_request() {
    let (rt, server) = prose_server();
    let tmp = tempfile::tempdir().unwrap();
    let config = llm_config(tmp.path(), &server.uri());
    let out = tmp.path().join("wf");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep").unwrap();
    let out_arg = out.to_str().unwrap();
    let (code, _, stderr) = compile(&[
        "--model",
        "local/m",
        "--llm-config",
        &config,
        "--out",
        out_arg,
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(out_arg)
            && stderr.contains("is not empty")
            && stderr.contains("overwriting"),
        "{stderr}"
    );

    let (code, _, stderr) = compile(&[
        "--model",
        "local/m",
        "--llm-config",
        &config,
        "--out",
        "tasks/airline/workflow",
        "--overwrite",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("frozen workflow bundle of `airline`"),
        "{stderr}"
    );
    assert!(
        tauguard_testkit::workspace_root()
            .join("tasks/airline/workflow/bundle.json")
            .is_file()
    );
    assert_eq!(rt.block_on(server.received_requests()).unwrap().len(), 0);
}

#[test]
fn replies_that_never_parse_fail_stage_1_after_one_repair() {
    let (rt, server) = prose_server();
    let tmp = tempfile::tempdir().unwrap();
    let config = llm_config(tmp.path(), &server.uri());
    let out = tmp.path().join("wf");
    let (code, _, stderr) = compile(&[
        "--model",
        "local/m",
        "--llm-config",
        &config,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("stage 1 (tools), classify `tools`: no valid reply after one repair")
            && stderr.contains("no JSON object"),
        "{stderr}"
    );
    assert_eq!(rt.block_on(server.received_requests()).unwrap().len(), 2);
    assert!(!out.exists(), "nothing is written on failure");
}
