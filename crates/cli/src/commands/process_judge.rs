//! The judge of the process view's dialogue predicates: the offline stand-in by default, or
//! any provider's model with `--process-judge PROVIDER/MODEL`. A model judges a predicate as
//! τ²-bench's NL-assertion judge judges an assertion (the same prompt and reply, through
//! `tauguard_orchestrator::llm_judge`), over the transcript up to the point the
//! predicate constrains; a failed or unparseable reply leaves the predicate unjudged.
//! Simulations are judged as many at once as the provider's `max_concurrency` allows
//! (`tauguard_metrics::procedure::verdicts`), each on its own thread blocking on a shared
//! multi-threaded runtime, so the calls overlap and the verdicts keep the records' order.

use crate::exit::{Classify, CliError};
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use tauguard_core::Message;
use tauguard_llm::{ChatModel, ModelFactory, ModelSpec, Provider};
use tauguard_metrics::procedure::Predicate;
use tauguard_metrics::procedure::{DialogueJudge, JudgeKind, StandInJudge};

/// A model judging dialogue predicates.
pub(crate) struct ModelJudge {
    chat: Arc<dyn ChatModel>,
    rt: tokio::runtime::Runtime,
    concurrency: usize,
}

impl DialogueJudge for ModelJudge {
    fn kind(&self) -> JudgeKind {
        JudgeKind::Model
    }

    fn concurrency(&self) -> usize {
        self.concurrency
    }

    fn judge(
        &self,
        _predicate: Predicate,
        question: &str,
        _cues: &[String],
        transcript: &[Message],
    ) -> Option<bool> {
        let asked = [question.to_string()];
        let judged = tauguard_orchestrator::llm_judge(self.chat.as_ref(), transcript, &asked, 0, 0);
        let (checks, _) = self.rt.block_on(judged).ok()?;
        checks.first().map(|c| c.met)
    }
}

/// The judge `--process-judge` names (with `--llm-config`'s providers), else the stand-in.
pub(crate) fn build(
    named: Option<&str>,
    llm_config: Option<&Path>,
) -> Result<Box<dyn DialogueJudge>, CliError> {
    let Some(named) = named else {
        return Ok(Box::new(StandInJudge));
    };
    let (provider, model) = super::compile::model_arg("--process-judge", named)?;
    let llm = super::compile::llm_config(llm_config)?;
    let concurrency = match llm
        .resolve(&provider)
        .with_context(|| format!("--process-judge `{named}`"))
        .bad_input()?
    {
        // The sim family's judge is the stand-in.
        Provider::Sim => return Ok(Box::new(StandInJudge)),
        Provider::Http(p) => p.max_concurrency,
    };
    let chat = ModelFactory::new(llm)
        .bad_input()?
        .build(&ModelSpec::new(provider, model))
        .with_context(|| format!("--process-judge `{named}`"))
        .bad_input()?;
    // Threads judging at once each block on this runtime; its workers drive their I/O.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .internal()?;
    Ok(Box::new(ModelJudge {
        chat,
        rt,
        concurrency,
    }))
}
