//! `tauguard view` end to end: a site built from an offline guarded run (airline, 3 tasks,
//! baseline and pg-checklist, faults on) lists every simulation, holds each record whole in its
//! data file with markup escaped so it cannot leave its `<script>` wrapper, shows the same
//! numbers as `tauguard report` (from the records, and from the run exported as upstream
//! `results.json` files) with outcome counts de-duplicated as its "Sims", refuses to
//! overwrite a foreign directory, and is served on loopback with nothing outside the site
//! reachable. The browser half is in `view_browser.rs`.

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Markup a record may carry; the viewer must show it as text and never run it.
pub(crate) const INJECTED: &str = "<script>window.__pwned=1;alert(1)</script><img src=x onerror=\"window.__pwned=2\"><!-- c --></SCRIPT>\u{2028}end";

/// The run and the site built from it, made once per test binary.
#[derive(Debug)]
pub(crate) struct Fixture {
    pub dir: PathBuf,
    pub run: PathBuf,
    pub site: PathBuf,
    pub records: Vec<Value>,
}

static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();

/// The offline run with one record carrying [`INJECTED`] in a user message and a tool result,
/// and its site; `None` (skipped) without the τ²-bench data.
pub(crate) fn fixture() -> Option<&'static Fixture> {
    FIXTURE.get_or_init(build_fixture).as_ref()
}

fn build_fixture() -> Option<Fixture> {
    let tau2 = tauguard_testkit::tau2_dir()?;
    let dir = tauguard_testkit::workspace_root().join("target/view-test");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = tauguard_testkit::SimConfig::new("view", "airline", &tau2)
        .trials(2)
        .seed(11)
        .faults("skip_confirmation = 0.5\nskip_identity = 0.3\ncomply_forbidden = 0.5")
        .guards(&["baseline", "pg-checklist"])
        .run_line("num_tasks = 3")
        .write(&dir.join("config.toml"));
    let raw = dir.join("raw");
    let (code, _, err) = tauguard_status(&["run", s(&cfg), "--out", s(&raw)]);
    assert_eq!(code, 0, "tauguard run failed: {err}");
    let text = std::fs::read_to_string(raw.join("records.jsonl")).unwrap();
    let mut records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    inject(&mut records[0]);
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(run.join("records.jsonl"), lines.join("\n") + "\n").unwrap();
    let site = dir.join("site");
    let (code, out, err) =
        tauguard_status(&["view", s(&run), "--out", s(&site), "--data-dir", s(&tau2)]);
    assert_eq!(code, 0, "tauguard view failed: {err}");
    assert!(
        out.contains(&format!("{} simulations", records.len())),
        "{out}"
    );
    Some(Fixture {
        dir,
        run,
        site,
        records,
    })
}

fn inject(rec: &mut Value) {
    let msgs = rec["messages"].as_array_mut().unwrap();
    let user = msgs.iter_mut().find(|m| m["role"] == "user").unwrap();
    user["content"] = Value::String(format!(
        "{INJECTED} {}",
        user["content"].as_str().unwrap_or("")
    ));
    if let Some(tool) = msgs.iter_mut().find(|m| m["role"] == "tool") {
        tool["content"] = Value::String(INJECTED.to_string());
    }
}

/// Decodes a data file (`callee(arg,JSON.parse("…"));`) to its JSON value.
pub(crate) fn decode_data_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let start = text
        .find("JSON.parse(")
        .unwrap_or_else(|| panic!("{}: no JSON.parse", path.display()));
    let lit = text[start + "JSON.parse(".len()..]
        .trim_end()
        .strip_suffix("));")
        .unwrap_or_else(|| panic!("{}: not a data call", path.display()));
    let json: String = serde_json::from_str(lit).unwrap();
    serde_json::from_str(&json).unwrap()
}

pub(crate) fn index(site: &Path) -> Value {
    decode_data_file(&site.join("data/index.js"))
}

#[test]
fn the_site_lists_every_simulation_and_holds_each_record_whole() {
    let Some(f) = fixture() else { return };
    for file in [
        "index.html",
        "assets/app.js",
        "assets/sim.js",
        "assets/style.css",
        "data/index.js",
    ] {
        assert!(f.site.join(file).is_file(), "{file} missing");
    }
    let index = index(&f.site);
    let sims = index["sims"].as_array().unwrap();
    assert_eq!(sims.len(), f.records.len());
    let cells = index["cells"].as_array().unwrap();
    let mut recovered = 0;
    for (i, (row, rec)) in sims.iter().zip(&f.records).enumerate() {
        let cell = &cells[row[0].as_u64().unwrap() as usize];
        assert_eq!(cell["guard"], rec["guard"], "sim {i}");
        assert_eq!(row[1], rec["task_id"], "sim {i}");
        assert_eq!(row[2], rec["trial"], "sim {i}");
        let data = f.site.join(tauguard_view::sim_file(i));
        assert_eq!(
            &decode_data_file(&data),
            rec,
            "sim {i}: the data file is the record"
        );
        let blocked = rec["guard_events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["verdict"] == "block")
            .count();
        let passed = rec["reward"]["reward"].as_f64() == Some(1.0);
        let expect = match (passed, blocked > 0) {
            (true, true) => "recovered",
            (true, false) => "pass",
            (false, _) => "fail",
        };
        recovered += usize::from(expect == "recovered");
        assert_eq!(row[3], expect, "sim {i}");
        assert_eq!(row[6].as_u64().unwrap() as usize, blocked, "sim {i}");
    }
    assert_eq!(cells.len(), 2, "baseline and pg-checklist");
    let blocked_events: Vec<&Value> = f
        .records
        .iter()
        .flat_map(|r| r["guard_events"].as_array().unwrap())
        .filter(|e| e["verdict"] == "block")
        .collect();
    assert!(
        !blocked_events.is_empty(),
        "the faults make pg-checklist block some call"
    );
    for e in blocked_events {
        assert!(
            e["at_message"].as_u64().is_some(),
            "a blocked call records where it sat: {e}"
        );
    }
    eprintln!("{recovered} blocked-and-recovered simulations");
}

#[test]
fn data_files_cannot_break_out_of_their_script_wrapper() {
    let Some(f) = fixture() else { return };
    let first = f.site.join(tauguard_view::sim_file(0));
    let raw = std::fs::read_to_string(&first).unwrap();
    assert!(
        decode_data_file(&first)
            .to_string()
            .contains("window.__pwned=1")
    );
    let mut files = vec![f.site.join("data/index.js")];
    files.extend((0..f.records.len()).map(|i| f.site.join(tauguard_view::sim_file(i))));
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap().to_lowercase();
        for bad in [
            "</script", "<script", "<!--", "<img", "\u{2028}", "\u{2029}",
        ] {
            assert!(!text.contains(bad), "{}: holds {bad:?}", p.display());
        }
    }
    assert!(
        raw.contains("\\u003cscript\\u003e"),
        "markup is escaped, not dropped"
    );
}

#[test]
fn the_overview_numbers_are_the_reports() {
    let Some(f) = fixture() else { return };
    let out = tauguard_ok(&[
        "report",
        f.run.to_str().unwrap(),
        "--format",
        "json",
        "--no-floors",
    ]);
    let groups: Vec<Value> = serde_json::from_str(&out).unwrap();
    let index = index(&f.site);
    let cells = index["cells"].as_array().unwrap();
    assert_eq!(cells.len(), groups.len());
    for (cell, group) in cells.iter().zip(&groups) {
        let mut shown = cell["report"].clone();
        let obj = shown.as_object_mut().unwrap();
        assert!(
            obj.remove("floors").is_some(),
            "floors are attached: {cell}"
        );
        obj.remove("pv_above_refuse_all");
        assert_eq!(&shown, group, "cell {}", cell["label"]);
    }
    let floors = index["floors"].as_array().unwrap();
    assert_eq!(
        floors.len(),
        2,
        "refuse-all and gold-no-procedure on airline"
    );
    assert!(index["pairs"].as_array().unwrap().len() == 1);
}

/// The run exported as upstream `results.json` files, one per guard, and viewed from them:
/// the import is streamed one simulation at a time, and the overview still shows what
/// `tauguard report` prints for the same files.
#[test]
fn a_results_json_site_shows_the_reports_numbers() {
    let Some(f) = fixture() else { return };
    let tau2 = tauguard_testkit::tau2_dir().unwrap();
    let mut files = Vec::new();
    for guard in ["baseline", "pg-checklist"] {
        let file = f.dir.join(format!("results_{guard}.json"));
        let (code, _, err) = tauguard_status(&[
            "export-tau2",
            f.run.to_str().unwrap(),
            "--guard",
            guard,
            "--out",
            s(&file),
            "--data-dir",
            s(&tau2),
        ]);
        assert_eq!(code, 0, "export-tau2 --guard {guard}: {err}");
        files.push(s(&file).to_string());
    }
    let site = f.dir.join("imported");
    let _ = std::fs::remove_dir_all(&site);
    let mut args = vec!["view"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--out", s(&site), "--no-floors"]);
    tauguard_ok(&args);
    let mut args = vec!["report"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--format", "json", "--no-floors"]);
    let out = tauguard_ok(&args);
    let groups: Vec<Value> = serde_json::from_str(&out).unwrap();
    let index = index(&site);
    assert_eq!(index["sims"].as_array().unwrap().len(), f.records.len());
    let cells = index["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "baseline and pg-checklist");
    assert_eq!(cells.len(), groups.len());
    for (cell, group) in cells.iter().zip(&groups) {
        assert_eq!(&cell["report"], group, "cell {}", cell["label"]);
    }
}

/// The same run given twice: every simulation is in the index twice, but the overview's
/// outcome counts count each once, as the report's "Sims" do, so they add up to it.
#[test]
fn outcome_counts_are_deduplicated_as_the_reports_sims() {
    let Some(f) = fixture() else { return };
    let twice = f.dir.join("twice");
    let _ = std::fs::remove_dir_all(&twice);
    let run = f.run.to_str().unwrap();
    tauguard_ok(&["view", run, run, "--out", s(&twice), "--no-floors"]);
    let index = index(&twice);
    assert_eq!(
        index["sims"].as_array().unwrap().len(),
        2 * f.records.len(),
        "both inputs are listed"
    );
    let mut total = 0;
    for cell in index["cells"].as_array().unwrap() {
        let o = &cell["outcomes"];
        let sum: u64 = ["pass", "fail", "infra", "recovered"]
            .iter()
            .map(|k| o[k].as_u64().unwrap())
            .sum();
        assert_eq!(
            Some(sum),
            cell["report"]["n_simulations"].as_u64(),
            "cell {}: {o}",
            cell["label"]
        );
        assert!(cell["report"]["duplicates"].as_u64().unwrap() > 0);
        total += sum;
    }
    assert_eq!(total as usize, f.records.len());
}

#[test]
fn a_rebuild_replaces_the_site_and_a_foreign_directory_is_refused() {
    let Some(f) = fixture() else { return };
    let again = f.dir.join("again");
    let _ = std::fs::remove_dir_all(&again);
    for _ in 0..2 {
        tauguard_ok(&[
            "view",
            f.run.to_str().unwrap(),
            "--out",
            s(&again),
            "--no-floors",
        ]);
    }
    let foreign = f.dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let (code, _, err) = tauguard_status(&[
        "view",
        f.run.to_str().unwrap(),
        "--out",
        s(&foreign),
        "--no-floors",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["foreign", "not empty"]);
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
    let (code, _, err) = tauguard_status(&[
        "view",
        f.dir.join("missing").to_str().unwrap(),
        "--out",
        s(&again),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("missing"), "{err}");
}

fn http(port: u16, target: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

#[test]
fn serve_answers_on_loopback_with_the_site_only() {
    let Some(f) = fixture() else { return };
    let site = f.dir.join("served");
    let _ = std::fs::remove_dir_all(&site);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tauguard_testkit::workspace_root())
        .args([
            "view",
            f.run.to_str().unwrap(),
            "--out",
            s(&site),
            "--no-floors",
            "--serve",
            "--port",
            "0",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port: u16 = loop {
        let line = lines.next().expect("serve printed its URL").unwrap();
        if let Some(rest) = line.strip_prefix("serving http://127.0.0.1:") {
            break rest.split('/').next().unwrap().parse().unwrap();
        }
    };
    let (status, body) = http(port, "/");
    assert!(
        status.contains("200") && body.contains("Content-Security-Policy"),
        "{status}"
    );
    let (status, body) = http(port, "/data/index.js");
    assert!(
        status.contains("200") && body.starts_with("window.__tg_index("),
        "{status}"
    );
    for bad in [
        "/../Cargo.toml",
        "/data/../../Cargo.toml",
        "/%2e%2e/Cargo.toml",
    ] {
        assert!(
            http(port, bad).0.contains("404"),
            "{bad} must not be served"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}
