//! Fail-mode verdicts are visible, end to end against loopback model servers: offline agent and
//! user on the fixture domain, the verifier or guide behind a mock that never gives a usable
//! reply. Every guard (guide) event says its verdict came from the fail mode and why, keeps the
//! failed replies; `report --format json` counts them per cell, Table 7 (Table 14) shows them
//! beside Block% (guide usage), a `warning:` above the tables names the cell, and `view` flags
//! it beside the cell. The threshold is `--fail-mode-threshold`.

use crate::support::{
    assert_contains_all, guard_events, records, s, tauguard_ok, tauguard_status as tauguard,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tauguard_testkit::{Loopback, MockProvider, SimConfig, assistant_text, chat_completion};
use wiremock::ResponseTemplate;

/// What the unparseable verifier says every time.
const PROSE: &str = "I have looked at the conversation and I think this call is probably fine.";

/// llama.cpp's answer to a prompt larger than its context.
const OVERFLOW: &str = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}"#;

/// A 200 chat completion with `content` and `finish_reason`.
fn completion(content: &str, finish_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(chat_completion(
        "v",
        finish_reason,
        assistant_text(content),
        (900, 40),
    ))
}

/// Runs the fixture domain under `guard` with its verifier at `url` into `dir/run`.
fn run(dir: &Path, guard: &str, url: &str) -> PathBuf {
    let cfg = SimConfig::new("fm", "airline", &tauguard_testkit::fixtures_dir())
        .seed(300)
        .run_line("num_tasks = 4\nmax_steps = 40")
        .provider(MockProvider::new("mock", url).lines("timeout_secs = 5"))
        .tail("[guard]\nverifier = { provider = \"mock\", model = \"v\" }")
        .guards(&[guard])
        .write(&dir.join("fm.toml"));
    let out = dir.join("run");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    out
}

/// The one group of `report --format json` over the run (with `extra` arguments).
fn json_group(run: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["report", s(run), "--format", "json", "--no-floors"];
    args.extend(extra);
    let out = tauguard_ok(&args);
    let groups: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(groups.len(), 1, "{out}");
    groups.into_iter().next().unwrap()
}

/// The Markdown report (stdout, stderr).
fn markdown(run: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["report", s(run), "--no-floors"];
    args.extend(extra);
    let (code, out, err) = tauguard(&args);
    assert_eq!(code, 0, "{err}");
    (out, err)
}

/// The cells of the Markdown table row whose cells include every one of `keys`, in the table
/// whose title contains `title`.
fn md_row(md: &str, title: &str, keys: &[&str]) -> Vec<String> {
    let table = md
        .split("\n\n")
        .skip_while(|block| !(block.starts_with("### ") && block.contains(title)))
        .find(|block| block.starts_with('|'))
        .unwrap_or_else(|| panic!("no table `{title}` in\n{md}"));
    let header: Vec<String> = cells(table.lines().next().unwrap());
    let row = table
        .lines()
        .map(cells)
        .find(|c| keys.iter().all(|k| c.iter().any(|x| x == k)))
        .unwrap_or_else(|| panic!("no row {keys:?} in\n{table}"));
    assert_eq!(header.len(), row.len(), "{table}");
    assert_eq!(
        &header[header.len() - 2..],
        ["Fail-mode", "Fail-mode%"],
        "{table}"
    );
    row
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The fail-mode warning lines of a Markdown report (the fixture cell also warns that it is
/// not comparable with τ²-bench).
fn warnings(md: &str) -> Vec<&str> {
    md.lines()
        .filter(|l| l.starts_with("> warning: ") && l.contains("came from the fail mode"))
        .collect()
}

/// The flags `view` shows beside the run's one cell: its group's fail-mode objects.
fn view_flags(dir: &Path, run: &Path) -> Value {
    let site = dir.join("site");
    tauguard_ok(&["view", s(run), "--out", s(&site), "--no-floors"]);
    let index = crate::view::index(&site);
    let cells = index["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1);
    let r = &cells[0]["report"];
    json!({"fail_mode": r["fail_mode"], "guide_fail_mode": r["guide_fail_mode"]})
}

#[test]
fn an_unparseable_verifier_is_counted_as_its_fail_mode_everywhere() {
    let mock = Loopback::serve(completion(PROSE, "stop"));
    let tmp = tempfile::tempdir().unwrap();
    let run = run(tmp.path(), "pg-raw", &mock.uri());
    let events = guard_events(&records(&run));
    assert!(!events.is_empty(), "the sim agent makes mutating calls");
    for e in &events {
        assert_eq!(e["verdict_source"], "fail_mode", "{e}");
        assert_eq!(e["fail_reason"], "parse_failure", "{e}");
        assert_eq!(e["verdict"], "block", "fail closed is the default");
        let info = &e["info"];
        assert_eq!(info["repaired"], false, "the repair did not parse: {info}");
        let failed = info["failed_attempts"].as_array().unwrap();
        assert_eq!(failed.len(), 2, "{info}");
        for (i, a) in failed.iter().enumerate() {
            assert_eq!(a["attempt"], i + 1);
            assert_eq!(a["raw"], PROSE, "the raw reply is kept");
            assert_eq!(a["finish_reason"], "stop");
            assert!(a["parse_error"].as_str().unwrap().contains("JSON"), "{a}");
        }
    }
    let n = events.len();

    let g = json_group(&run, &[]);
    assert_eq!(
        g["fail_mode"],
        json!({"decisions": n, "fail_mode": n, "share": 1.0,
               "by_reason": {"parse_failure": n}, "flagged": true,
               "executed": 0, "executed_fail_mode": 0})
    );
    assert_eq!(g["confusion"]["verdict"]["block_rate"], 1.0);

    let (md, err) = markdown(&run, &[]);
    let row = md_row(&md, "PolicyGuard Table 7", &["pg-raw", "verdict"]);
    assert_eq!(
        row[row.len() - 3..],
        ["100.0%", &n.to_string(), "100.0%"],
        "{row:?}"
    );
    let flagged = warnings(&md);
    assert_eq!(flagged.len(), 1, "{md}");
    for text in [
        "pg-raw: 100.0% of guard verdicts",
        &format!("({n} of {n})"),
        &format!("reasons: parse_failure {n}"),
        "PolicyGuard Table 7",
    ] {
        assert!(flagged[0].contains(text), "{text}: {}", flagged[0]);
    }
    assert_contains_all(&err, &["warning: ", "of guard verdicts"]);
    // The threshold is a share: at 1 a cell of nothing but fail-mode verdicts is not "more".
    let (md, _) = markdown(&run, &["--fail-mode-threshold", "1"]);
    assert!(warnings(&md).is_empty(), "{md}");
    assert_eq!(
        json_group(&run, &["--fail-mode-threshold", "1"])["fail_mode"]["flagged"],
        false
    );
    let (code, _, err) = tauguard(&["report", s(&run), "--fail-mode-threshold", "2"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a share between 0 and 1"), "{err}");

    let flags = view_flags(tmp.path(), &run);
    assert_eq!(flags["fail_mode"]["flagged"], true, "{flags}");
    assert_eq!(flags["fail_mode"]["by_reason"]["parse_failure"], n);
}

#[test]
fn a_verifier_cut_at_its_token_limit_is_truncated() {
    let mock = Loopback::serve(completion("{\"verdict\": \"PA", "length"));
    let tmp = tempfile::tempdir().unwrap();
    let run = run(tmp.path(), "pg-raw", &mock.uri());
    let events = guard_events(&records(&run));
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e["verdict_source"], "fail_mode");
        assert_eq!(e["fail_reason"], "truncated", "{e}");
        assert_eq!(e["info"]["failed_attempts"][0]["finish_reason"], "length");
        assert_eq!(e["info"]["failed_attempts"][0]["raw"], "{\"verdict\": \"PA");
    }
    let g = json_group(&run, &[]);
    assert_eq!(
        g["fail_mode"]["by_reason"],
        json!({"truncated": events.len()})
    );
}

#[test]
fn a_guide_whose_every_call_overflows_its_context_is_counted_in_table_14() {
    let mock = Loopback::serve(ResponseTemplate::new(400).set_body_string(OVERFLOW));
    let tmp = tempfile::tempdir().unwrap();
    let run = run(tmp.path(), "policyguide", &mock.uri());
    let recs = records(&run);
    let guide: Vec<&Value> = recs
        .iter()
        .flat_map(|r| r["guide_events"].as_array().unwrap())
        .collect();
    assert!(!guide.is_empty(), "the guide runs before agent replies");
    for e in &guide {
        assert_eq!(e["verdict_source"], "fail_mode", "{e}");
        assert_eq!(e["fail_reason"], "context_overflow", "{e}");
        assert_eq!(e["fail_http_status"], 400);
        let failed = &e["info"]["failed_attempts"][0];
        assert_eq!(failed["http_status"], 400, "{failed}");
        assert!(
            failed["model_error"].as_str().unwrap().contains("exceed"),
            "{failed}"
        );
    }
    // An intercepted call blocked because its corrective verification overflowed too.
    for e in recs
        .iter()
        .flat_map(|r| r["guard_events"].as_array().unwrap())
    {
        if e["info"]["intercepted"] == true {
            assert_eq!(e["fail_reason"], "context_overflow", "{e}");
        }
    }
    let n = guide.len();
    let g = json_group(&run, &[]);
    assert_eq!(
        g["guide_fail_mode"],
        json!({"decisions": n, "fail_mode": n, "share": 1.0,
               "by_reason": {"context_overflow": n}, "flagged": true})
    );
    assert_eq!(
        g["guide_usage"]["calls"], 0,
        "a rejected call counts no call"
    );
    let (md, _) = markdown(&run, &[]);
    let row = md_row(&md, "PolicyGuide Table 14", &["policyguide"]);
    assert_eq!(
        row[row.len() - 2..],
        [n.to_string(), "100.0%".into()],
        "{row:?}"
    );
    assert!(
        warnings(&md)
            .iter()
            .any(|w| w.contains("100.0% of guide runs")
                && w.contains(&format!("reasons: context_overflow {n}"))),
        "{md}"
    );
    let flags = view_flags(tmp.path(), &run);
    assert_eq!(flags["guide_fail_mode"]["flagged"], true, "{flags}");
}
