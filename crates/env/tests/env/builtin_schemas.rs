//! The built-in tool schemas against upstream's `tools.json`: for every registered domain
//! whose data directory ships that file, a copy of the directory without it loads the
//! implementation's own declarations, and each one, serialized in OpenAI function form, must
//! be the text upstream publishes — same tools in the same order, same descriptions, titles,
//! `required`, `$defs` and key order — so a data directory without `tools.json` shows a model
//! exactly what upstream shows it.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use tauguard_core::Requestor;
use tauguard_core::tool::ToolSpec;
use tauguard_env::{DOMAINS, DataDir, DomainData};

/// A scratch directory removed when the test ends, passing or failing.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the directory `from` into `to`, subdirectories included, leaving out `from`'s
/// entry called `skip`.
fn copy_dir_without(from: &Path, to: &Path, skip: &str) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_name() == skip {
            continue;
        }
        if src.is_dir() {
            copy_dir_without(&src, &dst, "");
        } else {
            std::fs::copy(&src, &dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        }
    }
}

fn json_text(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON value serializes")
}

#[test]
fn builtin_schemas_equal_tools_json_in_every_registered_domain() {
    let Some(shared) = common::data_dir() else {
        return;
    };
    let scratch = Scratch(
        std::env::temp_dir().join(format!("tauguard-builtin-schemas-{}", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&scratch.0);
    std::fs::create_dir_all(&scratch.0).unwrap();
    let mut failures = Vec::new();
    for domain in DOMAINS {
        let name = domain.name();
        let src = shared.domain_dir(name);
        let tools_path = src.join("tools.json");
        if !domain.builtin_schemas() {
            tauguard_testkit::skip(&format!(
                "built-in schemas of `{name}`: it declares none (its schemas come from the data)"
            ));
            continue;
        }
        if !tools_path.is_file() {
            tauguard_testkit::skip(&format!(
                "built-in schemas of `{name}`: no {} to compare them with",
                tools_path.display()
            ));
            continue;
        }
        copy_dir_without(&src, &scratch.0.join(name), "tools.json");
        let copy = DataDir::resolve(Some(&scratch.0)).unwrap_or_else(|e| panic!("{e}"));
        let data = DomainData::load(&copy, name).unwrap_or_else(|e| panic!("loading {name}: {e}"));
        assert!(
            !data.schemas_from_file,
            "{name}: the copy without tools.json must use the built-in schemas"
        );
        let text = std::fs::read_to_string(&tools_path)
            .unwrap_or_else(|e| panic!("{}: {e}", tools_path.display()));
        let file: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", tools_path.display()));
        for (side, key) in [
            (Requestor::Assistant, "assistant_tools"),
            (Requestor::User, "user_tools"),
        ] {
            let published: &[Value] = file
                .get(key)
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice);
            let builtin = data.tool_schemas.side(side);
            let want_names: Vec<&str> = published
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or_default())
                .collect();
            let got_names: Vec<&str> = builtin.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(
                got_names, want_names,
                "{name} {key}: the built-in tools, in order, are tools.json's"
            );
            for (spec, entry) in builtin.iter().zip(published) {
                let want = json_text(entry);
                // The file's own schemas make the same round trip, so a run reading tools.json
                // and one without it send the same text.
                let from_file = ToolSpec::from_openai(entry).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    json_text(&from_file.to_openai()),
                    want,
                    "{name} {key} `{}`: tools.json entry round trip",
                    spec.name
                );
                let got = json_text(&spec.to_openai());
                if got != want {
                    failures.push(format!(
                        "{name} {key} `{}`: built-in schema differs from tools.json\n  \
                         built-in:   {got}\n  tools.json: {want}",
                        spec.name
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
