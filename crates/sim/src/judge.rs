//! The `sim-judge`: a deterministic stand-in for τ²-bench's NL-assertion judge (an LLM at
//! temperature 0). It is NOT a faithful judge: an assertion counts as met when every number
//! and every code-like token (ids with digits) it mentions appears in the agent's messages,
//! and assertions without such tokens count as met. Use a real judge model for any result
//! where NL assertions gate the reward (retail).
//!
//! It decides from what a token means, not how it is written: a number is its value, so
//! "$8,276.23", "8276.23" and "USD 8276.230" are one amount, and "$180.10" is "180.1";
//! currency signs, thousands separators, a trailing percent sign and case do not matter. A
//! code (an id such as `#W8665881`, a date) matches case-insensitively as written.

use tauguard_core::message::Message;

/// What a token of an assertion or of the agent's messages means.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A number, canonical: no sign, separators or leading/trailing zeros (`8276.23`, `180.1`).
    Number(String),
    /// Anything else with a digit in it, lower-cased.
    Code(String),
}

/// Characters that end a token besides whitespace. A comma is not one: between digits it
/// groups thousands, and at a token's end it is trimmed.
const BREAKS: &str = "()[]{}'\";:!?`";

/// Currency signs an amount may carry.
const CURRENCY: &[char] = &['$', '€', '£', '¥'];

/// The tokens of `text` that carry a digit, each as written and as meant.
fn tokens(text: &str) -> impl Iterator<Item = (&str, Token)> {
    text.split(|c: char| c.is_whitespace() || BREAKS.contains(c))
        .map(|t| t.trim_end_matches(['.', ',']))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .map(|t| {
            let meant = match number(t) {
                Some(n) => Token::Number(n),
                None => Token::Code(t.to_lowercase()),
            };
            (t, meant)
        })
}

/// The canonical value of a numeric token, or `None` when it is not a number: optional
/// currency sign, digits with optional thousands groups, optional decimals, optional `%`.
fn number(token: &str) -> Option<String> {
    let t = token.trim_start_matches(CURRENCY).trim_end_matches('%');
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, f),
        None => (t, ""),
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let int_ok = digits(int)
        || int
            .split(',')
            .enumerate()
            .all(|(k, g)| digits(g) && if k == 0 { g.len() <= 3 } else { g.len() == 3 })
            && int.contains(',');
    if !int_ok || !(frac.is_empty() || digits(frac)) || t.contains(['$', '%']) {
        return None;
    }
    let int = int.replace(',', "");
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    Some(if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    })
}

/// One verdict: (met, justification).
pub fn sim_judge(messages: &[Message], assertions: &[String]) -> Vec<(bool, String)> {
    let agent_text: String = messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => a.content.as_deref(),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let lower = agent_text.to_lowercase();
    let said: Vec<Token> = tokens(&agent_text).map(|(_, t)| t).collect();
    assertions
        .iter()
        .map(|a| {
            let wanted: Vec<(&str, Token)> = tokens(a).collect();
            let missing: Vec<&str> = wanted
                .iter()
                .filter(|(_, t)| match t {
                    Token::Number(_) => !said.contains(t),
                    Token::Code(c) => !lower.contains(c.as_str()),
                })
                .map(|(raw, _)| *raw)
                .collect();
            if missing.is_empty() {
                (
                    true,
                    format!(
                        "sim-judge: all {} checked tokens found in agent messages",
                        wanted.len()
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

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::message::ParticipantMessage;

    fn agent(text: &str) -> Vec<Message> {
        vec![Message::Assistant(ParticipantMessage {
            content: Some(text.into()),
            ..Default::default()
        })]
    }

    fn met(said: &str, assertion: &str) -> bool {
        sim_judge(&agent(said), &[assertion.to_string()])[0].0
    }

    #[test]
    fn amounts_match_by_value_whatever_their_format() {
        let a = "Agent should tell the user the total refund amount is $8,276.23.";
        for said in [
            "For your reference: 8276.23.",
            "The refund is $8,276.23 in total",
            "Refund: 8,276.230 dollars",
            "USD 8276.23",
        ] {
            assert!(met(said, a), "{said}");
        }
        assert!(met(
            "180.1, 189.57, 208.6",
            "options: $180.10, $189.57, and $208.60."
        ));
        assert!(met("a 10% discount", "Agent should offer 10 percent."));
        assert!(met("order #w8665881 is cancelled", "Order #W8665881."));
    }

    #[test]
    fn a_different_amount_or_a_missing_code_is_not_met() {
        let a = "Agent should tell the user the total refund amount is $8,276.23.";
        for said in ["8276.24", "8", "276.23", "$8,276", "82762.3", ""] {
            let (ok, why) = &sim_judge(&agent(said), &[a.to_string()])[0];
            assert!(!ok, "{said}");
            assert!(why.contains("$8,276.23"), "{why}");
        }
        assert!(!met("order #W866588 is cancelled", "Order #W8665881."));
        // A number inside a longer number or an id is not the amount.
        assert!(!met("item 1854.04 and gift_card_54", "a refund of $54.04"));
        // No number or code: nothing to check, met.
        assert!(met("", "Agent should apologise."));
    }

    #[test]
    fn numbers_parse_to_one_canonical_value() {
        assert_eq!(number("$8,276.23").as_deref(), Some("8276.23"));
        assert_eq!(number("0180.10").as_deref(), Some("180.1"));
        assert_eq!(number("€12").as_deref(), Some("12"));
        assert_eq!(number("50%").as_deref(), Some("50"));
        assert_eq!(number("0.50").as_deref(), Some("0.5"));
        for code in [
            "2024-05-15",
            "#W8665881",
            "1,23",
            "12,3456",
            "$1$2",
            "1.2.3",
            "gift_card_1",
        ] {
            assert_eq!(number(code), None, "{code}");
        }
    }
}
