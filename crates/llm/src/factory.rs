//! Second stage of the config: [`ModelFactory`] turns an [`LlmConfig`] and [`ModelSpec`]s into
//! runnable `Arc<dyn ChatModel>`s ([`ModelFactory::role_model`]: or, for the `sim` provider,
//! the offline family's [`RoleModel::Sim`]).
//!
//! One endpoint (`http.rs`) per provider name is built on first use and shared by every model
//! of that provider, so its rate limiter and concurrency bound are per provider, not per model. The
//! API key is read from the environment variable named by `api_key_env` at that moment (a
//! provider the run never uses needs no key). With a cache configured, models come wrapped in
//! [`CachedModel`] over one shared [`ResponseCache`].
//!
//! A built model carries its spec: sampling defaults, `extra`, the per-model time-out and the
//! model's resolved capabilities (`capabilities.rs`) apply to every request it serves, so a
//! caller that starts from `ChatRequest::new("", …)` (every role does) still sends what the
//! config says.

use crate::cache::{CacheMode, CacheStats, CachedModel, ResponseCache};
use crate::capabilities::Capabilities;
use crate::config::{LlmConfig, ModelSpec};
use crate::cost::PriceTable;
use crate::error::LlmError;
use crate::http::{ApiKey, Endpoint};
use crate::model::ChatModel;
use crate::provider::{Provider, RoleModel};
use crate::remote::{RemoteModel, RequestDefaults};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Builds models from specs; holds the per-provider endpoints and the shared cache.
pub struct ModelFactory {
    config: LlmConfig,
    prices: Arc<PriceTable>,
    cache: Option<Arc<ResponseCache>>,
    endpoints: Mutex<BTreeMap<String, Arc<Endpoint>>>,
    env: EnvLookup,
}

impl fmt::Debug for ModelFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelFactory")
            .field(
                "providers",
                &self.config.providers.keys().collect::<Vec<_>>(),
            )
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl ModelFactory {
    /// Validates `config`; keys are read later, per provider, by [`ModelFactory::build`].
    pub fn new(config: LlmConfig) -> Result<ModelFactory, LlmError> {
        config.validate()?;
        let cache = config
            .cache
            .as_ref()
            .filter(|c| c.mode != CacheMode::Off)
            .map(|c| Arc::new(ResponseCache::new(&c.dir, c.mode)));
        Ok(ModelFactory {
            prices: Arc::new(config.prices.clone()),
            config,
            cache,
            endpoints: Mutex::new(BTreeMap::new()),
            env: Arc::new(|name: &str| std::env::var(name).ok()),
        })
    }

    /// Replaces the environment lookup (tests, or keys from a secrets manager).
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// Overrides the configured cache mode (`--no-cache` → [`CacheMode::Off`]). Call before
    /// building models.
    pub fn with_cache_mode(mut self, mode: CacheMode) -> Self {
        self.cache = match (&self.config.cache, mode) {
            (_, CacheMode::Off) | (None, _) => None,
            (Some(c), mode) => Some(Arc::new(ResponseCache::new(&c.dir, mode))),
        };
        self
    }

    pub fn prices(&self) -> &Arc<PriceTable> {
        &self.prices
    }

    pub fn cache(&self) -> Option<&Arc<ResponseCache>> {
        self.cache.as_ref()
    }

    /// Counters for the end-of-run line (`None` without a cache).
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(|c| c.stats())
    }

    /// The capabilities `spec`'s model gets (family default, config overrides, `extra`).
    pub fn capabilities(&self, spec: &ModelSpec) -> Result<Capabilities, LlmError> {
        let cfg = self.config.provider(&spec.provider)?;
        Ok(Capabilities::resolve(
            cfg.kind,
            &cfg.resolved_base_url(),
            &spec.model,
            &self.config.capabilities,
            &spec.extra,
        ))
    }

    /// What plays a role configured with `spec`: its provider resolved as every provider is
    /// ([`LlmConfig::resolve`]), a built model for an HTTP provider, [`RoleModel::Sim`] for
    /// the offline family (which the caller builds per simulation).
    pub fn role_model(&self, spec: &ModelSpec) -> Result<RoleModel, LlmError> {
        match self.config.resolve(&spec.provider)? {
            Provider::Sim => Ok(RoleModel::Sim),
            Provider::Http(_) => self.build(spec).map(RoleModel::Built),
        }
    }

    /// A model for `spec`, cached when a cache is configured.
    pub fn build(&self, spec: &ModelSpec) -> Result<Arc<dyn ChatModel>, LlmError> {
        spec.validate()?;
        let caps = self.capabilities(spec)?;
        let endpoint = self.endpoint(&spec.provider)?;
        let model = RemoteModel::new(
            endpoint,
            &spec.model,
            RequestDefaults::of(spec),
            caps,
            spec.timeout_secs.map(Duration::from_secs_f64),
        );
        Ok(match &self.cache {
            Some(cache) => Arc::new(CachedModel::new(
                model,
                cache.clone(),
                Some(self.prices.clone()),
            )),
            None => Arc::new(model),
        })
    }

    /// An embedding model for `spec` on its provider's endpoint (OpenAI protocol only),
    /// caching each text when a cache is configured.
    pub fn build_embedder(
        &self,
        spec: &ModelSpec,
    ) -> Result<Arc<dyn crate::embeddings::EmbeddingModel>, LlmError> {
        spec.validate()?;
        let cfg = self.config.provider(&spec.provider)?;
        if cfg.kind != crate::config::ProviderKind::OpenAi {
            return Err(LlmError::Config(format!(
                "provider `{}` speaks the {} protocol; embeddings need an OpenAI-compatible provider",
                spec.provider,
                cfg.kind.as_str()
            )));
        }
        let endpoint = self.endpoint(&spec.provider)?;
        Ok(Arc::new(crate::embeddings::RemoteEmbedder::new(
            endpoint,
            spec,
            self.cache.clone(),
        )))
    }

    /// What the server of `spec`'s provider says the model is, when the provider sets
    /// `identify = true`; `None` otherwise (`identity.rs`). One blocking request.
    pub fn identify(&self, spec: &ModelSpec) -> Result<Option<serde_json::Value>, LlmError> {
        if !self.config.provider(&spec.provider)?.identify {
            return Ok(None);
        }
        let endpoint = self.endpoint(&spec.provider)?;
        crate::identity::identify(&endpoint, &spec.model).map(Some)
    }

    fn endpoint(&self, provider: &str) -> Result<Arc<Endpoint>, LlmError> {
        let mut endpoints = self
            .endpoints
            .lock()
            .map_err(|_| LlmError::Config("endpoint registry lock poisoned".into()))?;
        if let Some(ep) = endpoints.get(provider) {
            return Ok(ep.clone());
        }
        let cfg = self.config.provider(provider)?;
        cfg.validate(provider)?;
        let key = match &cfg.api_key_env {
            None => None,
            Some(var) => match (self.env)(var).filter(|k| !k.trim().is_empty()) {
                Some(k) => Some(ApiKey::new(k.trim().to_string())),
                None => {
                    return Err(LlmError::MissingApiKey {
                        provider: provider.to_string(),
                        var: var.clone(),
                    });
                }
            },
        };
        let ep = Arc::new(Endpoint::new(provider, &cfg, key, self.prices.clone())?);
        endpoints.insert(provider.to_string(), ep.clone());
        Ok(ep)
    }
}

/// `factory.build(spec)`.
pub fn build_model(
    spec: &ModelSpec,
    factory: &ModelFactory,
) -> Result<Arc<dyn ChatModel>, LlmError> {
    factory.build(spec)
}
