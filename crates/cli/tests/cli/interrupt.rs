//! Ctrl-C in the middle of a paid run, delivered as a real SIGINT (and SIGTERM) to the binary while a
//! simulation waits on a loopback model server: the run stops with exit 130 and a summary
//! (records kept, cost so far, the resume command); the tokens of the simulation it cut off
//! are in `interrupted.jsonl`, so every token the server answered with is accounted for —
//! in the records or in that file — and `report` counts the cut-off spend in its spending
//! table. `--resume` then finishes the run, and the spend stays counted.

use crate::support::{
    assert_contains_all, json_lines as lines, keyed_command as tauguard, local_config, s, table_row,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tauguard_testkit::{Loopback, assistant_text, chat_completion};
use wiremock::{Request, Respond, ResponseTemplate};

/// Prompt tokens every reply reports; priced at $1 each, so dollars count tokens.
const PROMPT_TOKENS: u64 = 30;

/// Answers every request after a short delay, or, while `hang` is set, never in the test's
/// time; counts the answers and the requests left hanging.
struct Server {
    hang: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
    hung: Arc<AtomicU64>,
}

impl Respond for Server {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if self.hang.load(Ordering::SeqCst) {
            self.hung.fetch_add(1, Ordering::SeqCst);
            return ResponseTemplate::new(200).set_delay(Duration::from_secs(600));
        }
        self.answered.fetch_add(1, Ordering::SeqCst);
        let message = assistant_text("Could you tell me more?");
        ResponseTemplate::new(200)
            .set_body_json(chat_completion(
                "local-priced",
                "stop",
                message,
                (PROMPT_TOKENS, 0),
            ))
            .set_delay(Duration::from_millis(150))
    }
}

fn write_config(dir: &Path, server: &str) -> PathBuf {
    local_config("paid", "local-priced", server)
        .run_line("num_tasks = 3\nmax_steps = 6")
        .tail("[llm.prices.\"local-priced\"]\ninput_per_mtok = 1000000.0\noutput_per_mtok = 0.0")
        .write(&dir.join("paid.toml"))
}

/// Prompt tokens of a record: its roles' usage and its discarded attempts'.
fn record_tokens(r: &Value) -> u64 {
    let roles: u64 = r["usage"]
        .as_object()
        .unwrap()
        .values()
        .map(|u| u["usage"]["prompt_tokens"].as_u64().unwrap_or(0))
        .sum();
    roles
        + r["attempts"]["discarded"]["usage"]["prompt_tokens"]
            .as_u64()
            .unwrap_or(0)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(60), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn ctrl_c_keeps_the_records_writes_the_cut_off_spend_and_resume_finishes() {
    interrupt_with("INT");
}

#[test]
fn sigterm_stops_the_run_the_same_way() {
    interrupt_with("TERM");
}

/// Runs, sends `SIG<signal>` mid-simulation, checks what was kept, reports and resumes.
fn interrupt_with(signal: &str) {
    let (hang, answered, hung) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let server = Loopback::serve(Server {
        hang: hang.clone(),
        answered: answered.clone(),
        hung: hung.clone(),
    });
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), &server.uri());
    let out = tmp.path().join("run");
    let (cfg_s, out_s) = (s(&cfg), s(&out));
    let records = out.join("records.jsonl");

    let child = tauguard(&["run", cfg_s, "--out", out_s]).spawn().unwrap();
    // Once the first record is written, the next simulation's answers stop coming after
    // the ones it already has: it is in flight, with tokens billed, when Ctrl-C arrives.
    wait_for("the first record", || !lines(&records).is_empty());
    let before = answered.load(Ordering::SeqCst);
    wait_for("one more answer", || {
        answered.load(Ordering::SeqCst) > before
    });
    hang.store(true, Ordering::SeqCst);
    wait_for("a request left hanging", || hung.load(Ordering::SeqCst) > 0);
    let kill = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{stderr}");

    let kept = lines(&records);
    let cut = lines(&out.join("interrupted.jsonl"));
    assert!(!kept.is_empty() && kept.len() < 3, "{stderr}");
    assert_eq!(cut.len(), 1, "one simulation was in flight: {cut:?}");
    let c = &cut[0];
    assert_eq!(c["stopped_by"], format!("SIG{signal}"));
    assert!(c["http_requests"].as_u64().unwrap() >= 2, "{c}");
    let cut_tokens = c["usage_by_model"]["local-priced"]["usage"]["prompt_tokens"]
        .as_u64()
        .unwrap();
    assert!(cut_tokens > 0, "{c}");
    // Every token served is in a record or in the cut-off line, priced at $1 a token.
    let served = answered.load(Ordering::SeqCst) * PROMPT_TOKENS;
    let recorded: u64 = kept.iter().map(record_tokens).sum();
    assert_eq!(recorded + cut_tokens, served, "{kept:?} {c}");
    assert_eq!(c["cost"].as_f64().unwrap(), cut_tokens as f64);
    // The summary: records kept, cost so far (records and the cut-off simulation), resume.
    let summary = format!(
        "run interrupted by SIG{signal}: {} of 3 simulations kept",
        kept.len()
    );
    assert_contains_all(
        &stderr,
        &[
            &summary,
            &format!("spent by this invocation ${:.4},", served as f64),
            &format!("of it ${:.4} for 1 simulation cut off", cut_tokens as f64),
            &format!("tauguard run {cfg_s} --resume --out {out_s}"),
        ],
    );

    // report counts the cut-off spend.
    let report = tauguard(&["report", out_s, "--no-floors"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert_eq!(
        report.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let row = |name: &str| table_row(&text, name);
    assert!(
        row("interrupted.jsonl").contains(&format!("| {cut_tokens} |")),
        "{text}"
    );
    assert!(row("total").contains(&format!("| {served} |")), "{text}");
    assert!(
        row("total").contains(&format!("{:.4}", served as f64)),
        "{text}"
    );

    // Resume finishes the run; the cut-off spend stays in the total.
    hang.store(false, Ordering::SeqCst);
    let resumed = tauguard(&["run", cfg_s, "--resume", "--out", out_s])
        .output()
        .unwrap();
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(lines(&records).len(), 3);
    let all_served = answered.load(Ordering::SeqCst) * PROMPT_TOKENS;
    let report = tauguard(&["report", out_s, "--no-floors"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    let total = text.lines().find(|l| l.starts_with("| total")).unwrap();
    assert!(total.contains(&format!("| {all_served} |")), "{text}");
}
