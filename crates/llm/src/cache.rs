//! On-disk, content-addressed response cache: an identical rerun costs nothing.
//!
//! Key: BLAKE3 over a canonical JSON rendering (sorted keys, Python number forms via
//! `tauguard_core::pyjson`) of the model's cache scope (protocol, base URL, bound model, the
//! spec's defaults and `extra`, the capabilities, a digest of the provider's extra headers —
//! never a credential), the model name sent, the messages *as sent* (role, content, tool-call
//! ids, names and arguments, tool-result ids and error flags; not timestamps, turn indices,
//! costs or usage), the tools, temperature, top_p, max_tokens, seed, trial, JSON mode and
//! extra parameters.
//!
//! Layout: `<dir>/<first 2 hex>/<64 hex>.json`, one entry per file, written to a temp file in
//! the same directory and renamed into place. An unreadable or corrupt entry is a miss (and is
//! overwritten by the fresh answer). Only successful responses are stored, so errors (including
//! malformed tool arguments and empty replies) are retried for real on the next attempt.
//!
//! A hit returns the stored response with `cache_hit: true`, `attempts: 0`, the stored usage,
//! `cost: Some(0.0)` (a replay spends nothing), the replay's own time as `latency` and the
//! stored latency as `original_latency_seconds`. What it would have cost (the stored usage
//! priced by the current table under the model that answers the request — the bound model
//! when the request names none —, else the stored cost) is added to
//! [`CacheStats::saved_cost`]; a hit with neither is counted in
//! [`CacheStats::unpriced_hits`], so the saving is reported unknown rather than short.
//! [`CacheStats`] counts hits, misses, writes and errors for the end-of-run line.

use crate::cost::PriceTable;
use crate::error::LlmError;
use crate::model::{BoxFuture, ChatModel, ChatRequest, ChatResponse};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tauguard_core::{Message, pyjson};

/// Bumped whenever the key derivation or the entry layout changes.
const CACHE_FORMAT: u32 = 2;

/// Whether the cache is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// Serve hits, store misses.
    #[default]
    ReadWrite,
    /// Never serve, always store (refreshes entries).
    WriteOnly,
    /// Neither (`--no-cache`).
    Off,
}

/// Counters of one cache over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub writes: u64,
    /// Unreadable/corrupt entries and failed writes (never fatal).
    pub errors: u64,
    /// Dollars the priced hits would have cost.
    pub saved_cost: f64,
    /// Hits of a model without a price: what they saved is unknown.
    #[serde(default)]
    pub unpriced_hits: u64,
}

impl fmt::Display for CacheStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.hits + self.misses;
        let rate = if total == 0 {
            0.0
        } else {
            100.0 * self.hits as f64 / total as f64
        };
        let saved = match self.unpriced_hits {
            0 => format!("${:.4}", self.saved_cost),
            n if n == self.hits => "unknown (no price for the hits' model)".to_string(),
            n => format!(
                "unknown (${:.4} on priced hits; {n} hits without a price)",
                self.saved_cost
            ),
        };
        write!(
            f,
            "llm cache: {} hits, {} misses ({rate:.1}% hit rate), {} writes, {} errors, saved {saved}",
            self.hits, self.misses, self.writes, self.errors
        )
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    model: String,
    response: ChatResponse,
}

/// A directory of cached responses, shared by every model of a run.
#[derive(Debug)]
pub struct ResponseCache {
    dir: PathBuf,
    mode: CacheMode,
    hits: AtomicU64,
    misses: AtomicU64,
    writes: AtomicU64,
    errors: AtomicU64,
    saved_cost: Mutex<f64>,
    unpriced_hits: AtomicU64,
    tmp_counter: AtomicU64,
}

impl ResponseCache {
    /// A cache rooted at `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>, mode: CacheMode) -> ResponseCache {
        ResponseCache {
            dir: dir.into(),
            mode,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            saved_cost: Mutex::new(0.0),
            unpriced_hits: AtomicU64::new(0),
            tmp_counter: AtomicU64::new(0),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            saved_cost: self.saved_cost.lock().map(|c| *c).unwrap_or(0.0),
            unpriced_hits: self.unpriced_hits.load(Ordering::Relaxed),
        }
    }

    /// The hex key of `req` sent to a model with cache scope `scope`.
    pub fn key(scope: &str, req: &ChatRequest) -> String {
        let messages: Vec<Value> = req.messages.iter().map(message_identity).collect();
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        let identity = json!({
            "format": CACHE_FORMAT,
            "scope": scope,
            "model": req.model,
            "messages": messages,
            "tools": tools,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "max_tokens": req.max_tokens,
            "seed": req.seed,
            "trial": req.trial,
            "json_mode": req.json_mode,
            "extra": req.extra,
        });
        blake3::hash(pyjson::dumps_sorted(&identity).as_bytes())
            .to_hex()
            .to_string()
    }

    /// Where the entry for `key` lives.
    pub fn entry_path(&self, key: &str) -> PathBuf {
        let shard = key.get(..2).unwrap_or("00");
        self.dir.join(shard).join(format!("{key}.json"))
    }

    /// The stored response for `key`, if any; counts a hit or a miss.
    pub async fn get(&self, key: &str) -> Option<ChatResponse> {
        self.lookup::<Entry>(key, |e| e.format == CACHE_FORMAT && e.key == key)
            .await
            .map(|e| e.response)
    }

    /// Stores `response` under `key` (temp file + rename). Failures are counted, not raised.
    pub async fn put(&self, key: &str, model: &str, response: &ChatResponse) {
        if self.mode == CacheMode::Off {
            return;
        }
        let mut stored = response.clone();
        stored.cache_hit = false;
        stored.original_latency_seconds = None;
        let entry = Entry {
            format: CACHE_FORMAT,
            key: key.to_string(),
            model: model.to_string(),
            response: stored,
        };
        match self.write_entry(key, &entry).await {
            Ok(()) => self.writes.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.errors.fetch_add(1, Ordering::Relaxed),
        };
    }

    /// Another kind of entry stored under `key` (embeddings), if readable; counts a hit or a
    /// miss as [`ResponseCache::get`] does.
    pub(crate) async fn get_entry<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.lookup::<T>(key, |_| true).await
    }

    /// The entry under `key` if the mode reads, it parses as `T` and `accept` takes it; an
    /// unreadable or refused entry counts as an error and a miss.
    async fn lookup<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        accept: impl Fn(&T) -> bool,
    ) -> Option<T> {
        match self.mode {
            CacheMode::ReadWrite => {}
            CacheMode::WriteOnly => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            CacheMode::Off => return None,
        }
        let found = match tokio::fs::read(self.entry_path(key)).await {
            Ok(bytes) => match serde_json::from_slice::<T>(&bytes) {
                Ok(e) if accept(&e) => Some(e),
                _ => {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                    None
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                None
            }
        };
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Stores another kind of entry under `key`; failures are counted, not raised.
    pub(crate) async fn put_entry<T: Serialize>(&self, key: &str, entry: &T) {
        if self.mode == CacheMode::Off {
            return;
        }
        match self.write_entry(key, entry).await {
            Ok(()) => self.writes.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.errors.fetch_add(1, Ordering::Relaxed),
        };
    }

    async fn write_entry<T: Serialize>(&self, key: &str, entry: &T) -> std::io::Result<()> {
        let path = self.entry_path(key);
        let shard = path.parent().unwrap_or(&self.dir).to_path_buf();
        tokio::fs::create_dir_all(&shard).await?;
        let bytes = serde_json::to_vec_pretty(entry).map_err(std::io::Error::other)?;
        let tmp = shard.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            self.tmp_counter.fetch_add(1, Ordering::Relaxed)
        ));
        if let Err(e) = tokio::fs::write(&tmp, &bytes).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        if let Err(e) = tokio::fs::rename(&tmp, &path).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        Ok(())
    }

    fn add_saved(&self, cost: Option<f64>) {
        match cost {
            Some(c) => {
                if let Ok(mut saved) = self.saved_cost.lock() {
                    *saved += c;
                }
            }
            None => {
                self.unpriced_hits.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// What of a message reaches a provider (and so determines the answer).
fn message_identity(m: &Message) -> Value {
    match m {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User(p) | Message::Assistant(p) => {
            let calls: Vec<Value> = m
                .tool_calls()
                .iter()
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": Value::Object(c.arguments.clone())}))
                .collect();
            let mut out = Map::new();
            out.insert("role".into(), json!(m.role()));
            out.insert("content".into(), json!(p.content));
            out.insert("tool_calls".into(), Value::Array(calls));
            Value::Object(out)
        }
        Message::Tool(t) => {
            json!({"role": "tool", "id": t.id, "content": t.content, "error": t.error})
        }
    }
}

/// A [`ChatModel`] that answers from a [`ResponseCache`] when it can.
pub struct CachedModel<M> {
    inner: M,
    cache: Arc<ResponseCache>,
    prices: Option<Arc<PriceTable>>,
}

impl<M: ChatModel> std::fmt::Debug for CachedModel<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedModel")
            .field("model", &self.inner.id())
            .finish_non_exhaustive()
    }
}

impl<M: ChatModel> CachedModel<M> {
    /// `prices`, when given, re-prices hits (so a price-table change applies to cached runs).
    pub fn new(inner: M, cache: Arc<ResponseCache>, prices: Option<Arc<PriceTable>>) -> Self {
        CachedModel {
            inner,
            cache,
            prices,
        }
    }

    pub fn inner(&self) -> &M {
        &self.inner
    }

    pub fn cache(&self) -> &Arc<ResponseCache> {
        &self.cache
    }

    async fn call(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        if self.cache.mode() == CacheMode::Off {
            return self.inner.complete(req).await;
        }
        let key = ResponseCache::key(&self.inner.cache_scope(), req);
        let model = self.inner.resolved_model(req);
        let started = std::time::Instant::now();
        if let Some(mut hit) = self.cache.get(&key).await {
            let would_cost = match self.prices.as_ref().and_then(|p| p.get(model)) {
                Some(price) => Some(price.cost(&hit.usage)),
                None => hit.cost,
            };
            self.cache.add_saved(would_cost);
            hit.cost = Some(0.0);
            hit.cache_hit = true;
            hit.attempts = 0;
            hit.original_latency_seconds = Some(hit.latency.as_secs_f64());
            hit.latency = started.elapsed();
            return Ok(hit);
        }
        let response = self.inner.complete(req).await?;
        self.cache.put(&key, model, &response).await;
        Ok(response)
    }
}

impl<M: ChatModel> ChatModel for CachedModel<M> {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn cache_scope(&self) -> String {
        self.inner.cache_scope()
    }

    fn resolved_model<'a>(&'a self, req: &'a ChatRequest) -> &'a str {
        self.inner.resolved_model(req)
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.call(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::message::ParticipantMessage;

    fn user(text: &str, timestamp: &str) -> Message {
        Message::User(ParticipantMessage {
            content: Some(text.into()),
            timestamp: Some(timestamp.into()),
            turn_idx: Some(3),
            ..Default::default()
        })
    }

    #[test]
    fn key_ignores_bookkeeping_but_not_identity() {
        let a = ChatRequest::new("m", vec![user("hi", "2024-01-01T00:00:00")]).with_seed(1);
        let b = ChatRequest::new("m", vec![user("hi", "2025-06-01T12:00:00")]).with_seed(1);
        assert_eq!(ResponseCache::key("s", &a), ResponseCache::key("s", &b));
        assert_ne!(
            ResponseCache::key("s", &a),
            ResponseCache::key("s", &a.clone().with_trial(1))
        );
        assert_ne!(
            ResponseCache::key("s", &a),
            ResponseCache::key("s", &a.clone().with_seed(2))
        );
        assert_ne!(ResponseCache::key("s", &a), ResponseCache::key("t", &a));
        assert_eq!(ResponseCache::key("s", &a).len(), 64);
    }
}
