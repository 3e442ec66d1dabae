//! `tauguard validate workflow` through the binary: a frozen bundle passes with its sizes on
//! stdout; a broken one exits 2 (bad input) with one report line per problem on stdout and the
//! count on stderr; an unparsable one names the JSON path of the bad field.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn validate(file: &Path, domain: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tauguard_testkit::workspace_root())
        .args(["validate", "workflow"])
        .arg(file)
        .args(["--domain", domain])
        .output()
        .unwrap()
}

fn airline() -> PathBuf {
    tauguard_testkit::workspace_root().join("tasks/airline/workflow/bundle.json")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_frozen_airline_bundle_passes_with_its_sizes() {
    let out = validate(&airline(), "airline");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("valid workflow bundle for domain `airline`"),
        "{stdout}"
    );
    assert!(stdout.contains(" authorization nodes, "), "{stdout}");
}

#[test]
fn a_broken_bundle_exits_2_with_every_problem_named() {
    let mut bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(airline()).unwrap()).unwrap();
    // Retarget every send_certificate authorization to a read-only tool: two tool-class
    // problems and one coverage problem.
    for graph in bundle["subflows"].as_array_mut().unwrap() {
        for node in graph["nodes"].as_array_mut().unwrap() {
            if node["tool"] == "send_certificate" {
                node["tool"] = "get_user_details".into();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bundle.json");
    std::fs::write(&file, bundle.to_string()).unwrap();
    let out = validate(&file, "airline");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(lines.contains(
        &"graph `main`: [authorization-coverage] mutating tool `send_certificate` has no `tool_authorization` node"
    ), "{stdout}");
    assert!(lines.contains(
        &"graph `compensation`, node `certificate_cancelled`: [tool-class] `tool_authorization` node names read-only tool `get_user_details`; it takes a mutating tool"
    ), "{stdout}");
    assert!(text(&out.stderr).contains("has 3 problem(s) (listed above)"));
}

#[test]
fn an_unknown_node_kind_and_an_unknown_domain_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bundle.json");
    let text_in = std::fs::read_to_string(airline()).unwrap().replacen(
        "\"kind\": \"decision\"",
        "\"kind\": \"fork\"",
        1,
    );
    std::fs::write(&file, text_in).unwrap();
    let out = validate(&file, "airline");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(".kind`: unknown variant `fork`"),
        "{stderr}"
    );

    let out = validate(&airline(), "bakery");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown domain `bakery`"));
}
