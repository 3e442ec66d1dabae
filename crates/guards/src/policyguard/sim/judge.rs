//! The sim verifier's judgement of one pending call from the prerequisites file and the
//! checklist: a requirement no input the verifier holds states is unknown to it (unchecked);
//! one it knows of but whose evidence lives in an input it is not given is NOT MET, as a
//! verifier with those inputs would judge it — no evidence of a confirmation is not a
//! confirmation — and listed as unseen.

use super::evidence::{CONFIRM_REMEDY, call_records, confirmation, succeeded};
use super::grounding::{
    PolicyFacts, Prerequisite, Sources, is_confirmation_item, is_identity_item,
};
use super::inputs::{Input, Inputs};
use super::{SimEvaluation, SimRequirement, SimVerifier};
use crate::policyguard::checklist::RequirementType;
use crate::policyguard::history::{locate_pending, strip_dialogue};
use serde_json::Value;
use tauguard_core::record::RequirementResult;
use tauguard_core::{Message, ToolCall};

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl SimEvaluation {
    /// Checks requirement `name` when an input the verifier holds states it (`stated_by`):
    /// with every input its evidence needs given, `judge` gives `(met, reason, remedy)`;
    /// without, it is NOT MET (the verifier sees no evidence) and recorded as unseen. A
    /// requirement no input states stays unchecked.
    pub(crate) fn consider(
        &mut self,
        inputs: Inputs,
        name: &str,
        stated_by: Inputs,
        evidence: Inputs,
        hard: bool,
        judge: impl FnOnce() -> (bool, String, String),
    ) {
        if !inputs.intersects(stated_by) {
            self.unchecked
                .push(format!("{name}: stated by no input given"));
            return;
        }
        let (met, reason, remedy) = if inputs.contains(evidence) {
            judge()
        } else {
            let missing: Vec<&str> = evidence
                .iter()
                .filter(|i| !inputs.has(*i))
                .map(Input::as_str)
                .collect();
            self.unseen.push(name.to_string());
            let (_, _, remedy) = judge();
            (
                false,
                format!(
                    "no evidence: it would show in the {}, which this verifier is not given",
                    missing.join(", ")
                ),
                remedy,
            )
        };
        self.requirements.push(SimRequirement {
            result: RequirementResult {
                name: name.to_string(),
                met,
                reason,
            },
            hard,
            remedy,
        });
    }
}

impl SimVerifier {
    /// The judgement of `call` over `history` given what `policy` states (`None` when no
    /// policy text is at hand).
    pub(crate) fn evaluate_with(
        &self,
        policy: Option<&PolicyFacts>,
        history: &[Message],
        call: &ToolCall,
        mutating: &dyn Fn(&str) -> bool,
    ) -> SimEvaluation {
        let inputs = self.inputs;
        let stripped;
        let view: &[Message] = if inputs.has(Input::Dialogue) {
            history
        } else {
            stripped = strip_dialogue(history);
            &stripped
        };
        let pending = locate_pending(view, call);
        let records = if inputs.has(Input::ToolTrace) {
            call_records(view, pending)
        } else {
            Vec::new()
        };
        let sources = Sources {
            tool: &call.name,
            policy: policy.filter(|_| inputs.has(Input::Policy)),
            checklist: self
                .checklists
                .get(&call.name)
                .filter(|_| inputs.has(Input::Checklist)),
            general: if inputs.has(Input::GeneralRules) {
                &self.checklists.general
            } else {
                &[]
            },
        };
        let trace = Inputs::of(&[Input::ToolTrace]);
        let dialogue = Inputs::of(&[Input::Dialogue, Input::ToolTrace]);
        let mut eval = SimEvaluation::default();
        let prereq = self.prerequisites.tools.get(&call.name);
        eval.no_prerequisites = prereq.is_none();
        let prereq = prereq.cloned().unwrap_or_default();
        let ok = |tool: &str| succeeded(&records, tool).next().is_some();

        if !prereq.identity_reads.is_empty() {
            let reads = &prereq.identity_reads;
            eval.consider(
                inputs,
                "identity_verified",
                sources.prerequisite(Prerequisite::Identity(reads)),
                trace,
                true,
                || {
                    let remedy = format!("verify the user's identity with {}", reads.join(" or "));
                    match reads.iter().find(|r| ok(r)) {
                        Some(r) => (true, format!("{r} returned successfully earlier"), remedy),
                        None => (
                            false,
                            format!(
                                "the user's identity was not verified ({} never succeeded)",
                                reads.join(" / ")
                            ),
                            remedy,
                        ),
                    }
                },
            );
        }
        for read in &prereq.required_reads {
            eval.consider(
                inputs,
                &format!("read_{read}"),
                sources.prerequisite(Prerequisite::Read(read)),
                trace,
                true,
                || {
                    let remedy = format!("look up {read}");
                    if ok(read) {
                        (
                            true,
                            format!("{read} returned successfully earlier"),
                            remedy,
                        )
                    } else {
                        (
                            false,
                            format!("no successful {read} before this call"),
                            remedy,
                        )
                    }
                },
            );
        }
        for group in &prereq.required_any_reads {
            eval.consider(
                inputs,
                &format!("read_any_{}", group.join("_or_")),
                sources.prerequisite(Prerequisite::ReadAny(group)),
                trace,
                true,
                || {
                    let remedy = format!("look up {}", group.join(" or "));
                    match group.iter().find(|r| ok(r)) {
                        Some(r) => (true, format!("{r} returned successfully earlier"), remedy),
                        None => (
                            false,
                            format!("none of {} succeeded before this call", group.join(", ")),
                            remedy,
                        ),
                    }
                },
            );
        }
        for link in &prereq.argument_links {
            eval.consider(
                inputs,
                &format!("argument_link_{}", link.argument),
                sources.prerequisite(Prerequisite::Link(&link.read)),
                trace,
                true,
                || {
                    let Some(value) = call.arguments.get(&link.argument) else {
                        return (
                            true,
                            format!("the call has no `{}` argument to check", link.argument),
                            String::new(),
                        );
                    };
                    let shown = value_text(value);
                    let linked = succeeded(&records, &link.read)
                        .any(|r| r.call.arguments.get(&link.read_argument) == Some(value));
                    let what = format!("{} for {} `{shown}`", link.read, link.read_argument);
                    let remedy = format!("look up {what}");
                    if linked {
                        (true, format!("{what} was looked up"), remedy)
                    } else {
                        (false, format!("no successful {what}"), remedy)
                    }
                },
            );
        }
        let confirmed = || {
            let (met, reason) = confirmation(view, &records, pending, mutating);
            (met, reason, CONFIRM_REMEDY.to_string())
        };
        if prereq.confirmation {
            eval.consider(
                inputs,
                "user_confirmation",
                sources.prerequisite(Prerequisite::Confirmation),
                dialogue,
                true,
                confirmed,
            );
        }

        // The checklist's own items (advisory), when the checklist is given.
        let Some(cl) = sources.checklist else {
            return eval;
        };
        let checklist = Inputs::of(&[Input::Checklist]);
        for item in &cl.requirements {
            if is_confirmation_item(&item.name) {
                if prereq.confirmation {
                    eval.mapped
                        .push(format!("{} -> user_confirmation", item.name));
                } else {
                    eval.consider(inputs, &item.name, checklist, dialogue, false, confirmed);
                }
            } else if is_identity_item(&item.name) && !prereq.identity_reads.is_empty() {
                eval.mapped
                    .push(format!("{} -> identity_verified", item.name));
            } else if item.kind == RequirementType::Data && item.tool.is_some() {
                let tools: Vec<&str> = item.proving_tools().collect();
                eval.consider(inputs, &item.name, checklist, trace, false, || {
                    let hit = tools.iter().find(|t| ok(t));
                    let reason = match hit {
                        Some(t) => format!("{t} returned successfully earlier"),
                        None => format!("no successful {} before this call", tools.join(" / ")),
                    };
                    let remedy = format!("look up {} ({})", tools.join(" or "), item.name);
                    (hit.is_some(), reason, remedy)
                });
            } else {
                eval.unchecked.push(format!(
                    "{}: a dialogue predicate the rules cannot evaluate",
                    item.name
                ));
            }
        }
        let rules = self.rule_sources.tools.get(&call.name);
        for c in &cl.constraints {
            if rules.is_some_and(|r| r.contains_key(&c.name)) {
                eval.mapped.push(format!("{} -> rule {}", c.name, c.name));
            } else {
                eval.unchecked.push(format!(
                    "constraint:{}: no argument rule implements it",
                    c.name
                ));
            }
        }
        eval
    }
}
