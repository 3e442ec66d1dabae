//! `tauguard run --check`: before any money is spent, one tiny request to each distinct model
//! of a config that answers over HTTP (agent, user, judge, guard verifier), reported as
//! reachable or rejected with the reason. The response cache is bypassed: a cached answer
//! proves nothing about the endpoint today.

use crate::config::{ModelSection, RunConfig};
use crate::runner::RunError;
use std::sync::Arc;
use tauguard_core::Message;
use tauguard_core::message::ParticipantMessage;
use tauguard_llm::model::{ChatModel, ChatRequest};
use tauguard_llm::{CacheMode, ErrorClass, ModelFactory};

/// One checked model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCheck {
    /// The roles it serves, e.g. `agent, guard.verifier`.
    pub roles: String,
    pub provider: String,
    pub model: String,
    /// `Ok` with a note when the server answered (a reply that is unusable still proves the
    /// endpoint, key and model work), `Err` with the reason otherwise.
    pub result: Result<String, String>,
}

/// Sends one request per distinct non-`sim` model of `cfg`, in role order.
pub async fn check_models(cfg: &RunConfig) -> Result<Vec<ModelCheck>, RunError> {
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
        if m.is_sim() {
            continue;
        }
        match distinct.iter_mut().find(|(_, d)| d.spec() == m.spec()) {
            Some((names, _)) => names.push(role),
            None => distinct.push((vec![role], m)),
        }
    }
    if distinct.is_empty() {
        return Ok(Vec::new());
    }
    let factory = ModelFactory::new(cfg.llm.clone())
        .map_err(|e| RunError::Model {
            role: "llm".into(),
            message: e.to_string(),
        })?
        .with_cache_mode(CacheMode::Off);
    let mut out = Vec::new();
    for (roles, m) in distinct {
        let result = match factory.build(&m.spec()) {
            Ok(model) => probe(model).await,
            Err(e) => Err(e.to_string()),
        };
        out.push(ModelCheck {
            roles: roles.join(", "),
            provider: m.provider.clone(),
            model: m.model.clone(),
            result,
        });
    }
    Ok(out)
}

/// One short completion.
async fn probe(model: Arc<dyn ChatModel>) -> Result<String, String> {
    let ask = Message::User(ParticipantMessage {
        content: Some("Reply with the single word OK.".into()),
        ..Default::default()
    });
    let req = ChatRequest::new("", vec![ask]).with_max_tokens(16);
    match model.complete(&req).await {
        Ok(r) => Ok(match r.cost {
            Some(c) => format!("{} HTTP attempt(s), ${c:.6}", r.attempts),
            None => format!("{} HTTP attempt(s), cost unknown", r.attempts),
        }),
        Err(e) if e.class() == ErrorClass::ModelOutput => {
            Ok(format!("answered, but unusably: {e}"))
        }
        Err(e) => Err(e.to_string()),
    }
}
