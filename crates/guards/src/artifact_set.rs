//! Compiled artifact sets: what `tauguard compile checklist` and `tauguard compile workflow`
//! wrote, used by a cell in place of the frozen `tasks/<domain>/` artifacts (`[guard]
//! artifacts = "DIR"`, or the `[grid] artifacts` axis). A set is laid out like `tasks/`:
//! `DIR/<domain>/checklist/` (a `compile checklist --out`) and `DIR/<domain>/workflow/` (a
//! `compile workflow --out`), either or both; every kind a set does not hold (ToolGuard rules,
//! prerequisites, a missing part) stays the frozen one. Each part must carry the
//! `provenance.toml` compile writes beside its output, so a cell's settings (and its hash)
//! name the compiled origin — compiler, model, date, compile report — of what it replaced and
//! the frozen origin of what it kept. A set is checked when the run plan is built, before
//! anything runs.

use crate::provenance::{Entry, Origin, PROVENANCE_FILE, Provenance, ProvenanceError};
use std::path::{Path, PathBuf};

/// The value of `artifacts` that names the frozen set under `tasks/<domain>/`.
pub const FROZEN: &str = "frozen";
/// A set's checklist part, under `DIR/<domain>/`.
pub const CHECKLIST_DIR: &str = "checklist";
/// A set's workflow part, under `DIR/<domain>/`; it holds `bundle.json`.
pub const WORKFLOW_DIR: &str = "workflow";
/// The workflow bundle's file name in a workflow part.
pub const BUNDLE_FILE: &str = "bundle.json";

/// One part of a compiled set (its checklists or its workflow) and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub dir: PathBuf,
    pub provenance: Provenance,
}

/// A compiled artifact set, for one domain.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactSet {
    /// The set as the config names it (`DIR`).
    pub label: String,
    /// `DIR/<domain>/`.
    pub root: PathBuf,
    pub checklist: Option<Part>,
    pub workflow: Option<Part>,
}

/// Why a set cannot be used: always names the set's directory and what is wrong there.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactSetError {
    /// The set's folders or files are not laid out as a set.
    #[error("artifact set `{label}` ({}): {message}", path.display())]
    Layout {
        label: String,
        path: PathBuf,
        message: String,
    },
    /// A part's `provenance.toml` cannot be used.
    #[error("artifact set `{label}` ({})", path.display())]
    Provenance {
        label: String,
        path: PathBuf,
        #[source]
        cause: ProvenanceError,
    },
}

impl ArtifactSet {
    /// Opens `dir` (already resolved; `label` is how the config wrote it) for `domain`:
    /// `dir/<domain>/` must hold a `checklist/` or `workflow/` part, each with its
    /// `provenance.toml`, and a workflow part its `bundle.json`. The artifacts themselves are
    /// loaded and validated by the guards that read them.
    pub fn open(label: &str, dir: &Path, domain: &str) -> Result<ArtifactSet, ArtifactSetError> {
        let fail = |path: &Path, message: String| ArtifactSetError::Layout {
            label: label.to_string(),
            path: path.to_path_buf(),
            message,
        };
        if !dir.is_dir() {
            return Err(fail(dir, "no such directory".into()));
        }
        let root = dir.join(domain);
        let layout = format!(
            "a set holds `{domain}/{CHECKLIST_DIR}/` (`tauguard compile checklist --domain {domain} --out DIR/{domain}/{CHECKLIST_DIR}`) and/or `{domain}/{WORKFLOW_DIR}/` (`tauguard compile workflow … --out DIR/{domain}/{WORKFLOW_DIR}`)"
        );
        if !root.is_dir() {
            return Err(fail(
                dir,
                format!("holds no `{domain}/` folder for domain `{domain}`; {layout}"),
            ));
        }
        let part = |name: &str| -> Result<Option<Part>, ArtifactSetError> {
            let part_dir = root.join(name);
            if !part_dir.is_dir() {
                return Ok(None);
            }
            let file = part_dir.join(PROVENANCE_FILE);
            if !file.is_file() {
                return Err(fail(
                    &part_dir,
                    format!(
                        "no `{PROVENANCE_FILE}` saying where these artifacts came from (`tauguard compile` writes one; a hand-made set states its origin in one by hand)"
                    ),
                ));
            }
            let provenance = Provenance::load_file(&file, domain).map_err(|cause| {
                ArtifactSetError::Provenance {
                    label: label.to_string(),
                    path: file.clone(),
                    cause,
                }
            })?;
            Ok(Some(Part {
                dir: part_dir,
                provenance,
            }))
        };
        let checklist = part(CHECKLIST_DIR)?;
        let workflow = part(WORKFLOW_DIR)?;
        if let Some(w) = &workflow
            && !w.dir.join(BUNDLE_FILE).is_file()
        {
            return Err(fail(&w.dir, format!("no `{BUNDLE_FILE}`")));
        }
        if checklist.is_none() && workflow.is_none() {
            return Err(fail(&root, format!("holds neither part; {layout}")));
        }
        Ok(ArtifactSet {
            label: label.to_string(),
            root,
            checklist,
            workflow,
        })
    }

    /// The parts the set holds, checklist first.
    pub fn parts(&self) -> impl Iterator<Item = (&'static str, &Part)> {
        [
            (CHECKLIST_DIR, self.checklist.as_ref()),
            (WORKFLOW_DIR, self.workflow.as_ref()),
        ]
        .into_iter()
        .filter_map(|(n, p)| p.map(|p| (n, p)))
    }

    /// Each entry of the set, `kind: origin` with the report relative to `DIR/<domain>/`,
    /// joined by `; `: the full origin a cell's settings carry.
    pub fn origins(&self) -> String {
        self.parts()
            .flat_map(|(name, p)| {
                p.provenance.artifacts.iter().map(move |e| match &e.origin {
                    Origin::Compiled {
                        compiler,
                        model,
                        date,
                        report,
                    } => format!(
                        "{}: compiled by {compiler} with {model} on {date} (report: {name}/{report})",
                        e.kind
                    ),
                    other => format!("{}: {other}", e.kind),
                })
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `kind=origin` per kind, comma-separated, as [`Provenance::summary`]: the frozen
    /// domain's entries with the kinds this set holds replaced by its own.
    pub fn summary(&self, frozen: Option<&Provenance>) -> String {
        let mine: Vec<&Entry> = self
            .parts()
            .flat_map(|(_, p)| p.provenance.artifacts.iter())
            .collect();
        let mut out: Vec<String> = Vec::new();
        for e in frozen.map(|f| f.artifacts.as_slice()).unwrap_or_default() {
            let entry = mine.iter().find(|m| m.kind == e.kind).copied().unwrap_or(e);
            out.push(format!("{}={}", entry.kind, entry.origin.short()));
        }
        for m in &mine {
            if frozen.is_none_or(|f| f.artifacts.iter().all(|e| e.kind != m.kind)) {
                out.push(format!("{}={}", m.kind, m.origin.short()));
            }
        }
        out.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn compiled(model: &str) -> Origin {
        Origin::Compiled {
            compiler: "tauguard compile checklist".into(),
            model: model.into(),
            date: "2026-12-02".into(),
            report: "compile_report.json".into(),
        }
    }

    #[test]
    fn a_set_opens_only_with_a_part_and_its_provenance() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let err = |d: &Path| {
            tauguard_core::chain_text(&ArtifactSet::open("S", d, "airline").unwrap_err())
        };
        assert!(err(&dir.join("nope")).contains("no such directory"));
        assert!(err(dir).contains("holds no `airline/` folder"));
        std::fs::create_dir_all(dir.join("airline")).unwrap();
        assert!(err(dir).contains("holds neither part"));
        write(&dir.join("airline/checklist/book.yaml"), "tool: book\n");
        let e = err(dir);
        assert!(
            e.contains("artifact set `S`") && e.contains("no `provenance.toml`"),
            "{e}"
        );
        let text = Provenance::compiled(
            "airline",
            &[
                ("checklists", &["*.yaml"]),
                ("general_rules", &["general_rules.yaml"]),
            ],
            &compiled("local/m"),
        );
        write(&dir.join("airline/checklist/provenance.toml"), &text);
        let set = ArtifactSet::open("S", dir, "airline").unwrap();
        assert!(set.workflow.is_none());
        assert_eq!(
            set.origins(),
            "checklists: compiled by tauguard compile checklist with local/m on 2026-12-02 (report: checklist/compile_report.json); \
             general_rules: compiled by tauguard compile checklist with local/m on 2026-12-02 (report: checklist/compile_report.json)"
        );
        let frozen: Provenance = toml::from_str(
            "schema = \"tauguard.provenance/1\"\ndomain = \"airline\"\n\
             [[artifacts]]\nkind = \"checklists\"\npaths = []\norigin = \"hand-written\"\nby = \"us\"\ndate = \"d\"\nsources = []\n\
             [[artifacts]]\nkind = \"toolguard_rules\"\npaths = []\norigin = \"hand-written\"\nby = \"us\"\ndate = \"d\"\nsources = []\n",
        )
        .unwrap();
        assert_eq!(
            set.summary(Some(&frozen)),
            "checklists=compiled:local/m,toolguard_rules=hand-written,general_rules=compiled:local/m"
        );
        // A workflow part needs its bundle; a malformed provenance file is named.
        write(&dir.join("airline/workflow/provenance.toml"), "schema = 1");
        let e = err(dir);
        assert!(e.contains("workflow/provenance.toml"), "{e}");
        let wf = Provenance::compiled("airline", &[("workflow", &["bundle.json"])], &compiled("m"));
        write(&dir.join("airline/workflow/provenance.toml"), &wf);
        assert!(err(dir).contains("no `bundle.json`"));
    }
}
