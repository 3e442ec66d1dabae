//! The knowledge base and its offline search tools, as upstream's `tau2.knowledge` builds
//! them for the `bm25` and `grep` pipelines: `rank_bm25.BM25Okapi` (k1 1.5, b 0.75,
//! epsilon 0.25) over `content.lower().split()`, and Python-`re` grep with `IGNORECASE`.
//!
//! Order: upstream indexes documents in filesystem (`Path.glob`) order, which differs
//! between machines and decides BM25 ties, the zero-score fillers and the last bits of
//! `average_idf`. tauguard indexes them in sorted-id order, as the parity fixture
//! (`reference/banking_knowledge_retrieval.json`) was generated.
//!
//! Timing: upstream's `KB_search` output ends with a wall-clock suffix
//! (`\n\n[Timing: retrieval=Nms, ..., total=Nms]`). tauguard prints no suffix: the output is
//! upstream's text minus it, so tool messages, records and the response cache stay
//! reproducible.

use crate::data::{LoadError, read_text};
use crate::tooling::ToolError;
use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;
use tauguard_core::pyjson;

const K1: f64 = 1.5;
const B: f64 = 0.75;
const EPSILON: f64 = 0.25;
/// The retrievers' `top_k`.
pub const TOP_K: usize = 10;

/// One document of `documents/<id>.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct Document {
    pub id: String,
    pub title: String,
    pub content: String,
}

/// Loads `documents/*.json`, sorted by id.
pub fn load_documents(dir: &Path) -> Result<Vec<Document>, LoadError> {
    let mut docs = Vec::new();
    for path in crate::data::list_dir(dir)? {
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = read_text(&path)?;
        let doc: Document = crate::data::parse_json(&path, &text)?;
        docs.push(doc);
    }
    docs.sort_by(|a, b| a.id.cmp(&b.id));
    // `KnowledgeBase.documents` is keyed by id: a later file with the same id replaces it.
    docs.dedup_by(|later, earlier| {
        let same = later.id == earlier.id;
        if same {
            std::mem::swap(later, earlier);
        }
        same
    });
    Ok(docs)
}

/// Python `str.isspace()` for `str.split()`: Unicode White_Space plus the four ASCII
/// information separators.
pub(crate) fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(py_space)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// `BM25Okapi` over the documents, and the documents themselves.
#[derive(Debug)]
pub struct Retrieval {
    docs: Vec<Document>,
    doc_freqs: Vec<IndexMap<String, u32>>,
    doc_len: Vec<f64>,
    avgdl: f64,
    idf: IndexMap<String, f64>,
}

impl Retrieval {
    pub fn new(docs: Vec<Document>) -> Retrieval {
        let mut doc_freqs = Vec::with_capacity(docs.len());
        let mut doc_len = Vec::with_capacity(docs.len());
        let mut nd: IndexMap<String, u32> = IndexMap::new();
        let mut total = 0usize;
        for doc in &docs {
            let words = tokens(&doc.content);
            total += words.len();
            doc_len.push(words.len() as f64);
            let mut freqs: IndexMap<String, u32> = IndexMap::new();
            for w in words {
                *freqs.entry(w).or_insert(0) += 1;
            }
            for w in freqs.keys() {
                *nd.entry(w.clone()).or_insert(0) += 1;
            }
            doc_freqs.push(freqs);
        }
        let n = docs.len() as f64;
        let avgdl = total as f64 / n;
        let mut idf = IndexMap::with_capacity(nd.len());
        let mut idf_sum = 0.0;
        let mut negative = Vec::new();
        for (word, freq) in &nd {
            let f = f64::from(*freq);
            let value = (n - f + 0.5).ln() - (f + 0.5).ln();
            idf.insert(word.clone(), value);
            idf_sum += value;
            if value < 0.0 {
                negative.push(word.clone());
            }
        }
        let eps = EPSILON * (idf_sum / idf.len() as f64);
        for w in negative {
            idf.insert(w, eps);
        }
        Retrieval {
            docs,
            doc_freqs,
            doc_len,
            avgdl,
            idf,
        }
    }

    pub fn documents(&self) -> &[Document] {
        &self.docs
    }

    /// `get_scores`: numpy's element-wise arithmetic, in its order.
    fn scores(&self, query: &[String]) -> Vec<f64> {
        let mut score = vec![0.0; self.docs.len()];
        for q in query {
            let idf = self.idf.get(q).copied().unwrap_or(0.0);
            for (i, s) in score.iter_mut().enumerate() {
                let tf = f64::from(self.doc_freqs[i].get(q).copied().unwrap_or(0));
                let norm = tf + K1 * (1.0 - B + B * self.doc_len[i] / self.avgdl);
                *s += idf * (tf * (K1 + 1.0) / norm);
            }
        }
        score
    }

    /// The BM25 retriever: the top 10 by score (ties in index order), zero scores included;
    /// nothing for a blank query.
    pub fn bm25(&self, query: &str) -> Vec<(usize, f64)> {
        if query.trim_matches(py_space).is_empty() {
            return Vec::new();
        }
        let scores = self.scores(&tokens(query));
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|a, b| {
            scores[*b]
                .partial_cmp(&scores[*a])
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        order.truncate(TOP_K.min(scores.len()));
        order.into_iter().map(|i| (i, scores[i])).collect()
    }

    /// The grep retriever: documents whose content matches, by match count (ties in index
    /// order), top 10. An invalid pattern is searched for literally.
    pub fn grep_hits(&self, pattern: &str) -> Vec<(usize, f64)> {
        if pattern.trim_matches(py_space).is_empty() {
            return Vec::new();
        }
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .or_else(|_| {
                regex::RegexBuilder::new(&regex::escape(pattern))
                    .case_insensitive(true)
                    .build()
            });
        let Ok(re) = re else { return Vec::new() };
        let mut hits: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let n = findall_count(&re, &d.content);
                (n > 0).then_some((i, n as f64))
            })
            .collect();
        hits.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        hits.truncate(TOP_K);
        hits
    }

    /// `KB_search(query)`: the ranked documents in upstream's layout, without the timing.
    pub fn kb_search(&self, query: &str) -> String {
        let hits = self.bm25(query);
        if hits.is_empty() {
            return "No relevant documents found.".into();
        }
        self.format(&hits)
    }

    /// `grep(pattern)`.
    pub fn grep(&self, pattern: &Value) -> Result<String, ToolError> {
        let Value::String(p) = pattern else {
            return Err(crate::py::no_attribute(pyjson::type_name(pattern), "strip"));
        };
        let hits = self.grep_hits(p);
        if hits.is_empty() {
            return Ok(format!("No matches found for pattern: {p}"));
        }
        Ok(self.format(&hits))
    }

    /// `_format_kb_search_result` / `grep`'s listing of ranked documents, without the timing.
    pub(crate) fn format(&self, hits: &[(usize, f64)]) -> String {
        let items: Vec<String> = hits
            .iter()
            .enumerate()
            .map(|(rank, (i, score))| {
                let d = &self.docs[*i];
                let title = if d.title.is_empty() {
                    "Untitled"
                } else {
                    &d.title
                };
                format!(
                    "{}. {title}\n   ID: {}\n   Score: {score:.4}\n   Content: {}\n",
                    rank + 1,
                    d.id,
                    d.content
                )
            })
            .collect();
        items.join("\n")
    }
}

/// `len(re.findall(pattern, text))`: non-overlapping matches left to right, an empty match
/// allowed right after a non-empty one but never twice at one position.
fn findall_count(re: &regex::Regex, text: &str) -> usize {
    let mut count = 0;
    let mut pos = 0;
    while pos <= text.len() {
        let Some(m) = re.find_at(text, pos) else {
            break;
        };
        count += 1;
        pos = if m.end() > m.start() {
            m.end()
        } else {
            match text[m.end()..].chars().next() {
                Some(c) => m.end() + c.len_utf8(),
                None => break,
            }
        };
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findall_counts_as_python_does() {
        let re = |p: &str| {
            regex::RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .unwrap()
        };
        assert_eq!(findall_count(&re("x?"), "axb"), 4);
        assert_eq!(findall_count(&re("x?"), "x"), 2);
        assert_eq!(findall_count(&re("fee"), "FEE fee"), 2);
        assert_eq!(findall_count(&re("^#"), "#a\n#b"), 1);
    }

    #[test]
    fn split_is_python_split() {
        assert_eq!(tokens("A\u{1c}b  C\u{a0}d"), ["a", "b", "c", "d"]);
    }
}
