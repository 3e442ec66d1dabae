//! The one conversation loop both compilers talk to their model through: ask, validate the
//! reply, and on failure repair once with a turn that quotes the validation errors. Keeping
//! the loop in one place means every step of either compiler sends the same shape of
//! request, repairs, counts usage and gives up the same way; the compilers differ only in
//! their prompts, validators, step names and report records.

use serde::{Deserialize, Serialize};
use tauguard_core::Message;
use tauguard_core::message::{ParticipantMessage, Usage};
use tauguard_guards::{TemplateError, Templates, ToolCatalog};
use tauguard_llm::LlmError;
use tauguard_llm::{ChatModel, ChatRequest};

/// Knobs of a compile run, the same for both compilers; the default is what
/// `checklist::compile_checklists` uses.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Replace the artifacts of a non-empty output directory (its `*.yaml` files, or for a
    /// workflow `bundle.json`, and the report; other files stay). Without it a non-empty
    /// directory is refused before any model call.
    pub overwrite: bool,
    /// Sampling temperature of every call (unset by default: the model's spec decides).
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
    /// `ChatRequest.model`; empty = the model the [`ChatModel`] was built for.
    pub model_name: String,
    /// Tool classes known from the environment: disagreements with the model's classification
    /// are listed in the report (the checklists still use the model's classification; the
    /// workflow compiler checks against this catalogue).
    pub known_tools: Option<ToolCatalog>,
}

/// Token usage and cost over all calls of a compile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompileUsage {
    pub calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_prompt_tokens: u64,
    /// US dollars over the priced calls; `None` when no call had a price.
    pub cost: Option<f64>,
    /// Calls whose model has no price (their cost is missing from `cost`).
    pub unpriced_calls: u32,
}

impl CompileUsage {
    fn add(&mut self, usage: &Usage, cost: Option<f64>) {
        self.calls += 1;
        self.prompt_tokens += usage.prompt_tokens;
        self.completion_tokens += usage.completion_tokens;
        self.cached_prompt_tokens += usage.cached_prompt_tokens;
        match cost {
            Some(c) => *self.cost.get_or_insert(0.0) += c,
            None => self.unpriced_calls += 1,
        }
    }
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// The first reply was valid.
    Ok,
    /// The first reply was invalid; the repair reply was valid.
    Repaired,
    /// Both replies were invalid and the step may fall back (a review keeps its draft, the
    /// workflow's wording its defaults, its mapping none).
    KeptPrevious,
}

/// A compile's conversation with its model: every ask opens with the same system prompt, goes
/// out with the same options and adds to the same usage total.
pub(crate) struct Session<'a> {
    pub model: &'a dyn ChatModel,
    /// The compiler's templates; the repair turn is [`REPAIR`] among them.
    pub prompts: &'a Templates,
    pub options: &'a CompileOptions,
    pub system: String,
    pub usage: CompileUsage,
}

/// The system template of either compiler's template set (given the domain).
pub(crate) const SYSTEM: &str = "system.jinja";
/// The repair template of either compiler's template set.
pub(crate) const REPAIR: &str = "repair.jinja";

impl<'a> Session<'a> {
    /// A session over `prompts` whose system prompt is their [`SYSTEM`] for `domain`.
    pub(crate) fn open(
        model: &'a dyn ChatModel,
        prompts: &'a Templates,
        options: &'a CompileOptions,
        domain: &str,
    ) -> Result<Session<'a>, TemplateError> {
        let system = prompts.render(SYSTEM, &serde_json::json!({ "domain": domain }))?;
        Ok(Session {
            model,
            prompts,
            options,
            system,
            usage: CompileUsage::default(),
        })
    }
}

/// One question to the model.
pub(crate) struct Ask {
    pub user: String,
    pub json_mode: bool,
    /// The reply format the repair turn names (the checklist compiler's `YAML`/`JSON`); the
    /// workflow's repair template asks for JSON itself and takes none.
    pub format: Option<&'static str>,
    /// Whether the step may end without a value after both replies failed.
    pub may_keep_previous: bool,
}

/// How one step went: its outcome and tallies, the same in both compilers' report records
/// (flattened into each record after its step and target).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTally {
    pub outcome: StepOutcome,
    /// Model calls made (1, or 2 with a repair).
    pub calls: u32,
    /// Reviews only: whether the accepted version differs from the one reviewed (the compiler
    /// sets it; an ask leaves it unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<bool>,
    /// Validation errors of the rejected replies, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// What an ask gave: the validated value (none only when the step may keep its previous
/// version) and the step's tallies, which the compiler puts into its report record.
pub(crate) struct Reply<T> {
    pub value: Option<T>,
    pub tally: StepTally,
}

/// Why an ask failed; the compiler adds its step and target.
pub(crate) enum AskError {
    Model(LlmError),
    Prompt(TemplateError),
    /// Both replies invalid in a step that may not keep a previous version: the last error.
    Invalid(String),
}

impl Session<'_> {
    /// Asks `ask.user` after the system prompt; `validate` checks a reply. An invalid first
    /// reply gets one repair turn (the reply, then the rendered repair template quoting the
    /// error); a second invalid reply fails the ask unless it
    /// [may keep the previous version](Ask::may_keep_previous).
    pub(crate) async fn ask_validated<T>(
        &mut self,
        ask: Ask,
        validate: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Reply<T>, AskError> {
        let mut messages = vec![
            Message::System {
                content: Some(self.system.as_str().into()),
            },
            Message::User(ParticipantMessage {
                content: Some(ask.user),
                ..Default::default()
            }),
        ];
        let mut reply = Reply {
            value: None,
            tally: StepTally {
                outcome: StepOutcome::Ok,
                calls: 0,
                changed: None,
                errors: Vec::new(),
                usage: Usage::default(),
                cost: None,
            },
        };
        for attempt in 0..2 {
            let text = self
                .complete(&messages, ask.json_mode, &mut reply.tally)
                .await?;
            match validate(&text) {
                Ok(v) => {
                    reply.value = Some(v);
                    if attempt == 1 {
                        reply.tally.outcome = StepOutcome::Repaired;
                    }
                    break;
                }
                Err(error) => {
                    reply.tally.errors.push(error.clone());
                    if attempt == 0 {
                        let vars = match ask.format {
                            Some(format) => serde_json::json!({ "error": error, "format": format }),
                            None => serde_json::json!({ "error": error }),
                        };
                        let repair = self
                            .prompts
                            .render(REPAIR, &vars)
                            .map_err(AskError::Prompt)?;
                        messages.push(Message::Assistant(ParticipantMessage {
                            content: Some(text),
                            ..Default::default()
                        }));
                        messages.push(Message::User(ParticipantMessage {
                            content: Some(repair),
                            ..Default::default()
                        }));
                    }
                }
            }
        }
        if reply.value.is_none() {
            if !ask.may_keep_previous {
                let error = reply.tally.errors.last().cloned().unwrap_or_default();
                return Err(AskError::Invalid(error));
            }
            reply.tally.outcome = StepOutcome::KeptPrevious;
        }
        Ok(reply)
    }

    /// One request with the compile options' sampling settings; its usage and cost are added
    /// to the step's tallies and to the compile's total.
    async fn complete(
        &mut self,
        messages: &[Message],
        json_mode: bool,
        step: &mut StepTally,
    ) -> Result<String, AskError> {
        let options = self.options;
        let mut req = ChatRequest::new(options.model_name.clone(), messages.to_vec())
            .with_json_mode(json_mode);
        req.temperature = options.temperature;
        req.seed = options.seed;
        req.max_tokens = options.max_tokens;
        let resp = self.model.complete(&req).await.map_err(AskError::Model)?;
        step.calls += 1;
        step.usage.prompt_tokens += resp.usage.prompt_tokens;
        step.usage.completion_tokens += resp.usage.completion_tokens;
        step.usage.cached_prompt_tokens += resp.usage.cached_prompt_tokens;
        if let Some(c) = resp.cost {
            *step.cost.get_or_insert(0.0) += c;
        }
        self.usage.add(&resp.usage, resp.cost);
        Ok(resp.content.unwrap_or_default())
    }
}
