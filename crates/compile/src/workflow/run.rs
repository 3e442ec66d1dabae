//! The workflow compile's side of the shared session: every stage asks for JSON through it,
//! and each ask becomes one [`StepRecord`] with its stage, so the report lists every model
//! step in order.

use super::WorkflowCompileError;
use super::report::{Step, StepRecord};
use crate::session::{Ask, AskError, Session};

pub(super) struct Run<'a> {
    pub session: Session<'a>,
    pub steps: Vec<StepRecord>,
}

impl Run<'_> {
    /// Asks `user` for `target`; `parse` validates a reply. Returns `None` only for a step that
    /// [may keep the previous version](Step::may_keep_previous) after both replies failed;
    /// any other step fails with [`WorkflowCompileError::Invalid`].
    pub(super) async fn ask<T>(
        &mut self,
        step: Step,
        target: &str,
        user: String,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, WorkflowCompileError> {
        let ask = Ask {
            user,
            json_mode: true,
            format: None,
            may_keep_previous: step.may_keep_previous(),
        };
        let reply = match self.session.ask_validated(ask, parse).await {
            Ok(reply) => reply,
            Err(AskError::Prompt(e)) => return Err(WorkflowCompileError::Prompt(e)),
            Err(AskError::Model(cause)) => {
                return Err(WorkflowCompileError::Model {
                    step,
                    target: target.to_string(),
                    cause,
                });
            }
            Err(AskError::Invalid(error)) => {
                return Err(WorkflowCompileError::Invalid {
                    step,
                    target: target.to_string(),
                    error,
                });
            }
        };
        self.steps.push(StepRecord {
            stage: step.stage(),
            step,
            target: target.to_string(),
            tally: reply.tally,
        });
        Ok(reply.value)
    }

    /// Records on the last step whether its accepted version differs from the one it reviewed.
    pub(super) fn mark_changed(&mut self, changed: bool) {
        if let Some(record) = self.steps.last_mut() {
            record.tally.changed = Some(changed);
        }
    }
}
