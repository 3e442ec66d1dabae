//! System prompts for the agent and the user simulator, laid out as upstream lays them
//! (§6.5, §6.6); the texts themselves are files under `configs/prompts/`.

use tauguard_core::Task;
use tauguard_core::task::Instructions;

/// `<instructions>…</instructions><policy>…</policy>`.
pub fn agent_system_prompt(instruction: &str, policy: &str) -> String {
    format!(
        "<instructions>\n{}\n</instructions>\n<policy>\n{}\n</policy>",
        instruction.trim_end(),
        policy
    )
}

/// Guidelines, then the rendered scenario in `<scenario>` tags.
pub fn user_system_prompt(guidelines: &str, task: &Task) -> String {
    format!(
        "{}\n\n<scenario>\n{}\n</scenario>",
        guidelines.trim_end(),
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
