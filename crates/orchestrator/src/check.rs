//! `tauguard run --check`: before any money is spent, each distinct model of a config that
//! answers over HTTP is asked what the run will ask of it. First one tiny request (is it
//! reachable: endpoint, key, model name); then, per role it plays in the plan:
//!
//! - **tool calling** (agent, and the user where the domain gives the user tools): the role's
//!   real tool schemas and an instruction to call one named read-only tool. The reply must hold
//!   a tool call with parseable arguments. A server whose chat template cannot render tools
//!   drops `tools` without an error and answers in text, and every simulation then fails
//!   without a word; this is where that shows.
//! - **prompt fits**: the role's largest real prompt ([`crate::role_prompts`]: the agent's
//!   system prompt with its tools, the guard's verifier or guide prompt, ...). A 4xx answer
//!   fails it with the server's message (llama.cpp answers 400 `exceed_context_size_error`);
//!   any answer, even an unusable one, passes it: the server took the prompt.
//!
//! An embedding model (`[models.embeddings]`) embeds one text instead, its vector's
//! dimensions reported.
//!
//! The plan is built as for a dry run (data, tasks, guards and prompts; no key needed), so
//! what is sent is what the run sends. The response cache is bypassed: a cached answer proves
//! nothing about the endpoint today.

use crate::config::{ModelSection, RunConfig};
use crate::plan::RunPlan;
use crate::role_prompts::{PromptRole, RolePrompt, cell_prompts};
use crate::runner::{RunError, RunOptions};
use std::sync::Arc;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::{Message, Requestor, ToolKind, ToolSpec, chain_text};
use tauguard_env::DomainData;
use tauguard_llm::{CacheMode, Capabilities, ErrorClass, LlmError, ModelFactory, ModelSpec};
use tauguard_llm::{ChatModel, ChatRequest};

/// One checked model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCheck {
    /// The config keys it serves, e.g. `agent, guard.verifier`.
    pub roles: String,
    pub provider: String,
    pub model: String,
    /// `Ok` with a note when the server answered (a reply that is unusable still proves the
    /// endpoint, key and model work), `Err` with the reason otherwise.
    pub result: Result<String, String>,
    /// What the run needs of it, per role; empty when it is not reachable.
    pub checks: Vec<RoleCheck>,
}

impl ModelCheck {
    /// Whether it is reachable and passed every check.
    pub fn passed(&self) -> bool {
        self.result.is_ok() && self.checks.iter().all(|c| c.result.is_ok())
    }
}

/// What is checked of a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    ToolCalling,
    PromptFits,
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::ToolCalling => "tool calling",
            CheckKind::PromptFits => "prompt fits",
        }
    }
}

/// One check of one role of a model: `Ok` with a note, `Err` with why it fails.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleCheck {
    pub role: PromptRole,
    pub kind: CheckKind,
    pub result: Result<String, String>,
}

/// The user turn of a prompt-fits request whose role has no fixed request of its own.
const PROMPT_PROBE: &str = "Reply with the single word OK.";

/// Reply tokens allowed to a prompt-fits request: its answer is not read, only whether the
/// server took the prompt.
const PROMPT_REPLY_TOKENS: u32 = 16;

/// Reply tokens allowed to the tool-calling request when the model's spec sets none: room
/// for one call's arguments.
const TOOL_REPLY_TOKENS: u32 = 1024;

/// Sends the checks to each distinct non-`sim` model of `cfg`, in config order. `opts`
/// supplies the data and project directories the plan is built from.
pub async fn check_models(cfg: &RunConfig, opts: &RunOptions) -> Result<Vec<ModelCheck>, RunError> {
    let mut distinct: Vec<(Vec<&str>, &ModelSection)> = Vec::new();
    // Agents and verifiers of the grid by key (`grid.agents[1]`), the shorthand by role.
    let sections = cfg.model_sections();
    for (key, _, m) in &sections {
        let role = match key.as_str() {
            "models.agent" => "agent",
            "models.user" => "user",
            "models.judge" => "judge",
            other => other,
        };
        // An embedding model answers no completion: it is checked on its own below.
        if m.is_sim() || key == crate::embeddings::KEY {
            continue;
        }
        match distinct.iter_mut().find(|(_, d)| d.spec() == m.spec()) {
            Some((names, _)) => names.push(role),
            None => distinct.push((vec![role], m)),
        }
    }
    if distinct.is_empty() && crate::embeddings::section(cfg).is_none() {
        return Ok(Vec::new());
    }
    let plan_opts = RunOptions {
        data_dir: opts.data_dir.clone(),
        project_dir: opts.project_dir.clone(),
        dry_run: true,
        ..Default::default()
    };
    let plan = RunPlan::build(cfg.clone(), &plan_opts)?;
    let needs = Needs::of(&plan);
    let factory = ModelFactory::new(cfg.llm.clone())
        .map_err(|e| RunError::Model {
            role: "llm".into(),
            cause: e,
        })?
        .with_cache_mode(CacheMode::Off);
    let mut out = Vec::new();
    for (roles, m) in distinct {
        let spec = m.spec();
        let (result, checks) = match factory.build(&spec) {
            Ok(model) => {
                let result = probe(model.as_ref()).await;
                let checks = match (&result, factory.capabilities(&spec)) {
                    (Ok(_), Ok(caps)) => needs.check(model.as_ref(), &spec, &caps).await,
                    _ => Vec::new(),
                };
                (result, checks)
            }
            Err(e) => (Err(chain_text(&e)), Vec::new()),
        };
        out.push(ModelCheck {
            roles: roles.join(", "),
            provider: m.provider.clone(),
            model: m.model.clone(),
            result,
            checks,
        });
    }
    if let Some(m) = crate::embeddings::section(cfg) {
        out.push(ModelCheck {
            roles: crate::embeddings::KEY.into(),
            provider: m.provider.clone(),
            model: m.model.clone(),
            result: embeddings_probe(&factory, m).await,
            checks: Vec::new(),
        });
    }
    Ok(out)
}

/// One text embedded, uncached.
async fn embeddings_probe(factory: &ModelFactory, m: &ModelSection) -> Result<String, String> {
    let model = factory
        .build_embedder(&m.spec())
        .map_err(|e| chain_text(&e))?;
    let out = model
        .embed(&["ping".to_string()])
        .await
        .map_err(|e| format!("{} at {}", e, model.url()))?;
    let dims = out.vectors.first().map_or(0, Vec::len);
    Ok(format!("embeds ({dims} dimensions)"))
}

/// One short completion.
async fn probe(model: &dyn ChatModel) -> Result<String, String> {
    let req = ChatRequest::new("", vec![user(PROMPT_PROBE)]).with_max_tokens(16);
    match model.complete(&req).await {
        Ok(r) => Ok(match r.cost {
            Some(c) => format!("{} HTTP attempt(s), ${c:.6}", r.attempts),
            None => format!("{} HTTP attempt(s), cost unknown", r.attempts),
        }),
        Err(e) if e.class() == ErrorClass::ModelOutput => {
            Ok(format!("answered, but unusably: {e}"))
        }
        Err(e) => Err(chain_text(&e)),
    }
}

fn user(text: &str) -> Message {
    Message::User(ParticipantMessage {
        content: Some(text.into()),
        ..Default::default()
    })
}

/// A role's tools and the read-only one it is asked to call.
struct ToolProbe {
    role: PromptRole,
    tools: Arc<[ToolSpec]>,
    tool: String,
}

/// What the plan needs of each model: per role, its largest prompt and its tools.
struct Needs<'a> {
    prompts: Vec<RolePrompt<'a>>,
    tools: Vec<(&'a ModelSection, ToolProbe)>,
}

impl<'a> Needs<'a> {
    fn of(plan: &'a RunPlan) -> Needs<'a> {
        let mut prompts: Vec<RolePrompt<'a>> = Vec::new();
        let mut tools: Vec<(&'a ModelSection, ToolProbe)> = Vec::new();
        for cell in &plan.cells {
            let data = &plan.domains[cell.domain].data;
            for p in cell_prompts(plan, cell) {
                let side = match p.role {
                    PromptRole::Agent => Some(Requestor::Assistant),
                    PromptRole::User => Some(Requestor::User),
                    _ => None,
                };
                if let Some(side) = side
                    && !tools
                        .iter()
                        .any(|(m, t)| t.role == p.role && m.spec() == p.model.spec())
                    && let Some(probe) = tool_probe(data, side, p.role)
                {
                    tools.push((p.model, probe));
                }
                match prompts
                    .iter_mut()
                    .find(|q| q.role == p.role && q.model.spec() == p.model.spec())
                {
                    Some(q) if q.chars() < p.chars() => *q = p,
                    Some(_) => {}
                    None => prompts.push(p),
                }
            }
        }
        Needs { prompts, tools }
    }

    /// The tool-calling and prompt-fits checks of every role `spec` plays, in role order.
    async fn check(
        &self,
        model: &dyn ChatModel,
        spec: &ModelSpec,
        caps: &Capabilities,
    ) -> Vec<RoleCheck> {
        let mut roles: Vec<PromptRole> = self
            .prompts
            .iter()
            .filter(|p| p.model.spec() == *spec)
            .map(|p| p.role)
            .collect();
        roles.sort();
        let mut out = Vec::new();
        for role in roles {
            if let Some((_, t)) = self
                .tools
                .iter()
                .find(|(m, t)| t.role == role && m.spec() == *spec)
            {
                out.push(RoleCheck {
                    role,
                    kind: CheckKind::ToolCalling,
                    result: tool_calling(model, t, reply_limit(spec.max_tokens, caps)).await,
                });
            }
            if let Some(p) = self
                .prompts
                .iter()
                .find(|p| p.role == role && p.model.spec() == *spec)
            {
                out.push(RoleCheck {
                    role,
                    kind: CheckKind::PromptFits,
                    result: prompt_fits(model, p, reply_limit(Some(PROMPT_REPLY_TOKENS), caps))
                        .await,
                });
            }
        }
        out
    }
}

/// `wanted` reply tokens (else [`TOOL_REPLY_TOKENS`]), plus the thinking budget of a model
/// that thinks, which spends it before it answers.
fn reply_limit(wanted: Option<u32>, caps: &Capabilities) -> u32 {
    let wanted = wanted.unwrap_or(TOOL_REPLY_TOKENS);
    if caps.thinking {
        wanted + caps.thinking_budget_tokens
    } else {
        wanted
    }
}

/// The role's tools of a domain and the one to call: a read-only tool with the fewest
/// required parameters but at least one, so the reply must carry arguments to parse (any
/// tool when none reads); `None` without tools.
fn tool_probe(data: &DomainData, side: Requestor, role: PromptRole) -> Option<ToolProbe> {
    let tools = data.tool_schemas.side(side);
    let kinds = data.def.toolkit(side);
    let reads = |t: &ToolSpec| {
        kinds
            .iter()
            .any(|d| d.is_tool && d.name == t.name && d.kind == ToolKind::Read)
    };
    let required = |t: &ToolSpec| t.parameters["required"].as_array().map_or(0, Vec::len);
    let tool = tools
        .iter()
        .min_by_key(|t| (!reads(t), required(t) == 0, required(t), t.name.clone()))?;
    Some(ToolProbe {
        role,
        tools: match side {
            Requestor::Assistant => data.tool_schemas.assistant.clone(),
            Requestor::User => data.tool_schemas.user.clone(),
        },
        tool: tool.name.clone(),
    })
}

/// The instruction of the tool-calling request (servers under test can match on its start).
pub(crate) const TOOL_INSTRUCTION: &str = "tauguard run --check: call the tool";

async fn tool_calling(model: &dyn ChatModel, t: &ToolProbe, limit: u32) -> Result<String, String> {
    let ask = format!(
        "{TOOL_INSTRUCTION} `{}` once now, with arguments of your choice that its parameters accept. Do not answer in text.",
        t.tool
    );
    let req = ChatRequest::new("", vec![user(&ask)])
        .with_tools(t.tools.clone())
        .with_max_tokens(limit);
    match model.complete(&req).await {
        Ok(r) => match r.tool_calls.first() {
            Some(c) if c.name == t.tool => Ok(format!("called `{}`", c.name)),
            Some(c) => Ok(format!(
                "called `{}` (asked for `{}`; any parseable call shows the tools arrived)",
                c.name, t.tool
            )),
            None => Err(format!(
                "asked to call `{}` with {} tools offered, the model answered in text only ({}): the server probably dropped `tools` — does its chat template render tools? (llama.cpp: start it with `--jinja`)",
                t.tool,
                t.tools.len(),
                quote(r.content.as_deref().unwrap_or_default())
            )),
        },
        Err(LlmError::MalformedToolArguments(m)) => Err(format!(
            "the tool call's arguments do not parse: {}",
            m.reason
        )),
        Err(e) => Err(chain_text(&e)),
    }
}

async fn prompt_fits(
    model: &dyn ChatModel,
    p: &RolePrompt<'_>,
    limit: u32,
) -> Result<String, String> {
    let req = ChatRequest::new("", p.messages(PROMPT_PROBE))
        .with_tools(p.tools.clone())
        .with_max_tokens(limit);
    let sent = format!("≈ {} tokens ({} characters)", p.tokens(), p.chars());
    match model.complete(&req).await {
        Ok(r) if r.usage.prompt_tokens > 0 => Ok(format!(
            "{sent} accepted; the server counted {} prompt tokens",
            r.usage.prompt_tokens
        )),
        Ok(_) => Ok(format!("{sent} accepted")),
        Err(e) if e.class() == ErrorClass::ModelOutput => {
            Ok(format!("{sent} accepted (the reply was unusable: {e})"))
        }
        Err(LlmError::Rejected { status, body, .. }) if (400..500).contains(&status) => {
            let lower = body.to_ascii_lowercase();
            let length = ["context", "length", "too long", "exceed", "too many tokens"]
                .iter()
                .any(|w| lower.contains(w));
            Err(if length {
                format!("{sent} rejected as too long (HTTP {status}): {body}")
            } else {
                format!("{sent} rejected (HTTP {status}): {body}")
            })
        }
        Err(e) => Err(format!("{sent} not answered: {e}")),
    }
}

/// At most 120 characters of a reply, quoted.
fn quote(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(120) {
        Some((i, _)) => format!("\"{}…\"", &t[..i]),
        None => format!("\"{t}\""),
    }
}
