//! A run against a loopback model with no price whose replies are all cut at the token
//! limit (`finish_reason: "length"`): no output says `$0.0000` or `0.0000` for its cost — not
//! the progress line before the first record, the closing lines, `report` in Markdown, CSV and
//! JSON and its files, the viewer's index, or the dry run — while every one of them that shows
//! usage shows the cut replies per role.

use crate::support::{assert_contains_all, keyed_command, line_starting, local_config, s};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tauguard_testkit::{Loopback, assistant_text, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// Runs `tauguard` as [`keyed_command`] does, asserting it exits 0; returns (stdout, stderr).
fn ok(args: &[&str]) -> (String, String) {
    let out = keyed_command(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "tauguard {args:?}: {stderr}");
    (stdout, stderr)
}

/// Longer than the first progress interval (5 s), so a progress line precedes any record.
const FIRST_ANSWER_DELAY: Duration = Duration::from_millis(6_500);

/// Every reply cut at its limit; the first one late.
struct CutReplies(AtomicU64);

impl Respond for CutReplies {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        let message = assistant_text("{\"reply\": \"I can hel");
        let reply = ResponseTemplate::new(200).set_body_json(chat_completion(
            "local-unpriced",
            "length",
            message,
            (30, 64),
        ));
        if n == 0 {
            reply.set_delay(FIRST_ANSWER_DELAY)
        } else {
            reply
        }
    }
}

fn write_config(dir: &Path, server: &str) -> PathBuf {
    local_config("unpriced", "local-unpriced", server)
        .run_line("num_tasks = 2\nmax_steps = 4")
        .agent("provider = \"local\"\nmodel = \"local-unpriced\"\nmax_tokens = 64")
        .write(&dir.join("unpriced.toml"))
}

/// What a zero cost looks like in our outputs: `$0.0000` in text, `0.0000` in tables and
/// CSV cells (`0.000000`), and a JSON `0.0` where a cost is.
fn assert_no_zero_cost(what: &str, text: &str) {
    assert!(!text.contains("$0.0000"), "{what} says $0.0000:\n{text}");
    assert!(!text.contains("0.0000"), "{what} has a 0.0000:\n{text}");
}

/// The cells of `column` in a CSV text.
fn csv_column(text: &str, column: &str) -> Vec<String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let i = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column `{column}` in {text}"));
    r.records().map(|row| row.unwrap()[i].to_string()).collect()
}

#[test]
fn an_unpriced_model_costs_unknown_everywhere_and_its_cut_replies_are_counted() {
    let server = Loopback::serve(CutReplies(AtomicU64::new(0)));
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), &server.uri());
    let run = tmp.path().join("run");

    // The run: the progress line before any record, the closing lines.
    let (stdout, stderr) = ok(&["run", s(&cfg), "--out", s(&run)]);
    assert!(
        stderr.contains("progress: 0/2 simulations done · ") && stderr.contains("cost unknown"),
        "a progress line before the first record, cost unknown: {stderr}"
    );
    assert!(
        stdout.contains("infrastructure errors, cost unknown"),
        "{stdout}"
    );
    let cut = line_starting(&stdout, "replies cut at their token limit: ");
    assert_contains_all(cut, &["agent ", "user "]);
    assert_no_zero_cost("run stdout", &stdout);
    assert_no_zero_cost("run stderr", &stderr);

    // report, in every format, and its files.
    let report = |format: &str| ok(&["report", s(&run), "--format", format, "--no-floors"]).0;
    let md = report("md");
    assert_no_zero_cost("report md", &md);
    let cost_rows: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("### PolicyGuard cost table"))
        .filter(|l| l.starts_with("| airline"))
        .take(1)
        .collect();
    assert_eq!(cost_rows.len(), 1, "{md}");
    assert!(
        cost_rows[0].ends_with("| unknown | unknown | unknown | — |"),
        "{}",
        cost_rows[0]
    );
    assert!(
        md.contains("### Replies cut at the token limit, per role"),
        "{md}"
    );

    let json: Vec<Value> = serde_json::from_str(&report("json")).unwrap();
    let g = &json[0];
    assert_eq!(g["cost_per_simulation"]["agent"], Value::Null);
    assert_eq!(g["cost_per_simulation"]["user"], Value::Null);
    let agent = &g["truncated_replies"]["agent"];
    assert!(agent["calls"].as_u64().unwrap() > 0);
    assert_eq!(
        agent["truncated"], agent["calls"],
        "every agent reply was cut"
    );
    assert_eq!(
        g["truncated_replies"]["user"]["truncated"],
        g["truncated_replies"]["user"]["calls"]
    );

    let csv = report("csv");
    assert_eq!(
        csv_column(&csv, "agent_cost_usd"),
        [""],
        "unknown is empty, not 0"
    );

    let files = tmp.path().join("report");
    ok(&[
        "report",
        s(&run),
        "--out",
        s(&files),
        "--no-floors",
        "--tables-only",
    ]);
    let cost_csv = std::fs::read_to_string(files.join("policyguard_cost.csv")).unwrap();
    assert_eq!(csv_column(&cost_csv, "cost_usd_per_sim_total"), [""]);
    assert_eq!(csv_column(&cost_csv, "cost_usd_per_sim_agent"), [""]);
    let cut_csv = std::fs::read_to_string(files.join("truncated_replies.csv")).unwrap();
    assert_eq!(
        csv_column(&cut_csv, "agent_truncated"),
        csv_column(&cut_csv, "agent_replies")
    );
    assert_ne!(csv_column(&cut_csv, "agent_truncated"), ["0"]);
    for f in ["report.md", "report.json", "report.tex"] {
        assert_no_zero_cost(f, &std::fs::read_to_string(files.join(f)).unwrap());
    }

    // The viewer's index: the report's groups, costs null, the cut replies beside the cell.
    let site = tmp.path().join("site");
    ok(&["view", s(&run), "--out", s(&site), "--no-floors"]);
    let text = std::fs::read_to_string(site.join("data/index.js")).unwrap();
    assert!(!text.contains("$0.0000"), "{text}");
    let index = crate::view::index(&site);
    let cell = &index["cells"][0]["report"];
    assert_eq!(cell["cost_per_simulation"], g["cost_per_simulation"]);
    assert_eq!(cell["truncated_replies"], g["truncated_replies"]);

    // The dry run.
    let (dry, _) = ok(&["run", "--dry-run", s(&cfg)]);
    assert!(
        dry.contains("cost: unknown: no price for local/local-unpriced"),
        "{dry}"
    );
    assert_no_zero_cost("dry run", &dry);
    let (dry_json, _) = ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
    let dry_json: Value = serde_json::from_str(&dry_json).unwrap();
    assert_eq!(dry_json["cost"], Value::Null);
    drop(server);
}
