//! External guards over HTTP through the `tauguard` binary: the SDK's rule guard served with
//! `--http` decides airline calls with lookups exactly as over stdio, its URL in the cell
//! settings; a guard answering HTTP 500 follows the fail mode with the status recorded; a URL
//! nobody answers is an input error naming the guard.

use crate::external_guard::python;
use crate::support::{assert_contains_all, s, tauguard_in_env};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use tauguard_testkit::{Loopback, workspace_root};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, ResponseTemplate};

fn data_dir() -> String {
    tauguard_testkit::tau2_candidate().display().to_string()
}

/// Runs airline tasks under an external guard at `url`; (exit code, records, stderr).
fn run(dir: &Path, url: &str, fail_mode: &str) -> (i32, Vec<Value>, String) {
    let cfg = dir.join("http.toml");
    std::fs::write(
        &cfg,
        format!(
            "[run]\nname = \"http\"\ndomain = \"airline\"\nnum_tasks = 25\nmax_steps = 40\n\
             max_retries = 0\nconcurrency = 4\ndata_dir = \"{}\"\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
             [[grid.guards]]\nname = \"remote\"\nfail_mode = \"{fail_mode}\"\n\
             external = {{ url = \"{url}\", timeout_secs = 5 }}\n",
            data_dir()
        ),
    )
    .unwrap();
    let out = dir.join("run");
    let (code, _, err) = tauguard_in_env(&["run", s(&cfg), "--out", s(&out)], &[]);
    let recs = std::fs::read_to_string(out.join("records.jsonl"))
        .map(|t| {
            t.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .unwrap_or_default();
    (code, recs, err)
}

/// The SDK's rule guard served over HTTP on a free loopback port: the process (the caller
/// kills it) and its URL.
pub(crate) fn serve_rule_guard() -> (Child, String) {
    let (py, env) = python();
    let mut child = Command::new(py)
        .arg(workspace_root().join("sdk/python/examples/rule_guard.py"))
        .args(["--http", "127.0.0.1:0"])
        .envs(env)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    (child, url)
}

#[test]
fn the_rule_guard_served_over_http_decides_with_lookups() {
    let (mut child, url) = serve_rule_guard();
    let tmp = tempfile::tempdir().unwrap();
    let (code, recs, err) = run(tmp.path(), &url, "closed");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(recs.len(), 25);
    let mut lookups = 0;
    for r in &recs {
        assert_eq!(r["cell"]["guard.external.url"], url.as_str());
        assert_eq!(
            r["cell"]["guard.external.reported_name"],
            "basic-economy-cancellation"
        );
        for e in r["guard_events"].as_array().unwrap() {
            assert!(e.get("verdict_source").is_none(), "{e}");
            lookups += e["info"]["external"]["lookups"].as_u64().unwrap();
        }
    }
    assert!(lookups > 0, "reservations were looked up over HTTP");
}

#[test]
fn an_http_error_follows_the_fail_mode_with_its_status() {
    let server = Loopback::start();
    server.add(
        Mock::given(method("POST"))
            .and(body_string_contains("\"type\":\"hello\""))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"type": "hello",
                "id": "hello-1", "protocol": 1, "name": "flaky", "version": "9"})),
            )
            .with_priority(1),
    );
    server.add(
        Mock::given(method("POST"))
            .and(body_string_contains("\"type\":\"mutating_call\""))
            .respond_with(ResponseTemplate::new(500).set_body_string("overloaded"))
            .with_priority(2),
    );
    server.add(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
            .with_priority(3),
    );
    let tmp = tempfile::tempdir().unwrap();
    let (code, recs, err) = run(tmp.path(), &server.uri(), "open");
    assert_eq!(code, 0, "{err}");
    assert_eq!(recs.len(), 25, "no record lost");
    let events: Vec<&Value> = recs
        .iter()
        .flat_map(|r| r["guard_events"].as_array().unwrap())
        .collect();
    assert!(!events.is_empty());
    for e in events {
        assert_eq!(e["verdict_source"], "fail_mode", "{e}");
        assert_eq!(e["fail_reason"], "http_error", "{e}");
        assert_eq!(e["fail_http_status"], 500, "{e}");
        assert_eq!(e["verdict"], "pass", "{e}");
        assert_eq!(e["info"]["external"]["raw_reply"], "overloaded", "{e}");
    }
}

#[test]
fn a_url_nobody_answers_is_an_input_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tmp = tempfile::tempdir().unwrap();
    let (code, recs, err) = run(tmp.path(), &format!("http://127.0.0.1:{port}"), "closed");
    assert_eq!(code, 2, "{err}");
    assert!(recs.is_empty());
    assert_contains_all(&err, &["guard `remote`", &format!("127.0.0.1:{port}")]);
}
