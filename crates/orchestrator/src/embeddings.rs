//! Dense retrieval's embedding model in a run (banking_knowledge's `*_embeddings*` variants,
//! through `tauguard_env::DenseIndex`): built with the plan from `[models] embeddings`, the
//! documents of each domain that embeds embedded once before the first simulation (one
//! request, cached per text like completions), and each query embedded by the simulation
//! loop right before the tool call that needs it, so the call itself stays synchronous and
//! the loop never blocks the runtime. A query's usage is the record's `embeddings` role; the
//! documents' is the run's (printed with the closing lines, not in any record).

use crate::comparability::Item;
use crate::config::{ModelSection, RunConfig};
use crate::grid::NameOr;
use crate::plan::DomainPlan;
use crate::runner::RunError;
use std::path::PathBuf;
use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::record::RoleUsage;
use tauguard_env::{DenseIndex, UpstreamEmbedder};
use tauguard_llm::{EmbeddingModel, Embeddings, LlmError, ModelFactory};

/// The config key naming the model.
pub(crate) const KEY: &str = "models.embeddings";

fn config_error(cfg: &RunConfig, message: String) -> RunError {
    crate::plan::at_key(cfg, KEY, message)
}

/// The domains of the plan that embed, with their index.
fn embedding_domains(
    domains: &[DomainPlan],
) -> impl Iterator<Item = (&DomainPlan, &dyn DenseIndex)> {
    domains
        .iter()
        .filter_map(|d| d.data.base.dense().map(|x| (d, x)))
}

/// The configured model table, when the config names one.
pub(crate) fn section(cfg: &RunConfig) -> Option<&ModelSection> {
    match &cfg.models.embeddings {
        Some(NameOr::Table(m)) => Some(m),
        _ => None,
    }
}

/// The embedding model of the run: `None` when no domain embeds. A domain that embeds with
/// no model configured is an error naming the key and upstream's model; a key that is not set
/// is the factory's error naming the variable.
pub(crate) fn build(
    cfg: &RunConfig,
    domains: &[DomainPlan],
    factory: Option<&ModelFactory>,
) -> Result<Option<Arc<dyn EmbeddingModel>>, RunError> {
    let Some((d, dense)) = embedding_domains(domains).next() else {
        return Ok(None);
    };
    let up = dense.upstream();
    let variant = d
        .data
        .options
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let section = match &cfg.models.embeddings {
        Some(NameOr::Table(m)) => m,
        Some(NameOr::Name(alias)) => {
            return Err(config_error(
                cfg,
                format!("the alias `{alias}` was not resolved (no model catalog was read)"),
            ));
        }
        None => {
            return Err(config_error(
                cfg,
                format!(
                    "{} under `{variant}` embeds its knowledge base; set `[models] embeddings = \"{}\"` (upstream's `{}` through {}, key in {}) or a `[models.embeddings]` table",
                    d.data.domain,
                    up.alias,
                    up.model,
                    up.embedder_type,
                    upstream_key(up)
                ),
            ));
        }
    };
    let factory = factory.ok_or_else(|| config_error(cfg, "no model factory was built".into()))?;
    factory
        .build_embedder(&section.spec())
        .map(Some)
        .map_err(|cause| RunError::Model {
            role: "embeddings".into(),
            cause,
        })
}

fn upstream_key(up: UpstreamEmbedder) -> &'static str {
    match up.embedder_type {
        "openrouter" => "OPENROUTER_API_KEY",
        _ => "OPENAI_API_KEY",
    }
}

/// The stamp item of a domain that embeds: upstream's when the model and the encoding are
/// the ones upstream's embedder sends.
pub(crate) fn stamp_item(dense: &dyn DenseIndex, m: &ModelSection) -> Item {
    let up = dense.upstream();
    let encoding = m
        .extra
        .get("encoding_format")
        .and_then(|v| v.as_str())
        .unwrap_or("base64");
    let other_extra = m.extra.keys().any(|k| k != "encoding_format");
    let detail = format!(
        "embeddings `{}` of provider `{}` (encoding {encoding}); upstream's: `{}` through {} (encoding {})",
        m.model, m.provider, up.model, up.embedder_type, up.encoding_format
    );
    Item {
        name: "embeddings",
        holds: m.model == up.model && encoding == up.encoding_format && !other_extra,
        detail,
    }
}

/// Adds the embeddings item to the stamp of every domain that embeds.
pub(crate) fn stamp(cfg: &RunConfig, domains: &mut [DomainPlan]) {
    let Some(m) = section(cfg) else { return };
    for d in domains {
        if let Some(item) = d.data.base.dense().map(|dense| stamp_item(dense, m)) {
            d.stamp_items.push(item);
        }
    }
}

/// What a dry run says of a domain's knowledge-base embedding before the first simulation
/// (each `KB_search` then embeds its query, a handful of tokens, once per distinct query).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DocumentsEstimate {
    pub domain: String,
    /// `provider/model`.
    pub model: String,
    pub documents: usize,
    /// Input tokens, estimated from characters (see `crate::role_prompts::CHARS_PER_TOKEN`).
    pub tokens: u64,
    /// Dollars at most (a cached rerun costs nothing); `None` without a price.
    pub cost: Option<f64>,
}

/// The dry run's [`DocumentsEstimate`]s of a plan.
pub(crate) fn estimate_documents(plan: &crate::plan::RunPlan) -> Vec<DocumentsEstimate> {
    let Some(model) = &plan.models.embeddings else {
        return Vec::new();
    };
    embedding_domains(&plan.domains)
        .map(|(d, dense)| {
            let docs = dense.documents();
            let chars: usize = docs.iter().map(|t| t.chars().count()).sum();
            let tokens = (chars as f64 / crate::role_prompts::CHARS_PER_TOKEN).ceil() as u64;
            let usage = tauguard_core::message::Usage {
                prompt_tokens: tokens,
                ..Default::default()
            };
            DocumentsEstimate {
                domain: d.data.domain.to_string(),
                model: model.id().to_string(),
                documents: docs.len(),
                tokens,
                cost: plan
                    .models
                    .factory
                    .as_ref()
                    .and_then(|f| f.prices().cost(model.model(), &usage)),
            }
        })
        .collect()
}

/// Embeds the documents of every domain that embeds and has no vectors yet. Nothing is
/// written before it succeeds; a failure names the endpoint.
pub(crate) async fn embed_documents(
    domains: &[DomainPlan],
    model: Option<&Arc<dyn EmbeddingModel>>,
) -> Result<Option<RoleUsage>, RunError> {
    let Some(model) = model else {
        return Ok(None);
    };
    let mut usage = RoleUsage::default();
    for (d, dense) in embedding_domains(domains).filter(|(_, x)| !x.installed()) {
        let texts = dense.documents();
        let what = || {
            format!(
                "embedding the {} documents of {} with `{}`",
                texts.len(),
                d.data.domain,
                model.id()
            )
        };
        let failed = |message: String| RunError::Input {
            path: PathBuf::from(model.url()),
            message: format!("{}: {message}", what()),
        };
        let out = model
            .embed(&texts)
            .await
            .map_err(|cause| RunError::Embedding {
                url: PathBuf::from(model.url()),
                what: what(),
                cause: Box::new(cause),
            })?;
        add(&mut usage, &out);
        dense.install(out.vectors).map_err(failed)?;
    }
    Ok(Some(usage))
}

/// Embeds the query of a tool call that needs one, before the call runs; its usage, when a
/// call was made.
pub(crate) async fn prefetch_query(
    data: &tauguard_env::DomainData,
    model: Option<&dyn EmbeddingModel>,
    side: Requestor,
    tool: &str,
    args: &serde_json::Map<String, serde_json::Value>,
) -> Result<Option<Embeddings>, LlmError> {
    let Some(dense) = data.base.dense().filter(|_| side == Requestor::Assistant) else {
        return Ok(None);
    };
    let Some(pending) = dense.pending_query(tool, args) else {
        return Ok(None);
    };
    let Some(model) = model else {
        return Err(LlmError::Config(format!(
            "`{tool}` needs an embedding model and the run has none"
        )));
    };
    let out = model.embed(std::slice::from_ref(&pending.text)).await?;
    let vector = out.vectors.first().map(Vec::as_slice).unwrap_or_default();
    dense
        .install_query(&pending.key, vector)
        .map_err(|reason| LlmError::InvalidResponse {
            provider: model.id().to_string(),
            model: model.model().to_string(),
            reason,
        })?;
    Ok(Some(out))
}

/// Adds one embeddings call to a role's usage (cost unknown as soon as one call's is).
pub(crate) fn add(into: &mut RoleUsage, e: &Embeddings) {
    let first = into.calls == 0;
    into.calls += 1;
    into.usage.prompt_tokens += e.usage.prompt_tokens;
    into.cost = match (first, into.cost, e.cost) {
        (true, _, c) => c,
        (false, Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    into.latency_seconds += e.latency.as_secs_f64();
    if e.requests == 0 {
        into.cache_hits += 1;
    }
}
