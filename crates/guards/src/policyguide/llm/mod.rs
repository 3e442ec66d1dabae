//! The LLM guide: PolicyGuide's verifier as one chat completion per trigger,
//! V(policy, tools, graph, history, request state) → (merged remediation, per-request updates).
//!
//! What the prompt shows is fixed by what the guide is built with ([`GuideKnowledge`]): the
//! workflow graph's rendering, or — for the raw-policy ablation — the raw policy alone with
//! the enumerated authorization list of [`Flow::raw`]. The static prefix is rendered once at
//! construction ([`prompt`]), so every call of one guide sends the same bytes first (its
//! blake3 hash and length go into each event's `info`); the dynamic part carries the trigger,
//! the conversation and the request cards. Replies are parsed tolerantly ([`parse`]); an
//! unreadable reply gets one repair turn quoting the parse error, then the fail mode (the
//! reply says why, [`GuideReply::fail`], and `info.failed_attempts` keeps each failed reply;
//! `info.repaired` is true only when the repair parsed).
//! Verifier-model failures follow the PolicyGuard verifier: a fatal error (credentials,
//! unknown model) ends the run as [`GuardError::Model`], any other is a fail-mode reply with
//! the error in `info.model_error`.

pub(crate) mod parse;
pub(crate) mod prompt;

use super::flow::Flow;
use super::guide::{GuideReply, GuideRequest, GuideVerifier, PolicyGuide};
use crate::catalog::ToolCatalog;
use crate::factory::GuardBuildError;
use crate::policyguard::exchange::{Asker, Exchanged};
use crate::policyguard::guard_prompts::GuardPrompts;
use crate::policyguard::templates::TemplateError;
use crate::policyguard::{FailMode, Sampling, text_message};
use crate::seam::{Guard, GuardError, ModelPrompt};
use parse::{GuideOutput, parse_guide_reply};
use prompt::{
    AuthorizationView, PendingView, PrefixVars, RequestVars, TEMPLATES, ToolsView, guide_history,
};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use tauguard_core::Message;
use tauguard_core::record::{FailCause, GuideTrigger, RoleUsage};
use tauguard_llm::{BoxFuture, ChatModel};

/// What the guide is told about the procedures.
#[derive(Debug, Clone)]
pub enum GuideKnowledge {
    /// The frozen workflow graph: the prompt holds its rendering.
    Graph(Arc<Flow>),
    /// The raw-policy ablation: the policy text alone, with one authorization node per
    /// mutating tool ([`Flow::raw`]).
    RawPolicy,
}

/// Guidance when the guide could not read its own verdict and fails closed.
pub const FAIL_CLOSED_GUIDANCE: &str = "The workflow guide could not check this conversation. \
     Do not call any tool that changes data until the workflow steps for the user's request are done: \
     verify the user's identity, make the required lookups, explain the exact action and get an explicit yes.";

/// Everything an LLM guide needs besides its knowledge and model.
#[derive(Debug, Clone)]
pub struct LlmGuideSetup {
    /// The domain policy text (the agent's system prompt embeds the same).
    pub policy: String,
    /// The domain's tools and which of them mutate.
    pub catalog: ToolCatalog,
    /// `configs/prompts`; the templates are read from its `guide/`.
    pub prompts_dir: PathBuf,
    pub sampling: Sampling,
    pub fail_mode: FailMode,
}

/// Why an LLM guide could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LlmGuideError {
    #[error(transparent)]
    Prompt(#[from] TemplateError),
    #[error("the workflow is for domain `{flow}`, the tool catalogue for `{catalog}`")]
    DomainMismatch { flow: String, catalog: String },
}

/// A [`GuideVerifier`] backed by a chat model.
pub struct LlmGuide {
    model: Arc<dyn ChatModel>,
    prompts: GuardPrompts,
    flow: Arc<Flow>,
    graph: bool,
    prefix: Arc<str>,
    prefix_hash: String,
    sampling: Sampling,
    fail_mode: FailMode,
}

impl std::fmt::Debug for LlmGuide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmGuide")
            .field("model", &self.model.id())
            .field("graph", &self.graph)
            .field("prefix_hash", &self.prefix_hash)
            .field("fail_mode", &self.fail_mode)
            .finish_non_exhaustive()
    }
}

impl LlmGuide {
    /// Loads the templates from `setup.prompts_dir`, renders the static prefix once and checks
    /// that the dynamic and repair templates render.
    pub fn new(
        knowledge: GuideKnowledge,
        model: Arc<dyn ChatModel>,
        setup: &LlmGuideSetup,
    ) -> Result<LlmGuide, LlmGuideError> {
        let prompts = GuardPrompts::load(&setup.prompts_dir.join("guide"), TEMPLATES)?;
        let (flow, graph) = match knowledge {
            GuideKnowledge::Graph(flow) => {
                if flow.bundle().domain != setup.catalog.domain {
                    return Err(LlmGuideError::DomainMismatch {
                        flow: flow.bundle().domain.clone(),
                        catalog: setup.catalog.domain.clone(),
                    });
                }
                (flow, true)
            }
            GuideKnowledge::RawPolicy => (Arc::new(Flow::raw(&setup.catalog)), false),
        };
        let rendering = graph.then(|| flow.render());
        let start = flow.start();
        // Where a finished request ends: the main graph's first exit (`raw/done` for the raw
        // flow, the one position besides the start and the authorizations it names).
        let main = &flow.bundle().main;
        let done = main
            .nodes
            .iter()
            .find(|n| n.kind == super::NodeKind::Exit)
            .map(|n| super::flow::node_ref(&main.id, &n.id))
            .unwrap_or_else(|| start.clone());
        let sorted = |set: &'_ std::collections::BTreeSet<String>| -> Vec<String> {
            set.iter().cloned().collect()
        };
        let (mutating, read_only, other) = (
            sorted(&setup.catalog.mutating),
            sorted(&setup.catalog.read_only),
            sorted(&setup.catalog.other),
        );
        let prefix = prompts.render_prefix(&PrefixVars {
            domain: &setup.catalog.domain,
            graph,
            policy: &setup.policy,
            workflow: rendering.as_deref(),
            start: &start,
            done: &done,
            authorizations: flow
                .authorizations()
                .iter()
                .map(|(node, tool)| AuthorizationView { node, tool })
                .collect(),
            tools: ToolsView {
                mutating: mutating.iter().map(String::as_str).collect(),
                read_only: read_only.iter().map(String::as_str).collect(),
                other: other.iter().map(String::as_str).collect(),
            },
        })?;
        let prefix_hash = blake3::hash(prefix.as_bytes()).to_hex().to_string();
        let guide = LlmGuide {
            model,
            prompts,
            flow,
            graph,
            prefix: prefix.into(),
            prefix_hash,
            sampling: setup.sampling.clone(),
            fail_mode: setup.fail_mode,
        };
        // Surface template errors at construction, not on the first call.
        let probe = tauguard_core::ToolCall {
            id: String::new(),
            name: "probe".into(),
            arguments: Map::new(),
            requestor: Default::default(),
        };
        for pending in [None, Some(&probe)] {
            guide.render_request(&[], &[], pending)?;
        }
        guide.prompts.render_repair("probe")?;
        Ok(guide)
    }

    /// The flow the guide's state must be checked against (the graph given, or the raw
    /// flow built for the ablation).
    pub fn flow(&self) -> Arc<Flow> {
        self.flow.clone()
    }

    /// The static prefix: the system message of every call.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// blake3 hex of the static prefix.
    pub fn prefix_hash(&self) -> &str {
        &self.prefix_hash
    }

    pub fn fail_mode(&self) -> FailMode {
        self.fail_mode
    }

    /// The dynamic part for a conversation, the current cards and the stopped call (an
    /// interception) or none (a user turn).
    pub fn render_request(
        &self,
        history: &[Message],
        cards: &[tauguard_core::record::RequestCard],
        pending: Option<&tauguard_core::ToolCall>,
    ) -> Result<String, TemplateError> {
        let entries = guide_history(history, pending);
        let cards = (!cards.is_empty())
            .then(|| serde_json::to_string_pretty(cards).unwrap_or_else(|_| "[]".into()));
        self.prompts.render_request(&RequestVars {
            trigger: if pending.is_some() {
                "interception"
            } else {
                "user_turn"
            },
            graph: self.graph,
            pending: pending.map(PendingView::new),
            history: &entries,
            cards,
        })
    }

    /// The static prefix with the longest dynamic part over an empty conversation and no
    /// request cards: a user turn, or an interception of one of the authorized tools.
    pub fn largest_prompt(&self) -> Result<ModelPrompt, TemplateError> {
        let mut longest = self.render_request(&[], &[], None)?;
        for tool in self.flow.authorizations().values() {
            let call = tauguard_core::ToolCall {
                id: String::new(),
                name: tool.to_string(),
                arguments: Map::new(),
                requestor: Default::default(),
            };
            let r = self.render_request(&[], &[], Some(&call))?;
            if r.len() > longest.len() {
                longest = r;
            }
        }
        Ok(ModelPrompt {
            system: self.prefix.to_string(),
            request: longest,
        })
    }

    fn base_info(&self, trigger: GuideTrigger) -> Map<String, Value> {
        let mut info = Map::new();
        info.insert("verifier".into(), json!(self.model.id()));
        info.insert(
            "knowledge".into(),
            json!(if self.graph { "graph" } else { "raw_policy" }),
        );
        info.insert("trigger".into(), json!(trigger));
        info.insert("prefix_hash".into(), json!(self.prefix_hash));
        info.insert("prefix_bytes".into(), json!(self.prefix.len()));
        info
    }

    /// The reply of a readable generation.
    fn reply(out: GuideOutput, usage: RoleUsage, mut info: Map<String, Value>) -> GuideReply {
        if !out.notes.is_empty() {
            info.insert("parse_notes".into(), json!(out.notes));
        }
        GuideReply {
            remediation: out.remediation,
            updates: out.updates,
            usage,
            rejected: out.rejected,
            info: Some(Value::Object(info)),
            fail: None,
        }
    }

    /// The fail-mode reply: no updates; guidance to hold back mutations when failing closed.
    fn fail(&self, usage: RoleUsage, mut info: Map<String, Value>, cause: FailCause) -> GuideReply {
        info.insert("fail_mode".into(), json!(self.fail_mode.as_str()));
        info.insert("fail_mode_used".into(), json!(true));
        GuideReply {
            remediation: match self.fail_mode {
                FailMode::Open => None,
                FailMode::Closed => Some(FAIL_CLOSED_GUIDANCE.to_string()),
            },
            updates: Vec::new(),
            usage,
            rejected: Vec::new(),
            info: Some(Value::Object(info)),
            fail: Some(cause),
        }
    }

    async fn generate(&self, request: GuideRequest<'_>) -> Result<GuideReply, GuardError> {
        let ctx = request.ctx;
        let dynamic = self.render_request(ctx.history, request.cards, request.pending)?;
        let known: Vec<&str> = request.cards.iter().map(|c| c.id.as_str()).collect();
        let messages = vec![
            Message::System {
                content: Some(self.prefix.clone()),
            },
            text_message(true, dynamic),
        ];
        let info = self.base_info(request.trigger);
        let asker = Asker::new(self.model.as_ref(), &self.sampling, ctx);
        let repair = |error: &str| self.prompts.render_repair(error);
        let parse = |reply: &str| parse_guide_reply(reply, &known);
        let ex = asker.exchange(messages, repair, parse, true, info).await?;
        let (usage, mut info, failed) = (ex.usage, ex.info, ex.failed);
        Ok(match ex.outcome {
            Exchanged::Parsed(out) => {
                failed.write(&mut info);
                Self::reply(out, usage, info)
            }
            Exchanged::Unparsed => {
                let cause = failed.parse_cause();
                failed.write(&mut info);
                self.fail(usage, info, cause)
            }
            Exchanged::Unanswered(cause) => self.fail(usage, info, cause),
        })
    }
}

impl GuideVerifier for LlmGuide {
    fn verify<'a>(
        &'a self,
        request: GuideRequest<'a>,
    ) -> BoxFuture<'a, Result<GuideReply, GuardError>> {
        Box::pin(self.generate(request))
    }

    /// Construction rendered both triggers, so only a template error it would have
    /// reported could make this `None`.
    fn model_prompt(&self) -> Option<ModelPrompt> {
        self.largest_prompt().ok()
    }
}

/// Builds the LLM guide guard of configuration `name`: the verifier over `knowledge`, inside
/// the [`PolicyGuide`] guard that holds the request state and the interception gate.
pub(crate) fn build_llm_guide(
    name: &str,
    knowledge: GuideKnowledge,
    model: Arc<dyn ChatModel>,
    setup: &LlmGuideSetup,
) -> Result<Arc<dyn Guard>, GuardBuildError> {
    let guide =
        LlmGuide::new(knowledge, model, setup).map_err(|e| GuardBuildError::new(name, e))?;
    let flow = guide.flow();
    Ok(Arc::new(PolicyGuide::new(name, flow, Box::new(guide))))
}
