//! The largest prompt each model-played role of a cell sends, known before a run: what the
//! dry run measures against a model's context window and `run --check` sends to find out
//! whether the server takes it. A local model's context is often smaller than these prompts
//! (PolicyGuide's guide prompt is over 12k tokens on τ²-bench airline), and a server that
//! cannot fit a prompt fails every call of the role, so this is worth knowing before a run.
//!
//! Per role, the fixed part of its largest request — the conversation comes on top at run
//! time:
//!
//! - agent: the cell's agent system prompt (the guard's additions included) and the domain's
//!   agent tool schemas;
//! - user: the largest user system prompt of the domain's tasks with that task's user tools;
//! - verifier (PolicyGuard-style guards) or guide (PolicyGuide): the guard's own
//!   [`tauguard_guards::ModelPrompt`], for a guard that calls a model;
//! - judge: the judge's messages for the task with the longest NL assertions.
//!
//! Only roles played by a non-`sim` model are listed: a `sim` model reads no prompt.

use crate::config::ModelSection;
use crate::plan::{Cell, RunPlan};
use serde::Serialize;
use std::sync::Arc;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::{Message, ToolSpec};
use tauguard_guards::GuardName;

/// Characters per token: the one approximation of prompt sizes, for the dry run's context
/// comparison and its costs alike. English prose runs near 4 per token for the common
/// tokenizers; JSON schemas and graph renderings run denser, so a prompt near a context
/// limit is worth a `run --check`, which asks the server itself.
pub const CHARS_PER_TOKEN: f64 = 4.0;

/// A role that sends a model a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptRole {
    Agent,
    User,
    /// A PolicyGuard-style verifier.
    Verifier,
    /// PolicyGuide's guide.
    Guide,
    Judge,
}

impl PromptRole {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptRole::Agent => "agent",
            PromptRole::User => "user",
            PromptRole::Verifier => "verifier",
            PromptRole::Guide => "guide",
            PromptRole::Judge => "judge",
        }
    }
}

impl std::fmt::Display for PromptRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The largest fixed prompt one role of one cell sends.
#[derive(Debug, Clone)]
pub(crate) struct RolePrompt<'a> {
    pub role: PromptRole,
    /// The model that receives it.
    pub model: &'a ModelSection,
    pub system: Arc<str>,
    /// The fixed user message (verifier, guide, judge); `None` where the conversation is
    /// the whole rest of the request (agent, user).
    pub request: Option<String>,
    /// The tool schemas sent with it.
    pub tools: Arc<[ToolSpec]>,
}

impl RolePrompt<'_> {
    /// Characters sent: system message, fixed request and tool schemas.
    pub(crate) fn chars(&self) -> usize {
        self.system.len() + self.request.as_ref().map_or(0, String::len) + schema_chars(&self.tools)
    }

    /// The estimated tokens (see [`CHARS_PER_TOKEN`]).
    pub(crate) fn tokens(&self) -> u64 {
        tokens(self.chars())
    }

    /// The request's messages: the system prompt, then the fixed request or `fallback` where
    /// the role has none (a request needs a user turn for most providers).
    pub(crate) fn messages(&self, fallback: &str) -> Vec<Message> {
        vec![
            Message::System {
                content: Some(self.system.clone()),
            },
            Message::User(ParticipantMessage {
                content: Some(self.request.clone().unwrap_or_else(|| fallback.into())),
                ..Default::default()
            }),
        ]
    }
}

/// Estimated tokens of `chars` characters, rounded up.
pub(crate) fn tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

/// Characters of tool schemas as JSON.
pub(crate) fn schema_chars(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|t| serde_json::to_string(t).map_or(0, |s| s.len()))
        .sum()
}

/// The model that judges for `cell`'s guard: its verifier's own model, else the cell's agent
/// model (the paired-verifier protocol).
pub(crate) fn verifier_section<'a>(plan: &'a RunPlan, cell: &Cell) -> &'a ModelSection {
    plan.axes
        .verifiers
        .iter()
        .find(|v| Some(&v.label) == cell.verifier.as_ref())
        .and_then(|v| v.model.as_ref())
        .unwrap_or(&plan.agents[cell.agent].section)
}

/// The context window `m` is declared with (`[llm.capabilities]` or the model catalog);
/// `None` for `sim` models and where nothing says.
pub(crate) fn context_tokens(plan: &RunPlan, m: &ModelSection) -> Option<u32> {
    if m.is_sim() {
        return None;
    }
    plan.models
        .factory
        .as_ref()?
        .capabilities(&m.spec())
        .ok()?
        .context_tokens
}

/// The largest prompt of each model-played role of `cell`, in role order.
pub(crate) fn cell_prompts<'a>(plan: &'a RunPlan, cell: &Cell) -> Vec<RolePrompt<'a>> {
    let domain = &plan.domains[cell.domain];
    let mut out = Vec::new();
    let agent = &plan.agents[cell.agent].section;
    if !agent.is_sim() {
        out.push(RolePrompt {
            role: PromptRole::Agent,
            model: agent,
            system: cell.agent_system_prompt.clone(),
            request: None,
            tools: domain.data.tool_schemas.assistant.clone(),
        });
    }
    let user = &plan.cfg.models.user;
    if !user.is_sim() {
        let largest = domain
            .tasks
            .iter()
            .zip(&domain.user_system_prompts)
            .map(|(task, system)| RolePrompt {
                role: PromptRole::User,
                model: user,
                system: system.clone(),
                request: None,
                tools: crate::plan_domain::task_user_tools(&domain.data, task),
            })
            .max_by_key(RolePrompt::chars);
        out.extend(largest);
    }
    if cell.guard_name.uses_verifier() {
        let verifier = verifier_section(plan, cell);
        if let Some(p) = cell.guard.as_ref().and_then(|g| g.model_prompt())
            && !verifier.is_sim()
        {
            out.push(RolePrompt {
                role: match cell.guard_name {
                    GuardName::PolicyGuide { .. } => PromptRole::Guide,
                    _ => PromptRole::Verifier,
                },
                model: verifier,
                system: p.system.into(),
                request: Some(p.request),
                tools: Arc::from(Vec::new()),
            });
        }
    }
    if let Some(judge) = plan.cfg.models.judge.as_ref().filter(|j| !j.is_sim()) {
        let largest = domain
            .tasks
            .iter()
            .filter_map(crate::evaluate::nl_assertions_to_judge)
            .map(|a| {
                let messages = crate::judge::judge_messages(&[], a);
                RolePrompt {
                    role: PromptRole::Judge,
                    model: judge,
                    system: messages[0].content().unwrap_or_default().into(),
                    request: messages[1].content().map(str::to_string),
                    tools: Arc::from(Vec::new()),
                }
            })
            .max_by_key(RolePrompt::chars);
        out.extend(largest);
    }
    out
}
