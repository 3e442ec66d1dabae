//! Where a domain's guard artifacts came from: `tasks/<domain>/provenance.toml`, one entry
//! per kind of artifact (checklists, general rules, ToolGuard rules, the workflow bundle, the
//! prerequisites, the call-NMR oracle) with the files it covers and a machine-readable origin
//! — written by hand (by whom, when, from which policy sections) or compiled (compiler, model,
//! date, compile report). An artifact set is only comparable with the papers' when one knows
//! which it is, so `validate` prints the origin, records carry it in their cell settings, and
//! a test holds every artifact file to an entry.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The file's name under `tasks/<domain>/`.
pub const PROVENANCE_FILE: &str = "provenance.toml";

/// `tasks/<domain>/provenance.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub schema: String,
    pub domain: String,
    pub artifacts: Vec<Entry>,
}

/// One kind of artifact and where it came from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    /// `checklists`, `general_rules`, `toolguard_rules`, `workflow`, `prerequisites`, or the
    /// call-NMR oracle's kind.
    pub kind: String,
    /// Paths under `tasks/<domain>/`; `*` matches within a file name (`rules/*.yaml`).
    pub paths: Vec<String>,
    #[serde(flatten)]
    pub origin: Origin,
    #[serde(default)]
    pub note: Option<String>,
}

/// How an artifact came to be.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "origin", rename_all = "kebab-case")]
pub enum Origin {
    /// Written by people from the policy.
    HandWritten {
        by: String,
        date: String,
        /// The policy sections it was written from (`airline/policy.md: Cancel flight`).
        sources: Vec<String>,
    },
    /// Written by `tauguard compile`.
    Compiled {
        compiler: String,
        model: String,
        date: String,
        /// The compile report, relative to the provenance file.
        report: String,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::HandWritten { by, date, sources } => {
                write!(f, "hand-written by {by} on {date}")?;
                if !sources.is_empty() {
                    write!(f, ", from {}", sources.join("; "))?;
                }
                Ok(())
            }
            Origin::Compiled {
                compiler,
                model,
                date,
                report,
            } => write!(
                f,
                "compiled by {compiler} with {model} on {date} (report: {report})"
            ),
        }
    }
}

impl Origin {
    /// `hand-written` or `compiled:<model>`: the short form cell settings carry.
    pub fn short(&self) -> String {
        match self {
            Origin::HandWritten { .. } => "hand-written".into(),
            Origin::Compiled { model, .. } => format!("compiled:{model}"),
        }
    }
}

/// Why a provenance file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// The file is not TOML of the provenance schema.
    #[error("{}", path.display())]
    Syntax {
        path: PathBuf,
        #[source]
        cause: Box<toml::de::Error>,
    },
    /// The file parses but says something wrong (schema, domain, no artifacts).
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
}

fn matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == path,
        Some((pre, post)) => {
            path.len() >= pre.len() + post.len()
                && path.starts_with(pre)
                && path.ends_with(post)
                && !path[pre.len()..path.len() - post.len()].contains('/')
        }
    }
}

impl Provenance {
    /// Loads `<tasks_dir>/<domain>/provenance.toml`; `None` when the domain has none.
    pub fn load_domain(
        tasks_dir: &Path,
        domain: &str,
    ) -> Result<Option<Provenance>, ProvenanceError> {
        let path = tasks_dir.join(domain).join(PROVENANCE_FILE);
        if !path.exists() {
            return Ok(None);
        }
        Provenance::load_file(&path, domain).map(Some)
    }

    /// Loads a provenance file of `domain` at `path` (a domain's, or the one `tauguard
    /// compile` writes beside its output).
    pub fn load_file(path: &Path, domain: &str) -> Result<Provenance, ProvenanceError> {
        let path = path.to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|cause| ProvenanceError::Io {
            path: path.clone(),
            cause,
        })?;
        let parse = |message: String| ProvenanceError::Parse {
            path: path.clone(),
            message,
        };
        let p: Provenance = toml::from_str(&text).map_err(|cause| ProvenanceError::Syntax {
            path: path.clone(),
            cause: Box::new(cause),
        })?;
        if p.schema != "tauguard.provenance/1" {
            return Err(parse(format!(
                "`schema` is `{}`, not `tauguard.provenance/1`",
                p.schema
            )));
        }
        if p.domain != domain {
            return Err(parse(format!(
                "`domain` is `{}`, the folder `{domain}`",
                p.domain
            )));
        }
        if p.artifacts.is_empty() {
            return Err(parse("lists no `[[artifacts]]`".into()));
        }
        Ok(p)
    }

    /// The provenance file `tauguard compile` writes beside its output: one entry per kind it
    /// produced, each `(kind, paths under the output directory)`, all with `origin`.
    pub fn compiled(domain: &str, kinds: &[(&str, &[&str])], origin: &Origin) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let list = |v: &[&str]| v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
        let mut out = format!(
            "# Written by `tauguard compile`: where the artifacts of this directory came from.\n\
             schema = \"tauguard.provenance/1\"\ndomain = {}\n",
            q(domain)
        );
        for (kind, paths) in kinds {
            out.push_str(&format!(
                "\n[[artifacts]]\nkind = {}\npaths = [{}]\n",
                q(kind),
                list(paths)
            ));
            match origin {
                Origin::Compiled {
                    compiler,
                    model,
                    date,
                    report,
                } => out.push_str(&format!(
                    "origin = \"compiled\"\ncompiler = {}\nmodel = {}\ndate = {}\nreport = {}\n",
                    q(compiler),
                    q(model),
                    q(date),
                    q(report)
                )),
                Origin::HandWritten { by, date, sources } => out.push_str(&format!(
                    "origin = \"hand-written\"\nby = {}\ndate = {}\nsources = [{}]\n",
                    q(by),
                    q(date),
                    list(&sources.iter().map(String::as_str).collect::<Vec<_>>())
                )),
            }
        }
        out
    }

    /// The entry of a file (its path under `tasks/<domain>/`, `/`-separated): an exact path
    /// before a pattern.
    pub fn entry_of(&self, path: &str) -> Option<&Entry> {
        let exact = self
            .artifacts
            .iter()
            .find(|e| e.paths.iter().any(|p| p == path));
        exact.or_else(|| {
            self.artifacts
                .iter()
                .find(|e| e.paths.iter().any(|p| matches(p, path)))
        })
    }

    /// `kind=origin` per entry, comma-separated: what a record's cell settings carry.
    pub fn summary(&self) -> String {
        self.artifacts
            .iter()
            .map(|e| format!("{}={}", e.kind, e.origin.short()))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_within_a_file_name_and_exact_paths_win() {
        assert!(matches("rules/*.yaml", "rules/cancel.yaml"));
        assert!(!matches("rules/*.yaml", "rules/sub/cancel.yaml"));
        assert!(!matches("rules/*.yaml", "checklist/cancel.yaml"));
        assert!(matches("prerequisites.toml", "prerequisites.toml"));
        let p: Provenance = toml::from_str(
            r#"
schema = "tauguard.provenance/1"
domain = "d"
[[artifacts]]
kind = "checklists"
paths = ["checklist/*.yaml"]
origin = "hand-written"
by = "us"
date = "2026-01-01"
sources = ["policy.md: A"]
[[artifacts]]
kind = "general_rules"
paths = ["checklist/general_rules.yaml"]
origin = "compiled"
compiler = "tauguard compile checklist"
model = "gpt-5.4"
date = "2026-01-02"
report = "compile_report.json"
"#,
        )
        .unwrap();
        assert_eq!(p.entry_of("checklist/x.yaml").unwrap().kind, "checklists");
        let g = p.entry_of("checklist/general_rules.yaml").unwrap();
        assert_eq!(g.kind, "general_rules");
        assert_eq!(
            g.origin.to_string(),
            "compiled by tauguard compile checklist with gpt-5.4 on 2026-01-02 (report: compile_report.json)"
        );
        assert_eq!(
            p.summary(),
            "checklists=hand-written,general_rules=compiled:gpt-5.4"
        );
        assert!(p.entry_of("rules/x.yaml").is_none());
        // An origin needs its fields.
        let bad = toml::from_str::<Entry>(
            "kind = \"k\"\npaths = []\norigin = \"hand-written\"\nby = \"us\"",
        );
        assert!(bad.is_err());
    }
}
