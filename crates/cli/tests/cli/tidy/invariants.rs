//! Checks that keep ARCHITECTURE.md's **Invariant:** paragraphs honest: each names the tests
//! that enforce it, and the invariants that are about source text (what a crate may touch)
//! are checked over that text here. Pure functions over strings, each fired on a small input
//! below so a check that could never fail would be noticed.

/// One `(test: path::name)` reference of an invariant: the line it is on, the file, the test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestRef {
    pub line: usize,
    pub path: String,
    pub name: String,
}

/// Every **Invariant:** paragraph's test references; a paragraph without a well-formed
/// `(test: a/b.rs::name; c/d.rs::other)` is a problem naming its line.
pub(super) fn invariant_tests(architecture: &str) -> Result<Vec<TestRef>, Vec<String>> {
    let lines: Vec<&str> = architecture.lines().collect();
    let (mut refs, mut problems) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("**Invariant:**") {
            i += 1;
            continue;
        }
        let start = i;
        let mut paragraph = String::new();
        while i < lines.len() && !lines[i].trim().is_empty() {
            paragraph.push_str(lines[i]);
            paragraph.push(' ');
            i += 1;
        }
        let Some((_, rest)) = paragraph.rsplit_once("(test: ") else {
            problems.push(format!(
                "ARCHITECTURE.md line {}: the invariant names no test; end it with `(test: path::name)`",
                start + 1
            ));
            continue;
        };
        let Some((list, _)) = rest.split_once(')') else {
            problems.push(format!(
                "ARCHITECTURE.md line {}: `(test: …` is not closed",
                start + 1
            ));
            continue;
        };
        for entry in list.split(';').map(str::trim) {
            match entry.trim_matches('`').rsplit_once("::") {
                Some((path, name)) if path.ends_with(".rs") && !name.is_empty() => {
                    refs.push(TestRef {
                        line: start + 1,
                        path: path.to_string(),
                        name: name.to_string(),
                    });
                }
                _ => problems.push(format!(
                    "ARCHITECTURE.md line {}: `{entry}` is not `path/to/file.rs::test_name`",
                    start + 1
                )),
            }
        }
    }
    if problems.is_empty() {
        Ok(refs)
    } else {
        Err(problems)
    }
}

/// Whether `text` defines a function `name` (a test is a function; its attribute may vary).
pub(super) fn defines_fn(text: &str, name: &str) -> bool {
    text.contains(&format!("fn {name}("))
}

/// The code lines of `text` with their 0-based numbers, indentation trimmed: those before its
/// `#[cfg(test)]` module, comments skipped.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .map(str::trim_start)
        .enumerate()
        .take_while(|(_, code)| !code.starts_with("#[cfg(test)]"))
        .filter(|(_, code)| !code.starts_with("//"))
}

/// Lines of `text` (before its `#[cfg(test)]` module, comments skipped) that use any of
/// `tokens`, as `path:line: token` problems.
pub(super) fn forbidden_tokens(path: &str, text: &str, tokens: &[&str], why: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (n, code) in code_lines(text) {
        for t in tokens {
            if code.contains(t) {
                out.push(format!("{path}:{}: `{t}`: {why}", n + 1));
            }
        }
    }
    out
}

/// Lines of `text` (before its `#[cfg(test)]` module, comments skipped) that branch on one of
/// `domains` by name — compare with it, match it, or test a prefix of it — as `path:line`
/// problems. Naming a domain as a key of published data is not branching and passes.
pub(super) fn domain_branches(path: &str, text: &str, domains: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (n, code) in code_lines(text) {
        let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        for d in domains {
            let lit = format!("\"{d}\"");
            let branches = [
                format!("=={lit}"),
                format!("!={lit}"),
                format!("{lit}=="),
                format!("{lit}!="),
                format!("{lit}=>"),
                format!("{lit}|"),
                format!("|{lit}"),
                format!("starts_with(\"{d}"),
                format!("contains(&{lit})"),
            ];
            if branches.iter().any(|b| squeezed.contains(b.as_str())) {
                out.push(format!(
                    "{path}:{}: branches on the domain name `{d}`; ask the domain's registry entry \
                     (tauguard_env::registry) or its data instead",
                    n + 1
                ));
            }
        }
    }
    out
}

/// Test targets Cargo finds in a crate's `tests/` directory, from its entries (`name`, whether
/// a directory, whether that directory holds `main.rs`): a top-level `x.rs` or a `x/main.rs`.
pub(super) fn test_targets(entries: &[(String, bool, bool)]) -> Vec<String> {
    entries
        .iter()
        .filter(|(name, dir, main)| if *dir { *main } else { name.ends_with(".rs") })
        .map(|(name, _, _)| name.clone())
        .collect()
}

#[cfg(test)]
mod fire {
    use super::*;

    #[test]
    fn an_invariant_without_a_test_or_with_a_bad_one_is_named() {
        let arch = "x\n\n**Invariant:** one; two\nlines (test: a/b.rs::t1; c/d.rs::t2).\n\n\
                    **Invariant:** none here.\n\n**Invariant:** bad (test: nofile).\n";
        let problems = invariant_tests(arch).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("line 6") && problems[0].contains("names no test"));
        assert!(problems[1].contains("`nofile`"));
        let ok = invariant_tests("**Invariant:** one\n(test: `a/b.rs::t1`; c/d.rs::t2)\n").unwrap();
        assert_eq!(
            ok.iter()
                .map(|r| (r.path.as_str(), r.name.as_str()))
                .collect::<Vec<_>>(),
            [("a/b.rs", "t1"), ("c/d.rs", "t2")]
        );
    }

    #[test]
    fn forbidden_tokens_skip_comments_and_the_test_module() {
        let text = "//! std::fs in a doc\nuse std::fs;\n#[cfg(test)]\nmod t { use std::fs; }\n";
        let found = forbidden_tokens("c/x.rs", text, &["std::fs"], "no I/O");
        assert_eq!(found, ["c/x.rs:2: `std::fs`: no I/O"]);
        assert!(defines_fn("#[test]\nfn a_test() {}", "a_test"));
        assert!(!defines_fn("fn a_test_longer() {}", "a_test"));
    }

    #[test]
    fn test_targets_are_top_level_files_and_directories_with_main() {
        let entries = [
            ("agent.rs".to_string(), false, false),
            ("env".to_string(), true, true),
            ("fixtures".to_string(), true, false),
            ("notes.md".to_string(), false, false),
        ];
        assert_eq!(test_targets(&entries), ["agent.rs", "env"]);
    }
    #[test]
    fn a_branch_on_a_domain_name_is_named_and_published_keys_pass() {
        let text = "let t = if domain == \"telecom\" { 1 } else { 0 };\n\
                    match d { \"airline\" => 1, _ => 2 }\n\
                    const SIZES: [(&str, usize); 1] = [(\"airline\", 158)];\n\
                    // if domain == \"retail\" in a comment\n\
                    #[cfg(test)]\nmod t { fn f(d: &str) -> bool { d == \"retail\" } }\n";
        let found = domain_branches("c/x.rs", text, &["airline", "retail", "telecom"]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("c/x.rs:1:") && found[0].contains("`telecom`"));
        assert!(found[1].starts_with("c/x.rs:2:") && found[1].contains("`airline`"));
    }
}
