//! Which of a verifier's rule sources state a requirement. A requirement can be checked only
//! when some input the verifier is given states it: the raw policy text (the tool's
//! prerequisite passage, or a rule's cited passage, occurs in it), the tool's checklist (an
//! item or constraint that names it), or the general rules (a cross-tool rule about it).
//!
//! "Occurs in" is passage matching on normalised text (lowercase, words only): a passage is
//! stated by a text when one of its [`WINDOW`]-word runs, or the whole passage when shorter,
//! is in the text. The prerequisites file and the rule files quote the policy, so the real
//! policy states their passages; a different or missing policy text states none of them.

use super::inputs::{Input, Inputs};
use crate::policyguard::checklist::{GeneralRule, RequirementType, ToolChecklist};
use crate::policyguard::prerequisites::Prerequisites;
use crate::toolguard::RuleSet;
use std::collections::{BTreeMap, BTreeSet};

/// Words in a run that must occur together for a passage to count as stated.
pub(crate) const WINDOW: usize = 6;

/// Lowercased words joined by single spaces, padded with a space on each side.
fn normalise(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", words.join(" "))
}

/// Whether `text` (normalised) states `passage`.
fn states(text: &str, passage: &str) -> bool {
    let words: Vec<&str> = passage
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return false;
    }
    let n = WINDOW.min(words.len());
    words.windows(n).any(|w| {
        let run = format!(" {} ", w.join(" ").to_lowercase());
        text.contains(&run)
    })
}

/// The argument rules (a ToolGuard rule set) as the sim verifier knows them: per tool, each
/// rule's name and the policy passage it cites (if any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSources {
    pub tools: BTreeMap<String, BTreeMap<String, Option<String>>>,
}

impl RuleSources {
    pub fn of_rule_set(rules: &RuleSet) -> RuleSources {
        RuleSources {
            tools: rules
                .tools()
                .map(|t| {
                    let rules = t
                        .rules
                        .iter()
                        .map(|r| (r.name.clone(), r.policy.clone()))
                        .collect();
                    (t.tool.clone(), rules)
                })
                .collect(),
        }
    }
}

/// What a raw policy text states, worked out once per text: the tools whose prerequisite
/// passage it contains, the `(tool, rule)` pairs whose cited passage it contains, and whether
/// it asks for confirmations at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PolicyFacts {
    tools: BTreeSet<String>,
    rules: BTreeSet<(String, String)>,
    confirmation: bool,
}

impl PolicyFacts {
    pub(crate) fn read(
        policy: &str,
        prerequisites: &Prerequisites,
        rules: &RuleSources,
    ) -> PolicyFacts {
        let text = normalise(policy);
        let tools = prerequisites
            .tools
            .iter()
            .filter(|(_, p)| p.policy.as_deref().is_some_and(|q| states(&text, q)))
            .map(|(t, _)| t.clone())
            .collect();
        let rules = rules
            .tools
            .iter()
            .flat_map(|(t, rs)| rs.iter().map(move |(r, q)| (t, r, q)))
            .filter(|(_, _, q)| q.as_deref().is_some_and(|q| states(&text, q)))
            .map(|(t, r, _)| (t.clone(), r.clone()))
            .collect();
        PolicyFacts {
            tools,
            rules,
            confirmation: text.contains(" confirm") || text.contains(" confirmation "),
        }
    }
}

/// A requirement of the prerequisites file, by what it is about.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Prerequisite<'a> {
    Identity(&'a [String]),
    Read(&'a str),
    ReadAny(&'a [String]),
    /// An argument link to this read.
    Link(&'a str),
    Confirmation,
}

/// The rule sources a verifier holds for one pending call.
pub(crate) struct Sources<'a> {
    pub tool: &'a str,
    /// `None` when the verifier is not given the policy text.
    pub policy: Option<&'a PolicyFacts>,
    /// `None` when the verifier is not given the checklist (or the tool has none).
    pub checklist: Option<&'a ToolChecklist>,
    /// Empty when the verifier is not given the general rules.
    pub general: &'a [GeneralRule],
}

fn identity_words(text: &str) -> bool {
    let t = text.to_lowercase();
    [
        "identity",
        "authenticat",
        "identify",
        "user id",
        "user_id",
        "verify_user",
        "customer_lookup",
    ]
    .iter()
    .any(|c| t.contains(c))
}

/// A checklist item name that means "explicit confirmation".
pub(crate) fn is_confirmation_item(name: &str) -> bool {
    name.to_lowercase().contains("confirm")
}

/// A checklist item name that means "identity verified".
pub(crate) fn is_identity_item(name: &str) -> bool {
    identity_words(name)
}

impl Sources<'_> {
    /// The inputs that state prerequisite `p` of this tool.
    pub(crate) fn prerequisite(&self, p: Prerequisite<'_>) -> Inputs {
        let mut by = Inputs::NONE;
        if let Some(f) = self.policy
            && f.tools.contains(self.tool)
            && (!matches!(p, Prerequisite::Confirmation) || f.confirmation)
        {
            by = by.with(Input::Policy);
        }
        let proves = |tools: &[&str]| {
            self.checklist.is_some_and(|c| {
                c.requirements.iter().any(|r| {
                    r.kind == RequirementType::Data && r.proving_tools().any(|t| tools.contains(&t))
                })
            })
        };
        let (in_checklist, in_general) = match p {
            Prerequisite::Identity(reads) => {
                let reads: Vec<&str> = reads.iter().map(String::as_str).collect();
                (
                    proves(&reads)
                        || self.checklist.is_some_and(|c| {
                            c.requirements.iter().any(|r| is_identity_item(&r.name))
                        }),
                    self.general
                        .iter()
                        .any(|g| identity_words(&g.name) || identity_words(&g.rule)),
                )
            }
            Prerequisite::Read(t) | Prerequisite::Link(t) => (proves(&[t]), false),
            Prerequisite::ReadAny(group) => {
                let group: Vec<&str> = group.iter().map(String::as_str).collect();
                (proves(&group), false)
            }
            Prerequisite::Confirmation => (
                self.checklist
                    .is_some_and(|c| c.requirements.iter().any(|r| is_confirmation_item(&r.name))),
                self.general.iter().any(|g| {
                    is_confirmation_item(&g.name) || g.rule.to_lowercase().contains("confirm")
                }),
            ),
        };
        if in_checklist {
            by = by.with(Input::Checklist);
        }
        if in_general {
            by = by.with(Input::GeneralRules);
        }
        by
    }

    /// The inputs that state argument rule `rule` (citing `passage`) of this tool.
    pub(crate) fn rule(&self, rule: &str, passage: Option<&str>) -> Inputs {
        let mut by = Inputs::NONE;
        if self
            .policy
            .is_some_and(|f| f.rules.contains(&(self.tool.to_string(), rule.to_string())))
        {
            by = by.with(Input::Policy);
        }
        if let Some(c) = self.checklist {
            let named = c.constraints.iter().any(|k| k.name == rule);
            let quoted = passage.is_some_and(|q| {
                c.constraints.iter().any(|k| {
                    let text = normalise(&format!(
                        "{} {}",
                        k.rule,
                        k.hint.as_deref().unwrap_or_default()
                    ));
                    states(&text, q)
                })
            });
            if named || quoted {
                by = by.with(Input::Checklist);
            }
        }
        by
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_match_on_word_runs() {
        let text =
            normalise("Before taking any actions that UPDATE the booking database, you must...");
        assert!(states(
            &text,
            "'taking any actions that update the booking' (general rule)"
        ));
        assert!(!states(&text, "taking any actions that delete the booking"));
        assert!(states(&text, "booking database"));
        assert!(!states(&text, ""));
    }
}
