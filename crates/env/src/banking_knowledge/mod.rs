//! τ²-bench's `banking_knowledge` domain (τ-Knowledge), exact to upstream a2c0247: a bank's
//! transactional database, a knowledge base of ~700 documents searched through the
//! retrieval variant's tools, discoverable tools the agent unlocks (or gives the user), and
//! user-side tools that write the same database.
//!
//! Layout (the crate's shared shape): [`defs`] (declarations), [`tools`] (agent dispatch
//! and the discoverable-tool entry points), the discoverable tool bodies by topic
//! (`credit`, `credit_limits`, `cards`, `card_orders`, `debit_limits`, `card_settings`,
//! `accounts`, `debit_disputes`), `user_tools` (the user
//! toolkit), [`db`] (the 23-table model and its query helpers), `ids` (deterministic ids),
//! `args` and `pyfmt` (the Python behaviours the tool texts need), [`retrieval`] (BM25 and
//! grep), `cosine` (the embeddings variants' `KB_search`) and [`variant`] (the retrieval
//! variants and their texts).
//!
//! What differs from the other domains:
//! - tasks are `tasks/task_*.json`, loaded in sorted file order; there is no split file and
//!   upstream ignores the split name, so every split (`base`, `train`, `test`) holds all
//!   tasks;
//! - the option `retrieval` picks the variant (default [`variant::OFFLINE_DEFAULT`]); its
//!   policy is `policy.<variant>.md` and its schemas `tools.<variant>.json`;
//! - a call of a read-only discoverable tool is logged to `agent_discoverable_tools` only
//!   when the task's gold actions call it (upstream's `_derive_read_log_allowlist`), so
//!   environments are made per task ([`DomainBase::fresh_for`]);
//! - unlocking a tool is in-memory state outside the database (replayed, never hashed).

mod accounts;
mod args;
mod card_orders;
mod card_settings;
mod cards;
mod cosine;
mod credit;
mod credit_limits;
pub mod db;
mod debit_disputes;
mod debit_limits;
pub mod defs;
mod ids;
mod pyfmt;
pub mod retrieval;
pub mod tools;
mod user_tools;
pub mod variant;

use crate::data::LoadError;
use crate::environment::{Changes, DomainBase, Environment, ToolResult, ToolValue, same_domain};
use crate::initial_state::MergeError;
use crate::registry::{DomainFacts, DomainOption, DomainOptions, DomainParts};
use crate::tooling::{ToolDef, ToolError};
use db::Db;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use tauguard_core::{Requestor, Task};

/// `get_today_str()`: the fixed date every scenario is set on.
pub const TODAY: &str = "11/14/2025";

/// The domain's registry entry.
#[derive(Debug)]
pub struct BankingKnowledge;
pub static BANKING_KNOWLEDGE: BankingKnowledge = BankingKnowledge;

const NAME: &str = "banking_knowledge";

const OPTIONS: &[DomainOption] = &[DomainOption {
    name: "retrieval",
    default: variant::OFFLINE_DEFAULT,
    upstream_default: "alltools",
    values: variant::RUNNABLE,
    about: "retrieval variant (variants.json): no_knowledge, full_kb, golden_retrieval, bm25, bm25_grep, grep_only, openai_embeddings, openai_embeddings_grep, qwen_embeddings, qwen_embeddings_grep (these four need `[models] embeddings`)",
}];

static FACTS: DomainFacts = DomainFacts {
    name: NAME,
    // The widest variant toolkit (KB_search and grep), what registry readers (guard tool
    // classes, metrics' mutating tools) list; an environment offers its own variant's.
    agent_tools: defs::WITH_KB_SEARCH_GREP,
    user_tools: defs::USER,
    collections: &db::TABLES,
    clock: Some("2025-11-14T03:40:00"),
    identity_reads: &[
        "get_user_information_by_id",
        "get_user_information_by_name",
        "get_user_information_by_email",
    ],
    builtin_schemas: false,
    options: OPTIONS,
    ..DomainFacts::DEFAULT
};

impl crate::registry::Domain for BankingKnowledge {
    fn facts(&self) -> &'static DomainFacts {
        &FACTS
    }

    fn load_base(&self, dir: &Path) -> Result<Arc<dyn DomainBase>, LoadError> {
        Ok(Arc::new(BankBase::load(dir, variant::OFFLINE_DEFAULT)?))
    }

    fn load_policy(&self, dir: &Path) -> Result<String, LoadError> {
        crate::data::read_text(&dir.join(format!("policy.{}.md", variant::OFFLINE_DEFAULT)))
    }

    fn load_parts(&self, dir: &Path, options: &DomainOptions) -> Result<DomainParts, LoadError> {
        let name = options
            .get("retrieval")
            .map_or(variant::OFFLINE_DEFAULT, String::as_str);
        let base = BankBase::load(dir, name)?;
        let policy = variant::policy(dir, &base.ctx.variant)?;
        let tools_file = dir.join(&base.ctx.variant.tools_file);
        Ok(DomainParts {
            base: Arc::new(base),
            policy,
            tools_file,
        })
    }

    fn load_tasks(
        &self,
        dir: &Path,
    ) -> Result<(Vec<Task>, IndexMap<String, Vec<String>>), LoadError> {
        let tasks_dir = dir.join("tasks");
        let mut files = crate::data::list_dir(&tasks_dir)?;
        files.retain(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("task_") && name.ends_with(".json")
        });
        files.sort();
        let mut tasks = Vec::with_capacity(files.len());
        for f in &files {
            let text = crate::data::read_text(f)?;
            tasks.push(crate::data::parse_json::<Task>(f, &text)?);
        }
        let all: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
        let splits = ["base", "train", "test"]
            .into_iter()
            .map(|s| (s.to_string(), all.clone()))
            .collect();
        Ok((tasks, splits))
    }
}

/// What every environment of one loaded variant shares.
pub(crate) struct Ctx {
    pub(crate) variant: variant::Variant,
    pub(crate) texts: variant::Texts,
    /// `golden_retrieval`'s task-less policy, which each task's policy is rendered from.
    pub(crate) golden: Option<String>,
}

/// The loaded database and variant.
pub struct BankBase {
    db: Db,
    ctx: Arc<Ctx>,
}

impl BankBase {
    /// Loads `<dir>/db.json`, `discoverable_tools.json` and the variant (`variants.json`,
    /// and the documents when it searches them).
    pub fn load(dir: &Path, variant_name: &str) -> Result<BankBase, LoadError> {
        let variant = variant::resolve(dir, variant_name)?;
        let golden = if variant.name == "golden_retrieval" {
            Some(variant::policy(dir, &variant)?)
        } else {
            None
        };
        Ok(BankBase {
            db: Db::load(&dir.join("db.json"))?,
            ctx: Arc::new(Ctx {
                variant,
                texts: variant::Texts::load(dir)?,
                golden,
            }),
        })
    }

    /// A fresh environment whose read log keeps the calls of `allowlist`.
    pub fn env(&self, allowlist: BTreeSet<String>) -> BankEnv {
        BankEnv {
            db: self.db.clone(),
            unlocked: Arc::new(Vec::new()),
            allowlist: Arc::new(allowlist),
            ctx: Arc::clone(&self.ctx),
        }
    }

    /// The variant this base was loaded with.
    pub fn variant(&self) -> &str {
        &self.ctx.variant.name
    }
}

/// `_derive_read_log_allowlist`: every `agent_tool_name` of the task's gold
/// `call_discoverable_agent_tool` actions.
pub fn read_log_allowlist(task: &Task) -> BTreeSet<String> {
    task.gold_actions()
        .iter()
        .filter(|a| a.name == "call_discoverable_agent_tool")
        .filter_map(|a| a.arguments.get("agent_tool_name"))
        .filter(|n| pyfmt::truthy(n))
        .map(tauguard_core::pyjson::py_str)
        .collect()
}

impl DomainBase for BankBase {
    fn domain(&self) -> &'static str {
        NAME
    }

    fn fresh(&self) -> Box<dyn Environment> {
        Box::new(self.env(BTreeSet::new()))
    }

    fn fresh_for(&self, task: &Task) -> Box<dyn Environment> {
        Box::new(self.env(read_log_allowlist(task)))
    }

    fn dense(&self) -> Option<&dyn crate::dense::DenseIndex> {
        self.ctx
            .variant
            .dense
            .as_deref()
            .map(|d| d as &dyn crate::dense::DenseIndex)
    }

    fn task_policy(&self, task: &Task) -> Option<String> {
        let no_task = self.ctx.golden.as_deref()?;
        let kb = self.ctx.variant.retrieval.as_deref()?;
        let required = task.required_documents.as_deref().unwrap_or_default();
        Some(variant::golden_policy(no_task, kb, required))
    }
}

/// The variant, not the policy texts and documents it shares.
impl std::fmt::Debug for BankBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BankBase")
            .field("variant", &self.ctx.variant)
            .finish_non_exhaustive()
    }
}

/// One live banking environment.
#[derive(Clone)]
pub struct BankEnv {
    pub(crate) db: Db,
    /// Agent tools unlocked so far, in order (upstream's in-memory `_agent_discoverable_tools_state`).
    pub(crate) unlocked: Arc<Vec<String>>,
    pub(crate) allowlist: Arc<BTreeSet<String>>,
    pub(crate) ctx: Arc<Ctx>,
}

impl std::fmt::Debug for BankEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BankEnv")
            .field("variant", &self.ctx.variant.name)
            .field("unlocked", &self.unlocked)
            .field("allowlist", &self.allowlist)
            .finish_non_exhaustive()
    }
}

impl BankEnv {
    pub fn db(&self) -> &Db {
        &self.db
    }

    pub(crate) fn agent_tools(&self) -> &'static [ToolDef] {
        self.ctx.variant.toolkit
    }

    /// The indexed knowledge base of a searching variant.
    pub fn knowledge(&self) -> Option<&retrieval::Retrieval> {
        self.ctx.variant.retrieval.as_deref()
    }

    pub(crate) fn retrieval(&self) -> Result<&retrieval::Retrieval, ToolError> {
        self.ctx
            .variant
            .retrieval
            .as_deref()
            .ok_or_else(|| crate::py::no_attribute("KnowledgeToolsPlain", "_kb_pipeline"))
    }
}

impl Environment for BankEnv {
    fn domain(&self) -> &'static str {
        NAME
    }

    fn toolkit(&self, side: Requestor) -> &'static [ToolDef] {
        match side {
            Requestor::Assistant => self.ctx.variant.toolkit,
            Requestor::User => defs::USER,
        }
    }

    fn call(&mut self, side: Requestor, name: &str, args: &Map<String, Value>) -> ToolResult {
        let text = match side {
            Requestor::Assistant => tools::call(self, name, args)?,
            Requestor::User => user_tools::call(&mut self.db, name, args)?,
        };
        Ok(ToolValue::Text(text))
    }

    fn merge_initialization_data(
        &mut self,
        agent: Option<&Value>,
        user: Option<&Value>,
    ) -> Result<(), MergeError> {
        if let Some(patch) = agent.filter(|a| !a.is_null()) {
            self.db.merge(patch).map_err(MergeError::Rejected)?;
        }
        // The user toolkit shares the agent's database; upstream has no user database to
        // update (`user_data` is merged into nothing).
        let _ = user;
        Ok(())
    }

    fn agent_db(&self) -> Value {
        self.db.dump()
    }

    fn changes_since(&self, earlier: &dyn Environment) -> Changes {
        let mut agent = Map::new();
        self.db.changes(&same_domain(self, earlier).db, &mut agent);
        Changes { agent, user: None }
    }

    fn same_state(&self, other: &dyn Environment) -> bool {
        other
            .downcast_ref::<BankEnv>()
            .is_some_and(|o| self.db.same(&o.db))
    }
}
