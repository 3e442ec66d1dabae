//! The LLM PolicyGuard verifier: one completion per mutating call, one repair retry, then the
//! configured fail mode. A verifier model that cannot answer (after the HTTP retries) also
//! gets the fail-mode decision, its error in `info.model_error`; only a fatal error
//! (credentials, unknown model) is returned as a [`GuardError`]. A fail-mode decision says
//! so and why ([`Decision::fail`]) and keeps each failed attempt ([`super::failure`]);
//! `info.repaired` is true only when the repair turn's reply parsed.

use super::checklist::DomainChecklists;
use super::exchange::{Asker, Exchanged};
use super::guard_prompts::GuardPrompts;
use super::history::{compact_arguments, format_history};
use super::parse::{VerifierReply, parse_reply};
use super::prompt::{ChecklistView, PrefixVars, RequestVars, TEMPLATES};
use super::templates::TemplateError;
use super::{
    FailMode, PolicyGuardError, PolicyGuardSetup, Sampling, Variant, synthesise_remediation,
};
use crate::seam::{Decision, Guard, GuardContext, ModelPrompt, Ruling};
use serde_json::{Value, json};
use std::sync::Arc;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::record::{FailCause, RequirementResult, RoleUsage, Verdict};
use tauguard_core::{Message, ToolCall};
use tauguard_llm::ChatModel;

/// Remediation when the verifier could not reach a verdict and fails closed.
pub const FAIL_CLOSED_MESSAGE: &str = "The policy verifier could not reach a verdict on this call, so it was not executed. \
     Make sure the user's identity is verified, the required lookups are done and the user explicitly confirmed \
     this exact action, then retry.";

/// A PolicyGuard verifier backed by a chat model.
pub struct PolicyGuardVerifier {
    name: String,
    variant: Variant,
    strict: bool,
    model: Arc<dyn ChatModel>,
    prompts: GuardPrompts,
    checklists: DomainChecklists,
    domain: String,
    policy: Option<String>,
    sampling: Sampling,
    fail_mode: FailMode,
}

impl std::fmt::Debug for PolicyGuardVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyGuardVerifier")
            .field("name", &self.name)
            .field("model", &self.model.id())
            .field("sampling", &self.sampling)
            .field("fail_mode", &self.fail_mode)
            .finish_non_exhaustive()
    }
}

/// One rendered request: the static prefix and the dynamic part.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPrompt {
    pub prefix: String,
    pub request: String,
}

impl PolicyGuardVerifier {
    /// Loads the templates from `setup.prompts_dir` and checks they render for this config.
    pub fn new(
        variant: Variant,
        strict: bool,
        model: Arc<dyn ChatModel>,
        setup: &PolicyGuardSetup,
    ) -> Result<PolicyGuardVerifier, PolicyGuardError> {
        let prompts = GuardPrompts::load(&setup.prompts_dir.join("verifier"), TEMPLATES)?;
        PolicyGuardVerifier::with_prompts(variant, strict, model, prompts, setup)
    }

    /// Like [`PolicyGuardVerifier::new`] with templates already loaded.
    pub fn with_prompts(
        variant: Variant,
        strict: bool,
        model: Arc<dyn ChatModel>,
        prompts: GuardPrompts,
        setup: &PolicyGuardSetup,
    ) -> Result<PolicyGuardVerifier, PolicyGuardError> {
        if strict && !variant.supports_strict() {
            return Err(PolicyGuardError::StrictWithoutChecklist(
                variant.as_str().into(),
            ));
        }
        if variant.uses_checklist() && setup.checklists.tools.is_empty() {
            return Err(PolicyGuardError::MissingChecklists {
                variant: variant.config_name(strict),
                domain: setup.domain.clone(),
            });
        }
        let v = PolicyGuardVerifier {
            name: variant.config_name(strict),
            variant,
            strict,
            model,
            prompts,
            checklists: setup.checklists.clone(),
            domain: setup.domain.clone(),
            policy: setup.policy.clone(),
            sampling: setup.sampling.clone(),
            fail_mode: setup.fail_mode,
        };
        // Surface template errors at construction, not on the first call.
        let probe = ToolCall {
            id: String::new(),
            name: "probe".into(),
            arguments: Default::default(),
            requestor: Default::default(),
        };
        v.render(v.policy.as_deref().unwrap_or(""), &[], &probe)?;
        v.prompts.render_repair("probe")?;
        Ok(v)
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn strict(&self) -> bool {
        self.strict
    }

    pub fn fail_mode(&self) -> FailMode {
        self.fail_mode
    }

    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// Renders the prompt for a pending call (`policy` is used unless the setup fixed one).
    pub fn render(
        &self,
        policy: &str,
        history: &[Message],
        call: &ToolCall,
    ) -> Result<RenderedPrompt, TemplateError> {
        let policy = self.policy.as_deref().unwrap_or(policy);
        let checklists = self.variant.uses_checklist().then_some(&self.checklists);
        let prefix = self.prompts.render_prefix(&PrefixVars::new(
            &self.domain,
            self.variant.sees_dialogue(),
            self.strict,
            checklists,
            self.variant.uses_policy().then_some(policy),
        ))?;
        let entries = format_history(history, call, self.variant.sees_dialogue());
        let request = self.prompts.render_request(&RequestVars {
            dialogue: self.variant.sees_dialogue(),
            checklist: self.variant.uses_checklist(),
            policy: self.variant.uses_policy(),
            history: &entries,
            tool: &call.name,
            arguments: compact_arguments(&call.arguments),
            tool_checklist: checklists
                .and_then(|c| c.tools.get(&call.name))
                .map(ChecklistView::new),
        })?;
        Ok(RenderedPrompt { prefix, request })
    }

    /// The largest request over an empty conversation: the prefix with the pending call whose
    /// request is longest — for checklist variants, the tool with the longest checklist; for
    /// the others the request holds no tool-specific text but the name, so any call will do.
    pub fn largest_prompt(&self) -> Result<ModelPrompt, TemplateError> {
        let call = |name: &str| ToolCall {
            id: String::new(),
            name: name.into(),
            arguments: Default::default(),
            requestor: Default::default(),
        };
        let mut names: Vec<&str> = if self.variant.uses_checklist() {
            self.checklists.tools.keys().map(String::as_str).collect()
        } else {
            Vec::new()
        };
        if names.is_empty() {
            names.push("pending_tool");
        }
        let mut best: Option<ModelPrompt> = None;
        for name in names {
            let r = self.render(self.policy.as_deref().unwrap_or(""), &[], &call(name))?;
            let p = ModelPrompt {
                system: r.prefix,
                request: r.request,
            };
            if best.as_ref().is_none_or(|b| p.chars() > b.chars()) {
                best = Some(p);
            }
        }
        Ok(best.expect("at least one pending call is rendered"))
    }

    /// Turns a parsed reply into a decision (strict override, remediation synthesis).
    fn decide(
        &self,
        call: &ToolCall,
        reply: VerifierReply,
        info: &mut serde_json::Map<String, Value>,
    ) -> Decision {
        let not_met: Vec<&RequirementResult> =
            reply.requirements.iter().filter(|r| !r.met).collect();
        let verdict = if self.strict && !not_met.is_empty() {
            Verdict::Block
        } else {
            reply.verdict
        };
        info.insert("model_verdict".into(), json!(verdict_str(reply.verdict)));
        if verdict != reply.verdict {
            info.insert("strict_override".into(), json!(true));
        }
        if !reply.notes.is_empty() {
            info.insert("parse_notes".into(), json!(reply.notes));
        }
        let remediation = (verdict == Verdict::Block).then(|| {
            // A model PASS overridden by strict mode carries no usable message.
            match reply
                .agent_message
                .clone()
                .filter(|_| reply.verdict == Verdict::Block)
            {
                Some(m) => m,
                None => {
                    info.insert("synthesised_agent_message".into(), json!(true));
                    synthesise_remediation(&call.name, &not_met)
                }
            }
        });
        Decision {
            verdict,
            requirements: reply.requirements,
            remediation,
            usage: RoleUsage::default(),
            info: None,
            guide: None,
            fail: None,
        }
    }

    fn fail(&self, info: &mut serde_json::Map<String, Value>, cause: FailCause) -> Decision {
        info.insert("fail_mode".into(), json!(self.fail_mode.as_str()));
        info.insert("fail_mode_used".into(), json!(true));
        let mut d = match self.fail_mode {
            FailMode::Open => Decision::pass(Vec::new()),
            FailMode::Closed => Decision::block(Vec::new(), FAIL_CLOSED_MESSAGE),
        };
        d.fail = Some(cause);
        d
    }
}

fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS",
        Verdict::Block => "BLOCK",
    }
}

/// A plain text message: the user's (`user`) or the assistant's.
pub(crate) fn text_message(user: bool, text: String) -> Message {
    let p = ParticipantMessage {
        content: Some(text),
        ..Default::default()
    };
    if user {
        Message::User(p)
    } else {
        Message::Assistant(p)
    }
}

impl Guard for PolicyGuardVerifier {
    fn name(&self) -> &str {
        &self.name
    }

    /// The templates rendered at construction, so rendering again cannot fail here but for
    /// a template error construction would have reported.
    fn model_prompt(&self) -> Option<ModelPrompt> {
        self.largest_prompt().ok()
    }

    fn on_mutating_call<'a>(&'a self, ctx: &'a GuardContext<'a>, call: &'a ToolCall) -> Ruling<'a> {
        Box::pin(async move {
            let prompt = self.render(ctx.policy, ctx.history, call)?;
            let messages = vec![
                Message::System {
                    content: Some(prompt.prefix.into()),
                },
                text_message(true, prompt.request),
            ];
            let mut info = serde_json::Map::new();
            info.insert("verifier".into(), json!(self.model.id()));
            info.insert("variant".into(), json!(self.variant.as_str()));
            info.insert("strict".into(), json!(self.strict));
            let asker = Asker::new(self.model.as_ref(), &self.sampling, ctx);
            let repair = |error: &str| self.prompts.render_repair(error);
            let ex = asker
                .exchange(messages, repair, parse_reply, false, info)
                .await?;
            let (mut info, failed) = (ex.info, ex.failed);
            let mut decision = match ex.outcome {
                Exchanged::Parsed(reply) => self.decide(call, reply, &mut info),
                Exchanged::Unparsed => self.fail(&mut info, failed.parse_cause()),
                Exchanged::Unanswered(cause) => self.fail(&mut info, cause),
            };
            failed.write(&mut info);
            decision.usage = ex.usage;
            decision.info = Some(Value::Object(info));
            Ok(decision)
        })
    }
}
