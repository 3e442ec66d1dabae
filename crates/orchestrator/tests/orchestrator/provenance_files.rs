//! Every guard artifact says where it came from: each registered domain with artifacts has a
//! `tasks/<domain>/provenance.toml` whose entries cover every artifact file (checklists,
//! general rules, ToolGuard rules, the workflow bundle, the prerequisites, the call-NMR
//! oracle), name only files that exist, and — for hand-written ones, with the τ²-bench data
//! at hand — cite policy sections the domain's policy has.

use std::path::Path;
use tauguard_env::registry::DOMAINS;
use tauguard_guards::{Origin, Provenance};
use tauguard_testkit::workspace_root;

/// The artifact files of a domain folder, as paths under it.
fn artifact_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["checklist", "rules"] {
        let entries = std::fs::read_dir(dir.join(sub))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(sub).display()));
        for e in entries {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            out.push(format!("{sub}/{name}"));
        }
    }
    for f in [
        "workflow/bundle.json",
        "prerequisites.toml",
        "nmr_oracle.toml",
    ] {
        if dir.join(f).is_file() {
            out.push(f.to_string());
        }
    }
    out
}

#[test]
fn every_artifact_file_has_a_stated_origin() {
    let tasks = workspace_root().join("tasks");
    let data = tauguard_testkit::tau2_dir();
    let mut domains = 0;
    for domain in DOMAINS.iter().map(|d| d.name()) {
        let dir = tasks.join(domain);
        if !dir.is_dir() {
            continue;
        }
        domains += 1;
        let p = Provenance::load_domain(&tasks, domain)
            .unwrap()
            .unwrap_or_else(|| panic!("tasks/{domain}/provenance.toml is missing"));
        let files = artifact_files(&dir);
        for f in &files {
            assert!(p.entry_of(f).is_some(), "{domain}: no origin for {f}");
        }
        let kinds: Vec<&str> = p.artifacts.iter().map(|e| e.kind.as_str()).collect();
        for kind in [
            "checklists",
            "general_rules",
            "toolguard_rules",
            "workflow",
            "prerequisites",
            "nmr_oracle",
        ] {
            assert!(kinds.contains(&kind), "{domain}: no `{kind}` entry");
        }
        for e in &p.artifacts {
            assert!(
                files.iter().any(|f| p.entry_of(f) == Some(e)),
                "{domain}: {:?} ({}) name no artifact file",
                e.paths,
                e.kind
            );
            let Origin::HandWritten { sources, .. } = &e.origin else {
                continue;
            };
            assert!(!sources.is_empty(), "{domain} {}: no sources", e.kind);
            let Some(data) = &data else { continue };
            for s in sources {
                let (file, section) = s.split_once(": ").unwrap_or((s, ""));
                let text = std::fs::read_to_string(data.join(file))
                    .unwrap_or_else(|e| panic!("{domain}: source `{file}`: {e}"));
                if !section.is_empty() {
                    assert!(
                        text.lines()
                            .any(|l| l.starts_with('#')
                                && l.trim_start_matches('#').trim() == section),
                        "{domain} {}: `{file}` has no section `{section}`",
                        e.kind
                    );
                }
            }
        }
        assert!(
            dir.join("workflow/bundle.json").is_file()
                && p.summary().contains("workflow=hand-written"),
            "{domain}: {}",
            p.summary()
        );
    }
    assert!(domains >= 4, "{domains} domains with guard artifacts");
}
