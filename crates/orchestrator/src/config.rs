//! Run configuration: TOML as written by a researcher → checked plain structs.
//!
//! Unknown keys are errors (a typo must not silently change an experiment); every error names
//! the file and the key path.

pub(crate) use crate::model_section::{ModelSection, Role};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `what` names the file's role: `config`, `model catalog`.
    #[error("cannot read {what} `{path}`")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("config `{path}`: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A domain, split or task id the data directory does not have, at the config key that
    /// asked for it (boxed: every config result carries this type).
    #[error(transparent)]
    Data(Box<DataAtKey>),
}

/// What [`ConfigError::Data`] holds: the config file, the key, and the data directory's own
/// error as the cause.
#[derive(Debug, thiserror::Error)]
#[error("config `{path}`: at `{key}`")]
pub struct DataAtKey {
    pub path: PathBuf,
    pub key: String,
    #[source]
    pub cause: tauguard_env::LoadError,
}

/// `[run]`: what to simulate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSection {
    /// Run name; the output directory is `results/<name>` unless `--out` is given.
    pub name: String,
    /// The domain (one-value shorthand of `grid.domains`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Task split (default `base`; `*` = every task of the domain).
    #[serde(default = "default_split")]
    pub split: String,
    /// Restrict to these task ids (all must exist).
    #[serde(default)]
    pub task_ids: Option<Vec<String>>,
    /// Keep only the first N tasks after filtering.
    #[serde(default)]
    pub num_tasks: Option<usize>,
    #[serde(default = "default_trials")]
    pub trials: u32,
    /// Run seed; trial seeds derive from it as in τ²-bench.
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    #[serde(default = "default_max_errors")]
    pub max_errors: u32,
    /// Extra whole-simulation attempts after a failure (τ²-bench: 3).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Simulations in flight at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// The run stops after this many consecutive HTTP attempts, across simulations, that could
    /// not connect (refused, DNS, connect time-out); 0 = never.
    #[serde(
        default = "default_connect_failures",
        skip_serializing_if = "is_default_connect_failures"
    )]
    pub max_consecutive_connect_failures: u32,
    /// The run stops after this many consecutive HTTP attempts answered with a server error
    /// (5xx, 408, 409), across simulations; an attempt answered 2xx resets the count; 0 =
    /// never. Default 50: bursts of a few happen on a loaded server, and each call retries
    /// them, but fifty in a row with no answer between means it is down.
    #[serde(
        default = "default_server_errors",
        skip_serializing_if = "is_default_server_errors"
    )]
    pub max_consecutive_server_errors: u32,
    /// The run stops after this many consecutive calls still rate-limited (HTTP 429) when
    /// their retries were spent; a 2xx answer resets the count; 0 = never. Default 10: each
    /// such call already waited out its whole retry budget, so ten in a row means the quota
    /// is gone, not that the run is a little fast.
    #[serde(
        default = "default_rate_limited",
        skip_serializing_if = "is_default_rate_limited"
    )]
    pub max_consecutive_rate_limited: u32,
    /// The run stops after this many consecutive HTTP attempts that timed out or stalled
    /// (no response headers within the provider's `stall_secs`); a 2xx answer resets the
    /// count; 0 = never. Default 10: each costs up to the stall limit, so a server that
    /// accepts and never answers stops the run within about ten of them.
    #[serde(
        default = "default_timeouts",
        skip_serializing_if = "is_default_timeouts"
    )]
    pub max_consecutive_timeouts: u32,
    /// How a simulation whose model produced unusable output (no text and no tool calls,
    /// tool arguments that are not a JSON object) counts.
    #[serde(default, skip_serializing_if = "ModelErrors::is_default")]
    pub model_errors: ModelErrors,
    /// What an agent reply cut at its token limit is.
    #[serde(default, skip_serializing_if = "TruncatedReplies::is_default")]
    pub truncated_replies: TruncatedReplies,
    /// Data directory; overridden by `--data-dir`, defaults to `TAUGUARD_DATA_DIR` / `data/tau2`.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// A task set of our own that replaces the domain's tasks (a directory relative to the
    /// project holding `tasks.json`, optionally `split_tasks.json` and, for attack tasks,
    /// `attacks.json`), e.g. `tasks/airline/attacks`. Without a split file its `base` split
    /// is every task.
    #[serde(default)]
    pub task_set: Option<PathBuf>,
    /// Directory of prompt files (default `configs/prompts`, relative to the working directory).
    #[serde(default)]
    pub prompts_dir: Option<PathBuf>,
    /// Options of the run's domains, per domain: `[run.domain_options.banking_knowledge]
    /// retrieval = "grep_only"`. A domain declares what it takes
    /// (`tauguard_env::registry::Domain::options`); an option left out takes its default, and
    /// the comparability stamp records each against upstream's default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub domain_options: std::collections::BTreeMap<String, tauguard_env::registry::DomainOptions>,
}

fn default_split() -> String {
    "base".into()
}
fn default_trials() -> u32 {
    1
}
fn default_seed() -> u64 {
    300
}
pub(crate) fn default_max_steps() -> u32 {
    200
}
pub(crate) fn default_max_errors() -> u32 {
    10
}
fn default_retries() -> u32 {
    3
}
fn default_concurrency() -> usize {
    8
}
fn default_connect_failures() -> u32 {
    20
}
fn is_default_connect_failures(n: &u32) -> bool {
    *n == default_connect_failures()
}
fn default_server_errors() -> u32 {
    50
}
fn is_default_server_errors(n: &u32) -> bool {
    *n == default_server_errors()
}
fn default_rate_limited() -> u32 {
    10
}
fn is_default_rate_limited(n: &u32) -> bool {
    *n == default_rate_limited()
}
fn default_timeouts() -> u32 {
    10
}
fn is_default_timeouts(n: &u32) -> bool {
    *n == default_timeouts()
}

/// The `[run]` keys that stop a run on an outage; they cannot change a result, so the
/// config hash leaves them out.
pub(crate) const OUTAGE_LIMIT_KEYS: [&str; 4] = [
    "max_consecutive_connect_failures",
    "max_consecutive_server_errors",
    "max_consecutive_rate_limited",
    "max_consecutive_timeouts",
];

impl RunSection {
    /// The outage watch's limits.
    pub fn outage_limits(&self) -> tauguard_llm::OutageLimits {
        tauguard_llm::OutageLimits {
            connect: self.max_consecutive_connect_failures,
            server_errors: self.max_consecutive_server_errors,
            rate_limited: self.max_consecutive_rate_limited,
            timeouts: self.max_consecutive_timeouts,
        }
    }
}

/// `[run] model_errors`: what a model's unusable output makes of its simulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelErrors {
    /// τ²-bench: restart the simulation; after `max_retries` it is an infrastructure error
    /// (never scored).
    #[default]
    Infrastructure,
    /// The simulation ends at once and is scored: reward 0, termination reason `agent_error`
    /// (or `user_error` when the user simulator's model failed), the error in `error`.
    Agent,
}

impl ModelErrors {
    fn is_default(&self) -> bool {
        *self == ModelErrors::default()
    }
}

/// `[run] truncated_replies`: what an agent reply cut at its token limit (the provider's stop
/// reason `length`, Anthropic `max_tokens`, Gemini `MAX_TOKENS`) makes of its simulation.
/// Every role's cut replies are counted in the record's usage whatever this says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncatedReplies {
    /// The reply goes into the trajectory as it came (as upstream does) and is counted.
    #[default]
    Record,
    /// The simulation ends at the cut reply, which stays out of the trajectory, and is scored
    /// with termination reason `agent_error` (the reply in `attempts.unusable_output`).
    AgentError,
    /// The call is asked once more with twice the token limit, at most
    /// [`crate::party::RETRY_MAX_TOKENS`]; the retry's reply is kept, marked
    /// `token_limit_retry`, whether or not it is cut again.
    Retry,
}

impl TruncatedReplies {
    fn is_default(&self) -> bool {
        *self == TruncatedReplies::default()
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TruncatedReplies::Record => "record",
            TruncatedReplies::AgentError => "agent_error",
            TruncatedReplies::Retry => "retry",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsSection {
    /// The agent (one-value shorthand of `grid.agents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<ModelSection>,
    pub user: ModelSection,
    /// NL-assertion judge (default: `sim-judge`).
    #[serde(default)]
    pub judge: Option<ModelSection>,
    /// The embedding model of a retrieval that embeds (banking_knowledge's `*_embeddings*`
    /// variants): an alias of `configs/models.toml` (upstream's are `text-embedding-3-large`
    /// and `qwen3-embedding-8b`) or a table. Required when a domain of the run embeds;
    /// unused otherwise. See `crate::embeddings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<crate::grid::NameOr<ModelSection>>,
}

pub(crate) use crate::grid::GridSection;

/// `[guard]`: options shared by the guard configurations of the grid.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardSection {
    /// Any NOT MET forces BLOCK (checklist variants).
    #[serde(default)]
    pub strict: bool,
    /// When the verifier reply stays unparseable: `closed` (block, default) or `open` (pass).
    #[serde(default)]
    pub fail_mode: Option<tauguard_guards::FailMode>,
    /// Verifier model; default: the agent's model (paired-verifier protocol).
    #[serde(default)]
    pub verifier: Option<ModelSection>,
    /// Token limit of every verifier completion (default: `[guard.verifier] max_tokens`, else
    /// `tauguard_guards::DEFAULT_VERIFIER_MAX_TOKENS`); never the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifier_max_tokens: Option<u32>,
    /// Token limit of every LLM-guide completion (default: `[guard.verifier] max_tokens`,
    /// else `tauguard_guards::DEFAULT_GUIDE_MAX_TOKENS`); never the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guide_max_tokens: Option<u32>,
    /// A compiled artifact set in place of the frozen checklists and workflow of
    /// `tasks/<domain>/`: a directory laid out as `DIR/<domain>/checklist/` and/or
    /// `DIR/<domain>/workflow/`, as `tauguard compile … --out` writes them, relative to the
    /// project directory (see `tauguard_guards::ArtifactSet`). Default (and `"frozen"`): the
    /// frozen set. `[grid] artifacts` lists several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
}

/// `[prompts]`: the researcher's own files in place of the benchmark's texts (each a path,
/// relative to the working directory). Unset, each is read from the τ²-bench data directory
/// as upstream ships it; any set one marks the run as not comparable with upstream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptsSection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_instruction: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_guidelines: Option<PathBuf>,
    /// The guidelines of a user simulator that has tools (telecom).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_guidelines_tools: Option<PathBuf>,
}

impl PromptsSection {
    fn is_empty(&self) -> bool {
        *self == PromptsSection::default()
    }
}

/// A whole config file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub run: RunSection,
    pub models: ModelsSection,
    /// Empty sections are not serialised, so configs without one keep their hash.
    #[serde(default, skip_serializing_if = "PromptsSection::is_empty")]
    pub prompts: PromptsSection,
    #[serde(default)]
    pub grid: GridSection,
    #[serde(default)]
    pub guard: GuardSection,
    /// Providers, prices and the response cache for non-`sim` models.
    #[serde(default)]
    pub llm: tauguard_llm::LlmConfig,
    /// The file the config was read from, for errors found after parsing (an unknown split
    /// or task id); not part of the config or its hash.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// `line N: ` for a TOML error with a position, so the message stays on one line; the
/// error's own rendering quotes the source text over several lines.
fn toml_line(text: &str, e: &toml::de::Error) -> String {
    e.span()
        .map(|span| {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            format!("line {line}: ")
        })
        .unwrap_or_default()
}

impl RunConfig {
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ConfigError::Io {
            what: "config",
            path: path.into(),
            cause,
        })?;
        Self::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<RunConfig, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.into(),
            message,
        };
        let de = toml::Deserializer::parse(text)
            .map_err(|e| invalid(format!("{}{}", toml_line(text, &e), e.message())))?;
        let mut cfg: RunConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let (key, inner) = (e.path().to_string(), e.into_inner());
            invalid(format!(
                "{}at `{key}`: {}",
                toml_line(text, &inner),
                inner.message()
            ))
        })?;
        cfg.source = Some(path.to_path_buf());
        if cfg.run.trials == 0 {
            return Err(invalid("at `run.trials`: must be at least 1".into()));
        }
        if cfg.run.concurrency == 0 {
            return Err(invalid("at `run.concurrency`: must be at least 1".into()));
        }
        // Zero would run every simulation to nothing (max_steps) or run nothing at all
        // (num_tasks), and exit 0 either way.
        if cfg.run.max_steps == 0 {
            return Err(invalid("at `run.max_steps`: must be at least 1".into()));
        }
        if cfg.run.num_tasks == Some(0) {
            return Err(invalid("at `run.num_tasks`: must be at least 1".into()));
        }
        crate::grid::validate(&cfg).map_err(invalid)?;
        cfg.llm
            .validate()
            .map_err(|e| invalid(format!("at `llm`: {e}")))?;
        for (key, role, m) in cfg.model_sections() {
            cfg.check_model(&key, role, m).map_err(invalid)?;
        }
        if !cfg.has_aliases() {
            cfg.check_axes().map_err(invalid)?;
        }
        // A limit of zero tokens would fail every verifier or guide call into its fail mode.
        for (key, limit) in [
            ("guard.verifier_max_tokens", cfg.guard.verifier_max_tokens),
            ("guard.guide_max_tokens", cfg.guard.guide_max_tokens),
        ] {
            if limit == Some(0) {
                return Err(invalid(format!("at `{key}`: must be at least 1")));
            }
        }
        Ok(cfg)
    }

    /// Every model table of the config with its key and role (aliases not yet resolved are
    /// left out).
    pub fn model_sections(&self) -> Vec<(String, Role, &ModelSection)> {
        let mut out = Vec::new();
        if let Some(m) = &self.models.agent {
            out.push(("models.agent".to_string(), Role::Agent, m));
        }
        out.push(("models.user".into(), Role::User, &self.models.user));
        if let Some(m) = &self.models.judge {
            out.push(("models.judge".into(), Role::Judge, m));
        }
        if let Some(m) = &self.guard.verifier {
            out.push(("guard.verifier".into(), Role::Verifier, m));
        }
        if let Some(crate::grid::NameOr::Table(m)) = &self.models.embeddings {
            out.push(("models.embeddings".into(), Role::Embeddings, m));
        }
        fn tables(list: &[crate::grid::NameOr<ModelSection>]) -> Vec<(usize, &ModelSection)> {
            list.iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    crate::grid::NameOr::Table(m) => Some((i, m)),
                    crate::grid::NameOr::Name(_) => None,
                })
                .collect()
        }
        for (i, m) in tables(&self.grid.agents) {
            out.push((format!("grid.agents[{i}]"), Role::Agent, m));
        }
        for (i, m) in tables(&self.grid.verifiers) {
            out.push((format!("grid.verifiers[{i}]"), Role::Verifier, m));
        }
        out
    }

    /// Whether any model of the run (agents, user, judge, verifiers) answers over the network
    /// rather than being a `sim` model. An alias not yet resolved counts as network.
    pub fn uses_network(&self) -> bool {
        let alias = |list: &[crate::grid::NameOr<ModelSection>]| {
            list.iter()
                .any(|e| matches!(e, crate::grid::NameOr::Name(n) if n != crate::grid::PAIRED))
        };
        alias(&self.grid.agents)
            || alias(&self.grid.verifiers)
            || matches!(self.models.embeddings, Some(crate::grid::NameOr::Name(_)))
            || self.model_sections().iter().any(|(_, _, m)| !m.is_sim())
    }

    /// The config as the plain data its hash covers: everything except settings that cannot
    /// change a result (`run.concurrency`, the outage limits `run.max_consecutive_*`).
    pub fn identity_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("config serialises");
        if let Some(run) = v.get_mut("run").and_then(|r| r.as_object_mut()) {
            // The newer limits go first, keeping the order of the rest: what remains is
            // the map of a config without them, on which the two removals below run as they
            // always have (`remove` swaps the last key in, so their order is part of every
            // hash).
            for key in &OUTAGE_LIMIT_KEYS[1..] {
                run.shift_remove(*key);
            }
            run.remove("concurrency");
            run.remove("max_consecutive_connect_failures");
        }
        v
    }

    /// blake3 of the canonical JSON of [`RunConfig::identity_json`]: the run's config hash in
    /// records, compared on `--resume`.
    pub fn hash(&self) -> String {
        let json = self.identity_json().to_string();
        blake3::hash(json.as_bytes()).to_hex()[..16].to_string()
    }
}

#[cfg(test)]
mod tests;
