//! The confirmation vocabulary: which agent messages ask the user to confirm an action, and
//! which user answers are an explicit yes. One list for every party that reads a dialogue —
//! the sim user answers a confirmation question exactly when the sim verifier would count the
//! message as one, and the sim verifier credits exactly the answers these lists accept — so
//! the offline parties and the offline judge can never disagree about what was asked or
//! answered.
//!
//! Matching is on the lowercased text: a confirmation request contains one of
//! [`CONFIRMATION_CUES`] as a substring; an answer is affirmative when it has an affirmative
//! word or phrase and no negative word (`no`, `not`, any `…n't`, `wait`, …) or phrase. The cue
//! list also covers the usual phrasing of LLM agents ("Shall I go ahead?", "Is that
//! correct?"), which is why it is broader than the one question the sim agent asks. A decline
//! ([`declines`]) is a no that turns the action down, as opposed to a hesitation or a
//! correction, after which the agent asks again.

/// How guidance from a turn-boundary guide opens. The agent reads it as a user-role message
/// of its own view (every provider accepts one there, and it keeps the system prompt
/// byte-stable); the user never sees it, and parties reading the user's answers skip it.
pub const GUIDANCE_PREFIX: &str = "[Policy guide] ";

/// Whether a user-role message of the agent's view is a guide's guidance, not the user.
pub fn is_guidance(text: &str) -> bool {
    text.starts_with(GUIDANCE_PREFIX)
}

/// Substrings of an agent message that summarises an action and asks the user to confirm it.
pub const CONFIRMATION_CUES: &[&str] = &[
    "do you confirm",
    "can you confirm",
    "could you confirm",
    "please confirm",
    "confirm that",
    "confirm if",
    "confirm whether",
    "shall i proceed",
    "should i proceed",
    "shall i go ahead",
    "should i go ahead",
    "may i proceed",
    "ok to proceed",
    "okay to proceed",
    "would you like me to",
    "would you like to proceed",
    "do you want me to",
    "do you want to proceed",
    "shall i",
    "is that correct",
    "is this correct",
    "are you sure",
    "(yes/no)",
    "yes/no",
    "yes or no",
];

/// Words (split on anything but letters, digits and `'`) that say yes.
pub const AFFIRMATIVE_WORDS: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "yup",
    "sure",
    "ok",
    "okay",
    "confirm",
    "confirmed",
    "confirming",
    "correct",
    "proceed",
    "absolutely",
    "definitely",
    "affirmative",
];

/// Phrases that say yes.
pub const AFFIRMATIVE_PHRASES: &[&str] = &[
    "go ahead",
    "please do",
    "do it",
    "sounds good",
    "that's right",
    "that is right",
    "that's correct",
];

/// Words that withdraw or qualify a yes; any word ending in `n't` counts too.
pub const NEGATIVE_WORDS: &[&str] = &[
    "no", "nope", "not", "never", "wait", "stop", "dont", "cannot",
];

/// Phrases that withdraw or qualify a yes.
pub const NEGATIVE_PHRASES: &[&str] = &["hold on", "hold off", "do not"];

/// Phrases of a user answer that turns the action down (not merely a hesitation): the sim
/// agent drops the action on them, and the sim user declines with one of them.
pub const DECLINE_PHRASES: &[&str] = &[
    "don't want to go ahead",
    "do not want to go ahead",
    "don't do it",
    "do not do it",
    "please don't",
    "i decline",
    "i changed my mind",
];

/// A user answer that turns the action down.
pub fn declines(text: &str) -> bool {
    let lower = text.to_lowercase().replace(['’', '‘'], "'");
    DECLINE_PHRASES.iter().any(|p| lower.contains(p))
}

/// An agent message that summarises an action and asks the user to confirm it.
pub fn asks_for_confirmation(text: &str) -> bool {
    let lower = text.to_lowercase();
    CONFIRMATION_CUES.iter().any(|c| lower.contains(c))
}

/// A user message that explicitly says yes (and does not also say no / not / wait).
pub fn is_affirmative(text: &str) -> bool {
    let lower = text.to_lowercase().replace(['’', '‘'], "'");
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let negative = words
        .iter()
        .any(|w| NEGATIVE_WORDS.contains(w) || w.ends_with("n't"))
        || NEGATIVE_PHRASES.iter().any(|p| lower.contains(p));
    let affirmative = words.iter().any(|w| AFFIRMATIVE_WORDS.contains(w))
        || AFFIRMATIVE_PHRASES.iter().any(|p| lower.contains(p));
    affirmative && !negative
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirmation_requests() {
        assert!(asks_for_confirmation(
            "Here is the plan. Do you confirm that I should proceed? Please answer yes or no."
        ));
        assert!(asks_for_confirmation(
            "Shall I proceed with the cancellation?"
        ));
        assert!(asks_for_confirmation("Is that CORRECT?"));
        assert!(!asks_for_confirmation(
            "Before I can help, could you please provide your user id?"
        ));
        assert!(!asks_for_confirmation(
            "Is there anything else I can help you with?"
        ));
    }

    #[test]
    fn declines_are_not_yeses_and_hesitations_are_neither() {
        for no in [
            "No, I don't want to go ahead with that.",
            "I changed my mind.",
        ] {
            assert!(declines(no), "{no}");
            assert!(!is_affirmative(no), "{no}");
        }
        for other in [
            "Hmm, let me think about it for a moment.",
            "Yes, I confirm.",
        ] {
            assert!(!declines(other), "{other}");
        }
    }

    #[test]
    fn affirmative_answers() {
        for yes in [
            "Yes, I confirm. Please go ahead.",
            "yes",
            "Yep, go ahead!",
            "That’s correct, please proceed.",
            "OK",
        ] {
            assert!(is_affirmative(yes), "{yes}");
        }
        for no in [
            "No, that's all. Thank you! ###STOP###",
            "Yes, but don't change the date",
            "Yes, but don’t change the date",
            "wait",
            "I'm not sure",
            "yes - hold on",
            "Hmm.",
        ] {
            assert!(!is_affirmative(no), "{no}");
        }
    }
}
