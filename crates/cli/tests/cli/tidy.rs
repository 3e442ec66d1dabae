//! Workspace invariants that ARCHITECTURE.md states, checked over the sources so they cannot
//! drift silently: every Rust file opens with a `//!` doc, each crate's `tauguard-*`
//! dependencies are exactly the imports its ARCHITECTURE.md section lists, files stay under
//! `MAX_LINES` unless allow-listed with a reason, `anyhow` stays in the binary crate, no error
//! exposes a cause its message already prints, and every source path ARCHITECTURE.md names
//! exists.
//!
//! Each check is a pure function over file contents in `tidy/checks.rs`, exercised there on
//! small in-memory inputs so a check that could never fail would be noticed.

// Under `tidy/` so Cargo does not build it as a test target of its own.
#[path = "tidy/checks.rs"]
mod checks;

use checks::{
    architecture_paths, check_error_sources, check_imports, check_length, check_module_doc,
    check_no_anyhow, parse_sections,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Longest source file, in lines, before it needs an allow-list entry.
const MAX_LINES: usize = 600;

/// Files allowed past `MAX_LINES`, each with why. An entry for a file that no longer exists or
/// has shrunk under the limit fails the test, so the list only ever holds current exceptions.
const LONG_FILES: &[(&str, &str)] = &[
    (
        "crates/env/src/telecom/defs.rs",
        "data table: both telecom toolkits' declarations with upstream's descriptions and schemas",
    ),
    (
        "crates/env/tests/env/airline.rs",
        "parity suite: upstream's airline hash vectors, quirks and error texts, one case each",
    ),
    (
        "crates/env/tests/env/retail.rs",
        "parity suite: retail quirks on a hand-made database with exact numbers, one case each",
    ),
    (
        "crates/env/tests/env/telecom.rs",
        "parity suite: telecom initial states, gold actions, assertions and error texts",
    ),
    (
        "crates/guards/tests/guards/toolguard_env.rs",
        "case table: concrete PASS/BLOCK calls on live environments, one per rule",
    ),
    (
        "crates/guards/tests/guards/policyguard.rs",
        "recorded real-format verifier replies inlined as fixtures next to their assertions",
    ),
];

/// The one crate that may depend on `anyhow` (ARCHITECTURE.md, Errors).
const BINARY_CRATE: &str = "crates/cli";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read `{}`: {e}", path.display()))
}

/// Workspace-relative path with `/` separators, as ARCHITECTURE.md and the allow-list write it.
fn rel(path: &Path) -> String {
    let r = path.strip_prefix(root()).unwrap_or(path);
    r.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// `crates/*` directories holding a Cargo.toml, sorted.
fn crate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Every `.rs` file under `crates/*/{src,tests,benches}`, sorted.
fn rust_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for krate in crate_dirs() {
        for sub in ["src", "tests", "benches"] {
            walk(&krate.join(sub), &mut files);
        }
    }
    files.sort();
    files
}

/// Fails with every problem found, one per line.
fn report(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The checks, over the workspace.

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    report(
        rust_files()
            .iter()
            .filter_map(|p| check_module_doc(&rel(p), &read(p)))
            .collect(),
    );
}

#[test]
fn no_file_grows_past_the_limit_unless_allow_listed() {
    let files = rust_files();
    let mut problems: Vec<String> = files
        .iter()
        .filter_map(|p| check_length(&rel(p), &read(p), LONG_FILES))
        .collect();
    let present: BTreeSet<String> = files.iter().map(|p| rel(p)).collect();
    for (path, _) in LONG_FILES {
        if !present.contains(*path) {
            problems.push(format!(
                "{path}: in LONG_FILES but no longer exists; remove its entry in crates/cli/tests/cli/tidy.rs"
            ));
        }
    }
    report(problems);
}

#[test]
fn crate_dependencies_match_the_architecture() {
    let sections = parse_sections(&read(&root().join("ARCHITECTURE.md"))).unwrap_or_else(|e| {
        report(e);
        unreachable!()
    });
    let mut problems = Vec::new();
    let dirs: BTreeSet<String> = crate_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for dir in &dirs {
        let manifest_path = format!("crates/{dir}/Cargo.toml");
        let Some(section) = sections.iter().find(|s| &s.dir == dir) else {
            problems.push(format!(
                "crates/{dir}: no \"### `crates/{dir}` (`package`) — imports ...\" section in \
                 ARCHITECTURE.md; add one to the code map"
            ));
            continue;
        };
        let manifest = read(&root().join(&manifest_path));
        let package = toml::from_str::<toml::Table>(&manifest)
            .ok()
            .and_then(|t| Some(t.get("package")?.get("name")?.as_str()?.to_string()));
        if package.as_deref() != Some(section.package.as_str()) {
            problems.push(format!(
                "{manifest_path}: package {package:?}, but ARCHITECTURE.md calls it `{}`; fix the header",
                section.package
            ));
        }
        problems.extend(check_imports(&manifest_path, &manifest, section, &sections));
    }
    for s in &sections {
        if !dirs.contains(&s.dir) {
            problems.push(format!(
                "ARCHITECTURE.md: section `crates/{}` names no crate; remove or rename it",
                s.dir
            ));
        }
    }
    report(problems);
}

#[test]
fn anyhow_stays_in_the_binary_crate() {
    let mut problems = Vec::new();
    for krate in crate_dirs() {
        if rel(&krate) == BINARY_CRATE {
            continue;
        }
        let manifest = krate.join("Cargo.toml");
        problems.extend(check_no_anyhow(&rel(&manifest), &read(&manifest)));
    }
    for file in rust_files() {
        if !rel(&file).starts_with(&format!("{BINARY_CRATE}/")) {
            problems.extend(check_no_anyhow(&rel(&file), &read(&file)));
        }
    }
    report(problems);
}

#[test]
fn errors_expose_their_cause_once() {
    report(
        rust_files()
            .iter()
            .filter(|p| rel(p).split('/').nth(2) == Some("src"))
            .flat_map(|p| check_error_sources(&rel(p), &read(p)))
            .collect(),
    );
}

#[test]
fn paths_named_in_the_architecture_exist() {
    let problems = architecture_paths(&read(&root().join("ARCHITECTURE.md")))
        .into_iter()
        .filter(|(_, path)| !root().join(path).exists())
        .map(|(line, path)| {
            format!("ARCHITECTURE.md line {line}: `{path}` does not exist; update the reference")
        })
        .collect();
    report(problems);
}
