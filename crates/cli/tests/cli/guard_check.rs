//! `tauguard guard-check`: the example guards of the Python SDK pass every check, over stdio and
//! over HTTP (`--url`); each way the
//! deliberately broken guard (`crates/cli/tests/cli/external_guard/faulty_guard.py`) breaks
//! the protocol fails the precise check, quoting the message that broke it.

use crate::external_guard::python;
use crate::support::tauguard_in_env;
use tauguard_testkit::workspace_root;

/// `guard-check` on `args` (the guard command); returns (exit code, stdout).
fn guard_check(timeout: &str, args: &[String]) -> (i32, String) {
    let (_, env) = python();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut cli = vec!["guard-check", "--timeout", timeout, "--"];
    cli.extend(args.iter().map(String::as_str));
    let (code, out, err) = tauguard_in_env(&cli, &env);
    (code, format!("{out}{err}"))
}

fn faulty(mode: &str) -> Vec<String> {
    let (py, _) = python();
    let script = workspace_root().join("crates/cli/tests/cli/external_guard/faulty_guard.py");
    vec![py, script.display().to_string(), mode.into()]
}

/// The line of `check`'s outcome.
fn line<'a>(out: &'a str, check: &str) -> &'a str {
    out.lines()
        .find(|l| {
            l.get(6..)
                .is_some_and(|r| r.starts_with(&format!("{check}:")))
        })
        .unwrap_or_else(|| panic!("no `{check}` line:\n{out}"))
}

#[test]
fn the_example_guards_and_a_conforming_guard_pass() {
    let (py, _) = python();
    let rule = workspace_root().join("sdk/python/examples/rule_guard.py");
    let (code, out) = guard_check("10", &[py, rule.display().to_string()]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "lookups").starts_with("PASS"), "{out}");
    assert!(
        line(&out, "lookups").contains("well-formed lookups"),
        "{out}"
    );
    assert!(out.contains("10 checks passed"), "{out}");
    // A guard with both hooks has its guidance checked too.
    let (code, out) = guard_check("10", &faulty("ok"));
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "before_turn").starts_with("PASS"), "{out}");
}

#[test]
fn the_llm_judge_example_passes_against_a_loopback_model() {
    // A bare reply, as some servers send it: no id, object or total.
    let reply = serde_json::json!({
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": "{\"verdict\": \"PASS\", \"reason\": \"fine\"}"}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3}
    });
    let server = tauguard_testkit::Loopback::serve(
        wiremock::ResponseTemplate::new(200).set_body_json(reply),
    );
    let (py, _) = python();
    let judge = workspace_root().join("sdk/python/examples/llm_judge_guard.py");
    let args = [
        py,
        judge.display().to_string(),
        "--base-url".into(),
        format!("{}/v1", server.uri()),
        "--model".into(),
        "m".into(),
    ];
    let (code, out) = guard_check("10", &args);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn each_broken_guard_fails_the_precise_check() {
    for (mode, check, says) in [
        ("wrong-id", "mutating_call", "`id` is \"not-gc-r1\""),
        ("bad-verdict", "mutating_call", "`verdict` must be"),
        ("garbage", "schema", "not JSON"),
        ("hang", "timeouts", "not answered within 1.0 s"),
        (
            "bad-guidance",
            "before_turn",
            "`enabled_tools` must be an array",
        ),
        ("crash", "mutating_call", "closed its output"),
    ] {
        let (code, out) = guard_check("1", &faulty(mode));
        assert_eq!(code, 1, "{mode}: {out}");
        let l = line(&out, check);
        assert!(
            l.starts_with("FAIL") && l.contains(says),
            "{mode}: {l}\n{out}"
        );
        assert!(line(&out, "start").starts_with("PASS"), "{mode}: {out}");
    }
    // The offending message is quoted under the failing check.
    let (_, out) = guard_check("1", &faulty("wrong-id"));
    assert!(
        out.contains("message: {\"type\": \"decision\", \"id\": \"not-gc-r1\""),
        "{out}"
    );
}

#[test]
fn a_guard_served_over_http_is_checked_with_url() {
    let (mut child, url) = crate::external_http::serve_rule_guard();
    let (code, out, err) = tauguard_in_env(&["guard-check", "--timeout", "10", "--url", &url], &[]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{out}{err}");
    assert!(line(&out, "concurrency").starts_with("PASS"), "{out}");
    assert!(
        line(&out, "lookups").contains("well-formed lookups"),
        "{out}"
    );
    assert!(line(&out, "shutdown").starts_with("SKIP"), "{out}");
    // Nobody there: the start check fails, naming the exchange.
    let (code, out, _) = tauguard_in_env(&["guard-check", "--url", &url], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        line(&out, "start").starts_with("FAIL  start: the HTTP exchange failed"),
        "{out}"
    );
}
