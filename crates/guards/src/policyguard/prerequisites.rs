//! The procedural prerequisites of a domain's mutating tools, `tasks/<domain>/prerequisites.toml`:
//! identity reads, required reads, argument links and confirmation per tool. One schema for
//! its three readers — the offline sim verifier judges calls against it, the orchestrator labels
//! each executed call with the prerequisites it lacked (call-NMR), and the sim agent plans its
//! reads from it — so the three can never read the file differently.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `tasks/<domain>/prerequisites.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Prerequisites {
    #[serde(default)]
    pub schema: Option<String>,
    pub domain: String,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolPrerequisites>,
}

/// The procedural prerequisites of one mutating tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolPrerequisites {
    /// At least one of these reads must have succeeded earlier.
    #[serde(default)]
    pub identity_reads: Vec<String>,
    /// Every one of these reads must have succeeded earlier.
    #[serde(default)]
    pub required_reads: Vec<String>,
    /// For each group, at least one of its reads must have succeeded earlier.
    #[serde(default)]
    pub required_any_reads: Vec<Vec<String>>,
    #[serde(default)]
    pub argument_links: Vec<ArgumentLink>,
    /// An explicit user "yes" after the agent's last summary, before the call.
    #[serde(default)]
    pub confirmation: bool,
    /// The policy passages behind these prerequisites (for people and the LLM verifier; the
    /// sim verifier checks they occur in the raw policy text it is given).
    #[serde(default)]
    pub policy: Option<String>,
    /// For the sim agent's planner: read tool → parameter → the fields (of the call's
    /// arguments or of earlier read results) that supply it, tried in order, when no field has
    /// the parameter's own name (telecom's `get_details_by_id` takes an `id` that is a line's
    /// `line_id` or its `plan_id`).
    #[serde(default)]
    pub read_arguments: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// `call.arguments[argument] == read.arguments[read_argument]` for a successful `read`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ArgumentLink {
    pub argument: String,
    pub read: String,
    pub read_argument: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PrerequisitesError {
    #[error("cannot read `{path}`")]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("`{path}`")]
    Parse {
        path: PathBuf,
        #[source]
        cause: Box<toml::de::Error>,
    },
}

impl Prerequisites {
    /// Parses the TOML text; `origin` names the file in errors.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Prerequisites, PrerequisitesError> {
        toml::from_str(text).map_err(|cause| PrerequisitesError::Parse {
            path: origin.to_path_buf(),
            cause: Box::new(cause),
        })
    }

    pub fn load(path: &Path) -> Result<Prerequisites, PrerequisitesError> {
        let text = std::fs::read_to_string(path).map_err(|cause| PrerequisitesError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        Prerequisites::from_toml_str(&text, path)
    }

    /// Loads `<tasks_dir>/<domain>/prerequisites.toml`.
    pub fn load_domain(
        tasks_dir: &Path,
        domain: &str,
    ) -> Result<Prerequisites, PrerequisitesError> {
        Prerequisites::load(&tasks_dir.join(domain).join("prerequisites.toml"))
    }
}
