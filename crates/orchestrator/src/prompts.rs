//! System prompts for the agent and the user simulator, laid out exactly as upstream's
//! `SYSTEM_PROMPT` templates lay them (`agent/llm_agent.py`, `user/user_simulator.py` at
//! a2c0247); the texts themselves are the benchmark's, read from the data directory
//! ([`crate::benchmark_texts`]).

use tauguard_core::Task;
use tauguard_core::task::Instructions;

/// `<instructions>…</instructions><policy>…</policy>`. Upstream's instruction is a stripped
/// string constant (the data file adds one final newline), so the text is stripped here; the
/// policy goes in as loaded.
pub fn agent_system_prompt(instruction: &str, policy: &str) -> String {
    format!(
        "<instructions>\n{}\n</instructions>\n<policy>\n{}\n</policy>",
        instruction.trim(),
        policy
    )
}

/// Where upstream's guidelines take runtime persona text; with no persona configured (as in
/// every tauguard run) it becomes empty.
const PERSONA_PLACEHOLDER: &str = "<PERSONA_GUIDELINES>";

/// The guidelines file's text as read — its final newline kept, so a blank line and a half
/// separate it from the scenario — then the rendered scenario in `<scenario>` tags.
pub fn user_system_prompt(guidelines: &str, task: &Task) -> String {
    format!(
        "{}\n\n<scenario>\n{}\n</scenario>",
        guidelines.replace(PERSONA_PLACEHOLDER, ""),
        render_scenario(task)
    )
}

fn indent(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            if l.trim().is_empty() {
                l.to_string()
            } else {
                format!("\t{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Upstream's `str(UserScenario)`.
pub fn render_scenario(task: &Task) -> String {
    let mut lines = Vec::new();
    if let Some(p) = &task.user_scenario.persona {
        lines.push("Persona:".to_string());
        lines.push(indent(p));
    }
    let block = match &task.user_scenario.instructions {
        Instructions::Plain(s) => s.clone(),
        Instructions::Structured(s) => {
            let mut b = vec![
                format!("Domain: {}", s.domain),
                "Reason for call:".into(),
                indent(&s.reason_for_call),
            ];
            if let Some(k) = &s.known_info {
                b.push("Known info:".into());
                b.push(indent(k));
            }
            if let Some(u) = &s.unknown_info {
                b.push("Unknown info:".into());
                b.push(indent(u));
            }
            b.push("Task instructions:".into());
            b.push(indent(&s.task_instructions));
            b.join("\n")
        }
    };
    lines.push("Instructions:".into());
    lines.push(indent(&block));
    lines.join("\n")
}
