//! The offline stand-in for the PolicyGuard verifier family: a deterministic, rule-based judge
//! of a pending mutating call, so every `pg-*` configuration runs without a key.
//!
//! **Inputs decide, nothing else.** A variant is turned into the set of inputs the paper gives
//! it once, in [`Inputs::of_variant`] (the raw policy text, the tool's checklist, the general
//! rules, the dialogue, the tool calls and results); every judgement after that reads the
//! [`Inputs`] only, and judges as a verifier with those inputs would:
//! - a requirement no input the verifier holds *states* is unknown to it: listed in
//!   `Decision.info.unchecked` with the reason, never judged;
//! - a requirement an input states but whose *evidence* lives in an input not given is
//!   **NOT MET** — no evidence of a confirmation is not a confirmation — and listed in
//!   `Decision.info.unseen`; it blocks wherever the verdict depends on it (a hard requirement,
//!   or any in strict mode). So `pg-raw-traj`, which reads the policy but not the dialogue,
//!   blocks every call the policy wants confirmed;
//! - otherwise it is judged from the evidence.
//!
//! `Decision.info` also carries `inputs` and `checked` (the number of requirements judged,
//! unseen ones included). What the stand-in cannot judge although its inputs could (dialogue
//! predicates other than confirmation, checklist constraints no argument rule implements) is
//! a limit of the stand-in, not of the inputs: it stays unchecked. No PolicyGuard variant is
//! given the ToolGuard rule set unless its configuration adds it (`hybrid`,
//! [`crate::factory`]); [`SimVerifier::with_constraints`] is how one does.
//!
//! | requirement (source of the rule)         | stated by                                   | evidence               |
//! |------------------------------------------|---------------------------------------------|------------------------|
//! | `identity_verified` (prerequisites)      | policy¹; checklist identity item or data item proving an identity read; general rule on identity | tool trace |
//! | `read_<tool>`, `read_any_<a>_or_<b>`     | policy¹; checklist data item proving the read | tool trace           |
//! | `argument_link_<arg>`                    | policy¹; checklist data item proving the read | tool trace           |
//! | `user_confirmation`                      | policy¹ that asks for confirmations; checklist `*confirm*` item; general rule on confirmation | dialogue + tool trace |
//! | argument rule (ToolGuard rule set)       | policy² ; checklist constraint of the same name or quoting the rule's passage | tool trace |
//! | checklist data item (advisory)           | checklist                                   | tool trace             |
//! | checklist `*confirm*` item (advisory, when the prerequisites have none) | checklist    | dialogue + tool trace  |
//! | other checklist procedural items, constraints no rule implements | —                  | unchecked always       |
//!
//! ¹ the tool's passage in `tasks/<domain>/prerequisites.toml` occurs in the policy text;
//! ² the rule's `policy:` passage occurs in it ([`grounding`] says how passages match).
//!
//! Requirements of the prerequisites file and argument rules are **hard** (any NOT MET
//! blocks); the checklist's own items are **advisory** (reported; they block only in strict
//! mode). Remediations name the requirement ids and the tools to call, so an agent (the sim
//! agent included) can repair exactly what was named.
//!
//! Layout: [`inputs`] (the input sets and the one variant mapping), [`grounding`] (which
//! inputs state a requirement), [`evidence`] (reads and confirmations in a history), `judge`
//! (the judgement).

pub(crate) mod evidence;
pub(crate) mod grounding;
pub(crate) mod inputs;
mod judge;

pub(crate) use grounding::{PolicyFacts, RuleSources};
pub use inputs::{Input, Inputs};

use super::Variant;
use super::checklist::DomainChecklists;
use super::prerequisites::Prerequisites;
use crate::seam::{Decision, Guard, GuardContext, Ruling};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tauguard_core::record::{RequirementResult, RoleUsage, Verdict};
use tauguard_core::{Message, Requestor, ToolCall};
use tauguard_llm::SIM_PROVIDER;

/// One judged requirement of the sim verifier.
#[derive(Debug, Clone, PartialEq)]
pub struct SimRequirement {
    pub result: RequirementResult,
    /// Hard requirements block in every mode; advisory ones only in strict mode.
    pub hard: bool,
    /// What the agent should do when it is NOT MET.
    pub remedy: String,
}

/// The sim verifier's judgement of one pending call, before the verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimEvaluation {
    /// The requirements checked.
    pub requirements: Vec<SimRequirement>,
    /// Requirements left unchecked, each with why (`name: stated by no input given`, ...).
    pub unchecked: Vec<String>,
    /// Requirements judged NOT MET because their evidence lives in an input not given.
    pub unseen: Vec<String>,
    /// Checklist items judged through a requirement of the same meaning (`item -> rule`).
    pub mapped: Vec<String>,
    /// The tool has no entry in the prerequisites file.
    pub no_prerequisites: bool,
}

/// The offline, rule-based PolicyGuard verifier.
pub struct SimVerifier {
    name: String,
    /// The variant's name, a label for records only.
    label: &'static str,
    inputs: Inputs,
    strict: bool,
    prerequisites: Prerequisites,
    checklists: DomainChecklists,
    constraints: Option<Arc<dyn Guard>>,
    rule_sources: RuleSources,
    /// What the policy text given at construction states; `None` = read the context's.
    policy: Option<PolicyFacts>,
}

impl std::fmt::Debug for SimVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimVerifier")
            .field("name", &self.name)
            .field("inputs", &self.inputs.names())
            .field("domain", &self.prerequisites.domain)
            .field(
                "constraints",
                &self.constraints.as_ref().map(|g| g.name().to_string()),
            )
            .finish_non_exhaustive()
    }
}

impl SimVerifier {
    pub fn new(
        variant: Variant,
        strict: bool,
        prerequisites: Prerequisites,
        checklists: DomainChecklists,
    ) -> SimVerifier {
        let strict = strict && variant.supports_strict();
        SimVerifier {
            name: variant.config_name(strict),
            label: variant.as_str(),
            inputs: Inputs::of_variant(variant),
            strict,
            prerequisites,
            checklists,
            constraints: None,
            rule_sources: RuleSources::default(),
            policy: None,
        }
    }

    /// Replaces the inputs (input ablations beyond the paper's variants; tests).
    pub fn with_inputs(mut self, inputs: Inputs) -> SimVerifier {
        self.inputs = inputs;
        self
    }

    /// The raw policy text this verifier reads (else the one in each call's context).
    pub fn with_policy(mut self, policy: &str) -> SimVerifier {
        self.policy = Some(PolicyFacts::read(
            policy,
            &self.prerequisites,
            &self.rule_sources,
        ));
        self
    }

    /// Adds argument rules (e.g. the ToolGuard rule set) with the passage each cites; a rule
    /// becomes a hard requirement wherever an input states it. Call before [`Self::with_policy`].
    pub fn with_constraints(
        mut self,
        constraints: Arc<dyn Guard>,
        sources: RuleSources,
    ) -> SimVerifier {
        self.constraints = Some(constraints);
        self.rule_sources = sources;
        self
    }

    pub fn inputs(&self) -> Inputs {
        self.inputs
    }

    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Judges a pending call over `history` (the agent's view, up to and including the message
    /// carrying the call) with the policy text given by [`Self::with_policy`], if any.
    /// `mutating(tool)` says whether an agent tool changes state.
    pub fn evaluate(
        &self,
        history: &[Message],
        call: &ToolCall,
        mutating: &dyn Fn(&str) -> bool,
    ) -> SimEvaluation {
        self.evaluate_with(self.policy.as_ref(), history, call, mutating)
    }

    /// The verdict and remediation from an evaluation.
    pub fn decide(&self, call: &ToolCall, eval: SimEvaluation) -> Decision {
        let blocking: Vec<&SimRequirement> = eval
            .requirements
            .iter()
            .filter(|r| !r.result.met && (r.hard || self.strict))
            .collect();
        let advisory: Vec<&str> = eval
            .requirements
            .iter()
            .filter(|r| !r.result.met && !r.hard && !self.strict)
            .map(|r| r.result.name.as_str())
            .collect();
        let mut info = Map::new();
        info.insert("verifier".into(), json!(SIM_PROVIDER));
        info.insert("variant".into(), json!(self.label));
        info.insert("strict".into(), json!(self.strict));
        info.insert("inputs".into(), json!(self.inputs.names()));
        info.insert("checked".into(), json!(eval.requirements.len()));
        if !advisory.is_empty() {
            info.insert("advisory_not_met".into(), json!(advisory));
        }
        if !eval.unchecked.is_empty() {
            info.insert("unchecked".into(), json!(eval.unchecked));
        }
        if !eval.unseen.is_empty() {
            info.insert("unseen".into(), json!(eval.unseen));
        }
        if !eval.mapped.is_empty() {
            info.insert("mapped".into(), json!(eval.mapped));
        }
        if eval.no_prerequisites {
            info.insert("no_prerequisites".into(), json!(true));
        }
        let remediation = (!blocking.is_empty()).then(|| remediation(&call.name, &blocking));
        let requirements = eval.requirements.iter().map(|r| r.result.clone()).collect();
        Decision {
            verdict: if blocking.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Block
            },
            requirements,
            remediation,
            usage: RoleUsage::default(),
            info: Some(Value::Object(info)),
            guide: None,
            fail: None,
        }
    }
}

/// 1–3 sentences naming the requirement ids that are not met and what to do, so an agent can
/// repair exactly those.
fn remediation(tool: &str, blocking: &[&SimRequirement]) -> String {
    let names: Vec<&str> = blocking.iter().map(|r| r.result.name.as_str()).collect();
    let mut remedies: Vec<&str> = Vec::new();
    for r in blocking {
        if !r.remedy.is_empty() && !remedies.contains(&r.remedy.as_str()) {
            remedies.push(&r.remedy);
        }
    }
    let mut text = format!(
        "The call `{tool}` was blocked because these requirements are not met: {}.",
        names.join(", ")
    );
    if !remedies.is_empty() {
        let mut first = remedies
            .iter()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join("; ");
        if remedies.len() > 3 {
            first.push_str("; and the rest listed above");
        }
        text.push_str(&format!(" First {first}."));
    }
    text.push_str(" Then retry the call.");
    text
}

impl Guard for SimVerifier {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(async move {
            if call.requestor == Requestor::User {
                let mut d = Decision::pass(Vec::new());
                d.info = Some(
                    json!({"verifier": SIM_PROVIDER, "variant": self.label, "user_device_call": true}),
                );
                return Ok(d);
            }
            let mutating = |name: &str| match ctx.env.tool_kind(Requestor::Assistant, name) {
                Some(k) => k.mutates_state(),
                None => self.prerequisites.tools.contains_key(name),
            };
            let from_context;
            let policy = match &self.policy {
                Some(p) => p,
                None => {
                    from_context =
                        PolicyFacts::read(ctx.policy, &self.prerequisites, &self.rule_sources);
                    &from_context
                }
            };
            let mut eval = self.evaluate_with(Some(policy), ctx.history, call, &mutating);
            let mut usage = RoleUsage::default();
            let mut constraint_name = None;
            if let Some(guard) = &self.constraints {
                let d = guard.on_mutating_call(ctx, call).await?;
                constraint_name = Some(guard.name().to_string());
                usage = d.usage.clone();
                self.add_rule_results(&mut eval, policy, call, d, guard.name());
            }
            let mut decision = self.decide(call, eval);
            decision.usage = usage;
            if let (Some(name), Some(Value::Object(info))) =
                (constraint_name, decision.info.as_mut())
            {
                info.insert("constraints".into(), json!(name));
            }
            Ok(decision)
        })
    }
}

impl SimVerifier {
    /// Adds the argument rules' results the inputs state as hard requirements; the rest are
    /// unchecked.
    fn add_rule_results(
        &self,
        eval: &mut SimEvaluation,
        policy: &PolicyFacts,
        call: &ToolCall,
        d: Decision,
        guard: &str,
    ) {
        let inputs = self.inputs;
        let sources = grounding::Sources {
            tool: &call.name,
            policy: Some(policy).filter(|_| inputs.has(Input::Policy)),
            checklist: self
                .checklists
                .get(&call.name)
                .filter(|_| inputs.has(Input::Checklist)),
            general: &[],
        };
        let known = self.rule_sources.tools.get(&call.name);
        let trace = Inputs::of(&[Input::ToolTrace]);
        let mut any_stated = false;
        let any_not_met = d.requirements.iter().any(|r| !r.met);
        for r in d.requirements {
            let stated_by = match known.and_then(|k| k.get(&r.name)) {
                Some(passage) => sources.rule(&r.name, passage.as_deref()),
                None => Inputs::NONE,
            };
            any_stated |= inputs.intersects(stated_by);
            let name = r.name.clone();
            eval.consider(inputs, &name, stated_by, trace, true, || {
                let remedy = if r.met {
                    String::new()
                } else {
                    format!("satisfy the rule {}", r.name)
                };
                (r.met, r.reason, remedy)
            });
        }
        let stated_any_rule = known.is_some_and(|k| {
            k.iter()
                .any(|(n, p)| inputs.intersects(sources.rule(n, p.as_deref())))
        });
        if d.verdict == Verdict::Block && !any_not_met && (any_stated || stated_any_rule) {
            let reason = d
                .remediation
                .clone()
                .unwrap_or_else(|| format!("{guard} blocked the call"));
            eval.consider(inputs, "constraints", inputs, trace, true, || {
                (false, reason.clone(), reason)
            });
        }
    }
}
