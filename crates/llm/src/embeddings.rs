//! Embedding models over the OpenAI protocol: `POST {base_url}/embeddings` on a provider's
//! endpoint, so an embeddings call shares the provider's key, retries, rate limit,
//! concurrency bound, tally and prices with the completions of the run.
//!
//! Request body: `{"input": [texts], "model", "encoding_format": "base64"}` with the spec's
//! `extra` merged last. `base64` is what the OpenAI Python SDK sends when its caller names no
//! format (τ²-bench's `OpenAIEmbedder`), and it decodes the vectors as little-endian float32;
//! `extra = { encoding_format = "float" }` sends what τ²-bench's `OpenRouterEmbedder` sends
//! (plain JSON numbers). Both are read back as `f64` (a float32 widened exactly), the values
//! numpy holds upstream. All texts of one call go in one request, as upstream sends them
//! (`EmbeddingIndexer` with no batch size); the reply's `data` is read in order, one vector
//! per text. Usage: `usage.prompt_tokens`, priced as input tokens.
//!
//! Cache: each text is its own entry in the run's [`ResponseCache`] directory, keyed by
//! blake3 over the canonical JSON of the embedder's scope (protocol, base URL, model, `extra`,
//! the headers digest — never a credential) and the text; a call sends only the texts it
//! misses, in one request, so a rerun sends nothing. A hit costs nothing and counts as a
//! cache hit of the run's cache; it adds nothing to the saved cost (a text's share of a
//! batch's tokens is not known).

use crate::cache::{CacheMode, ResponseCache};
use crate::config::ModelSpec;
use crate::error::LlmError;
use crate::http::Endpoint;
use crate::model::{BoxFuture, deep_merge};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tauguard_core::message::Usage;
use tauguard_core::pyjson;

/// Bumped whenever the key derivation or the entry layout of embedding entries changes.
const EMBEDDING_CACHE_FORMAT: u32 = 1;

/// The vectors of one call and what it took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Embeddings {
    /// One vector per input text, in input order.
    pub vectors: Vec<Vec<f64>>,
    /// Tokens billed (requests sent by this call only; cache hits bill nothing).
    pub usage: Usage,
    /// Dollars; `None` when the model has no price and a request was sent.
    pub cost: Option<f64>,
    /// HTTP requests this call needed (0 when every text was cached).
    pub requests: u32,
    /// Texts answered from the cache.
    pub cache_hits: u64,
    pub latency: Duration,
}

/// A model that embeds texts. Object-safe, like [`crate::ChatModel`].
pub trait EmbeddingModel: Send + Sync {
    /// `provider/model`.
    fn id(&self) -> &str;

    /// The model name sent.
    fn model(&self) -> &str;

    /// Where requests go (`{base_url}/embeddings`), for error messages.
    fn url(&self) -> String;

    /// Embeds `input` (at least one text).
    fn embed<'a>(&'a self, input: &'a [String]) -> BoxFuture<'a, Result<Embeddings, LlmError>>;
}

/// An embedding model reached over HTTP.
pub struct RemoteEmbedder {
    endpoint: Arc<Endpoint>,
    model: String,
    id: String,
    extra: Map<String, Value>,
    timeout: Duration,
    cache: Option<Arc<ResponseCache>>,
}

impl std::fmt::Debug for RemoteEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEmbedder")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    model: String,
    vector: Vec<f64>,
}

pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/embeddings")
}

/// The request body for `input`.
pub(crate) fn build_body(model: &str, input: &[String], extra: &Map<String, Value>) -> Value {
    let mut body = Map::new();
    body.insert("input".into(), json!(input));
    body.insert("model".into(), json!(model));
    body.insert("encoding_format".into(), json!("base64"));
    deep_merge(&mut body, extra);
    Value::Object(body)
}

/// The vectors of a reply, in `data` order; `expected` texts were sent.
pub(crate) fn decode(body: &Value, expected: usize) -> Result<Vec<Vec<f64>>, String> {
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no `data` array in the reply")?;
    if data.len() != expected {
        return Err(format!(
            "{} embeddings in the reply for {expected} texts",
            data.len()
        ));
    }
    data.iter()
        .enumerate()
        .map(|(i, item)| match item.get("embedding") {
            Some(Value::Array(xs)) => xs
                .iter()
                .map(|x| {
                    x.as_f64()
                        .ok_or_else(|| format!("`data[{i}].embedding` holds a non-number"))
                })
                .collect(),
            Some(Value::String(b64)) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| format!("`data[{i}].embedding` is not base64: {e}"))?;
                if bytes.len() % 4 != 0 {
                    return Err(format!(
                        "`data[{i}].embedding` is {} bytes, not float32s",
                        bytes.len()
                    ));
                }
                Ok(bytes
                    .chunks_exact(4)
                    .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect())
            }
            _ => Err(format!("`data[{i}].embedding` is missing")),
        })
        .collect()
}

impl RemoteEmbedder {
    pub(crate) fn new(
        endpoint: Arc<Endpoint>,
        spec: &ModelSpec,
        cache: Option<Arc<ResponseCache>>,
    ) -> RemoteEmbedder {
        RemoteEmbedder {
            id: format!("{}/{}", endpoint.name, spec.model),
            timeout: spec
                .timeout_secs
                .map_or(endpoint.timeout, Duration::from_secs_f64),
            model: spec.model.clone(),
            extra: spec.extra.clone(),
            endpoint,
            cache: cache.filter(|c| c.mode() != CacheMode::Off),
        }
    }

    /// What besides the text determines a vector; never a credential.
    fn scope(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.endpoint.kind.as_str(),
            self.endpoint.base_url,
            self.model,
            pyjson::dumps_sorted(&Value::Object(self.extra.clone())),
            self.endpoint.headers_digest
        )
    }

    /// The cache key of one text.
    pub fn key(&self, text: &str) -> String {
        let identity = json!({
            "format": EMBEDDING_CACHE_FORMAT,
            "kind": "embedding",
            "scope": self.scope(),
            "input": text,
        });
        blake3::hash(pyjson::dumps_sorted(&identity).as_bytes())
            .to_hex()
            .to_string()
    }

    async fn cached(&self, key: &str) -> Option<Vec<f64>> {
        let cache = self.cache.as_ref()?;
        let entry: Entry = cache.get_entry(key).await?;
        (entry.format == EMBEDDING_CACHE_FORMAT && entry.key == key).then_some(entry.vector)
    }

    async fn call(&self, input: &[String]) -> Result<Embeddings, LlmError> {
        let started = Instant::now();
        let mut vectors: Vec<Option<Vec<f64>>> = Vec::with_capacity(input.len());
        let mut keys = Vec::with_capacity(input.len());
        for text in input {
            let key = self.key(text);
            vectors.push(self.cached(&key).await);
            keys.push(key);
        }
        let missing: Vec<usize> = (0..input.len()).filter(|i| vectors[*i].is_none()).collect();
        let mut out = Embeddings {
            cache_hits: (input.len() - missing.len()) as u64,
            cost: Some(0.0),
            ..Embeddings::default()
        };
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|i| input[*i].clone()).collect();
            let body = build_body(&self.model, &texts, &self.extra);
            let ep = &self.endpoint;
            let reply = ep
                .post_json(&self.model, &url(&ep.base_url), &body, self.timeout)
                .await?;
            let fresh =
                decode(&reply.body, texts.len()).map_err(|reason| LlmError::InvalidResponse {
                    provider: ep.name.clone(),
                    model: self.model.clone(),
                    reason: ep.redact(&reason),
                })?;
            for (i, v) in missing.iter().zip(fresh) {
                if let Some(cache) = &self.cache {
                    let entry = Entry {
                        format: EMBEDDING_CACHE_FORMAT,
                        key: keys[*i].clone(),
                        model: self.model.clone(),
                        vector: v.clone(),
                    };
                    cache.put_entry(&keys[*i], &entry).await;
                }
                vectors[*i] = Some(v);
            }
            out.usage = reply.usage;
            out.cost = reply.cost;
            out.requests = reply.attempts;
        }
        out.vectors = vectors.into_iter().flatten().collect();
        out.latency = started.elapsed();
        Ok(out)
    }
}

impl EmbeddingModel for RemoteEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn url(&self) -> String {
        url(&self.endpoint.base_url)
    }

    fn embed<'a>(&'a self, input: &'a [String]) -> BoxFuture<'a, Result<Embeddings, LlmError>> {
        Box::pin(self.call(input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_vectors_are_little_endian_float32() {
        let floats = [0.5f32, -1.25, 3.0e-3];
        let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        let reply =
            json!({"data": [{"embedding": b64, "index": 0}, {"embedding": [1, 2.5], "index": 1}]});
        let v = decode(&reply, 2).expect("decodes");
        assert_eq!(
            v[0],
            floats.iter().map(|f| f64::from(*f)).collect::<Vec<_>>()
        );
        assert_eq!(v[1], vec![1.0, 2.5]);
        assert!(decode(&reply, 3).unwrap_err().contains("2 embeddings"));
    }

    #[test]
    fn extra_overrides_the_encoding() {
        let mut extra = Map::new();
        extra.insert("encoding_format".into(), json!("float"));
        let body = build_body("m", &["a".to_string()], &extra);
        assert_eq!(
            body,
            json!({"input": ["a"], "model": "m", "encoding_format": "float"})
        );
    }
}
