//! Locating and loading τ²-bench data: one directory per domain in upstream's layout
//! (`<dir>/<domain>/{policy.md | main_policy.md + tech_support_manual.md, tasks.json,
//! split_tasks.json, db.json | db.toml + user_db.toml, tools.json}`).
//!
//! The database of a domain is parsed once into an immutable [`DomainBase`]; tasks and splits
//! are typed here so that a malformed file fails at load with its path and position.

use crate::environment::{DomainBase, Environment};
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tauguard_core::tool::ToolSpec;
use tauguard_core::{Requestor, Task};

/// Environment variable naming the data directory when `--data-dir` is not given.
pub const DATA_DIR_ENV: &str = "TAUGUARD_DATA_DIR";
/// Data directory used when neither `--data-dir` nor the environment variable is set.
pub const DEFAULT_DATA_DIR: &str = "data/tau2";

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "data directory `{path}` does not exist\n  hint: pass --data-dir, set {DATA_DIR_ENV}, or run scripts/fetch-tau2-data.sh"
    )]
    MissingDataDir { path: PathBuf },
    #[error("unknown domain `{name}` (known: {known})")]
    UnknownDomain { name: String, known: String },
    #[error("cannot read `{path}`")]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A JSON (or TOML-as-JSON) document that does not deserialise; `at` is the key path of
    /// the failing value.
    #[error("`{path}`: at `{at}`")]
    Json {
        path: PathBuf,
        at: String,
        #[source]
        cause: serde_json::Error,
    },
    #[error("`{path}`")]
    Toml {
        path: PathBuf,
        #[source]
        cause: toml::de::Error,
    },
    /// A document that parses but that the domain refuses; the message names the bad value.
    #[error("`{path}`: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("split `{split}` not found in `{path}` (available: {available})")]
    UnknownSplit {
        split: String,
        path: PathBuf,
        available: String,
    },
    #[error("task ids not found in domain `{domain}`: {ids}")]
    UnknownTasks { domain: String, ids: String },
    #[error("domain `{domain}` has no option `{option}` (options: {known})")]
    UnknownOption {
        domain: String,
        option: String,
        known: String,
    },
}

/// A resolved data directory.
#[derive(Debug, Clone)]
pub struct DataDir(PathBuf);

impl DataDir {
    /// Resolution order: explicit path, then `TAUGUARD_DATA_DIR`, then `data/tau2`.
    pub fn resolve(explicit: Option<&Path>) -> Result<DataDir, LoadError> {
        let path = explicit
            .map(Path::to_path_buf)
            .or_else(|| {
                std::env::var_os(DATA_DIR_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        if !path.is_dir() {
            return Err(LoadError::MissingDataDir { path });
        }
        Ok(DataDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn domain_dir(&self, domain: &str) -> PathBuf {
        self.0.join(domain)
    }
}

impl LoadError {
    /// The I/O failure on `path`, for `map_err`.
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
        move |cause| LoadError::Io {
            path: path.to_path_buf(),
            cause,
        }
    }

    /// `value` failing to deserialise, for the file at `path`.
    pub(crate) fn json(path: &Path, e: serde_path_to_error::Error<serde_json::Error>) -> Self {
        LoadError::Json {
            path: path.to_path_buf(),
            at: e.path().to_string(),
            cause: e.into_inner(),
        }
    }
}

pub(crate) fn read_text(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(LoadError::io(path))
}

/// The paths of the entries of directory `dir`, in the order the file system lists them.
pub(crate) fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    std::fs::read_dir(dir)
        .map_err(LoadError::io(dir))?
        .map(|entry| entry.map(|e| e.path()).map_err(LoadError::io(dir)))
        .collect()
}

/// Parses a JSON file into `T`, naming the file, line, column and key path on failure.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let text = read_text(path)?;
    parse_json(path, &text)
}

pub(crate) fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, LoadError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| LoadError::json(path, e))
}

/// Parses a TOML file into `T`, naming the file and position on failure.
pub(crate) fn read_toml<T: DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    let text = read_text(path)?;
    toml::from_str(&text).map_err(|cause| LoadError::Toml {
        path: path.to_path_buf(),
        cause,
    })
}

/// A file's identity as last parsed: canonical path, length and modification time.
type FileStamp = (PathBuf, u64, Option<SystemTime>);

fn file_stamp(path: &Path) -> Result<FileStamp, LoadError> {
    let meta = std::fs::metadata(path).map_err(LoadError::io(path))?;
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok((canonical, meta.len(), meta.modified().ok()))
}

/// Databases parsed once per process: each kept with the stamps of the files it was parsed
/// from, so loading a domain again (every `DomainData::load` of a run, a test, a grid cell)
/// parses nothing that has not changed on disk.
pub(crate) struct ParseCache<V>(Mutex<Vec<(Vec<FileStamp>, V)>>);

impl<V: Clone> ParseCache<V> {
    pub(crate) const fn new() -> Self {
        ParseCache(Mutex::new(Vec::new()))
    }

    /// The value parsed from `files`, parsing them with `parse` unless they are unchanged
    /// since an earlier call.
    pub(crate) fn get_or_parse(
        &self,
        files: &[&Path],
        parse: impl FnOnce() -> Result<V, LoadError>,
    ) -> Result<V, LoadError> {
        let key = files
            .iter()
            .map(|f| file_stamp(f))
            .collect::<Result<Vec<_>, _>>()?;
        let lock = || self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = lock().iter().find(|(k, _)| *k == key) {
            return Ok(value.clone());
        }
        let value = parse()?;
        lock().push((key, value.clone()));
        Ok(value)
    }
}

/// Tool schemas a model sees, per side. Shared slices: every model call of every simulation
/// sends them, so they are never copied.
#[derive(Debug, Clone)]
pub struct ToolSchemas {
    pub assistant: Arc<[ToolSpec]>,
    pub user: Arc<[ToolSpec]>,
}

impl ToolSchemas {
    pub fn side(&self, side: Requestor) -> &[ToolSpec] {
        match side {
            Requestor::Assistant => &self.assistant,
            Requestor::User => &self.user,
        }
    }
}

/// Everything loaded for one domain: policy text, tasks, splits, tool schemas and the base
/// database snapshot.
pub struct DomainData {
    pub domain: &'static str,
    /// The registry entry of `domain`.
    pub def: &'static dyn crate::registry::Domain,
    pub dir: PathBuf,
    /// The policy as the agent's system prompt embeds it.
    pub policy: String,
    /// Tasks in file order.
    pub tasks: Vec<Task>,
    /// Split name → task ids (empty when the domain has no split file).
    pub splits: IndexMap<String, Vec<String>>,
    /// From `tools.json` when present, else from the implementation's declarations.
    pub tool_schemas: ToolSchemas,
    /// Whether `tool_schemas` came from the data directory's schemas file.
    pub schemas_from_file: bool,
    /// That file (`tools.json`, or the one the domain's options choose), read or not.
    pub schemas_path: PathBuf,
    /// The domain's options, every declared one present (see
    /// [`crate::registry::resolve_options`]); empty for domains without options.
    pub options: crate::registry::DomainOptions,
    pub base: Arc<dyn DomainBase>,
}

impl std::fmt::Debug for DomainData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DomainData")
            .field("domain", &self.domain)
            .field("dir", &self.dir)
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

/// Parses a τ²-bench task file (a list of tasks, or `{"tasks": [...]}`), naming the file, the
/// position and the key path of the first malformed task. Task sets of our own (attack tasks)
/// are read with it too.
pub fn load_task_file(path: &Path) -> Result<Vec<Task>, LoadError> {
    let text = read_text(path)?;
    match parse_json::<TaskFile>(path, &text) {
        Ok(TaskFile::List(t)) | Ok(TaskFile::Wrapped { tasks: t }) => Ok(t),
        // Untagged enums hide the real error: re-parse as a list to name the failing key.
        Err(_) => parse_json::<Vec<Task>>(path, &text),
    }
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum TaskFile {
    List(Vec<Task>),
    Wrapped { tasks: Vec<Task> },
}

#[derive(serde::Deserialize)]
struct ToolsFile {
    #[serde(default)]
    assistant_tools: Vec<serde_json::Value>,
    #[serde(default)]
    user_tools: Vec<serde_json::Value>,
}

impl DomainData {
    /// Loads `domain` from `dir` with its default options.
    pub fn load(dir: &DataDir, domain: &str) -> Result<DomainData, LoadError> {
        Self::load_with(dir, domain, &Default::default())
    }

    /// Loads `domain` from `dir` under `options` (see [`crate::registry::Domain::options`]).
    pub fn load_with(
        dir: &DataDir,
        domain: &str,
        options: &crate::registry::DomainOptions,
    ) -> Result<DomainData, LoadError> {
        let def = crate::registry::require(domain)?;
        let domain = def.name();
        let options = crate::registry::resolve_options(def, options)?;
        let ddir = dir.domain_dir(domain);
        if !ddir.is_dir() {
            return Err(LoadError::MissingDataDir { path: ddir });
        }
        let parts = def.load_parts(&ddir, &options)?;
        let (base, policy) = (parts.base, parts.policy);
        let (tasks, splits) = def.load_tasks(&ddir)?;
        let tools_path = parts.tools_file;
        let fresh = base.fresh();
        let (tool_schemas, schemas_from_file) = if tools_path.exists() {
            let file: ToolsFile = read_json(&tools_path)?;
            let parse = |list: &[serde_json::Value]| -> Result<Vec<ToolSpec>, LoadError> {
                list.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        ToolSpec::from_openai(v).map_err(|m| LoadError::Parse {
                            path: tools_path.clone(),
                            message: format!("tool #{i}: {m}"),
                        })
                    })
                    .collect()
            };
            (
                ToolSchemas {
                    assistant: parse(&file.assistant_tools)?.into(),
                    user: parse(&file.user_tools)?.into(),
                },
                true,
            )
        } else if def.builtin_schemas() {
            (builtin_schemas(fresh.as_ref()), false)
        } else {
            return Err(LoadError::Io {
                path: tools_path,
                cause: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{domain} reads its tool schemas from the data directory only"),
                ),
            });
        };
        Ok(DomainData {
            domain,
            def,
            dir: ddir,
            policy,
            tasks,
            splits,
            tool_schemas,
            schemas_from_file,
            schemas_path: tools_path,
            options,
            base,
        })
    }

    /// A fresh environment in the base state.
    pub fn fresh_env(&self) -> Box<dyn Environment> {
        self.base.fresh()
    }

    /// A fresh environment set up for `task` (see [`DomainBase::fresh_for`]), before its
    /// initial state.
    pub fn task_env(&self, task: &Task) -> Box<dyn Environment> {
        self.base.fresh_for(task)
    }

    /// Tasks of a split (file order), optionally narrowed to `ids` (all must exist) and to
    /// the first `limit`. `split = None` keeps every task.
    pub fn select_tasks(
        &self,
        split: Option<&str>,
        ids: Option<&[String]>,
        limit: Option<usize>,
    ) -> Result<Vec<&Task>, LoadError> {
        let mut tasks: Vec<&Task> = match split {
            None => self.tasks.iter().collect(),
            Some(name) => {
                let members = self
                    .splits
                    .get(name)
                    .ok_or_else(|| LoadError::UnknownSplit {
                        split: name.to_string(),
                        path: self.dir.join("split_tasks.json"),
                        available: self.splits.keys().cloned().collect::<Vec<_>>().join(", "),
                    })?;
                let set: std::collections::HashSet<&str> =
                    members.iter().map(String::as_str).collect();
                self.tasks
                    .iter()
                    .filter(|t| set.contains(t.id.as_str()))
                    .collect()
            }
        };
        if let Some(ids) = ids {
            let missing: Vec<&str> = ids
                .iter()
                .filter(|id| !tasks.iter().any(|t| &t.id == *id))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(LoadError::UnknownTasks {
                    domain: self.domain.to_string(),
                    ids: missing.join(", "),
                });
            }
            tasks.retain(|t| ids.contains(&t.id));
        }
        if let Some(n) = limit {
            tasks.truncate(n);
        }
        Ok(tasks)
    }
}

fn builtin_schemas(env: &dyn Environment) -> ToolSchemas {
    let side = |s| {
        env.toolkit(s)
            .iter()
            .filter(|t| t.is_tool)
            .map(|t| t.spec())
            .collect::<Vec<_>>()
            .into()
    };
    ToolSchemas {
        assistant: side(Requestor::Assistant),
        user: side(Requestor::User),
    }
}
