//! Provider names and what they resolve to: the one registry a model table's `provider` is
//! looked up in, for the HTTP providers and the offline `sim` family alike.
//!
//! `sim` is a built-in provider like `openai`: [`LlmConfig::resolve`] turns any name into a
//! [`Provider`], and a role's model is a [`RoleModel`], so callers ask the type whether a role
//! is offline instead of comparing names. This crate cannot build a sim model — a sim agent or
//! user plays one task with one seed, which only the orchestrator knows — so a resolved `sim`
//! provider carries no endpoint and a role it plays is [`RoleModel::Sim`], which the caller
//! builds per simulation with `tauguard-sim`. The name `sim` cannot be configured under
//! `[providers]`: records name the provider of every role, and their readers (exports,
//! reports) know the offline family by that one name.

use crate::config::{LlmConfig, OPENROUTER, ProviderConfig, ProviderKind};
use crate::error::LlmError;
use crate::model::ChatModel;
use std::fmt;
use std::sync::Arc;

/// The offline family's provider name, as configs write it and records carry it.
pub const SIM_PROVIDER: &str = "sim";

/// What a built-in provider name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinProvider {
    /// A vendor's public endpoint, with [`ProviderConfig::builtin`] settings.
    Http(ProviderKind),
    /// OpenRouter's OpenAI-compatible endpoint ([`ProviderConfig::openrouter`]): τ²-bench's
    /// Qwen embeddings go through it.
    OpenRouter,
    /// The offline `sim` family.
    Sim,
}

/// The provider names that need no `[providers]` entry, in the order error messages list them.
pub const BUILTIN_PROVIDERS: [(&str, BuiltinProvider); 5] = [
    ("openai", BuiltinProvider::Http(ProviderKind::OpenAi)),
    ("anthropic", BuiltinProvider::Http(ProviderKind::Anthropic)),
    ("gemini", BuiltinProvider::Http(ProviderKind::Gemini)),
    (OPENROUTER, BuiltinProvider::OpenRouter),
    (SIM_PROVIDER, BuiltinProvider::Sim),
];

/// A provider name resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Provider {
    /// An endpoint spoken to over HTTP.
    Http(ProviderConfig),
    /// The offline `sim` family.
    Sim,
}

impl Provider {
    pub fn is_sim(&self) -> bool {
        matches!(self, Provider::Sim)
    }
}

/// Whether `name` is the offline family's provider (it cannot be configured otherwise).
pub fn is_sim_provider(name: &str) -> bool {
    name == SIM_PROVIDER
}

/// What plays a model role: a model built from its spec, or the offline family's.
#[derive(Clone)]
pub enum RoleModel {
    /// A model the factory built (over HTTP, cached when a cache is configured).
    Built(Arc<dyn ChatModel>),
    /// The `sim` family's model of the role, which the caller builds per simulation.
    Sim,
}

impl RoleModel {
    pub fn is_sim(&self) -> bool {
        matches!(self, RoleModel::Sim)
    }

    /// The built model; `None` for the sim family.
    pub fn built(&self) -> Option<&Arc<dyn ChatModel>> {
        match self {
            RoleModel::Built(m) => Some(m),
            RoleModel::Sim => None,
        }
    }
}

impl fmt::Debug for RoleModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleModel::Built(m) => f.debug_tuple("Built").field(&m.id()).finish(),
            RoleModel::Sim => f.write_str("Sim"),
        }
    }
}

impl LlmConfig {
    /// What provider `name` is: the configured entry, else a built-in name (see
    /// [`BUILTIN_PROVIDERS`]); an unknown name is an error listing every name that resolves.
    pub fn resolve(&self, name: &str) -> Result<Provider, LlmError> {
        if let Some(p) = self.providers.get(name) {
            return Ok(Provider::Http(p.clone()));
        }
        match BUILTIN_PROVIDERS.iter().find(|(n, _)| *n == name) {
            Some((_, BuiltinProvider::Http(kind))) => {
                Ok(Provider::Http(ProviderConfig::builtin(*kind)))
            }
            Some((_, BuiltinProvider::OpenRouter)) => {
                Ok(Provider::Http(ProviderConfig::openrouter()))
            }
            Some((_, BuiltinProvider::Sim)) => Ok(Provider::Sim),
            None => {
                let known: Vec<&str> = self.providers.keys().map(String::as_str).collect();
                let builtin: Vec<&str> = BUILTIN_PROVIDERS.iter().map(|(n, _)| *n).collect();
                Err(LlmError::Config(format!(
                    "unknown provider `{name}`\nhint: configured providers: [{}]; built-in: {}",
                    known.join(", "),
                    builtin.join(", ")
                )))
            }
        }
    }

    /// The HTTP settings of provider `name`; the sim family has none.
    pub fn provider(&self, name: &str) -> Result<ProviderConfig, LlmError> {
        match self.resolve(name)? {
            Provider::Http(p) => Ok(p),
            Provider::Sim => Err(LlmError::Config(format!(
                "provider `{name}` is the offline sim family: it plays the roles of a run \
                 (agent, user, judge, verifier) and has no endpoint to send requests to"
            ))),
        }
    }

    /// The configured provider names reserved for a built-in that is not an HTTP endpoint.
    pub(crate) fn check_reserved_names(&self) -> Result<(), LlmError> {
        match self.providers.keys().find(|n| is_sim_provider(n)) {
            Some(name) => Err(LlmError::Config(format!(
                "provider `{name}`: the name is the offline sim family's and cannot be configured \
                 (name the HTTP provider otherwise)"
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_name_resolves_and_unknown_names_list_them_all() {
        let cfg = LlmConfig::default();
        for (name, builtin) in BUILTIN_PROVIDERS {
            let p = cfg.resolve(name).expect(name);
            assert_eq!(p.is_sim(), builtin == BuiltinProvider::Sim, "{name}");
            assert_eq!(cfg.provider(name).is_ok(), !p.is_sim(), "{name}");
        }
        let err = cfg.resolve("nope").unwrap_err().to_string();
        for (name, _) in BUILTIN_PROVIDERS {
            assert!(err.contains(name), "{err}");
        }
        let err = cfg.provider(SIM_PROVIDER).unwrap_err().to_string();
        assert!(err.contains("offline sim family"), "{err}");
    }

    #[test]
    fn the_sim_name_cannot_be_configured() {
        let cfg: LlmConfig = toml::from_str("[providers.sim]\nkind = \"openai\"").unwrap();
        let err = cfg.validate().unwrap_err().to_string();
        assert!(err.contains("provider `sim`"), "{err}");
    }
}
