//! The sim verifier's judgement of one pending call from the prerequisites file and the
//! checklist: a requirement no input the verifier holds states is unknown to it (unchecked);
//! one it knows of but whose evidence lives in an input it is not given is NOT MET, as a
//! verifier with those inputs would judge it — no evidence of a confirmation is not a
//! confirmation — and listed as unseen.

use super::evidence::{CONFIRM_REMEDY, CallRecord, call_records, confirmation, succeeded};
use super::grounding::{
    PolicyFacts, Prerequisite, Sources, is_confirmation_item, is_identity_item,
};
use super::inputs::{Input, Inputs};
use super::{SimEvaluation, SimRequirement, SimVerifier};
use crate::policyguard::checklist::{RequirementType, ToolChecklist};
use crate::policyguard::history::{locate_pending, strip_dialogue};
use crate::policyguard::prerequisites::ToolPrerequisites;
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

/// One pending call under judgement: what the verifier sees of it and the prerequisites its
/// tool has.
struct Case<'a> {
    inputs: Inputs,
    call: &'a ToolCall,
    view: &'a [Message],
    records: Vec<CallRecord<'a>>,
    pending: Option<(usize, usize)>,
    sources: Sources<'a>,
    prereq: ToolPrerequisites,
    mutating: &'a dyn Fn(&str) -> bool,
}

/// Evidence the tool trace holds.
const TRACE: &[Input] = &[Input::ToolTrace];
/// Evidence the dialogue and the tool trace hold together.
const DIALOGUE: &[Input] = &[Input::Dialogue, Input::ToolTrace];

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
        let mut eval = SimEvaluation::default();
        let prereq = self.prerequisites.tools.get(&call.name);
        eval.no_prerequisites = prereq.is_none();
        let case = Case {
            inputs,
            call,
            view,
            records,
            pending,
            sources,
            prereq: prereq.cloned().unwrap_or_default(),
            mutating,
        };
        case.identity(&mut eval);
        case.required_reads(&mut eval);
        case.argument_links(&mut eval);
        if case.prereq.confirmation {
            let by = case.sources.prerequisite(Prerequisite::Confirmation);
            case.user_confirmation(&mut eval, "user_confirmation", by, true);
        }
        // The checklist's own items (advisory), when the checklist is given.
        if let Some(cl) = case.sources.checklist {
            case.checklist_items(&mut eval, cl);
            self.map_constraints(&mut eval, call, cl);
        }
        eval
    }

    /// The checklist's constraints: those an argument rule implements are mapped to it, the
    /// rest stay unchecked.
    fn map_constraints(&self, eval: &mut SimEvaluation, call: &ToolCall, cl: &ToolChecklist) {
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
    }
}

impl Case<'_> {
    /// Whether `tool` returned successfully earlier in the trace.
    fn ok(&self, tool: &str) -> bool {
        succeeded(&self.records, tool).next().is_some()
    }

    /// The identity check: one of the identity reads succeeded.
    fn identity(&self, eval: &mut SimEvaluation) {
        let reads = &self.prereq.identity_reads;
        if reads.is_empty() {
            return;
        }
        let by = self.sources.prerequisite(Prerequisite::Identity(reads));
        eval.consider(
            self.inputs,
            "identity_verified",
            by,
            Inputs::of(TRACE),
            true,
            || {
                let remedy = format!("verify the user's identity with {}", reads.join(" or "));
                match reads.iter().find(|r| self.ok(r)) {
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

    /// The reads that must have succeeded: each of `required_reads`, and one of each group
    /// of `required_any_reads`.
    fn required_reads(&self, eval: &mut SimEvaluation) {
        let trace = Inputs::of(TRACE);
        for read in &self.prereq.required_reads {
            let by = self.sources.prerequisite(Prerequisite::Read(read));
            eval.consider(
                self.inputs,
                &format!("read_{read}"),
                by,
                trace,
                true,
                || {
                    let remedy = format!("look up {read}");
                    if self.ok(read) {
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
        for group in &self.prereq.required_any_reads {
            let name = format!("read_any_{}", group.join("_or_"));
            let by = self.sources.prerequisite(Prerequisite::ReadAny(group));
            eval.consider(self.inputs, &name, by, trace, true, || {
                let remedy = format!("look up {}", group.join(" or "));
                match group.iter().find(|r| self.ok(r)) {
                    Some(r) => (true, format!("{r} returned successfully earlier"), remedy),
                    None => (
                        false,
                        format!("none of {} succeeded before this call", group.join(", ")),
                        remedy,
                    ),
                }
            });
        }
    }

    /// Argument links: the call's argument was looked up by a successful read.
    fn argument_links(&self, eval: &mut SimEvaluation) {
        for link in &self.prereq.argument_links {
            let name = format!("argument_link_{}", link.argument);
            let by = self.sources.prerequisite(Prerequisite::Link(&link.read));
            eval.consider(self.inputs, &name, by, Inputs::of(TRACE), true, || {
                let Some(value) = self.call.arguments.get(&link.argument) else {
                    return (
                        true,
                        format!("the call has no `{}` argument to check", link.argument),
                        String::new(),
                    );
                };
                let shown = value_text(value);
                let linked = succeeded(&self.records, &link.read)
                    .any(|r| r.call.arguments.get(&link.read_argument) == Some(value));
                let what = format!("{} for {} `{shown}`", link.read, link.read_argument);
                let remedy = format!("look up {what}");
                if linked {
                    (true, format!("{what} was looked up"), remedy)
                } else {
                    (false, format!("no successful {what}"), remedy)
                }
            });
        }
    }

    /// The user's confirmation of the call, as the prerequisite (`user_confirmation`, hard)
    /// or as a checklist item.
    fn user_confirmation(&self, eval: &mut SimEvaluation, name: &str, by: Inputs, hard: bool) {
        eval.consider(self.inputs, name, by, Inputs::of(DIALOGUE), hard, || {
            let (met, reason) = confirmation(self.view, &self.records, self.pending, self.mutating);
            (met, reason, CONFIRM_REMEDY.to_string())
        });
    }

    /// The checklist's requirements: confirmations and identity map to the prerequisites
    /// when those exist, data requirements are checked on the trace, the rest stay
    /// unchecked.
    fn checklist_items(&self, eval: &mut SimEvaluation, cl: &ToolChecklist) {
        let checklist = Inputs::of(&[Input::Checklist]);
        for item in &cl.requirements {
            if is_confirmation_item(&item.name) {
                if self.prereq.confirmation {
                    eval.mapped
                        .push(format!("{} -> user_confirmation", item.name));
                } else {
                    self.user_confirmation(eval, &item.name, checklist, false);
                }
            } else if is_identity_item(&item.name) && !self.prereq.identity_reads.is_empty() {
                eval.mapped
                    .push(format!("{} -> identity_verified", item.name));
            } else if item.kind == RequirementType::Data && item.tool.is_some() {
                let tools: Vec<&str> = item.proving_tools().collect();
                eval.consider(
                    self.inputs,
                    &item.name,
                    checklist,
                    Inputs::of(TRACE),
                    false,
                    || {
                        let hit = tools.iter().find(|t| self.ok(t));
                        let reason = match hit {
                            Some(t) => format!("{t} returned successfully earlier"),
                            None => format!("no successful {} before this call", tools.join(" / ")),
                        };
                        let remedy = format!("look up {} ({})", tools.join(" or "), item.name);
                        (hit.is_some(), reason, remedy)
                    },
                );
            } else {
                eval.unchecked.push(format!(
                    "{}: a dialogue predicate the rules cannot evaluate",
                    item.name
                ));
            }
        }
    }
}
