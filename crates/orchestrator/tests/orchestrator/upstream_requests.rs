//! What a real-model run sends, captured on a loopback server through the production path
//! (config → plan → model → HTTP), held to upstream τ²-bench's definition in every registered
//! domain the data directory holds: the agent and user system prompts laid out as upstream's
//! `SYSTEM_PROMPT` templates over the data directory's own texts (the guidelines' final
//! newline kept), upstream's tool schemas (also when the data directory has no `tools.json`),
//! and upstream's default temperature 0.0 for agent and user.

use crate::support::{opts, parse, run_with};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tauguard_orchestrator::RunOptions;
use tauguard_orchestrator::render_scenario;
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// Records every request body; answers the agent and the user with plain text.
struct Capture(Arc<Mutex<Vec<Value>>>);

impl Respond for Capture {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).expect("request bodies are JSON");
        let agent = is_agent(&body);
        self.0.lock().unwrap().push(body);
        let text = if agent {
            "Could you tell me your user id?"
        } else {
            "Hi, I need help with my account."
        };
        ResponseTemplate::new(200).set_body_json(chat_completion(
            "m",
            "stop",
            assistant_text(text),
            (10, 5),
        ))
    }
}

fn system(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap_or_default()
}

fn is_agent(body: &Value) -> bool {
    system(body).starts_with("<instructions>\n")
}

/// Runs two tasks of `domain` from `data` with agent and user on the capture server (no
/// temperature configured) and returns the captured bodies.
fn capture(domain: &str, data: &Path) -> Vec<Value> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Loopback::serve(Capture(seen.clone()));
    let mock = "provider = \"mock\"\nmodel = \"m\"";
    let builder = SimConfig::new(&format!("capture-{domain}"), domain, data)
        .run_line("num_tasks = 2\nmax_steps = 4")
        .agent(mock)
        .user(mock)
        .provider(MockProvider::new("mock", &server.uri()).lines("timeout_secs = 5"));
    let out = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        no_cache: true,
        ..opts(out.path())
    };
    run_with(parse("capture.toml", &builder), opts).unwrap();
    drop(server);
    let bodies = seen.lock().unwrap().clone();
    assert!(
        bodies.iter().any(is_agent) && bodies.iter().any(|b| !is_agent(b)),
        "{domain}: both roles called"
    );
    bodies
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The policy as upstream's environment builds it: `policy.md`, or the main policy and the
/// tech-support manual in their tags.
fn upstream_policy(dir: &Path) -> String {
    let single = dir.join("policy.md");
    if single.exists() {
        return read(&single);
    }
    format!(
        "<main_policy>\n{}\n</main_policy>\n<tech_support_policy>\n{}\n</tech_support_policy>",
        read(&dir.join("main_policy.md")),
        read(&dir.join("tech_support_manual.md"))
    )
}

/// Upstream's `tools.json` of a domain: (assistant, user) as JSON texts per tool.
fn upstream_tools(dir: &Path) -> (Vec<String>, Vec<String>) {
    let v: Value = serde_json::from_str(&read(&dir.join("tools.json"))).unwrap();
    let texts = |k: &str| -> Vec<String> {
        v[k].as_array()
            .into_iter()
            .flatten()
            .map(|t| t.to_string())
            .collect()
    };
    (texts("assistant_tools"), texts("user_tools"))
}

fn sent_tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t.to_string())
        .collect()
}

/// The registered domains the data directory holds.
fn domains(data: &Path) -> Vec<&'static str> {
    let found: Vec<&'static str> = tauguard_env::registry::DOMAINS
        .iter()
        .map(|d| d.name())
        .filter(|d| data.join(d).join("tasks.json").is_file())
        .collect();
    assert!(
        !found.is_empty(),
        "no registered domain in {}",
        data.display()
    );
    found
}

fn check_domain(domain: &str, run_data: &Path, upstream: &Path) {
    let bodies = capture(domain, run_data);
    let ddir = upstream.join(domain);
    let instruction = read(&upstream.join("agent/agent_instruction.md"));
    let agent_prompt = format!(
        "<instructions>\n{}\n</instructions>\n<policy>\n{}\n</policy>",
        instruction.trim(),
        upstream_policy(&ddir)
    );
    let tasks = tauguard_env::load_task_file(&ddir.join("tasks.json")).unwrap();
    let (agent_tools, user_tools) = upstream_tools(&ddir);
    for b in &bodies {
        assert_eq!(b["temperature"], serde_json::json!(0.0), "{domain}: {b}");
        if is_agent(b) {
            assert_eq!(system(b), agent_prompt, "{domain}: agent system prompt");
            assert_eq!(sent_tools(b), agent_tools, "{domain}: agent tools");
            continue;
        }
        let prompt = system(b);
        let guidelines_file = if user_tools.is_empty() {
            "simulation_guidelines.md"
        } else {
            "simulation_guidelines_tools.md"
        };
        let guidelines = read(&upstream.join("user_simulator").join(guidelines_file));
        assert!(guidelines.ends_with('\n'), "the final-newline case");
        let task = tasks
            .iter()
            .find(|t| prompt.ends_with(&format!("<scenario>\n{}\n</scenario>", render_scenario(t))))
            .unwrap_or_else(|| panic!("{domain}: no task's scenario ends the user prompt"));
        let expected = format!(
            "{guidelines}\n\n<scenario>\n{}\n</scenario>",
            render_scenario(task)
        );
        assert_eq!(
            prompt, expected,
            "{domain}: user system prompt of task {}",
            task.id
        );
        assert!(
            prompt.contains(&format!("{}\n\n\n<scenario>\n", guidelines.trim_end())),
            "{domain}: the guidelines' final newline is kept"
        );
        assert_eq!(sent_tools(b), user_tools, "{domain}: user tools");
    }
}

#[test]
fn requests_carry_upstreams_prompts_schemas_and_temperature_in_every_domain() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    for domain in domains(&data) {
        check_domain(domain, &data, &data);
    }
}

/// A copy of the data directory's domains and texts without any `tools.json`, as a fresh
/// checkout of upstream's data is.
fn without_tools_json(data: &Path, domains: &[&str]) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let target = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &target);
            } else if p.file_name().unwrap() != "tools.json" {
                std::fs::copy(&p, &target).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = domains
        .iter()
        .map(PathBuf::from)
        .chain(["agent".into(), "user_simulator".into()])
        .collect();
    for d in dirs {
        copy(&data.join(&d), &tmp.path().join(&d));
    }
    tmp
}

#[test]
fn without_tools_json_the_model_still_sees_upstreams_schemas() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let domains = domains(&data);
    let bare = without_tools_json(&data, &domains);
    for domain in domains {
        assert!(!bare.path().join(domain).join("tools.json").exists());
        check_domain(domain, bare.path(), &data);
    }
}
