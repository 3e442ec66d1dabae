//! The call-NMR oracle, `tasks/<domain>/nmr_oracle.toml`: per mutating tool, the read tools
//! that must have succeeded earlier in the trajectory, with argument links where the policy
//! implies them — PolicyGuide's frozen read-prerequisite ground truth (Table 17). It is read
//! here, for labelling executed calls only, and never by a guard, so the ground truth is not
//! the rule engine the offline guards decide with (the guards crate is tested never to name
//! the file).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauguard_core::{Message, Requestor, ToolCall};

/// The oracle's file name under `tasks/<domain>/`.
pub(crate) const ORACLE_FILE: &str = "nmr_oracle.toml";

/// `tasks/<domain>/nmr_oracle.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NmrOracle {
    #[serde(default)]
    pub schema: Option<String>,
    pub domain: String,
    #[serde(default)]
    pub tools: BTreeMap<String, OracleTool>,
}

/// The read prerequisites of one mutating tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleTool {
    /// Every one of these reads succeeded earlier.
    #[serde(default)]
    pub reads: Vec<String>,
    /// For each group, one of its reads succeeded earlier.
    #[serde(default)]
    pub any_of: Vec<Vec<String>>,
    #[serde(default)]
    pub links: Vec<OracleLink>,
    /// The policy passage the entry is derived from.
    pub policy: String,
}

/// A successful `read` with `read_argument` equal to the call's `argument`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleLink {
    pub argument: String,
    pub read: String,
    pub read_argument: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("cannot read `{path}`")]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("`{path}`")]
    Toml {
        path: PathBuf,
        #[source]
        cause: toml::de::Error,
    },
    #[error("`{path}`: {message}")]
    Parse { path: PathBuf, message: String },
}

impl NmrOracle {
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<NmrOracle, OracleError> {
        toml::from_str(text).map_err(|cause| OracleError::Toml {
            path: origin.to_path_buf(),
            cause,
        })
    }

    /// Loads `<tasks_dir>/<domain>/nmr_oracle.toml`; `None` when the domain has none.
    pub fn load_domain(tasks_dir: &Path, domain: &str) -> Result<Option<NmrOracle>, OracleError> {
        let path = tasks_dir.join(domain).join(ORACLE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|cause| OracleError::Io {
            path: path.clone(),
            cause,
        })?;
        let oracle = NmrOracle::from_toml_str(&text, &path)?;
        if oracle.domain != domain {
            return Err(OracleError::Parse {
                path,
                message: format!("`domain` is `{}`, the folder `{domain}`", oracle.domain),
            });
        }
        Ok(Some(oracle))
    }

    /// The prerequisites `call` lacked, given the messages before it (`read:<tool>`,
    /// `read_any:<a>|<b>`, `link:<argument>`); `None` for a tool the oracle does not list.
    pub fn missing(&self, before: &[Message], call: &ToolCall) -> Option<Vec<String>> {
        let tool = self.tools.get(&call.name)?;
        let ok: Vec<&ToolCall> = successful_agent_calls(before);
        let done = |t: &str| ok.iter().any(|c| c.name == t);
        let mut out = Vec::new();
        for group in &tool.any_of {
            if !group.iter().any(|t| done(t)) {
                out.push(format!("read_any:{}", group.join("|")));
            }
        }
        for r in &tool.reads {
            if !done(r) {
                out.push(format!("read:{r}"));
            }
        }
        for l in &tool.links {
            let Some(v) = call.arguments.get(&l.argument) else {
                continue;
            };
            let linked = ok
                .iter()
                .any(|c| c.name == l.read && c.arguments.get(&l.read_argument) == Some(v));
            if !linked {
                out.push(format!("link:{}", l.argument));
            }
        }
        Some(out)
    }
}

/// The agent's tool calls in `messages` whose result came back without an error or a block.
fn successful_agent_calls(messages: &[Message]) -> Vec<&ToolCall> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if !matches!(m, Message::Assistant(_)) {
            continue;
        }
        for c in m.tool_calls() {
            if c.requestor != Requestor::Assistant {
                continue;
            }
            let ok = messages[i + 1..].iter().any(
                |n| matches!(n, Message::Tool(t) if t.id == c.id && !t.error && !t.guard_blocked),
            );
            if ok {
                out.push(c);
            }
        }
    }
    out
}
