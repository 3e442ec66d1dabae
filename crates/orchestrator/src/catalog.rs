//! The model catalog (`configs/models.toml`): the papers' model names as aliases of provider
//! model ids, with their capability settings and prices, so a grid can say
//! `agents = ["gpt-5.4", "claude-sonnet-4.6"]` and `--dry-run` can price it.
//!
//! Resolving replaces each alias in `grid.agents` / `grid.verifiers` by its model table (named
//! after the alias) and adds the alias's price and capabilities to `[llm]` where the config
//! does not set its own: the resolved config is what runs, what `config.json` holds and what
//! the config hash covers, so a changed catalog entry is a changed config on `--resume`.

use crate::config::{ConfigError, ModelSection, Role, RunConfig};
use crate::grid::{NameOr, PAIRED};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauguard_llm::{CapabilityOverride, ModelPrice};

/// One price with where it was read and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogPrice {
    pub input_per_mtok: f64,
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
    pub output_per_mtok: f64,
    /// Where the price was read (a URL).
    pub source: String,
    /// When it was read (`YYYY-MM-DD`).
    pub as_of: String,
}

/// One alias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogEntry {
    /// The name papers use (`GPT 5.4`).
    #[serde(default)]
    pub paper_name: Option<String>,
    pub provider: String,
    /// The provider's model id, exactly as sent.
    pub model: String,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub timeout_secs: Option<f64>,
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub capabilities: Option<CapabilityOverride>,
    #[serde(default)]
    pub price: Option<CatalogPrice>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    #[serde(default)]
    models: BTreeMap<String, CatalogEntry>,
}

/// A loaded catalog.
#[derive(Debug, Clone)]
pub struct ModelCatalog {
    pub path: PathBuf,
    pub models: BTreeMap<String, CatalogEntry>,
}

impl ModelCatalog {
    pub fn load(path: &Path) -> Result<ModelCatalog, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Io {
            what: "model catalog",
            path: path.into(),
            cause,
        })?;
        let invalid = |message: String| ConfigError::Invalid {
            path: path.into(),
            message,
        };
        let de = toml::Deserializer::parse(&text).map_err(|e| invalid(e.message().into()))?;
        let file: CatalogFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let key = e.path().to_string();
            invalid(format!("at `{key}`: {}", e.into_inner().message()))
        })?;
        for (alias, e) in &file.models {
            if let Some(p) = &e.price {
                let prices = [
                    Some(p.input_per_mtok),
                    p.cached_input_per_mtok,
                    Some(p.output_per_mtok),
                ];
                if prices
                    .into_iter()
                    .flatten()
                    .any(|v| !v.is_finite() || v < 0.0)
                {
                    return Err(invalid(format!(
                        "at `models.{alias}.price`: prices must be finite and not negative"
                    )));
                }
            }
        }
        Ok(ModelCatalog {
            path: path.into(),
            models: file.models,
        })
    }

    /// The model table an alias stands for, labelled with the alias.
    pub fn section(&self, alias: &str) -> Option<ModelSection> {
        let e = self.models.get(alias)?;
        Some(ModelSection {
            provider: e.provider.clone(),
            model: e.model.clone(),
            name: Some(alias.to_string()),
            temperature: e.temperature,
            top_p: e.top_p,
            max_tokens: e.max_tokens,
            timeout_secs: e.timeout_secs,
            faults: None,
            behaviour: None,
            extra: e.extra.clone(),
        })
    }

    fn known(&self) -> String {
        self.models.keys().cloned().collect::<Vec<_>>().join(", ")
    }

    /// The model table `alias` (named at config key `key`) stands for, its price and
    /// capabilities adopted into `llm`; an unknown alias is an error naming the catalog and
    /// the aliases it knows.
    fn resolve(
        &self,
        llm: &mut tauguard_llm::LlmConfig,
        key: &str,
        alias: &str,
    ) -> Result<ModelSection, String> {
        let section = self.section(alias).ok_or_else(|| {
            format!(
                "at `{key}`: unknown model alias `{alias}` (known in `{}`: {})",
                self.path.display(),
                self.known()
            )
        })?;
        adopt(llm, &self.models[alias]);
        Ok(section)
    }
}

/// Adds `entry`'s price and capabilities to `llm` where it has none for the entry's model.
fn adopt(llm: &mut tauguard_llm::LlmConfig, entry: &CatalogEntry) {
    if let Some(p) = &entry.price
        && llm.prices.get(&entry.model).is_none()
    {
        llm.prices.insert(
            entry.model.clone(),
            ModelPrice {
                input_per_mtok: p.input_per_mtok,
                output_per_mtok: p.output_per_mtok,
                cached_input_per_mtok: p.cached_input_per_mtok,
            },
        );
    }
    if let Some(c) = &entry.capabilities {
        llm.capabilities
            .entry(entry.model.clone())
            .or_insert_with(|| c.clone());
    }
}

impl RunConfig {
    /// Adds the catalog's price and capabilities of every model table naming a catalog model
    /// by its provider and id (not only aliases), where `[llm]` sets none: a config written
    /// with provider ids is priced from the same table as one written with aliases, instead
    /// of recording tokens without dollars. Like alias resolution, this changes the config
    /// that runs and its hash. Returns the models priced this way.
    pub fn adopt_catalog_prices(&mut self, catalog: &ModelCatalog) -> Vec<String> {
        let named: Vec<(String, String)> = self
            .model_sections()
            .into_iter()
            .map(|(_, _, m)| (m.provider.clone(), m.model.clone()))
            .collect();
        let mut priced = Vec::new();
        for (provider, model) in named {
            let Some(entry) = catalog
                .models
                .values()
                .find(|e| e.provider == provider && e.model == model)
            else {
                continue;
            };
            let had = self.llm.prices.get(&model).is_some();
            adopt(&mut self.llm, entry);
            if !had && self.llm.prices.get(&model).is_some() && !priced.contains(&model) {
                priced.push(model);
            }
        }
        priced
    }

    /// Whether `grid.agents` or `grid.verifiers` name a model by alias.
    pub fn has_aliases(&self) -> bool {
        self.grid
            .agents
            .iter()
            .chain(&self.grid.verifiers)
            .any(|e| matches!(e, NameOr::Name(n) if n != PAIRED))
            || matches!(self.models.embeddings, Some(NameOr::Name(_)))
    }

    /// Replaces every alias by its catalog entry (see the module doc); `config` is the config
    /// file, for errors.
    pub fn resolve_aliases(
        &mut self,
        config: &Path,
        catalog: &ModelCatalog,
    ) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: config.into(),
            message,
        };
        let mut resolved = Vec::new();
        for (list, key, role) in [
            (&mut self.grid.agents, "grid.agents", Role::Agent),
            (&mut self.grid.verifiers, "grid.verifiers", Role::Verifier),
        ] {
            for (i, e) in list.iter_mut().enumerate() {
                let NameOr::Name(alias) = e else { continue };
                if alias == PAIRED && role == Role::Verifier {
                    continue;
                }
                let at = format!("{key}[{i}]");
                let section = catalog
                    .resolve(&mut self.llm, &at, alias)
                    .map_err(invalid)?;
                *e = NameOr::Table(section);
                resolved.push((at, role));
            }
        }
        if let Some(NameOr::Name(alias)) = &self.models.embeddings {
            let section = catalog
                .resolve(&mut self.llm, "models.embeddings", alias)
                .map_err(invalid)?;
            self.models.embeddings = Some(NameOr::Table(section));
            resolved.push(("models.embeddings".to_string(), Role::Embeddings));
        }
        self.llm
            .validate()
            .map_err(|e| invalid(format!("at `llm` (with `{}`): {e}", catalog.path.display())))?;
        for (key, role) in resolved {
            let m = self
                .model_sections()
                .into_iter()
                .find(|(k, _, _)| *k == key)
                .map(|(_, _, m)| m.clone())
                .expect("a resolved alias is a model table");
            self.check_model(&key, role, &m)
                .map_err(|e| invalid(format!("{e} (alias from `{}`)", catalog.path.display())))?;
        }
        self.check_axes().map_err(invalid)
    }
}
