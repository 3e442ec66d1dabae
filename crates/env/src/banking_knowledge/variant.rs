//! Retrieval variants (`retrieval.py` `RETRIEVAL_VARIANTS`) and the texts that come with
//! them. `variants.json` in the data directory lists all 20 with their tools file, policy
//! file and needs; tauguard runs the six that need nothing but the data and the four whose
//! `KB_search` embeds (`openai_embeddings[_grep]`, `qwen_embeddings[_grep]`: their vectors
//! come through [`crate::dense`]), and refuses the others with what they need (an LLM
//! reranker, a shell sandbox).

use super::cosine::{self, Cosine};
use super::defs;
use super::retrieval::{Retrieval, load_documents};
use crate::data::{LoadError, read_json, read_text};
use crate::dense::UpstreamEmbedder;
use crate::tooling::ToolDef;
use indexmap::IndexMap;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// tauguard's default: upstream's (`alltools`) needs embeddings and a sandbox.
pub const OFFLINE_DEFAULT: &str = "bm25";

/// The variants tauguard implements, in the order help texts and errors list them: the
/// values the `retrieval` option declares, so a config is checked against them before any
/// data is read.
pub const RUNNABLE: &[&str] = &[
    "no_knowledge",
    "full_kb",
    "golden_retrieval",
    "bm25",
    "bm25_grep",
    "grep_only",
    "openai_embeddings",
    "openai_embeddings_grep",
    "qwen_embeddings",
    "qwen_embeddings_grep",
];

/// The agent toolkit a runnable variant gives, whether it reads the knowledge base, and the
/// upstream embedding model its `KB_search` ranks with (the dense variants).
fn runnable(name: &str) -> Option<(&'static [ToolDef], bool, Option<UpstreamEmbedder>)> {
    Some(match name {
        "no_knowledge" | "full_kb" => (defs::PLAIN, false, None),
        "golden_retrieval" => (defs::PLAIN, true, None),
        "bm25" => (defs::WITH_KB_SEARCH, true, None),
        "bm25_grep" => (defs::WITH_KB_SEARCH_GREP, true, None),
        "grep_only" => (defs::WITH_GREP, true, None),
        "openai_embeddings" => (defs::WITH_KB_SEARCH, true, Some(cosine::OPENAI)),
        "openai_embeddings_grep" => (defs::WITH_KB_SEARCH_GREP, true, Some(cosine::OPENAI)),
        "qwen_embeddings" => (defs::WITH_KB_SEARCH, true, Some(cosine::OPENROUTER_QWEN)),
        "qwen_embeddings_grep" => (
            defs::WITH_KB_SEARCH_GREP,
            true,
            Some(cosine::OPENROUTER_QWEN),
        ),
        _ => return None,
    })
}

#[derive(Deserialize)]
struct VariantsFile {
    #[serde(default)]
    aliases: IndexMap<String, String>,
    variants: IndexMap<String, VariantEntry>,
}

#[derive(Deserialize)]
struct VariantEntry {
    #[serde(default)]
    tools_file: Option<String>,
    #[serde(default)]
    policy_file: Option<String>,
    #[serde(default)]
    needs: Vec<String>,
    /// The schemas' hash: variants of one toolkit class share it (and the embeddings
    /// variants name no tools file of their own).
    #[serde(default)]
    tools_sha256: Option<String>,
}

/// A resolved, runnable variant.
pub struct Variant {
    pub name: String,
    pub toolkit: &'static [ToolDef],
    /// The tool schemas file (`tools.<variant>.json`).
    pub tools_file: String,
    /// The policy file (`policy.<variant>.md`).
    pub policy_file: Option<String>,
    /// The indexed knowledge base, for variants that search it or inline documents.
    pub retrieval: Option<Arc<Retrieval>>,
    /// The embeddings index of a dense variant (its `KB_search`).
    pub dense: Option<Arc<Cosine>>,
}

/// The names, not the indexes: a knowledge base is ~700 documents.
impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("tools_file", &self.tools_file)
            .field("policy_file", &self.policy_file)
            .field("retrieval", &self.retrieval.is_some())
            .field("dense", &self.dense)
            .finish_non_exhaustive()
    }
}

fn parse_error(path: &Path, message: String) -> LoadError {
    LoadError::Parse {
        path: path.to_path_buf(),
        message,
    }
}

/// Resolves `name` (or an alias) against `<dir>/variants.json`.
pub fn resolve(dir: &Path, name: &str) -> Result<Variant, LoadError> {
    let path = dir.join("variants.json");
    let file: VariantsFile = read_json(&path)?;
    let canonical = file.aliases.get(name).map_or(name, String::as_str);
    let Some(entry) = file.variants.get(canonical) else {
        let known: Vec<&str> = file.variants.keys().map(String::as_str).collect();
        return Err(parse_error(
            &path,
            format!(
                "unknown retrieval variant `{name}` (known: {})",
                known.join(", ")
            ),
        ));
    };
    let Some((toolkit, searches, embedder)) = runnable(canonical) else {
        return Err(parse_error(
            &path,
            format!(
                "retrieval variant `{canonical}` needs {}, which tauguard does not provide; runnable variants: {}",
                entry.needs.join("; "),
                RUNNABLE.join(", ")
            ),
        ));
    };
    let tools_file = tools_file(&file, canonical, entry)
        .ok_or_else(|| parse_error(&path, format!("variant `{canonical}` names no tools_file")))?;
    let retrieval = if searches {
        Some(Arc::new(Retrieval::new(load_documents(
            &dir.join("documents"),
        )?)))
    } else {
        None
    };
    let dense = embedder
        .zip(retrieval.clone())
        .map(|(e, kb)| Arc::new(Cosine::new(e, kb)));
    Ok(Variant {
        name: canonical.to_string(),
        toolkit,
        tools_file,
        policy_file: entry.policy_file.clone(),
        retrieval,
        dense,
    })
}

/// The variant's tools file, or else that of a variant with the same schemas
/// (`tools_sha256`): the embeddings variants share their toolkit class with bm25's.
fn tools_file(file: &VariantsFile, name: &str, entry: &VariantEntry) -> Option<String> {
    entry.tools_file.clone().or_else(|| {
        let sha = entry.tools_sha256.as_ref()?;
        file.variants
            .iter()
            .filter(|(n, _)| n.as_str() != name)
            .find(|(_, e)| e.tools_sha256.as_ref() == Some(sha) && e.tools_file.is_some())
            .and_then(|(_, e)| e.tools_file.clone())
    })
}

/// The texts `unlock_discoverable_agent_tool` and `give_discoverable_user_tool` print:
/// upstream's docstring parses, as `discoverable_tools.json` records them.
#[derive(Debug, Default)]
pub struct Texts {
    /// Agent tool → (description, `format_discoverable_tool_for_agent` text).
    agent: HashMap<String, (String, String)>,
    /// User tool → description.
    user: HashMap<String, String>,
}

#[derive(Deserialize)]
struct TextsFile {
    agent_discoverable_tools: Vec<TextEntry>,
    user_discoverable_tools: Vec<TextEntry>,
}

#[derive(Deserialize)]
struct TextEntry {
    name: String,
    tool_info: ToolInfo,
    #[serde(default)]
    agent_format: Option<String>,
}

#[derive(Deserialize)]
struct ToolInfo {
    description: String,
}

impl Texts {
    /// Reads `<dir>/discoverable_tools.json`, requiring an entry for every declared tool.
    pub fn load(dir: &Path) -> Result<Texts, LoadError> {
        let path = dir.join("discoverable_tools.json");
        let file: TextsFile = read_json(&path)?;
        let mut texts = Texts::default();
        for e in file.agent_discoverable_tools {
            let format = e.agent_format.unwrap_or_default();
            texts
                .agent
                .insert(e.name, (e.tool_info.description, format));
        }
        for e in file.user_discoverable_tools {
            texts.user.insert(e.name, e.tool_info.description);
        }
        let missing: Vec<&str> = defs::AGENT_DISCOVERABLE
            .iter()
            .filter(|d| !texts.agent.contains_key(d.name))
            .chain(
                defs::USER_DISCOVERABLE
                    .iter()
                    .filter(|d| !texts.user.contains_key(d.name)),
            )
            .map(|d| d.name)
            .collect();
        if !missing.is_empty() {
            return Err(parse_error(
                &path,
                format!("no entry for {}", missing.join(", ")),
            ));
        }
        Ok(texts)
    }

    pub fn agent(&self, name: &str) -> (&str, &str) {
        self.agent
            .get(name)
            .map_or(("", ""), |(d, f)| (d.as_str(), f.as_str()))
    }

    pub fn user_description(&self, name: &str) -> &str {
        self.user.get(name).map_or("", String::as_str)
    }
}

/// The variant's policy: `policy.<variant>.md` as upstream's `build_policy` renders it.
/// `golden_retrieval` is rendered per task (its file is the task-less rendering).
pub fn policy(dir: &Path, variant: &Variant) -> Result<String, LoadError> {
    let file = match (&variant.policy_file, variant.name.as_str()) {
        (_, "golden_retrieval") => "policy.golden_retrieval.no_task.md".to_string(),
        (Some(f), _) => f.clone(),
        (None, name) => format!("policy.{name}.md"),
    };
    read_text(&dir.join(file))
}

/// What `golden_prompt` puts where the task-less rendering says "(No documents provided)".
const NO_DOCUMENTS: &str = "(No documents provided)";

/// `golden_prompt(task)`: the task-less rendering (`policy.golden_retrieval.no_task.md`)
/// with the task's required documents, each found by title (a later document of the same
/// title wins, as in upstream's dict) or else by id, as `## <title>\n\n<content>`, joined
/// by `\n\n---\n\n`; a task whose references find nothing keeps the placeholder.
pub fn golden_policy(no_task: &str, kb: &Retrieval, required: &[String]) -> String {
    let by_title: HashMap<&str, &super::retrieval::Document> = kb
        .documents()
        .iter()
        .map(|d| (d.title.as_str(), d))
        .collect();
    let docs: Vec<String> = required
        .iter()
        .filter_map(|r| {
            by_title
                .get(r.as_str())
                .copied()
                .or_else(|| kb.documents().iter().find(|d| &d.id == r))
        })
        .map(|d| format!("## {}\n\n{}", d.title, d.content))
        .collect();
    if docs.is_empty() {
        return no_task.to_string();
    }
    no_task.replacen(NO_DOCUMENTS, &docs.join("\n\n---\n\n"), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runnable_variant_has_a_toolkit_and_nothing_else_does() {
        for name in RUNNABLE {
            assert!(runnable(name).is_some(), "{name}");
        }
        assert!(runnable("alltools").is_none());
    }
}
