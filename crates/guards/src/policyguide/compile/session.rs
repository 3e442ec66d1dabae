//! One conversation step with the compiling model, shared by every stage: ask, extract and
//! validate the JSON reply, and on failure repair once with a turn that quotes the validation
//! errors. Keeping the loop in one place means every stage repairs, records usage and fails
//! the same way.

use super::WorkflowCompileError;
use super::prompts;
use super::report::{Step, StepOutcome, StepRecord};
use crate::policyguard::compile::extract;
use crate::policyguard::compile::{CompileOptions, CompileUsage, complete_counted};
use crate::policyguard::templates::Templates;
use serde::de::DeserializeOwned;
use tauguard_core::Message;
use tauguard_core::message::{ParticipantMessage, Usage};
use tauguard_llm::model::ChatModel;

pub(super) struct Session<'a> {
    pub model: &'a dyn ChatModel,
    pub prompts: &'a Templates,
    pub options: &'a CompileOptions,
    pub system: String,
    pub usage: CompileUsage,
    pub steps: Vec<StepRecord>,
}

impl Session<'_> {
    /// Asks `user` for `target`; `parse` validates a reply. Returns `None` only for a step that
    /// [may keep the previous version](Step::may_keep_previous) after both replies failed;
    /// any other step fails with [`WorkflowCompileError::Invalid`].
    pub async fn ask<T>(
        &mut self,
        step: Step,
        target: &str,
        user: String,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, WorkflowCompileError> {
        let mut messages = vec![
            Message::System {
                content: Some(self.system.as_str().into()),
            },
            Message::User(ParticipantMessage {
                content: Some(user),
                ..Default::default()
            }),
        ];
        let mut record = StepRecord {
            stage: step.stage(),
            step,
            target: target.to_string(),
            outcome: StepOutcome::Ok,
            calls: 0,
            changed: None,
            errors: Vec::new(),
            usage: Usage::default(),
            cost: None,
        };
        let mut value = None;
        for attempt in 0..2 {
            let reply = self.call(step, target, &messages, &mut record).await?;
            match parse(&reply) {
                Ok(v) => {
                    value = Some(v);
                    if attempt == 1 {
                        record.outcome = StepOutcome::Repaired;
                    }
                    break;
                }
                Err(error) => {
                    record.errors.push(error.clone());
                    if attempt == 0 {
                        let repair = self
                            .prompts
                            .render(prompts::REPAIR, &serde_json::json!({ "error": error }))?;
                        messages.push(Message::Assistant(ParticipantMessage {
                            content: Some(reply),
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
        if value.is_none() {
            if !step.may_keep_previous() {
                return Err(WorkflowCompileError::Invalid {
                    step,
                    target: target.to_string(),
                    error: record.errors.last().cloned().unwrap_or_default(),
                });
            }
            record.outcome = StepOutcome::KeptPrevious;
        }
        self.steps.push(record);
        Ok(value)
    }

    /// Records on the last step whether its accepted version differs from the one it reviewed.
    pub fn mark_changed(&mut self, changed: bool) {
        if let Some(record) = self.steps.last_mut() {
            record.changed = Some(changed);
        }
    }

    async fn call(
        &mut self,
        step: Step,
        target: &str,
        messages: &[Message],
        record: &mut StepRecord,
    ) -> Result<String, WorkflowCompileError> {
        let (tally, usage) = (record.tally(), &mut self.usage);
        complete_counted(self.model, self.options, messages, true, tally, usage)
            .await
            .map_err(|cause| WorkflowCompileError::Model {
                step,
                target: target.to_string(),
                cause,
            })
    }
}

/// The first JSON candidate of `reply` (fences and prose stripped) that deserializes as `T`.
/// Otherwise the error of the first candidate that is JSON at all — located by its JSON path,
/// e.g. ``at `nodes[2].kind`: unknown variant …`` — or a syntax error when none is.
pub(super) fn parse_json<T: DeserializeOwned>(reply: &str, shape: &str) -> Result<T, String> {
    if reply.trim().is_empty() {
        return Err(format!("the reply was empty; expected {shape}"));
    }
    let mut schema_error = None;
    let mut syntax_error = None;
    for candidate in extract::json_candidates(reply) {
        let de = &mut serde_json::Deserializer::from_str(&candidate);
        match serde_path_to_error::deserialize::<_, T>(de) {
            Ok(v) => return Ok(v),
            Err(e) => {
                let at = e.path().to_string();
                let inner = e.into_inner();
                if inner.is_data() {
                    schema_error.get_or_insert(format!("at `{at}`: {inner}"));
                } else {
                    syntax_error.get_or_insert(inner.to_string());
                }
            }
        }
    }
    Err(match (schema_error, syntax_error) {
        (Some(e), _) => e,
        (None, Some(e)) => format!("no JSON object found in the reply ({e}); expected {shape}"),
        (None, None) => format!("no JSON object found in the reply; expected {shape}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policyguide::Graph;

    #[test]
    fn a_schema_error_names_its_json_path() {
        let reply = "Here:\n```json\n{\"id\": \"x\", \"nodes\": [{\"id\": \"a\", \"kind\": \"fork\", \"actor\": \"agent\", \"action\": \"a\", \"condition\": \"c\"}], \"edges\": []}\n```";
        let err = parse_json::<Graph>(reply, "a graph").unwrap_err();
        assert!(err.starts_with("at `nodes[0].kind`"), "{err}");
        let err = parse_json::<Graph>(
            "{\"id\": \"x\", \"nodes\": [], \"edges\": [], \"next\": 1}",
            "a graph",
        )
        .unwrap_err();
        assert!(err.contains("unknown field `next`"), "{err}");
        let err = parse_json::<Graph>("I could not do it.", "a graph").unwrap_err();
        assert!(
            err.contains("no JSON object") && err.contains("a graph"),
            "{err}"
        );
    }
}
