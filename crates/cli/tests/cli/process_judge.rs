//! A model judges the process view's dialogue predicates the offline stand-in cannot
//! (`--process-judge PROVIDER/MODEL`, here a loopback OpenAI-style server): its verdicts are
//! violations judged `model`, asked with τ²-bench's NL-assertion judge prompt over the
//! transcript, and without the flag the same predicate stays unjudged.

use crate::support::tauguard_status as tauguard;
use serde_json::{Value, json};
use std::path::Path;
use tauguard_testkit::SimConfig;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const SPEC: &str = r#"
schema = "tauguard.procedure/1"
domain = "toy"
guarded = ["borrow_book", "return_book"]
identity_tools = ["get_member_details"]

[provenance]
origin = "hand-written"
authors = "tauguard maintainers (test)"
policy_files = ["policy.md"]
sections = ["Toy lending library policy (tauguard test data)"]
date = "2026-12-02"

[[requirement]]
id = "one_call_at_a_time"
level = "W"
file = "policy.md"
section = "Toy lending library policy (tauguard test data)"
passage = "Make one tool call at a time"
check = { kind = "dialogue", predicate = "rule_applies", question = "The agent made one tool call at a time.", before = ["*"] }
"#;

fn judge_says(met: bool) -> ResponseTemplate {
    let reply =
        json!({"results": [{"expectedOutcome": "x", "reasoning": "test", "metExpectation": met}]});
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "r", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": reply.to_string()}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}
    }))
}

fn evaluate(project: &Path, run: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "--project-dir",
        project.to_str().unwrap(),
        "evaluate",
        run.to_str().unwrap(),
        "--format",
        "json",
        "--data-dir",
    ];
    let fixtures = tauguard_testkit::fixtures_dir();
    args.push(fixtures.to_str().unwrap());
    args.extend(extra);
    let (code, json, err) = tauguard(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn a_model_judges_the_predicates_the_stand_in_leaves_unjudged() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tauguard_testkit::workspace_root();
    let cfg = SimConfig::new("toy", "toy", &tauguard_testkit::fixtures_dir())
        .write(&tmp.path().join("toy.toml"));
    let run = tmp.path().join("run");
    let args = ["run", cfg.to_str().unwrap(), "--out", run.to_str().unwrap()];
    assert_eq!(tauguard(&args).0, 0);
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("tasks/toy")).unwrap();
    std::os::unix::fs::symlink(root.join("configs"), project.join("configs")).unwrap();
    std::fs::write(project.join("tasks/toy/procedure.toml"), SPEC).unwrap();

    // The stand-in has no cues for it: every simulation stays process-valid.
    let v = evaluate(&project, &run, &[]);
    let sims = v["simulations"].as_array().unwrap();
    assert!(!sims.is_empty());
    assert!(sims.iter().all(|s| s["process_valid"] == true), "{v}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(judge_says(false))
            .mount(&server)
            .await;
        server
    });
    let llm = tmp.path().join("llm.toml");
    std::fs::write(
        &llm,
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let llm_arg = llm.to_str().unwrap();
    let v = evaluate(
        &project,
        &run,
        &["--process-judge", "local/judge", "--llm-config", llm_arg],
    );
    let sims = v["simulations"].as_array().unwrap();
    let judged: Vec<&Value> = sims
        .iter()
        .filter(|s| s["process_valid"] == false)
        .collect();
    assert!(!judged.is_empty(), "{v}");
    for s in judged {
        let d = &s["violations"][0];
        assert_eq!(d["judge"], "model", "{s}");
        assert_eq!(d["requirement"], "one_call_at_a_time");
    }
    // The model was asked with the question as an assertion.
    let bodies = rt.block_on(server.received_requests()).unwrap();
    assert!(!bodies.is_empty());
    let body = String::from_utf8_lossy(&bodies[0].body);
    assert!(
        body.contains("The agent made one tool call at a time."),
        "{body}"
    );
}
