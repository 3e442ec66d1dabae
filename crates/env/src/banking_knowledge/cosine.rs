//! `KB_search` of the embeddings variants, as upstream's `create_embedding_retrieval_pipeline`
//! builds it: an `embedding_indexer` over each document's `content` (no title, no chunking,
//! no instruction prefix), an `embedding_encoder` for the query, the `cosine` retriever with
//! `top_k` 10, no postprocessor.
//!
//! Query: blank (`not text or not text.strip()`) is upstream's `ValueError`, a non-string
//! its `AttributeError` on `strip`; OpenRouter's Qwen models embed
//! `Instruct: {DEFAULT_QWEN_QUERY_INSTRUCTION}\nQuery:{query}` (`OpenRouterEmbedder.
//! _format_text`), OpenAI's the query itself.
//!
//! Scores (`CosineRetriever._cosine_similarity_single`): the query divided by its norm (a
//! zero query scores every document 0), each document divided by its norm (a zero norm by 1),
//! their dot product; in `f64`, summed left to right (numpy leaves the order to BLAS, so the
//! last bits may differ, never the printed 4 decimals but for a tie at the fifth). Ranking:
//! `np.argsort(scores)[::-1][:10]`, then the pipeline's stable sort by score: descending, and
//! among equal scores the later document first — the order a stable argsort gives reversed
//! (numpy's default sort is not stable, so upstream's own order of exact ties is its
//! implementation's). Documents are indexed in sorted-id order (see [`super::retrieval`]).

use super::retrieval::{Retrieval, TOP_K, py_space};
use crate::dense::{DenseIndex, PendingQuery, UpstreamEmbedder};
use crate::tooling::ToolError;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tauguard_core::pyjson;

/// `DEFAULT_QWEN_QUERY_INSTRUCTION` (from Qwen3-Embedding's model card, as upstream quotes it).
const QWEN_QUERY_INSTRUCTION: &str =
    "Given a web search query, retrieve relevant passages that answer the query";

/// `variant.kb_search.embedder_type == "openai"`: `text-embedding-3-large` through the OpenAI
/// SDK, which asks for base64 when the caller names no format.
pub(super) const OPENAI: UpstreamEmbedder = UpstreamEmbedder {
    embedder_type: "openai",
    model: "text-embedding-3-large",
    encoding_format: "base64",
    alias: "text-embedding-3-large",
};

/// `embedder_type == "openrouter"`: `qwen3-embedding-8b`, sent as its API string, with
/// `encoding_format="float"`.
pub(super) const OPENROUTER_QWEN: UpstreamEmbedder = UpstreamEmbedder {
    embedder_type: "openrouter",
    model: "qwen/qwen3-embedding-8b",
    encoding_format: "float",
    alias: "qwen3-embedding-8b",
};

/// The cosine index over a knowledge base.
pub struct Cosine {
    upstream: UpstreamEmbedder,
    kb: Arc<Retrieval>,
    /// The documents divided by their norms, in index order.
    docs: OnceLock<Vec<Vec<f64>>>,
    /// Query → its top 10 (document index, score).
    rankings: Mutex<HashMap<String, Vec<(usize, f64)>>>,
}

impl std::fmt::Debug for Cosine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cosine")
            .field("upstream", &self.upstream)
            .field("installed", &self.docs.get().is_some())
            .finish_non_exhaustive()
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The query `EmbeddingEncoder.process` accepts: a string that is not blank.
fn query_text(query: &Value) -> Result<&str, ToolError> {
    match query {
        Value::String(s) if !s.trim_matches(py_space).is_empty() => Ok(s),
        v if !crate::banking_knowledge::pyfmt::truthy(v) || v.is_string() => Err(ToolError::value(
            "Empty or missing input for key 'query': cannot generate embedding from blank text.",
        )),
        other => Err(crate::py::no_attribute(pyjson::type_name(other), "strip")),
    }
}

/// Upstream's ranking of `scores`: descending, ties later index first, the top 10.
pub(super) fn rank(scores: &[f64]) -> Vec<(usize, f64)> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|a, b| {
        scores[*b]
            .partial_cmp(&scores[*a])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.cmp(a))
    });
    order.truncate(TOP_K.min(scores.len()));
    order.into_iter().map(|i| (i, scores[i])).collect()
}

impl Cosine {
    pub fn new(upstream: UpstreamEmbedder, kb: Arc<Retrieval>) -> Cosine {
        Cosine {
            upstream,
            kb,
            docs: OnceLock::new(),
            rankings: Mutex::new(HashMap::new()),
        }
    }

    /// `_cosine_similarity_single(query, docs)`.
    pub fn scores(&self, query: &[f64]) -> Result<Vec<f64>, String> {
        let docs = self
            .docs
            .get()
            .ok_or("the documents were not embedded before the search")?;
        if docs.first().is_some_and(|d| d.len() != query.len()) {
            return Err(format!(
                "a query vector of {} dimensions for documents of {}",
                query.len(),
                docs[0].len()
            ));
        }
        let n = norm(query);
        if n == 0.0 {
            return Ok(vec![0.0; docs.len()]);
        }
        let q: Vec<f64> = query.iter().map(|x| x / n).collect();
        Ok(docs.iter().map(|d| dot(d, &q)).collect())
    }

    /// `KB_search(query)`: the ranked documents in upstream's layout, without the timing.
    pub fn kb_search(&self, query: &Value) -> Result<String, ToolError> {
        let text = query_text(query)?;
        let hits = self
            .rankings
            .lock()
            .ok()
            .and_then(|r| r.get(text).cloned())
            .ok_or_else(|| ToolError {
                class: "RuntimeError",
                message: "the query was not embedded before the call".into(),
            })?;
        Ok(self.kb.format(&hits))
    }

    fn formatted(&self, query: &str) -> String {
        if self.upstream.model.contains("qwen") {
            format!("Instruct: {QWEN_QUERY_INSTRUCTION}\nQuery:{query}")
        } else {
            query.to_string()
        }
    }
}

impl DenseIndex for Cosine {
    fn upstream(&self) -> UpstreamEmbedder {
        self.upstream
    }

    fn documents(&self) -> Vec<String> {
        self.kb
            .documents()
            .iter()
            .map(|d| d.content.clone())
            .collect()
    }

    fn installed(&self) -> bool {
        self.docs.get().is_some()
    }

    fn install(&self, vectors: Vec<Vec<f64>>) -> Result<(), String> {
        let n = self.kb.documents().len();
        if vectors.len() != n {
            return Err(format!("{} vectors for {n} documents", vectors.len()));
        }
        let dims = vectors.first().map_or(0, Vec::len);
        if let Some(i) = vectors.iter().position(|v| v.len() != dims || v.is_empty()) {
            return Err(format!(
                "document {i} has {} dimensions, document 0 {dims}",
                vectors[i].len()
            ));
        }
        let normalised = vectors
            .into_iter()
            .map(|v| {
                let n = norm(&v);
                let n = if n == 0.0 { 1.0 } else { n };
                v.into_iter().map(|x| x / n).collect()
            })
            .collect();
        let _ = self.docs.set(normalised);
        Ok(())
    }

    fn pending_query(&self, tool: &str, args: &Map<String, Value>) -> Option<PendingQuery> {
        if tool != "KB_search" {
            return None;
        }
        let text = query_text(args.get("query")?).ok()?;
        if self.rankings.lock().ok()?.contains_key(text) {
            return None;
        }
        Some(PendingQuery {
            key: text.to_string(),
            text: self.formatted(text),
        })
    }

    fn install_query(&self, key: &str, vector: &[f64]) -> Result<(), String> {
        let ranking = rank(&self.scores(vector)?);
        if let Ok(mut r) = self.rankings.lock() {
            r.insert(key.to_string(), ranking);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::banking_knowledge::retrieval::Document;

    fn kb(n: usize) -> Arc<Retrieval> {
        Arc::new(Retrieval::new(
            (0..n)
                .map(|i| Document {
                    id: format!("doc_{i:02}"),
                    title: format!("T{i}"),
                    content: format!("c{i}"),
                })
                .collect(),
        ))
    }

    #[test]
    fn ties_put_the_later_document_first_and_zero_queries_score_zero() {
        let c = Cosine::new(OPENAI, kb(12));
        c.install(vec![vec![1.0, 0.0]; 12]).unwrap();
        let top = rank(&c.scores(&[2.0, 0.0]).unwrap());
        let order: Vec<usize> = top.iter().map(|(i, _)| *i).collect();
        assert_eq!(order, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
        assert!(c.scores(&[0.0, 0.0]).unwrap().iter().all(|s| *s == 0.0));
        assert!(c.scores(&[1.0]).unwrap_err().contains("1 dimensions"));
    }

    #[test]
    fn queries_are_checked_and_formatted_as_upstream_does() {
        let blank = ToolError::value(
            "Empty or missing input for key 'query': cannot generate embedding from blank text.",
        );
        assert_eq!(query_text(&Value::from("  ")).unwrap_err(), blank);
        assert_eq!(query_text(&Value::from(0)).unwrap_err(), blank);
        assert_eq!(
            query_text(&Value::from(5)).unwrap_err().message,
            "'int' object has no attribute 'strip'"
        );
        let q = Cosine::new(OPENROUTER_QWEN, kb(1));
        assert_eq!(
            q.formatted("fees"),
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:fees"
        );
        assert_eq!(Cosine::new(OPENAI, kb(1)).formatted("fees"), "fees");
    }
}
