//! Workspace invariants that ARCHITECTURE.md states, checked over the sources so they cannot
//! drift silently: every Rust file opens with a `//!` doc, each crate's `tauguard-*`
//! dependencies are exactly the imports its ARCHITECTURE.md section lists, files stay under
//! `MAX_LINES` unless allow-listed with a reason, `anyhow` stays in the binary crate, no error
//! exposes a cause its message already prints, every source path ARCHITECTURE.md names
//! exists, and every **Invariant:** there names tests that exist (`tidy/invariants.rs`).
//!
//! Each check is a pure function over file contents in `tidy/checks.rs`, exercised there on
//! small in-memory inputs so a check that could never fail would be noticed.

// Under `tidy/` so Cargo does not build it as a test target of its own.
mod checks;
mod invariants;

use checks::{
    architecture_paths, check_error_sources, check_imports, check_length, check_module_doc,
    check_no_anyhow, parse_sections,
};
use invariants::{defines_fn, domain_branches, forbidden_tokens, invariant_tests, test_targets};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Longest source file, in lines, before it needs an allow-list entry.
const MAX_LINES: usize = 600;

/// Files allowed past `MAX_LINES`, each with why. An entry for a file that no longer exists or
/// has shrunk under the limit fails the test, so the list only ever holds current exceptions.
const LONG_FILES: &[(&str, &str)] = &[
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

#[test]
fn every_invariant_names_tests_that_exist() {
    let refs = invariant_tests(&read(&root().join("ARCHITECTURE.md"))).unwrap_or_else(|e| {
        report(e);
        unreachable!()
    });
    let problems = refs
        .into_iter()
        .filter_map(|r| {
            let file = root().join(&r.path);
            match std::fs::read_to_string(&file) {
                Err(_) => Some(format!(
                    "ARCHITECTURE.md line {}: `{}` does not exist",
                    r.line, r.path
                )),
                Ok(text) if !defines_fn(&text, &r.name) => Some(format!(
                    "ARCHITECTURE.md line {}: `{}` has no test `{}`",
                    r.line, r.path, r.name
                )),
                Ok(_) => None,
            }
        })
        .collect();
    report(problems);
}

/// The `.rs` files under `crates/<name>/src`.
fn sources_of(name: &str) -> Vec<PathBuf> {
    let dir = root().join("crates").join(name).join("src");
    rust_files()
        .into_iter()
        .filter(|p| p.starts_with(&dir))
        .collect()
}

/// The uses of `tokens` in the sources of `krate` ([`forbidden_tokens`]).
fn forbidden_in(krate: &str, tokens: &[&str], why: &str) -> Vec<String> {
    sources_of(krate)
        .iter()
        .flat_map(|p| forbidden_tokens(&rel(p), &read(p), tokens, why))
        .collect()
}

#[test]
fn core_does_no_io() {
    let tokens = [
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "std::io::stdin",
        "std::io::stdout",
        "File::",
        "tokio",
        "reqwest",
        "println!",
        "eprintln!",
    ];
    report(forbidden_in(
        "core",
        &tokens,
        "core is pure data and pure functions",
    ));
}

#[test]
fn sim_uses_no_clock_or_network() {
    let tokens = [
        "SystemTime",
        "Instant",
        "chrono",
        "std::net",
        "reqwest",
        "tokio::time",
        "thread_rng",
        "rand::random",
        "std::fs",
        "std::env",
    ];
    report(forbidden_in(
        "sim",
        &tokens,
        "the sim models are a function of (task, trial, seed) only",
    ));
}

/// The compiler enforces it: the workspace forbids `unsafe_code` and every crate but `alloc`
/// inherits the workspace lints.
#[test]
fn only_alloc_uses_unsafe() {
    let workspace = read(&root().join("Cargo.toml"));
    let mut problems = Vec::new();
    if !workspace.contains("unsafe_code = \"forbid\"") {
        problems
            .push("Cargo.toml: `[workspace.lints.rust] unsafe_code = \"forbid\"` is gone".into());
    }
    for krate in crate_dirs() {
        let name = rel(&krate);
        let manifest = read(&krate.join("Cargo.toml"));
        if name != "crates/alloc" && !manifest.contains("[lints]\nworkspace = true") {
            problems.push(format!(
                "{name}/Cargo.toml: must inherit the workspace lints (`[lints]` `workspace = true`)"
            ));
        }
    }
    report(problems);
}

#[test]
fn each_crate_links_one_test_binary() {
    let mut problems = Vec::new();
    for krate in crate_dirs() {
        let Ok(entries) = std::fs::read_dir(krate.join("tests")) else {
            continue;
        };
        let entries: Vec<(String, bool, bool)> = entries
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, p.is_dir(), p.join("main.rs").is_file())
            })
            .collect();
        let targets = test_targets(&entries);
        if targets.len() > 1 {
            problems.push(format!(
                "{}/tests: {} test binaries ({}); gather them under one `tests/<name>/main.rs`",
                rel(&krate),
                targets.len(),
                targets.join(", ")
            ));
        }
    }
    report(problems);
}

/// What a domain is lives in `env`, behind the registry; every other crate asks the registry or
/// the domain's data. The names checked are the registry's own. Test modules in their own files
/// (`tests.rs`, `*_tests.rs`) and `testkit` (test support: its synthetic records give one
/// domain harder Mut tasks) are tests and are not read.
#[test]
fn no_code_outside_env_branches_on_a_domain_name() {
    let names: Vec<&str> = tauguard_env::registry::DOMAINS
        .iter()
        .map(|d| d.name())
        .collect();
    assert!(!names.is_empty(), "the domain registry is empty");
    let mut problems = Vec::new();
    for krate in crate_dirs() {
        let name = rel(&krate);
        if name == "crates/env" || name == "crates/testkit" {
            continue;
        }
        for file in sources_of(name.trim_start_matches("crates/")) {
            let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
            if file_name == "tests.rs" || file_name.ends_with("_tests.rs") {
                continue;
            }
            problems.extend(domain_branches(&rel(&file), &read(&file), &names));
        }
    }
    report(problems);
}
