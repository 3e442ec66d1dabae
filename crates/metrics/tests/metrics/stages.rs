//! The crate's stages run one way: input → summary → sidecar → measure → stats → report →
//! render → repro. A module names only its own stage and earlier ones; the few ways back up
//! are the seams listed in [`SEAMS`], each with why it exists. A new import from a later stage
//! fails here until it is removed or, being a seam, listed with its reason.

use std::path::Path;

/// The stages, in order: the folders under `src/`.
const STAGES: [&str; 8] = [
    "input", "summary", "sidecar", "measure", "stats", "report", "render", "repro",
];

/// (the importing file or folder under `src/`, the later stage's path it may name, why).
const SEAMS: &[(&str, &str, &str)] = &[
    (
        "summary/",
        "measure::registry",
        "a summary holds what the registered measures derive per simulation (Measure::derive)",
    ),
    (
        "sidecar/",
        "measure::registry",
        "the sidecar's simulations table stores the registered measures' per-simulation columns",
    ),
    // The per-simulation parts of the measures not yet on `Measure::derive` (their values are
    // no u64 columns): each leaves this list when its measure derives through the registry.
    (
        "summary/mod.rs",
        "measure::attack",
        "attack outcome per simulation",
    ),
    (
        "summary/mod.rs",
        "measure::confusion",
        "fault labels per call",
    ),
    (
        "summary/mod.rs",
        "measure::fail_mode",
        "fail reasons per call and guide run",
    ),
    (
        "summary/mod.rs",
        "measure::guide",
        "guide totals per simulation",
    ),
    (
        "summary/mod.rs",
        "measure::process",
        "the process verdict attached to a summary",
    ),
    (
        "summary/mod.rs",
        "measure::trace",
        "trace steps matched per simulation",
    ),
    (
        "summary/mod.rs",
        "measure::verifier_calls",
        "verifier calls made and saved",
    ),
    (
        "summary/mod.rs",
        "measure::verifier_inputs",
        "the offline verifier's input totals",
    ),
    // A measure prints its own tables from the report's groups (Measure::tables).
    (
        "measure/",
        "report::Report",
        "a measure's tables read the report",
    ),
    (
        "measure/",
        "report::GroupReport",
        "a measure's tables read each group",
    ),
    (
        "measure/",
        "render::table",
        "the table model a measure's tables are made of",
    ),
    (
        "measure/",
        "render::tables",
        "the key cells every group's row starts with",
    ),
    (
        "measure/registry.rs",
        "report",
        "the registry places each measure's value in the group's JSON, CSV row and tables",
    ),
    (
        "measure/floors.rs",
        "report",
        "floors are attached to the report's groups after they are made",
    ),
];

/// `crate::a::b` paths named in `text`, as `a::b` (or `a` alone).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let mut parts = path.split("::").filter(|p| !p.is_empty());
        let first = parts.next().unwrap_or_default();
        out.push(match parts.next() {
            Some(second) => format!("{first}::{second}"),
            None => first.to_string(),
        });
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each import of a later stage in `src`'s non-test code that no seam allows.
fn back_imports(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = rel.rsplit('/').next().unwrap();
        let Some(stage) = STAGES
            .iter()
            .position(|s| rel.starts_with(&format!("{s}/")))
        else {
            continue;
        };
        // Test modules sit at a file's end or in their own file, and may read anything.
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for path in crate_paths(code) {
            let target = path.split("::").next().unwrap();
            let Some(to) = STAGES.iter().position(|s| *s == target) else {
                continue;
            };
            let seam = SEAMS
                .iter()
                .any(|(from, to, _)| rel.starts_with(from) && path.starts_with(to));
            if to > stage && !seam {
                found.push(format!("{rel} names crate::{path}, a later stage"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn no_import_runs_back_up_the_stages() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for s in STAGES {
        assert!(src.join(s).is_dir(), "stage `{s}` has no folder");
    }
    let found = back_imports(&src);
    assert!(found.is_empty(), "{found:#?}");
    // The check sees what it must: a later stage named from an earlier one, alone or in a
    // group, and a seam only from where it is listed.
    let tmp = tempfile::tempdir().unwrap();
    for (file, text) in [
        ("input/a.rs", "use crate::report::Report;"),
        (
            "stats/b.rs",
            "fn f() { crate::render::tables::headers(&[]); }",
        ),
        ("input/c.rs", "use crate::measure::registry::Column;"),
        (
            "summary/d.rs",
            "use crate::report::Report;\n#[cfg(test)]\nmod tests {}",
        ),
        ("render/e.rs", "use crate::repro::ReproTable;"),
    ] {
        let p = tmp.path().join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    // A seam from where it is listed: no finding.
    std::fs::create_dir_all(tmp.path().join("sidecar")).unwrap();
    std::fs::write(
        tmp.path().join("sidecar/ok.rs"),
        "use crate::measure::registry::Column;\nuse crate::summary::SimSummary;",
    )
    .unwrap();
    let planted = back_imports(tmp.path());
    let files: Vec<&str> = planted
        .iter()
        .map(|f| f.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "input/a.rs",
            "input/c.rs",
            "render/e.rs",
            "stats/b.rs",
            "summary/d.rs"
        ],
        "{planted:#?}"
    );
}
