//! The tidy checks as pure functions over file contents, each returning messages that name
//! the file and what to do; `tidy.rs` feeds them the workspace. Kept apart so each check is
//! also exercised on small in-memory inputs (`mod fire`): a check that could never fail would
//! show there.

use super::{BINARY_CRATE, MAX_LINES};
use crate::support::assert_contains_all;
use std::collections::BTreeSet;

/// A file must open with its module doc: what it is for and why, before any code.
pub(super) fn check_module_doc(path: &str, text: &str) -> Option<String> {
    (!text.starts_with("//!")).then(|| {
        format!("{path}: does not start with a `//!` module doc; add one saying what the file is for and why")
    })
}

/// A file longer than `MAX_LINES` must be allow-listed; an entry must still be needed.
pub(super) fn check_length(path: &str, text: &str, allowed: &[(&str, &str)]) -> Option<String> {
    let lines = text.lines().count();
    let listed = allowed.iter().any(|(p, _)| *p == path);
    match (lines > MAX_LINES, listed) {
        (true, false) => Some(format!(
            "{path}: {lines} lines (limit {MAX_LINES}); split it, or add it to LONG_FILES in \
             crates/cli/tests/cli/tidy.rs with a one-line reason"
        )),
        (false, true) => Some(format!(
            "{path}: {lines} lines, within the limit of {MAX_LINES}; remove its LONG_FILES entry \
             in crates/cli/tests/cli/tidy.rs"
        )),
        _ => None,
    }
}

/// One `### \`crates/X\` (\`package\`) — imports ...` section header of ARCHITECTURE.md.
#[derive(Debug, PartialEq)]
pub(super) struct Section {
    pub dir: String,
    pub package: String,
    /// Directory names (`core`, `env`, ...) of the crates the section says it imports.
    pub imports: BTreeSet<String>,
}

/// Parses every crate section header. The import list is `nothing of ours` or names of other
/// sections' crates separated by commas and/or `and`; anything else (such as `all`) is an
/// error, so the list stays explicit.
pub(super) fn parse_sections(architecture: &str) -> Result<Vec<Section>, Vec<String>> {
    let mut sections = Vec::new();
    let mut errors = Vec::new();
    for (n, line) in architecture.lines().enumerate() {
        let Some(rest) = line.strip_prefix("### `crates/") else {
            continue;
        };
        let at = format!("ARCHITECTURE.md line {}", n + 1);
        let parsed = (|| {
            let (dir, rest) = rest.split_once('`')?;
            let rest = rest.trim_start().strip_prefix("(`")?;
            let (package, rest) = rest.split_once("`)")?;
            let (_, imports) = rest.split_once("imports")?;
            Some((dir, package, imports.trim()))
        })();
        let Some((dir, package, imports)) = parsed else {
            errors.push(format!(
                "{at}: crate header not in the form \"### `crates/X` (`package`) — imports a, b\"; fix the header"
            ));
            continue;
        };
        let imports = if imports == "nothing of ours" {
            BTreeSet::new()
        } else {
            imports
                .split([',', ' '])
                .map(|w| w.trim().trim_matches('`'))
                .filter(|w| !w.is_empty() && *w != "and")
                .map(str::to_string)
                .collect()
        };
        sections.push(Section {
            dir: dir.to_string(),
            package: package.to_string(),
            imports,
        });
    }
    let known: BTreeSet<&str> = sections.iter().map(|s| s.dir.as_str()).collect();
    for s in &sections {
        for name in &s.imports {
            if !known.contains(name.as_str()) {
                errors.push(format!(
                    "ARCHITECTURE.md, section `crates/{}`: imports `{name}`, which is no crate \
                     section; list the imported crates by name (e.g. \"imports core, env\") or \
                     write \"imports nothing of ours\"",
                    s.dir
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(sections)
    } else {
        Err(errors)
    }
}

/// Package names of a manifest's `[dependencies]` (following `package = ` renames).
fn dependencies(manifest: &str) -> Result<BTreeSet<String>, String> {
    let doc: toml::Table = toml::from_str(manifest).map_err(|e| e.message().to_string())?;
    let Some(deps) = doc.get("dependencies").and_then(|d| d.as_table()) else {
        return Ok(BTreeSet::new());
    };
    Ok(deps
        .iter()
        .map(|(name, spec)| {
            spec.get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(name)
                .to_string()
        })
        .collect())
}

/// A crate's `tauguard-*` dependencies must be exactly what its section says it imports.
pub(super) fn check_imports(
    manifest_path: &str,
    manifest: &str,
    section: &Section,
    sections: &[Section],
) -> Option<String> {
    let deps = match dependencies(manifest) {
        Ok(d) => d,
        Err(e) => return Some(format!("{manifest_path}: not valid TOML: {e}")),
    };
    let ours: BTreeSet<&str> = deps
        .iter()
        .filter(|d| d.starts_with("tauguard"))
        .map(String::as_str)
        .collect();
    let declared: BTreeSet<&str> = sections
        .iter()
        .filter(|s| section.imports.contains(&s.dir))
        .map(|s| s.package.as_str())
        .collect();
    if ours == declared {
        return None;
    }
    let undeclared: Vec<&&str> = ours.difference(&declared).collect();
    let unused: Vec<&&str> = declared.difference(&ours).collect();
    Some(format!(
        "{manifest_path}: [dependencies] and ARCHITECTURE.md section `crates/{}` disagree \
         (depended on but not listed: {undeclared:?}; listed but not depended on: {unused:?}); \
         fix whichever is wrong — a new import must respect the layering",
        section.dir
    ))
}

/// `anyhow` belongs to the binary only: library crates return typed errors.
pub(super) fn check_no_anyhow(path: &str, text: &str) -> Option<String> {
    text.contains("anyhow").then(|| {
        format!(
            "{path}: mentions `anyhow`, which only `{BINARY_CRATE}` may use; return a typed \
             `thiserror` error instead"
        )
    })
}

/// ARCHITECTURE.md's error rule: a cause is a `#[source]` and the message does not print it
/// again, or `{err:#}` (and `Chain`) print the cause twice. Flags a message that interpolates
/// the field marked `#[source]`, the field named `source`, or (`{0}`) a `#[from]` payload of a
/// variant that is not `transparent`.
pub(super) fn check_error_sources(path: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut message = String::new();
    let mut in_message = false;
    let mut marked_source = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with("//") {
            continue;
        }
        if line.starts_with("#[error(") {
            message.clear();
            in_message = true;
        }
        if in_message {
            message.push_str(line);
            in_message = !line.ends_with(")]");
            continue;
        }
        if line.starts_with('}') {
            message.clear();
        }
        if line == "#[source]" {
            marked_source = true;
            continue;
        }
        let field = line.strip_prefix("pub ").unwrap_or(line);
        let doubled = if let Some((before, _)) = line.split_once("#[from]") {
            let position = before.matches(',').count();
            (message != "#[error(transparent)]" && message.contains(&format!("{{{position}")))
                .then(|| format!("`{{{position}}}` (the `#[from]` payload)"))
        } else if let Some((name, _)) = field.split_once(": ")
            && (marked_source || name == "source")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            marked_source = false;
            (message.contains(&format!("{{{name}}}")) || message.contains(&format!("{{{name}:")))
                .then(|| format!("`{{{name}}}` (the `#[source]`)"))
        } else {
            None
        };
        if let Some(what) = doubled {
            problems.push(format!(
                "{path}:{}: the message prints {what}, which `{{err:#}}` prints again after \
                 it; drop it from the message (ARCHITECTURE.md, Errors)",
                n + 1
            ));
        }
    }
    problems
}

/// Backticked workspace paths in ARCHITECTURE.md, resolved: `crates/…`, `configs/…`,
/// `tasks/…`, `scripts/…` as written, and a bare `x.rs` or `a/b.rs` relative to the `src/` of
/// the crate whose section it appears in. Placeholders (`<domain>`) and paths outside the
/// workspace are skipped.
pub(super) fn architecture_paths(architecture: &str) -> Vec<(usize, String)> {
    let mut paths = Vec::new();
    let mut section: Option<String> = None;
    for (n, line) in architecture.lines().enumerate() {
        if line.starts_with("## ") {
            section = None;
        }
        if let Some(rest) = line.strip_prefix("### `crates/") {
            section = rest.split_once('`').map(|(d, _)| d.to_string());
            continue;
        }
        for (i, token) in line.split('`').enumerate() {
            if i % 2 == 0 || token.contains(['<', ' ', '*', ':']) || token.starts_with("..") {
                continue;
            }
            let rooted = ["crates/", "configs/", "tasks/", "scripts/", ".ci/"]
                .iter()
                .any(|p| token.starts_with(p));
            if rooted {
                paths.push((n + 1, token.to_string()));
            } else if token.ends_with(".rs")
                && let Some(dir) = &section
            {
                paths.push((n + 1, format!("crates/{dir}/src/{token}")));
            }
        }
    }
    paths
}

#[cfg(test)]
mod fire {
    use super::*;
    use std::collections::BTreeSet;

    const ARCH: &str = "\
## Code map
### `crates/core` (`tauguard-core`) — imports nothing of ours
Data, in `record.rs`.
### `crates/env` (`tauguard-env`) — imports core
Domains; the route index in `airline/routes.rs`, see `crates/env/tests/`.
### `crates/cli` (`tauguard`) — imports core and env
## Cross-cutting concerns
- `tasks/<domain>/` and `../shared/tau2` are not checked; `configs/prompts/` is.
";

    fn section<'a>(sections: &'a [Section], dir: &str) -> &'a Section {
        sections.iter().find(|s| s.dir == dir).unwrap()
    }

    #[test]
    fn a_file_without_module_doc_is_named() {
        let msg = check_module_doc("crates/x/src/a.rs", "use std::fs;\n").unwrap();
        assert!(
            msg.starts_with("crates/x/src/a.rs: ") && msg.contains("`//!`"),
            "{msg}"
        );
        assert!(check_module_doc("crates/x/src/a.rs", "// a plain comment\n//! late\n").is_some());
        assert_eq!(
            check_module_doc("crates/x/src/a.rs", "//! Why.\nuse std::fs;\n"),
            None
        );
    }

    #[test]
    fn an_over_long_file_needs_an_entry_and_an_entry_needs_a_long_file() {
        let long = "x\n".repeat(MAX_LINES + 1);
        let short = "x\n".repeat(MAX_LINES);
        let allowed = [("crates/x/src/big.rs", "a data table")];
        let msg = check_length("crates/x/src/other.rs", &long, &allowed).unwrap();
        assert_contains_all(&msg, &["crates/x/src/other.rs", "LONG_FILES"]);
        assert_eq!(check_length("crates/x/src/big.rs", &long, &allowed), None);
        assert_eq!(
            check_length("crates/x/src/other.rs", &short, &allowed),
            None
        );
        let stale = check_length("crates/x/src/big.rs", &short, &allowed).unwrap();
        assert!(stale.contains("remove its LONG_FILES entry"), "{stale}");
    }

    #[test]
    fn section_headers_parse_into_explicit_imports() {
        let sections = parse_sections(ARCH).unwrap();
        assert_eq!(sections.len(), 3);
        assert_eq!(section(&sections, "core").imports, BTreeSet::new());
        assert_eq!(section(&sections, "cli").package, "tauguard");
        let cli: Vec<&str> = section(&sections, "cli")
            .imports
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(cli, ["core", "env"]);
    }

    #[test]
    fn imports_all_or_an_unknown_crate_is_rejected() {
        let all = ARCH.replace("imports core and env", "imports all");
        let errors = parse_sections(&all).unwrap_err();
        assert!(
            errors[0].contains("`crates/cli`") && errors[0].contains("`all`"),
            "{errors:?}"
        );
        let garbled = ARCH.replace("(`tauguard-env`) — imports", "— tauguard-env");
        let errors = parse_sections(&garbled).unwrap_err();
        assert!(
            errors[0].starts_with("ARCHITECTURE.md line 4:"),
            "{errors:?}"
        );
    }

    #[test]
    fn an_undeclared_or_missing_dependency_is_named() {
        let sections = parse_sections(ARCH).unwrap();
        let env = section(&sections, "env");
        let good = "[package]\nname = \"tauguard-env\"\n[dependencies]\n\
                    tauguard-core.workspace = true\nserde = \"1\"\n\
                    [dev-dependencies]\ntauguard-cli = { path = \"../cli\" }\n";
        assert_eq!(
            check_imports("crates/env/Cargo.toml", good, env, &sections),
            None
        );
        let extra = good.replace(
            "serde = \"1\"",
            "serde = \"1\"\nours = { package = \"tauguard\", path = \"../cli\" }",
        );
        let msg = check_imports("crates/env/Cargo.toml", &extra, env, &sections).unwrap();
        assert!(
            msg.starts_with("crates/env/Cargo.toml: ") && msg.contains("[\"tauguard\"]"),
            "{msg}"
        );
        let missing = good.replace("tauguard-core.workspace = true\n", "");
        let msg = check_imports("crates/env/Cargo.toml", &missing, env, &sections).unwrap();
        assert!(
            msg.contains("listed but not depended on: [\"tauguard-core\"]"),
            "{msg}"
        );
    }

    #[test]
    fn anyhow_outside_the_binary_is_named() {
        let msg =
            check_no_anyhow("crates/env/Cargo.toml", "[dependencies]\nanyhow = \"1\"\n").unwrap();
        assert!(msg.starts_with("crates/env/Cargo.toml: "), "{msg}");
        assert_eq!(
            check_no_anyhow("crates/env/Cargo.toml", "[dependencies]\n"),
            None
        );
    }

    #[test]
    fn an_error_that_prints_its_source_in_its_message_is_named() {
        let doubled = "enum E {\n    #[error(\"cannot read `{path}`: {source}\")]\n    \
                       Io {\n        path: PathBuf,\n        source: std::io::Error,\n    },\n    \
                       #[error(\"replay: {0}\")]\n    Replay(#[from] ReplayError),\n    \
                       #[error(\"{}: {cause}\", path.display())]\n    Csv {\n        \
                       #[source]\n        cause: csv::Error,\n    },\n}\n";
        let problems = check_error_sources("crates/x/src/e.rs", doubled);
        let lines: Vec<&str> = problems
            .iter()
            .map(|p| p.split(": ").next().unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                "crates/x/src/e.rs:5",
                "crates/x/src/e.rs:8",
                "crates/x/src/e.rs:12"
            ],
            "{problems:#?}"
        );
        let single = "enum E {\n    #[error(\"cannot read `{path}`\")]\n    \
                      Io {\n        path: PathBuf,\n        #[source]\n        \
                      cause: std::io::Error,\n    },\n    \
                      #[error(transparent)]\n    Load(#[from] LoadError),\n    \
                      #[error(\"replaying the log\")]\n    Replay(#[from] ReplayError),\n}\n\
                      struct Rule {\n    pub source: LookupSource,\n}\n";
        assert_eq!(
            check_error_sources("crates/x/src/e.rs", single),
            Vec::<String>::new()
        );
    }

    #[test]
    fn architecture_paths_resolve_against_their_section() {
        let paths: Vec<String> = architecture_paths(ARCH)
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        assert_eq!(
            paths,
            [
                "crates/core/src/record.rs",
                "crates/env/src/airline/routes.rs",
                "crates/env/tests/",
                "configs/prompts/",
            ]
        );
    }
}
