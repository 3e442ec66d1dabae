//! External guards through the `tauguard` binary: the two example guards of the Python SDK
//! (`sdk/python/examples/`) in an offline grid over every registered domain, reported like
//! any built-in guard; and a deliberately broken guard
//! (`crates/cli/tests/cli/external_guard/faulty_guard.py`) whose crash, hang, garbage, wrong
//! id and out-of-schema verdict each follow the fail mode, lose no record, and say what
//! happened in the guard event.

use crate::support::{assert_contains_all, guard_events, records, s, tauguard_in_env, written};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tauguard_testkit::{Loopback, workspace_root};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, ResponseTemplate};

/// The Python that runs guards, and the environment it needs: the CI venv, where `.ci/run`
/// installed the SDK (required under CI), else `python3` with the SDK on `PYTHONPATH`.
pub(crate) fn python() -> (String, Vec<(String, String)>) {
    let venv = workspace_root().join(".ci/venv/bin/python");
    let installed = venv.is_file()
        && Command::new(&venv)
            .args(["-c", "import tauguard_guard"])
            .status()
            .is_ok_and(|s| s.success());
    if std::env::var_os("CI").is_some() {
        assert!(
            installed,
            "under CI the SDK must be installed in .ci/venv (see .ci/run)"
        );
    }
    if installed {
        (venv.display().to_string(), Vec::new())
    } else {
        let path = workspace_root().join("sdk/python").display().to_string();
        ("python3".into(), vec![("PYTHONPATH".into(), path)])
    }
}

fn data_dir() -> PathBuf {
    tauguard_testkit::tau2_candidate()
}

fn toml_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap()
}

/// Runs `guards` (TOML `[[grid.guards]]` tables) over `domains`; returns the run dir and stderr.
fn run(
    dir: &Path,
    domains: &[String],
    num_tasks: usize,
    concurrency: usize,
    guards: &str,
) -> (PathBuf, String) {
    let cfg = dir.join("ext.toml");
    std::fs::write(
        &cfg,
        format!(
            "[run]\nname = \"ext\"\nnum_tasks = {num_tasks}\ntrials = 1\nseed = 300\nmax_steps = 40\n\
             max_retries = 0\nconcurrency = {concurrency}\ndata_dir = \"{}\"\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
             [grid]\ndomains = {}\n{guards}",
            data_dir().display(),
            toml_list(domains),
        ),
    )
    .unwrap();
    let out = dir.join("run");
    let (_, env) = python();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let (code, _, err) = tauguard_in_env(&["run", s(&cfg), "--out", s(&out)], &env);
    assert_eq!(code, 0, "tauguard run: {err}");
    (out, err)
}

fn guard_table(name: &str, command: &[String], extra: &str) -> String {
    format!(
        "[[grid.guards]]\nname = \"{name}\"\n{extra}external = {{ command = {} , timeout_secs = 10 }}\n",
        toml_list(command)
    )
}

/// A chat completion whose content is `verdict`, with the usage the guard must report.
fn verdict(v: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "r", "object": "chat.completion", "created": 0, "model": "judge",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": format!("{{\"verdict\": \"{v}\", \"reason\": \"checked against the policy\"}}")}}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
    }))
}

#[test]
fn example_guards_run_over_every_domain_and_report_like_built_in_guards() {
    let domains: Vec<String> = tauguard_env::registry::DOMAINS
        .iter()
        .map(|d| d.name().to_string())
        .filter(|d| data_dir().join(d).is_dir())
        .collect();
    assert!(domains.len() >= 3, "the τ²-bench domains: {domains:?}");
    let server = Loopback::start();
    server.add(
        Mock::given(method("POST"))
            .and(body_string_contains("Pending action: cancel_reservation"))
            .respond_with(verdict("BLOCK"))
            .with_priority(1),
    );
    server.add(
        Mock::given(method("POST"))
            .respond_with(verdict("PASS"))
            .with_priority(2),
    );
    let (py, _) = python();
    let examples = workspace_root().join("sdk/python/examples");
    let rule = vec![
        py.clone(),
        examples.join("rule_guard.py").display().to_string(),
    ];
    let judge = vec![
        py,
        examples.join("llm_judge_guard.py").display().to_string(),
        "--base-url".into(),
        format!("{}/v1", server.uri()),
        "--model".into(),
        "judge".into(),
        // $1 and $2 per million tokens: 321 × 1 + 12 × 2 = 345 µ$ a call.
        "--prompt-price".into(),
        "1".into(),
        "--completion-price".into(),
        "2".into(),
    ];
    let guards = format!(
        "[[grid.guards]]\nname = \"baseline\"\nguard = \"baseline\"\n{}{}",
        guard_table("rule", &rule, ""),
        guard_table("judge", &judge, "fail_mode = \"open\"\n")
    );
    let tmp = tempfile::tempdir().unwrap();
    let num_tasks = 30;
    let (run_dir, _) = run(tmp.path(), &domains, num_tasks, 4, &guards);
    let recs = records(&run_dir);
    let mut lookups = 0;
    let mut judge_blocks = 0;
    for d in &domains {
        for name in ["rule", "judge"] {
            let mine: Vec<&Value> = recs
                .iter()
                .filter(|r| r["domain"] == d.as_str() && r["cell"]["guard.name"] == name)
                .collect();
            assert!(!mine.is_empty(), "{d} {name}");
            for r in &mine {
                assert_eq!(r["guard"], "external");
                assert!(r["error"].is_null(), "{d} {name}: {}", r["error"]);
                assert_eq!(r["cell"]["guard.external.version"], "0.1.0");
                assert_eq!(r["cell"]["guard.external.protocol"], 1);
            }
            let events: Vec<&Value> = mine
                .iter()
                .flat_map(|r| r["guard_events"].as_array().unwrap())
                .collect();
            assert!(
                !events.is_empty(),
                "{d} {name}: no mutating call was judged"
            );
            if name == "judge" {
                // The guard role's cost in each record: the sum of its calls', as a verifier's.
                for r in &mine {
                    let calls = r["guard_events"].as_array().unwrap().len() as f64;
                    let cost = r["usage"]["guard"]["cost"].as_f64().unwrap_or(0.0);
                    assert!((cost - calls * 345e-6).abs() < 1e-9, "{}", r["usage"]);
                }
            }
            for e in &events {
                assert_eq!(e["guard"], "external");
                assert!(
                    e.get("verdict_source").is_none(),
                    "judged, not fail mode: {e}"
                );
                lookups += e["info"]["external"]["lookups"].as_u64().unwrap();
                if name == "judge" {
                    // The guard's own model usage, recorded like a verifier's.
                    assert_eq!(e["usage"]["calls"], 1, "{e}");
                    assert_eq!(e["usage"]["usage"]["prompt_tokens"], 321, "{e}");
                    let cost = e["usage"]["cost"].as_f64().unwrap();
                    assert!((cost - 345e-6).abs() < 1e-12, "{e}");
                    judge_blocks += u32::from(e["verdict"] == "block");
                }
            }
        }
    }
    assert!(lookups > 0, "the rule guard looked reservations up");
    assert!(judge_blocks > 0, "the judge blocked the cancellations");
    let (code, out, err) = tauguard_in_env(&["report", s(&run_dir)], &[]);
    assert_eq!(code, 0, "{err}");
    for table in ["PolicyGuard Table 2", "PolicyGuard Table 7"] {
        let section = out
            .split("### ")
            .find(|s| s.starts_with(table))
            .unwrap_or_else(|| panic!("{table} missing:\n{out}"));
        for name in ["rule", "judge"] {
            for d in &domains {
                assert!(
                    section.lines().any(|l| l.starts_with(&format!("| {d} "))
                        && l.contains("external")
                        && l.contains(&format!("guard.name={name}"))),
                    "{table}: no {d} row for {name}:\n{section}"
                );
            }
        }
    }
}

/// Runs the faulty guard in `mode` on airline tasks, `concurrency` simulations at once;
/// returns its records and tauguard's stderr.
fn faulty(mode: &str, fail_mode: &str, concurrency: usize, extra: &str) -> (Vec<Value>, String) {
    let (py, _) = python();
    let script = workspace_root().join("crates/cli/tests/cli/external_guard/faulty_guard.py");
    let guards = format!(
        "[[grid.guards]]\nname = \"faulty\"\nfail_mode = \"{fail_mode}\"\n\
         external = {{ command = {}, timeout_secs = 0.5{extra} }}\n",
        toml_list(&[py, script.display().to_string(), mode.into()])
    );
    let tmp = tempfile::tempdir().unwrap();
    let tasks = 8;
    let (run_dir, err) = run(tmp.path(), &["airline".into()], tasks, concurrency, &guards);
    let recs = records(&run_dir);
    // No record lost: every planned simulation is written, none an infrastructure error.
    assert_eq!(recs.len(), tasks, "{err}");
    for r in &recs {
        assert!(r["error"].is_null(), "{mode}: {}", r["error"]);
    }
    (recs, err)
}

/// Every guard event of `recs`: each from the fail mode, blocked when closed.
fn fail_events(recs: &[Value], fail_mode: &str, reason: &str) -> Vec<Value> {
    let events = guard_events(recs);
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e["verdict_source"], "fail_mode", "{e}");
        assert_eq!(e["fail_reason"], reason, "{e}");
        let want = if fail_mode == "closed" {
            "block"
        } else {
            "pass"
        };
        assert_eq!(e["verdict"], want, "{e}");
        assert_eq!(e["executed"], fail_mode == "open", "{e}");
        assert!(
            external_text(e, "source").contains("faulty_guard.py"),
            "{e}"
        );
    }
    events
}

/// The text at `field` of an event's `info.external` (its fault, message, raw reply, source).
fn external_text<'a>(event: &'a Value, field: &str) -> &'a str {
    event["info"]["external"][field]
        .as_str()
        .unwrap_or_else(|| panic!("no text at info.external.{field}: {event}"))
}

/// Each of `events` names the external `fault`, and its `field` (`message`, `raw_reply`)
/// holds `text`.
fn assert_each_fault(events: &[Value], fault: &str, field: &str, text: &str) {
    for e in events {
        assert_eq!(e["info"]["external"]["fault"], fault, "{e}");
        let got = external_text(e, field);
        assert!(got.contains(text), "{field} lacks `{text}`: {e}");
    }
}

#[test]
fn a_crashing_guard_is_restarted_up_to_its_cap_and_then_fails_closed() {
    let (recs, err) = faulty("crash", "closed", 4, ", max_restarts = 1");
    let events = fail_events(&recs, "closed", "connection");
    let kinds: Vec<&str> = events.iter().map(|e| external_text(e, "fault")).collect();
    assert!(
        kinds.contains(&"crash") && kinds.contains(&"restart_limit"),
        "{kinds:?}"
    );
    let crash = events
        .iter()
        .find(|e| e["info"]["external"]["fault"] == "crash")
        .unwrap();
    // The process's last words are in the event.
    assert!(
        external_text(crash, "message").contains("crashing on purpose"),
        "{crash}"
    );
    assert!(err.contains("restart 1 of at most 1"), "{err}");
    assert!(!err.contains("restart 2"), "{err}");
}

#[test]
fn a_hanging_guard_times_out_and_fails_open() {
    let (recs, _) = faulty("hang", "open", 4, "");
    assert_each_fault(
        &fail_events(&recs, "open", "timeout"),
        "timeout",
        "message",
        "0.5 s",
    );
}

#[test]
fn a_guard_answering_garbage_fails_closed_with_the_raw_reply() {
    let (recs, _) = faulty("garbage", "closed", 1, "");
    for e in fail_events(&recs, "closed", "invalid_response") {
        // One request in flight: the line is its answer.
        assert_eq!(e["info"]["external"]["fault"], "malformed", "{e}");
        assert_eq!(
            e["info"]["external"]["raw_reply"], "this is not json {",
            "{e}"
        );
    }
}

#[test]
fn a_line_nobody_claims_with_several_requests_open_fails_each_and_restarts_the_guard() {
    let (py, _) = python();
    let script = workspace_root().join("crates/cli/tests/cli/external_guard/faulty_guard.py");
    let guards = format!(
        "[[grid.guards]]\nname = \"faulty\"\nfail_mode = \"closed\"\n\
         external = {{ command = {}, timeout_secs = 5, max_restarts = 50 }}\n",
        toml_list(&[py, script.display().to_string(), "garbage-when-two".into()])
    );
    let tmp = tempfile::tempdir().unwrap();
    // Enough simulations at once that mutating calls overlap.
    let (run_dir, err) = run(tmp.path(), &["airline".into()], 30, 8, &guards);
    let recs = records(&run_dir);
    assert_eq!(recs.len(), 30, "no record lost: {err}");
    let events = guard_events(&recs);
    for e in &events {
        assert_eq!(
            (e["verdict_source"].as_str(), e["verdict"].as_str()),
            (Some("fail_mode"), Some("block")),
            "{e}"
        );
    }
    // The line went to both open requests at once, neither waited for its time-out.
    let unclaimed: Vec<&Value> = events
        .iter()
        .filter(|e| e["info"]["external"]["fault"] == "unclaimed_line")
        .collect();
    assert!(unclaimed.len() >= 2, "{events:?}");
    for e in &unclaimed {
        assert_eq!(e["fail_reason"], "invalid_response", "{e}");
        assert_eq!(
            e["info"]["external"]["raw_reply"], "this is not json {",
            "{e}"
        );
        assert!(
            external_text(e, "message").contains(" were open (not JSON"),
            "{e}"
        );
    }
    // The stream was not trusted after it: the process was restarted, and said so.
    assert_contains_all(&err, &["restart 1 of at most 50", "no open request claims"]);
}

#[test]
fn a_guard_answering_the_wrong_id_follows_the_fail_mode() {
    let (recs, _) = faulty("wrong-id", "open", 1, "");
    let events = fail_events(&recs, "open", "invalid_response");
    assert_each_fault(&events, "wrong_id", "raw_reply", "\"id\": \"not-r");
}

#[test]
fn an_out_of_schema_verdict_fails_closed_naming_the_field() {
    let (recs, _) = faulty("bad-verdict", "closed", 4, "");
    let events = fail_events(&recs, "closed", "invalid_response");
    assert_each_fault(&events, "out_of_schema", "message", "`verdict`");
}

#[test]
fn a_bad_external_table_is_an_input_error_naming_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    for (table, says) in [
        (
            "external = { url = \"127.0.0.1:9\" }",
            "at `grid.guards[0].external`: `url`",
        ),
        (
            "guard = \"toolguard\"\nexternal = { command = [\"x\"] }",
            "set one of `guard`",
        ),
        (
            "external = { command = [\"/nonexistent/guard-program\"] }",
            "cannot start `/nonexistent/guard-program`",
        ),
    ] {
        let cfg = written(
            tmp.path(),
            "bad.toml",
            format!(
                "[run]\nname = \"bad\"\ndomain = \"airline\"\nnum_tasks = 1\ndata_dir = \"{}\"\n\
                 [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
                 [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
                 [[grid.guards]]\nname = \"mine\"\n{table}\n",
                data_dir().display()
            ),
        );
        let out = tmp.path().join("out");
        let (code, _, err) = tauguard_in_env(&["run", s(&cfg), "--out", s(&out)], &[]);
        assert_eq!(code, 2, "{table}: {err}");
        assert!(err.contains(says), "{table}: {err}");
    }
}

#[test]
fn a_guard_with_the_before_turn_hook_guides_every_agent_turn() {
    let (recs, _) = faulty("ok", "closed", 4, "");
    for r in &recs {
        let guides = r["guide_events"].as_array().unwrap();
        assert!(!guides.is_empty(), "{}", r["task_id"]);
        for g in guides {
            assert_eq!(g["guard"], "external");
            assert_eq!(g["trigger"], "user_turn");
            assert_eq!(g["guidance"], "Check the policy before acting.");
            assert_eq!(g["enabled_tools"], json!(["cancel_reservation"]));
        }
        // Both hooks answered on the same process: every call judged, none failed.
        for e in r["guard_events"].as_array().unwrap() {
            assert_eq!(e["verdict"], "pass", "{e}");
            assert!(e.get("verdict_source").is_none(), "{e}");
        }
    }
}
