//! The procedure specs under `tasks/<domain>/procedure.toml`: each parses, says it was written
//! by hand, cites passages found verbatim in its domain's policy files under the headings it
//! names, and is read by no guard, sim stand-in or run-time crate. Prints the A/P/W shares
//! beside the papers' figures.

use std::path::PathBuf;
use tauguard_metrics::procedure::{Level, LevelShares, ProcedureSpec, SpecProblem};

/// Every `tasks/*/procedure.toml` of the project, with its text.
pub(crate) fn project_specs() -> Vec<(PathBuf, ProcedureSpec)> {
    let tasks = tauguard_testkit::workspace_root().join("tasks");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&tasks).expect("tasks/ readable") {
        let path = entry.expect("entry").path().join("procedure.toml");
        if path.is_file() {
            let text = std::fs::read_to_string(&path).expect("spec readable");
            let spec = ProcedureSpec::from_toml(&text, &path.display().to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            out.push((path, spec));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_spec_cites_its_policy_verbatim() {
    let specs = project_specs();
    assert!(
        specs.len() >= 3,
        "airline, retail and telecom specs expected"
    );
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    for (path, spec) in &specs {
        let dir = path.parent().unwrap();
        assert_eq!(
            dir.file_name().unwrap().to_str(),
            Some(spec.domain.as_str()),
            "{}: `domain` names another folder",
            path.display()
        );
        assert_eq!(spec.provenance.origin, "hand-written");
        assert!(!spec.provenance.date.is_empty() && !spec.provenance.authors.is_empty());
        for r in &spec.requirements {
            assert!(
                spec.provenance.policy_files.contains(&r.file),
                "{}: `{}` cites `{}`, not in provenance.policy_files",
                path.display(),
                r.id,
                r.file
            );
            let text = std::fs::read_to_string(data.join(&spec.domain).join(&r.file))
                .unwrap_or_else(|e| panic!("{}: `{}`: {e}", path.display(), r.file));
            assert!(
                text.contains(&r.passage),
                "{}: `{}`: passage not in {}: {:?}",
                path.display(),
                r.id,
                r.file,
                r.passage
            );
            let heading = text
                .lines()
                .any(|l| l.trim_start_matches('#').trim() == r.section && l.starts_with('#'));
            assert!(
                heading,
                "{}: `{}`: no heading `{}` in {}",
                path.display(),
                r.id,
                r.section,
                r.file
            );
            assert!(
                spec.provenance.sections.contains(&r.section),
                "{}: `{}`: section `{}` missing from provenance.sections",
                path.display(),
                r.id,
                r.section
            );
        }
    }
}

#[test]
fn level_shares_beside_the_papers() {
    // The papers' figures: airline 43 requirements, 29 P (67.4%) and 14 A; P share retail
    // ~100%, telecom 98.0%; W share telecom 54.0%, airline 4.7%, retail 3.6%.
    for (_, spec) in project_specs() {
        let s = LevelShares::of(&spec);
        eprintln!(
            "{}: {} requirements, A {:.1}% P {:.1}% W {:.1}%",
            s.domain,
            s.requirements,
            100.0 * s.share(Level::A),
            100.0 * s.share(Level::P),
            100.0 * s.share(Level::W)
        );
        assert!(s.counts.values().sum::<usize>() == s.requirements);
        assert!(s.share(Level::P) > 0.0 && s.share(Level::A) > 0.0 && s.share(Level::W) > 0.0);
    }
}

/// Invariant: no guard, sim stand-in or run-time crate reads a procedure spec, so the process
/// view never judges by rules a guard or the offline parties decide with.
#[test]
fn no_guard_or_sim_reads_procedure_specs() {
    let root = tauguard_testkit::workspace_root().join("crates");
    for krate in ["guards", "sim", "orchestrator", "env", "llm"] {
        let mut stack = vec![root.join(krate)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for needle in ["procedure.toml", "tauguard_metrics::procedure"] {
                        assert!(!text.contains(needle), "{} names `{needle}`", p.display());
                    }
                }
            }
        }
    }
}

#[test]
fn a_bad_spec_is_refused_naming_file_and_key() {
    let (_, spec) = project_specs().remove(0);
    let mut text = toml::to_string(&spec).unwrap();
    text = text.replace("hand-written", "compiled");
    let err = ProcedureSpec::from_toml(&text, "x/procedure.toml").unwrap_err();
    assert!(matches!(&err.problem, SpecProblem::NotHandWritten(o) if o == "compiled"));
    assert_eq!(
        tauguard_core::chain_text(&err),
        "x/procedure.toml: `provenance.origin` is `compiled`: procedure specs are hand-written"
    );
    let unknown = toml::to_string(&spec)
        .unwrap()
        .replacen("identity_before", "identity_after", 1);
    let err = ProcedureSpec::from_toml(&unknown, "y.toml").unwrap_err();
    assert!(matches!(err.problem, SpecProblem::Toml(_)), "{err:?}");
    assert!(
        tauguard_core::chain_text(&err).starts_with("y.toml: "),
        "{err}"
    );
}

/// The doc page defining process validity lists every requirement of every spec, under its
/// domain, with its level and check kind.
#[test]
fn the_doc_page_cites_every_requirement() {
    let doc = std::fs::read_to_string(
        tauguard_testkit::workspace_root().join("docs/process-validity.md"),
    )
    .unwrap();
    for (_, spec) in project_specs() {
        let section = doc
            .split(&format!("\n### {}\n", spec.domain))
            .nth(1)
            .unwrap_or_else(|| panic!("no section for {}", spec.domain));
        let section = section.split("\n### ").next().unwrap();
        for r in &spec.requirements {
            let row = format!(
                "| `{}` | {} | {} / {} |",
                r.id,
                r.level.as_str(),
                r.file,
                r.section
            );
            assert!(
                section.contains(&row) && section.contains(&format!("`{}`", r.check.kind())),
                "docs/process-validity.md: {} lacks the row of `{}`",
                spec.domain,
                r.id
            );
        }
    }
}
