//! The fixed sentences the sim agent speaks and the cues the sim user listens for. Shared so
//! the two sims understand each other exactly, while the cue lists also catch the usual
//! phrasing of real LLM agents.

/// The agent asks the user to identify themselves.
pub const ASK_IDENTITY: &str = "Before I can help, could you please provide your user id and the details needed to verify your identity?";
/// Appended to a summary of a pending change.
pub const CONFIRM_QUESTION: &str = "Do you confirm that I should proceed? Please answer yes or no.";
/// The agent refuses a request the policy forbids.
pub const REFUSAL: &str = "I'm sorry, but I cannot do that: our policy does not allow it.";
/// The agent closes.
pub const CLOSING: &str = "Is there anything else I can help you with?";
/// τ²-bench's fixed transfer sentence.
pub const TRANSFER: &str = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.";

/// User-side stop tokens (§6.4).
pub const STOP: &str = "###STOP###";
pub const TRANSFER_TOKEN: &str = "###TRANSFER###";

pub(crate) const IDENTITY_CUES: &[&str] = &[
    "user id",
    "user-id",
    "your email",
    "zip code",
    "phone number",
    "verify your identity",
    "your full name",
    "customer id",
];
pub(crate) const CONFIRM_CUES: &[&str] = &[
    "do you confirm",
    "confirm that",
    "shall i proceed",
    "should i proceed",
    "would you like me to proceed",
    "(yes/no)",
    "yes or no",
];
pub(crate) const TRANSFER_CUES: &[&str] = &[
    "transferred to a human",
    "transfer you to a human",
    "transferring you",
];
pub(crate) const CLOSING_CUES: &[&str] = &[
    "anything else",
    "cannot do that",
    "not able to",
    "unable to",
    "does not allow",
];

pub(crate) fn contains_any(text: &str, cues: &[&str]) -> bool {
    let lower = text.to_lowercase();
    cues.iter().any(|c| lower.contains(c))
}

/// "Please run `tool` on your device." with optional JSON arguments: how the sim agent asks
/// for a device action, and what the sim user parses.
pub fn device_request(
    tool: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> String {
    if arguments.is_empty() {
        format!("Please run `{tool}` on your device and tell me the result.")
    } else {
        format!(
            "Please run `{tool}` on your device with arguments {} and tell me the result.",
            serde_json::Value::Object(arguments.clone())
        )
    }
}
