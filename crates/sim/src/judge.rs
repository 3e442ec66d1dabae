//! The `sim-judge`: a deterministic stand-in for τ²-bench's NL-assertion judge (an LLM at
//! temperature 0). It is NOT a faithful judge: an assertion counts as met when every number
//! and every code-like token (ids with digits) it mentions appears in the agent's messages,
//! and assertions without such tokens count as met. Use a real judge model for any result
//! where NL assertions gate the reward (retail).

use tauguard_core::message::Message;

/// One verdict: (met, justification).
pub fn sim_judge(messages: &[Message], assertions: &[String]) -> Vec<(bool, String)> {
    let agent_text: String = messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => a.content.as_deref(),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase()
        .replace(',', "");
    assertions
        .iter()
        .map(|a| {
            let tokens: Vec<String> = a
                .split(|c: char| c.is_whitespace() || "()[]{}'\",;:!?".contains(c))
                .map(|t| t.trim_end_matches('.').replace(',', "").to_lowercase())
                .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
                .collect();
            let missing: Vec<&String> = tokens
                .iter()
                .filter(|t| !agent_text.contains(t.as_str()))
                .collect();
            if missing.is_empty() {
                (
                    true,
                    format!(
                        "sim-judge: all {} checked tokens found in agent messages",
                        tokens.len()
                    ),
                )
            } else {
                (
                    false,
                    format!("sim-judge: agent never mentioned {missing:?}"),
                )
            }
        })
        .collect()
}
