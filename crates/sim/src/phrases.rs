//! The fixed sentences the sim agent speaks and the cues the sim user listens for. Shared so
//! the two sims understand each other exactly, while the cue lists also catch the usual
//! phrasing of real LLM agents. Confirmation requests and answers are recognised with the
//! workspace's one confirmation vocabulary, [`tauguard_core::dialogue`], which the sim
//! verifier judges with too.

/// The agent asks the user to identify themselves.
pub const ASK_IDENTITY: &str = "Before I can help, could you please provide your user id and the details needed to verify your identity?";
/// Appended to a summary of a pending change. A confirmation request in the shared vocabulary
/// ([`tauguard_core::dialogue::asks_for_confirmation`]), which is also what the sim user
/// listens for.
pub const CONFIRM_QUESTION: &str = "Do you confirm that I should proceed? Please answer yes or no.";
/// The sim user's answer to a confirmation request: an explicit yes in the shared vocabulary
/// ([`tauguard_core::dialogue::is_affirmative`]).
pub const CONFIRM_ANSWER: &str = "Yes, I confirm. Please go ahead.";
/// The sim user turns an action down: a decline in the shared vocabulary
/// ([`tauguard_core::dialogue::declines`]).
pub const DECLINE_ANSWER: &str = "No, I don't want to go ahead with that.";
/// The sim user hesitates: neither a yes nor a decline, so the agent asks again.
pub const HESITATE_ANSWER: &str = "Hmm, let me think about it for a moment.";
/// The sim user's yes after a hesitation or a correction.
pub const YES_AFTER_ALL: &str = "Actually yes, that's right. Please go ahead.";
/// How the sim user's correction of a summary begins (not a yes: it says "wait").
pub const CORRECTION_PREFIX: &str = "Wait, one correction:";
/// How the sim agent begins asking again after a hesitation or a correction; the sim user
/// answers such a request with [`YES_AFTER_ALL`].
pub const REASK_PREFIX: &str = "No problem, let me restate it.";
/// The sim agent drops an action the user declined.
pub const DECLINE_ACK: &str = "Understood, I will not make that change.";
/// The sim agent gives up on a request after a block.
pub const ABANDON: &str = "I'm sorry, I am unable to complete this request right now.";
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

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::dialogue::{asks_for_confirmation, is_affirmative};

    #[test]
    fn the_sims_confirmation_sentences_are_in_the_shared_vocabulary() {
        assert!(asks_for_confirmation(CONFIRM_QUESTION));
        assert!(is_affirmative(CONFIRM_ANSWER));
        assert!(is_affirmative(YES_AFTER_ALL));
        assert!(tauguard_core::dialogue::declines(DECLINE_ANSWER));
        for not_yes in [DECLINE_ANSWER, HESITATE_ANSWER, CORRECTION_PREFIX] {
            assert!(!is_affirmative(not_yes), "{not_yes}");
        }
        assert!(!tauguard_core::dialogue::declines(HESITATE_ANSWER));
        for other in [ASK_IDENTITY, REFUSAL, CLOSING, TRANSFER] {
            assert!(!asks_for_confirmation(other), "{other}");
        }
    }
}
