//! One model exchange of a verifier, the same for the PolicyGuard verifier and the LLM guide:
//! ask, parse the reply, and after an unparseable one a single repair turn (the reply, then
//! the repair template quoting the parse error) before giving up. What each call spends joins
//! the guard's usage; `info` gets `attempts`, `repaired` and `parse_errors` as both guards
//! record them, and every unparseable reply goes to the failed attempts, which the caller
//! writes where its record puts them.

use super::Sampling;
use super::failure::{FailedAttempts, note_model_failure};
use super::parse::ParseError;
use super::templates::TemplateError;
use super::verifier::text_message;
use crate::seam::{GuardContext, GuardError};
use serde_json::{Map, Value, json};
use tauguard_core::Message;
use tauguard_core::record::{FailCause, RoleUsage};
use tauguard_llm::{ChatModel, ChatResponse};

/// Who is asked, with which settings, for which simulation.
pub(crate) struct Asker<'a> {
    model: &'a dyn ChatModel,
    sampling: &'a Sampling,
    ctx: &'a GuardContext<'a>,
}

/// How an exchange ended, and what it gathered for the guard's decision or reply.
pub(crate) struct Exchange<T> {
    pub outcome: Exchanged<T>,
    pub usage: RoleUsage,
    pub info: Map<String, Value>,
    pub failed: FailedAttempts,
}

/// How an exchange ended.
pub(crate) enum Exchanged<T> {
    /// A reply parsed, the first or the repair.
    Parsed(T),
    /// Both replies were unparseable; the fail mode decides, for [`FailedAttempts::parse_cause`].
    Unparsed,
    /// A model call failed after its retries: already recorded in `info` (with the failed
    /// attempts); the fail mode decides for this cause.
    Unanswered(FailCause),
}

impl<'a> Asker<'a> {
    pub(crate) fn new(
        model: &'a dyn ChatModel,
        sampling: &'a Sampling,
        ctx: &'a GuardContext<'a>,
    ) -> Asker<'a> {
        Asker {
            model,
            sampling,
            ctx,
        }
    }

    /// Sends `messages`, then at most one repair turn rendered by `repair`; `parse` reads a
    /// reply. With `name_last_error`, a second unparseable reply's error is also written on
    /// its own as `info.parse_error`; `info` is what the guard records before the exchange's
    /// keys. Only a fatal model error (credentials, unknown model) or a template error is
    /// returned as an error.
    pub(crate) async fn exchange<T>(
        &self,
        messages: Vec<Message>,
        repair: impl FnOnce(&str) -> Result<String, TemplateError>,
        parse: impl Fn(&str) -> Result<T, ParseError>,
        name_last_error: bool,
        info: Map<String, Value>,
    ) -> Result<Exchange<T>, GuardError> {
        let mut tally = Exchange {
            outcome: Exchanged::Unparsed,
            usage: RoleUsage::default(),
            info,
            failed: FailedAttempts::default(),
        };
        tally.outcome = self
            .run(messages, repair, parse, name_last_error, &mut tally)
            .await?;
        Ok(tally)
    }

    async fn run<T>(
        &self,
        mut messages: Vec<Message>,
        repair: impl FnOnce(&str) -> Result<String, TemplateError>,
        parse: impl Fn(&str) -> Result<T, ParseError>,
        name_last_error: bool,
        tally: &mut Exchange<T>,
    ) -> Result<Exchanged<T>, GuardError> {
        let first = match self
            .model
            .complete(&self.sampling.request(self.ctx, messages.clone()))
            .await
        {
            Ok(r) => r,
            Err(e) => return self.unanswered(e, 1, tally),
        };
        add_usage(&mut tally.usage, &first);
        let first_text = first.content.unwrap_or_default();
        let e1 = match parse(&first_text) {
            Ok(v) => {
                tally.info.insert("attempts".into(), json!(1));
                return Ok(Exchanged::Parsed(v));
            }
            Err(e) => e.0,
        };
        let finish = first.finish_reason.as_deref();
        tally.failed.unparseable(1, &first_text, finish, &e1);
        push_repair_turn(&mut messages, first_text, repair(&e1)?);
        let mut errors = vec![e1];
        let second = match self
            .model
            .complete(&self.sampling.request(self.ctx, messages))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                tally.info.insert("repaired".into(), json!(false));
                tally.info.insert("parse_errors".into(), json!(errors));
                return self.unanswered(e, 2, tally);
            }
        };
        add_usage(&mut tally.usage, &second);
        tally.info.insert("attempts".into(), json!(2));
        let second_text = second.content.as_deref().unwrap_or_default();
        let parsed = parse(second_text);
        // Only a repair that parsed repaired anything.
        tally.info.insert("repaired".into(), json!(parsed.is_ok()));
        let outcome = match parsed {
            Ok(v) => Exchanged::Parsed(v),
            Err(e2) => {
                let finish = second.finish_reason.as_deref();
                tally.failed.unparseable(2, second_text, finish, &e2.0);
                if name_last_error {
                    tally.info.insert("parse_error".into(), json!(e2.0));
                }
                errors.push(e2.0);
                Exchanged::Unparsed
            }
        };
        tally.info.insert("parse_errors".into(), json!(errors));
        Ok(outcome)
    }

    fn unanswered<T>(
        &self,
        e: tauguard_llm::LlmError,
        attempt: u32,
        tally: &mut Exchange<T>,
    ) -> Result<Exchanged<T>, GuardError> {
        let failed = std::mem::take(&mut tally.failed);
        let cause = note_model_failure(e, attempt, &mut tally.usage, &mut tally.info, failed)?;
        Ok(Exchanged::Unanswered(cause))
    }
}

/// Appends the repair turn: the model's unparsable reply (named when empty, since providers
/// refuse an empty assistant turn) and the repair prompt quoting why it failed.
fn push_repair_turn(messages: &mut Vec<Message>, reply: String, repair: String) {
    let bad = if reply.trim().is_empty() {
        "(empty reply)".to_string()
    } else {
        reply
    };
    messages.push(text_message(false, bad));
    messages.push(text_message(true, repair));
}

/// Adds one completion's usage, cost, latency and truncation to the guard's usage, as every
/// role's calls are summed (`tauguard_llm::add_response`).
fn add_usage(acc: &mut RoleUsage, resp: &ChatResponse) {
    tauguard_llm::add_response(acc, resp);
}
