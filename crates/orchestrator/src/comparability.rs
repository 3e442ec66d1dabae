//! The comparability stamp: item by item, whether what a cell's models saw and how its
//! simulations are scored equal upstream τ²-bench's benchmark definition at the pinned commit.
//!
//! A number is comparable with upstream's leaderboard only when every item holds, and nothing
//! else tells a researcher that one does not: a paraphrased prompt or a default temperature
//! of 1.0 still produces a plausible table. So the stamp travels with every record (as
//! `benchmark.*` keys of the cell, see [`Stamp::insert_into`]), `run --dry-run` prints it,
//! and `report`, `view` and `export-tau2` carry it on.
//!
//! Upstream's side is `assets/upstream-a2c0247.json`: content hashes of upstream's texts and
//! of each domain's policy, database, tool schemas and tasks, computed from the τ²-bench data
//! directory by the test `comparability::tests::the_manifest_matches_the_data_directory`
//! (`TAUGUARD_BLESS=1` rewrites it). It holds hashes only, never upstream's text.

use crate::benchmark_texts::{BenchmarkTexts, Text, TextSource};
use crate::config::{ModelErrors, ModelSection, TruncatedReplies};
use crate::provenance::CellSpec;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;
use tauguard_core::Task;
use tauguard_core::task::RewardType;
use tauguard_env::DomainData;

pub(crate) use tauguard_core::comparability::{CELL_PREFIX, COMPARABLE_KEY, UPSTREAM};

/// Upstream's defaults the cell settings are held to (`src/tau2/config.py`).
const UPSTREAM_MAX_STEPS: u32 = 200;
const UPSTREAM_MAX_ERRORS: u32 = 10;
const UPSTREAM_MAX_RETRIES: u32 = 3;
/// Upstream's temperature for agent, user and NL judge.
pub(crate) const UPSTREAM_TEMPERATURE: f64 = 0.0;
/// Upstream's NL-assertion judge model.
const UPSTREAM_JUDGE: &str = "gpt-4.1-2025-04-14";

/// One item of the stamp.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Item {
    /// `agent_instruction`, `policy`, `sampling`, …
    pub name: &'static str,
    pub holds: bool,
    /// What was used, in words; for an item that holds, what makes it upstream's.
    pub detail: String,
}

impl Item {
    fn upstream(name: &'static str, detail: impl Into<String>) -> Item {
        Item {
            name,
            holds: true,
            detail: detail.into(),
        }
    }
    fn deviates(name: &'static str, detail: impl Into<String>) -> Item {
        Item {
            name,
            holds: false,
            detail: detail.into(),
        }
    }
}

/// A cell's stamp.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stamp {
    pub items: Vec<Item>,
}

impl Stamp {
    pub fn comparable(&self) -> bool {
        self.items.iter().all(|i| i.holds)
    }

    /// Names of the items that do not hold.
    pub fn deviations(&self) -> Vec<&'static str> {
        self.items
            .iter()
            .filter(|i| !i.holds)
            .map(|i| i.name)
            .collect()
    }

    /// See [`tauguard_core::comparability::summary_line`].
    pub fn summary(&self) -> String {
        tauguard_core::comparability::summary_line(self.deviations())
    }

    /// The stamp as cell settings: `benchmark.comparable`, then `benchmark.<item>` =
    /// `"upstream"` for an item that holds, else its detail.
    pub fn insert_into(&self, cell: &mut CellSpec) {
        cell.insert(COMPARABLE_KEY.into(), json!(self.comparable()));
        for i in &self.items {
            let v = if i.holds {
                UPSTREAM.to_string()
            } else {
                i.detail.clone()
            };
            cell.insert(format!("{CELL_PREFIX}{}", i.name), json!(v));
        }
    }
}

#[derive(Debug, Deserialize)]
struct Manifest {
    texts: BTreeMap<String, String>,
    domains: BTreeMap<String, DomainHashes>,
}

#[derive(Debug, Deserialize, serde::Serialize, PartialEq)]
struct DomainHashes {
    policy: String,
    database: String,
    tool_schemas: String,
    tasks: BTreeMap<String, String>,
}

static MANIFEST: LazyLock<Manifest> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../assets/upstream-a2c0247.json"))
        .expect("the upstream manifest is valid JSON")
});

fn short_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..16].to_string()
}

fn hashes_of(data: &DomainData, tasks: &[Task]) -> DomainHashes {
    let env = data.fresh_env();
    let mut db = tauguard_env::db_hash(&env.agent_db());
    if let Some(user) = env.user_db() {
        db.push(':');
        db.push_str(&tauguard_env::db_hash(&user));
    }
    let schemas: Vec<Value> = data
        .tool_schemas
        .assistant
        .iter()
        .chain(data.tool_schemas.user.iter())
        .map(|t| t.to_openai())
        .collect();
    DomainHashes {
        policy: short_hash(data.policy.as_bytes()),
        database: short_hash(db.as_bytes()),
        tool_schemas: short_hash(Value::Array(schemas).to_string().as_bytes()),
        tasks: tasks
            .iter()
            .map(|t| {
                let text = serde_json::to_string(t).expect("tasks serialise");
                (t.id.clone(), short_hash(text.as_bytes()))
            })
            .collect(),
    }
}

/// One item per domain option (banking_knowledge's `retrieval`): upstream's when the value is
/// upstream's default. The manifest holds such a domain's hashes under tauguard's default
/// options, so this item is what says which options a run used.
fn option_items(data: &DomainData) -> Vec<Item> {
    let declared = data.def.options();
    data.options
        .iter()
        .filter_map(|(name, value)| {
            let option = declared.iter().find(|o| o.name == name.as_str())?;
            let detail =
                tauguard_core::comparability::option_detail(name, value, option.upstream_default);
            Some(if value == option.upstream_default {
                Item::upstream(option.name, detail)
            } else {
                Item::deviates(option.name, detail)
            })
        })
        .collect()
}

/// The data items of a domain's stamp: policy, database, tool schemas and the selected tasks.
/// `own_task_set` names a task set of the project's that replaced upstream's tasks.
pub(crate) fn domain_items(
    data: &DomainData,
    tasks: &[Task],
    own_task_set: Option<&str>,
) -> Vec<Item> {
    let ours = hashes_of(data, tasks);
    let Some(up) = MANIFEST.domains.get(data.domain) else {
        let why = format!(
            "τ²-bench {} has no domain `{}`",
            tauguard_core::comparability::upstream_short(),
            data.domain
        );
        let mut items = option_items(data);
        items.extend(
            ["policy", "database", "tool_schemas", "tasks"]
                .into_iter()
                .map(|n| Item::deviates(n, why.clone())),
        );
        return items;
    };
    let file = |name: &'static str, ours: &str, theirs: &str, what: String| {
        if ours == theirs {
            Item::upstream(name, what)
        } else {
            Item::deviates(
                name,
                format!("{what} differs from upstream's (blake3 {ours})"),
            )
        }
    };
    let dir = data.dir.display();
    let schemas_from = if data.schemas_from_file {
        format!("tool schemas from {}", data.schemas_path.display())
    } else {
        "tool schemas from tauguard's built-in declarations".to_string()
    };
    let tasks_item = match own_task_set {
        Some(set) => Item::deviates("tasks", format!("task set of our own: {set}")),
        None => {
            let differing: Vec<&str> = ours
                .tasks
                .iter()
                .filter(|(id, h)| up.tasks.get(*id) != Some(h))
                .map(|(id, _)| id.as_str())
                .collect();
            if differing.is_empty() {
                Item::upstream(
                    "tasks",
                    format!("{} tasks equal upstream's", ours.tasks.len()),
                )
            } else {
                let shown: Vec<&str> = differing.iter().take(5).copied().collect();
                let more = differing.len().saturating_sub(shown.len());
                Item::deviates(
                    "tasks",
                    format!(
                        "{} of {} tasks differ from or are unknown to upstream's ({}{})",
                        differing.len(),
                        ours.tasks.len(),
                        shown.join(", "),
                        if more > 0 {
                            format!(", +{more} more")
                        } else {
                            String::new()
                        }
                    ),
                )
            }
        }
    };
    let mut items = option_items(data);
    items.extend([
        file(
            "policy",
            &ours.policy,
            &up.policy,
            format!("policy from {dir}"),
        ),
        file(
            "database",
            &ours.database,
            &up.database,
            format!("database from {dir}"),
        ),
        file(
            "tool_schemas",
            &ours.tool_schemas,
            &up.tool_schemas,
            schemas_from,
        ),
        tasks_item,
    ]);
    items
}

/// The item of one benchmark text.
pub(crate) fn text_item(name: &'static str, t: &Text) -> Item {
    let hash = short_hash(t.text.as_bytes());
    let upstream = MANIFEST.texts.get(t.kind.key()) == Some(&hash);
    let path = t.path.display();
    match (&t.source, upstream) {
        (TextSource::DataDir, true) => Item::upstream(name, format!("{path}")),
        (TextSource::Config, true) => {
            Item::upstream(name, format!("{path} (`[prompts]`, equal to upstream's)"))
        }
        (TextSource::DataDir, false) => Item::deviates(
            name,
            format!("{path} differs from upstream's (blake3 {hash})"),
        ),
        (TextSource::Config, false) => {
            Item::deviates(name, format!("own text {path} (blake3 {hash})"))
        }
    }
}

/// The text items of a domain: the agent instruction, and the guidelines its tasks' users
/// get. `attacker` is set when attack tasks replace the guidelines with the project's
/// attacker prompt.
pub(crate) fn text_items(
    texts: &BenchmarkTexts,
    with_tools: bool,
    without_tools: bool,
    attacker: bool,
) -> Vec<Item> {
    let mut out = vec![text_item("agent_instruction", &texts.agent_instruction)];
    if attacker {
        out.push(Item::deviates(
            "user_guidelines",
            "attack tasks: the project's attacker prompt (configs/prompts/user_attacker.md)",
        ));
    } else {
        if without_tools {
            out.push(text_item("user_guidelines", &texts.user_guidelines));
        }
        if with_tools {
            out.push(text_item(
                "user_guidelines_tools",
                &texts.user_guidelines_tools,
            ));
        }
    }
    out
}

/// The effective temperature a role's model gets: the config's, else upstream's default for
/// a model over HTTP (a `sim` model takes none).
pub(crate) fn default_temperature(m: &ModelSection) -> Option<f64> {
    m.temperature
        .or((!m.is_sim()).then_some(UPSTREAM_TEMPERATURE))
}

/// The sampling item: agent and user sampled as upstream's defaults (temperature 0.0,
/// nothing else set).
pub(crate) fn sampling_item(agent: &ModelSection, user: &ModelSection) -> Item {
    let mut off = Vec::new();
    for (role, m) in [("agent", agent), ("user", user)] {
        if m.is_sim() {
            continue;
        }
        if let Some(t) = m.temperature.filter(|t| *t != UPSTREAM_TEMPERATURE) {
            off.push(format!("{role} temperature {t} (upstream 0.0)"));
        }
        if let Some(p) = m.top_p {
            off.push(format!("{role} top_p {p}"));
        }
        if let Some(n) = m.max_tokens {
            off.push(format!("{role} max_tokens {n}"));
        }
        if !m.extra.is_empty() {
            let keys: Vec<&str> = m.extra.keys().map(String::as_str).collect();
            off.push(format!("{role} extra {}", keys.join("/")));
        }
    }
    if off.is_empty() {
        let sim = agent.is_sim() && user.is_sim();
        Item::upstream(
            "sampling",
            if sim {
                "sim models (no sampling parameters)".to_string()
            } else {
                "temperature 0.0 for agent and user, nothing else set".to_string()
            },
        )
    } else {
        Item::deviates("sampling", off.join("; "))
    }
}

/// The termination-limits item: the loop limits and what ends a simulation early.
pub(crate) fn limits_item(
    max_steps: u32,
    max_errors: u32,
    max_retries: u32,
    errors: ModelErrors,
    truncated: TruncatedReplies,
) -> Item {
    let mut off = Vec::new();
    if max_steps != UPSTREAM_MAX_STEPS {
        off.push(format!(
            "max_steps {max_steps} (upstream {UPSTREAM_MAX_STEPS})"
        ));
    }
    if max_errors != UPSTREAM_MAX_ERRORS {
        off.push(format!(
            "max_errors {max_errors} (upstream {UPSTREAM_MAX_ERRORS})"
        ));
    }
    if max_retries != UPSTREAM_MAX_RETRIES {
        off.push(format!(
            "max_retries {max_retries} (upstream {UPSTREAM_MAX_RETRIES})"
        ));
    }
    if errors != ModelErrors::Infrastructure {
        off.push("model_errors = \"agent\" (upstream retries the simulation)".into());
    }
    if truncated != TruncatedReplies::Record {
        off.push(format!(
            "truncated_replies = \"{}\" (upstream keeps a cut reply as it came)",
            truncated.as_str()
        ));
    }
    if off.is_empty() {
        Item::upstream("limits", "max_steps 200, max_errors 10, max_retries 3")
    } else {
        Item::deviates("limits", off.join("; "))
    }
}

/// The evaluator item: tauguard's evaluator reproduces upstream's reward; tasks scored on NL
/// assertions also need upstream's judge.
pub(crate) fn evaluator_item(tasks: &[Task], judge: Option<&ModelSection>) -> Item {
    let nl = tasks
        .iter()
        .filter(|t| {
            t.evaluation_criteria
                .as_ref()
                .is_some_and(|c| c.reward_basis.contains(&RewardType::NlAssertion))
        })
        .count();
    if nl == 0 {
        return Item::upstream(
            "evaluator",
            "upstream's reward basis; no task is scored on NL assertions",
        );
    }
    let who = match judge {
        None => "the offline sim-judge".to_string(),
        Some(j) => format!("{}/{}", j.provider, j.model),
    };
    Item::deviates(
        "evaluator",
        format!(
            "{nl} tasks are scored on NL assertions, judged by {who} with tauguard's judge \
             prompt (upstream: {UPSTREAM_JUDGE} at temperature 0.0 with its own prompt)"
        ),
    )
}

#[cfg(test)]
mod tests;
