//! One model table of a config (`[models.agent]`, `[[grid.agents]]`, `[guard.verifier]`, …)
//! and the role it serves: the provider name it gives, resolved like every provider's by
//! `tauguard_llm::LlmConfig::resolve` (`sim` for the offline family), its sampling settings,
//! and the sim-only keys (faults, behaviour) that `RunConfig::check_model` allows only where
//! they apply.

use serde::{Deserialize, Serialize};
use tauguard_sim::faults::FaultProfile;

/// One model role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// A provider name, resolved by `tauguard_llm::LlmConfig::resolve`: `sim` for the offline
    /// family, a built-in HTTP provider or an `[llm.providers]` entry.
    pub provider: String,
    pub model: String,
    /// Grid agents and verifiers: the label cell ids, overrides and reports use (default: the
    /// model name; an alias of `configs/models.toml` sets it to the alias).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Sampling defaults of every request this model serves (unset: not sent).
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Per-attempt time-out of this model (HTTP providers), overriding the provider's.
    #[serde(default)]
    pub timeout_secs: Option<f64>,
    /// Sim agent only: fault probabilities.
    #[serde(default)]
    pub faults: Option<FaultProfile>,
    /// Sim user only: how it answers confirmation requests (`[models.user.behaviour]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<tauguard_sim::behaviour::UserBehaviour>,
    /// Extra request body parameters (HTTP providers).
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ModelSection {
    /// The `sim` family's model of `role` with no settings (agents: the fault-injecting
    /// `sim-agent`).
    pub fn sim(role: Role) -> ModelSection {
        ModelSection {
            provider: tauguard_llm::SIM_PROVIDER.into(),
            model: role.sim_model().into(),
            name: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            timeout_secs: None,
            faults: None,
            behaviour: None,
            extra: serde_json::Map::new(),
        }
    }

    /// Whether the offline family plays this model. The name `sim` resolves to nothing else
    /// (`tauguard_llm::provider`: it cannot be configured), so this holds without the config.
    pub fn is_sim(&self) -> bool {
        tauguard_llm::is_sim_provider(&self.provider)
    }

    /// The provider-level spec of a non-`sim` model.
    pub fn spec(&self) -> tauguard_llm::ModelSpec {
        tauguard_llm::ModelSpec {
            provider: self.provider.clone(),
            model: self.model.clone(),
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            timeout_secs: self.timeout_secs,
            extra: self.extra.clone(),
        }
    }
}

/// The role a model table serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Agent,
    User,
    Judge,
    Verifier,
    /// Embeds texts: never a `sim` model.
    Embeddings,
}

impl Role {
    /// The `sim` provider's model of the role (agents have several).
    pub fn sim_model(self) -> &'static str {
        match self {
            Role::Agent => "sim-agent",
            Role::User => "sim-user",
            Role::Judge => "sim-judge",
            Role::Verifier => "sim-verifier",
            Role::Embeddings => "",
        }
    }
}
