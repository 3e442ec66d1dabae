//! `tauguard validate workflow` through the binary: a frozen bundle passes with its sizes on
//! stdout; a broken one exits 2 (bad input) with one report line per problem on stdout and the
//! count on stderr; an unparsable one names the JSON path of the bad field. `--all` prints
//! PolicyGuide Table 16 (one row per domain's frozen bundle, sizes counted here from the JSON,
//! beside the paper's), and with a broken bundle counts its failed checks and exits 2.

use crate::support::assert_contains_all;
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
    assert_contains_all(
        &stdout,
        &[
            "valid workflow bundle for domain `airline`",
            " authorization nodes, ",
        ],
    );
    // Its origin, from tasks/airline/provenance.toml.
    assert!(
        stdout.contains(
            "origin (workflow): hand-written by the tauguard maintainers on 2026-12-01, from airline/policy.md"
        ),
        "{stdout}"
    );
    // A bundle outside any tasks/<domain>/ states no origin.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("bundle.json");
    std::fs::copy(airline(), &copy).unwrap();
    let out = validate(&copy, "airline");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("origin: none stated"),
        "{}",
        text(&out.stdout)
    );
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
    // The three problems, then the bundle's origin (none stated for a copy in a temp dir).
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[3].starts_with("origin: none stated"), "{stdout}");
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

/// `validate workflow --all` run in `dir` (the workspace when `None`) with `extra` arguments.
fn validate_all(project: Option<&Path>, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tauguard"));
    cmd.current_dir(tauguard_testkit::workspace_root())
        .args(["validate", "workflow", "--all"])
        .args(extra);
    if let Some(dir) = project {
        cmd.arg("--project-dir").arg(dir);
    }
    cmd.output().unwrap()
}

/// Nodes, authorization nodes, edges and subflows of a bundle, counted from its JSON here
/// rather than by the validator.
fn sizes(bundle: &Value) -> [u64; 4] {
    let mut graphs = vec![&bundle["main"]];
    graphs.extend(bundle["subflows"].as_array().unwrap());
    let nodes = graphs.iter().flat_map(|g| g["nodes"].as_array().unwrap());
    [
        nodes.clone().count() as u64,
        nodes.filter(|n| n["kind"] == "tool_authorization").count() as u64,
        graphs
            .iter()
            .map(|g| g["edges"].as_array().unwrap().len() as u64)
            .sum(),
        graphs.len() as u64 - 1,
    ]
}

fn frozen(domain: &str) -> Value {
    let file = tauguard_testkit::workspace_root()
        .join("tasks")
        .join(domain)
        .join("workflow/bundle.json");
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn all_prints_table_16_one_row_per_frozen_bundle_beside_the_paper() {
    let out = validate_all(None, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("### PolicyGuide Table 16: programmatic validation"),
        "{stdout}"
    );
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| ")).collect();
    // The header and one row per domain with a bundle; the toy domain has none.
    assert_eq!(rows.len(), 5, "{stdout}");
    // No paper evaluated banking_knowledge, so it has no paper sizes beside its own.
    for (domain, paper) in [
        ("airline", "158 | 11"),
        ("banking_knowledge", "— | —"),
        ("retail", "104 | 7"),
        ("telecom", "127 | 5"),
    ] {
        let [n, a, e, s] = sizes(&frozen(domain));
        let want = format!("| {domain} | {n} | {a} | {e} | {s} | 10/10 | {paper} |");
        assert!(rows.contains(&want.as_str()), "{want} not in\n{stdout}");
        let origin =
            format!("{domain}: origin (workflow): hand-written by the tauguard maintainers");
        assert!(stdout.contains(&origin), "{origin} not in\n{stdout}");
    }

    let out = validate_all(None, &["--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let domains: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["domain"].as_str().unwrap())
        .collect();
    assert_eq!(
        domains,
        ["airline", "banking_knowledge", "retail", "telecom"]
    );
    let airline = &json[0];
    let [n, a, e, s] = sizes(&frozen("airline"));
    assert_eq!(
        (
            &airline["nodes"],
            &airline["authorization_nodes"],
            &airline["edges"],
            &airline["subflows"]
        ),
        (&n.into(), &a.into(), &e.into(), &s.into())
    );
    assert_eq!(
        (&airline["checks_passed"], &airline["checks_total"]),
        (&10.into(), &10.into())
    );
    assert_eq!(
        airline["paper"],
        serde_json::json!({"nodes": 158, "authorization_nodes": 11})
    );
}

#[test]
fn all_with_a_broken_bundle_counts_its_failed_checks_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("configs/prompts")).unwrap();
    let mut broken = frozen("airline");
    for graph in broken["subflows"].as_array_mut().unwrap() {
        for node in graph["nodes"].as_array_mut().unwrap() {
            if node["tool"] == "send_certificate" {
                node["tool"] = "get_user_details".into();
            }
        }
    }
    for (domain, bundle) in [("airline", broken), ("retail", frozen("retail"))] {
        let wf = dir.path().join("tasks").join(domain).join("workflow");
        std::fs::create_dir_all(&wf).unwrap();
        std::fs::write(wf.join("bundle.json"), bundle.to_string()).unwrap();
    }
    let out = validate_all(Some(dir.path()), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // tool-class and authorization-coverage fail; telecom has no bundle here: no row.
    assert!(stdout.contains("| 8/10 | 158 | 11 |"), "{stdout}");
    assert!(
        stdout.contains("| retail |") && !stdout.contains("| telecom |"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "airline: graph `main`: [authorization-coverage] mutating tool `send_certificate`"
        ),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("workflow bundle(s) of airline fail validation"));

    let out = validate_all(Some(dir.path()), &["--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json[0]["failed_checks"],
        serde_json::json!(["tool-class", "authorization-coverage"])
    );
    assert_eq!(json[0]["problems"].as_array().unwrap().len(), 3);
    assert_eq!(json[1]["valid"], true);
}

#[test]
fn all_refuses_a_file_and_format_needs_all() {
    let out = validate_all(None, &["tasks/airline/workflow/bundle.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'--all' cannot be used with '[FILE]'"));
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tauguard_testkit::workspace_root())
        .args([
            "validate", "workflow", "--format", "json", "--domain", "airline",
        ])
        .arg(airline())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--format applies to --all"));
}
