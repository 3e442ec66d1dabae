//! What a run needs of its models, found out before it runs: `run --dry-run` sets each role's
//! largest prompt beside its model's declared context window and warns when one does not fit
//! (PolicyGuide's guide prompt against an 8k model), and `run --check` asks each model for a
//! tool call with the role's real tools and sends the role's real largest prompt — a server
//! that drops `tools` or refuses the prompt's length fails the check naming the model and the
//! check, a good one passes.

use crate::support::{
    assert_contains_all, line_starting, line_with, s, tauguard_ok, tauguard_status as tauguard,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tauguard_testkit::{
    Loopback, MockProvider, SimConfig, assistant_text, chat_completion, fixtures_dir,
};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, ResponseTemplate};

/// A fixture-domain config: agent `loc/m` (a provider at `url`), the sim user, `guard`, and
/// `extra` TOML appended.
fn config(guard: &str, url: &str, extra: &str) -> SimConfig {
    SimConfig::new("fit", "airline", &fixtures_dir())
        .run_line("num_tasks = 2")
        .agent("provider = \"loc\"\nmodel = \"m\"")
        .guards(&[guard])
        .provider(MockProvider::new("loc", url))
        .tail(extra)
}

/// [`config`] written to `dir/<guard>.toml`.
fn write_config(dir: &Path, guard: &str, url: &str, extra: &str) -> PathBuf {
    config(guard, url, extra).write(&dir.join(format!("{guard}.toml")))
}

/// Nothing listens on the discard port: a dry run that called the provider would fail.
const UNUSED: &str = "http://127.0.0.1:9/v1";

#[test]
fn dry_run_warns_when_the_guide_prompt_does_not_fit_an_8k_model() {
    let tmp = tempfile::tempdir().unwrap();
    let small = "[llm.capabilities.\"m\"]\ncontext_tokens = 8192\n";
    let cfg = write_config(tmp.path(), "policyguide", UNUSED, small);
    let (code, text, err) = tauguard(&["run", "--dry-run", s(&cfg)]);
    assert_eq!(
        code, 0,
        "a prompt too large is a warning, not an error: {err}"
    );
    let warning = line_starting(&text, "warning: ");
    assert_contains_all(
        warning,
        &[
            "cell `airline|m|policyguide`",
            "the guide prompt ≈ ",
            "`loc/m` (8192 tokens)",
        ],
    );
    assert!(
        text.contains("airline|m|policyguide: agent prompt ≈ "),
        "{text}"
    );

    let json = tauguard_ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
    let e: Value = serde_json::from_str(&json).unwrap();
    let prompts = e["cells"][0]["prompts"].as_array().unwrap();
    let role = |r: &str| prompts.iter().find(|p| p["role"] == r).unwrap().clone();
    let guide = role("guide");
    assert_eq!(guide["model"], "loc/m");
    assert_eq!(guide["context_tokens"], 8192);
    assert_eq!(guide["fits"], false);
    let guide_tokens = guide["tokens"].as_u64().unwrap();
    assert!(guide_tokens >= 8192, "{guide}");
    // The agent's prompt (policy and tool schemas) fits the same window.
    let agent = role("agent");
    assert_eq!(agent["fits"], true, "{agent}");
    assert!(agent["tokens"].as_u64().unwrap() < guide_tokens);
    let warnings = e["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains(&format!("≈ {guide_tokens} tokens")),
        "{warnings:?}"
    );

    // A window the prompts fit: no warning; none declared: the size alone, no verdict.
    let large = "[llm.capabilities.\"m\"]\ncontext_tokens = 131072\n";
    let cfg = write_config(tmp.path(), "policyguide", UNUSED, large);
    let text = tauguard_ok(&["run", "--dry-run", s(&cfg)]);
    assert!(!text.contains("warning:"), "{text}");
    assert!(text.contains("(context 131072)"), "{text}");
    let cfg = write_config(tmp.path(), "policyguide", UNUSED, "");
    let json = tauguard_ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
    let e: Value = serde_json::from_str(&json).unwrap();
    let guide = &e["cells"][0]["prompts"][1];
    assert_eq!(guide["role"], "guide");
    assert_eq!(guide["context_tokens"], Value::Null);
    assert_eq!(guide["fits"], Value::Null);
    assert_eq!(e["warnings"], json!([]));
}

fn text_reply(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(chat_completion(
        "m",
        "stop",
        assistant_text(text),
        (9, 1),
    ))
}

fn tool_reply(name: &str, arguments: &str) -> ResponseTemplate {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": name, "arguments": arguments}}]});
    ResponseTemplate::new(200).set_body_json(chat_completion("m", "tool_calls", message, (900, 12)))
}

/// A loopback server: requests whose body holds `needle` get `special`, the rest `rest`.
fn server(needle: &str, special: ResponseTemplate, rest: ResponseTemplate) -> Loopback {
    let server = Loopback::mount(
        Mock::given(method("POST"))
            .and(body_string_contains(needle))
            .respond_with(special)
            .with_priority(1),
    );
    server.add(
        Mock::given(method("POST"))
            .respond_with(rest)
            .with_priority(5),
    );
    server
}

/// The request bodies the server saw, as JSON.
fn bodies(server: &Loopback) -> Vec<Value> {
    server
        .received()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// What the check's tool request starts its instruction with.
const TOOL_ASK: &str = "tauguard run --check: call the tool";

#[test]
fn check_fails_a_server_that_drops_tools_naming_the_model_and_the_check() {
    let srv = server(
        TOOL_ASK,
        text_reply("I cannot call tools."),
        text_reply("OK"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "baseline", &srv.uri(), "");
    let (code, out, err) = tauguard(&["run", "--check", s(&cfg)]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.contains("reachable: agent `loc/m`"), "{out}");
    let line = line_with(&out, "agent: tool calling: fails");
    assert_contains_all(line, &["answered in text only", "\"I cannot call tools.\""]);
    assert!(out.contains("agent: prompt fits: ok"), "{out}");
    assert!(err.contains("`loc/m` as agent: tool calling"), "{err}");
    // The tool request carried the domain's real agent tools and named a read-only one.
    let sent = bodies(&srv);
    let ask = sent
        .iter()
        .find(|b| b.to_string().contains(TOOL_ASK))
        .expect("a tool request");
    let tools: Vec<&str> = ask["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"book_reservation"), "{tools:?}");
    // A read-only tool that takes arguments, so the reply has arguments to parse.
    let asked = ask["messages"][0]["content"].as_str().unwrap();
    assert!(
        asked.contains("`get_reservation_details`"),
        "a read-only tool with one required parameter: {asked}"
    );
}

#[test]
fn check_fails_a_server_that_refuses_the_prompt_for_length() {
    let refusal = ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": "the request exceeds the available context size",
        "type": "exceed_context_size_error"}}));
    // Only the prompt-fits request has a system message: the reachability and tool requests
    // are short user turns.
    let srv = server(
        "\"role\":\"system\"",
        refusal,
        tool_reply("get_user_details", "{\"user_id\": \"u1\"}"),
    );
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), "baseline", &srv.uri(), "");
    let (code, out, err) = tauguard(&["run", "--check", s(&cfg)]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.contains("agent: tool calling: ok"), "{out}");
    let line = line_with(&out, "agent: prompt fits: fails");
    assert_contains_all(
        line,
        &[
            "rejected as too long (HTTP 400)",
            "the request exceeds the available context size",
        ],
    );
    assert!(err.contains("`loc/m` as agent: prompt fits"), "{err}");
    // What was sent is the agent's real system prompt with its tools.
    let sent = bodies(&srv);
    let long = sent
        .iter()
        .find(|b| b["messages"][0]["role"] == "system")
        .expect("a prompt-fits request");
    let system = long["messages"][0]["content"].as_str().unwrap();
    let policy = std::fs::read_to_string(fixtures_dir().join("airline/policy.md")).unwrap();
    assert!(system.contains(policy.trim()), "the domain policy is in it");
    assert!(!long["tools"].as_array().unwrap().is_empty());
}

#[test]
fn check_passes_a_good_server_for_every_role_it_plays() {
    let srv = server(
        TOOL_ASK,
        tool_reply("get_user_details", "{\"user_id\": \"u1\"}"),
        text_reply("OK"),
    );
    let tmp = tempfile::tempdir().unwrap();
    // The agent's model also judges (paired verifier) and plays the user; a response cache
    // is configured, which the check must not use.
    let cache = format!(
        "[llm.cache]\ndir = \"{}\"\n",
        tmp.path().join("cache").display()
    );
    let cfg = config("pg-checklist", &srv.uri(), &cache)
        .user("provider = \"loc\"\nmodel = \"m\"")
        .write(&tmp.path().join("pg-checklist.toml"));
    let (code, out, err) = tauguard(&["run", "--check", s(&cfg)]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("reachable: agent, user `loc/m`"), "{out}");
    assert_contains_all(
        &out,
        &[
            "  agent: tool calling: ok (called `get_user_details` (asked for `get_reservation_details`",
            "  agent: prompt fits: ok",
            "  user: prompt fits: ok",
            "  verifier: prompt fits: ok",
        ],
    );
    // The fixture airline gives the user no tools: no user tool request.
    assert!(!out.contains("user: tool calling"), "{out}");
    // Uncached: a second check asks the server again.
    let before = bodies(&srv).len();
    tauguard_ok(&["run", "--check", s(&cfg)]);
    assert_eq!(bodies(&srv).len(), 2 * before);
}
