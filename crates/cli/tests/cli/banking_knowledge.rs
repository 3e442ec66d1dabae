//! banking_knowledge through the binary: an offline run (sim agent, sim user) under a
//! retrieval variant chosen in the config, its report, and the comparability stamp that
//! records the variant; a variant tauguard cannot run is refused before anything is written;
//! an upstream-shaped results.json of the domain imports, re-scores and reports.

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status};
use std::path::{Path, PathBuf};
use tauguard_testkit::SimConfig;

/// An offline run of `num_tasks` banking_knowledge tasks under the retrieval `variant`.
fn config(data: &Path, variant: &str, num_tasks: usize) -> SimConfig {
    SimConfig::new("bk", "banking_knowledge", data)
        .seed(300)
        .run_line(&format!("num_tasks = {num_tasks}\nconcurrency = 2"))
        .run_line(&format!(
            "domain_options.banking_knowledge.retrieval = \"{variant}\""
        ))
}

/// The ten-task [`config`] of `variant` written into a new temporary directory, and the run
/// directory beside it; `None` (the test skips) without the τ²-bench data.
fn scratch(variant: &str) -> Option<(tempfile::TempDir, PathBuf, PathBuf)> {
    let data = tauguard_testkit::tau2_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(&data, variant, 10).write(&tmp.path().join(format!("{variant}.toml")));
    let out = tmp.path().join("out");
    Some((tmp, cfg, out))
}

#[test]
fn an_offline_run_under_a_chosen_variant_runs_reports_and_is_stamped() {
    let Some((_tmp, cfg, out)) = scratch("bm25_grep") else {
        return;
    };
    let (code, stdout, stderr) = tauguard_status(&["run", s(&cfg), "--out", s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let records = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = records
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 10);
    let rewarded = lines
        .iter()
        .filter(|r| r["reward"]["reward"].as_f64() == Some(1.0))
        .count();
    assert!(
        rewarded >= 8,
        "the sim agent solves most of tasks 001-012: {rewarded}/10"
    );
    assert!(
        records.contains(
            "\"benchmark.retrieval\":\"retrieval = bm25_grep; upstream's default is alltools\""
        ),
        "the stamp records the variant"
    );
    let (code, report, stderr) = tauguard_status(&["report", s(&out)]);
    assert_eq!(code, 0, "{stderr}");
    assert_contains_all(
        &report,
        &[
            "| banking_knowledge | sim-agent | baseline | 10 | 10 |",
            "retrieval (retrieval = bm25_grep",
        ],
    );
}

#[test]
fn a_variant_that_needs_embeddings_is_refused_by_name() {
    let Some((_tmp, cfg, out)) = scratch("openai_embeddings") else {
        return;
    };
    let (code, _, stderr) = tauguard_status(&["run", s(&cfg), "--out", s(&out)]);
    assert_ne!(code, 0);
    assert_contains_all(&stderr, &["openai_embeddings", "OPENAI_API_KEY"]);
    assert!(!out.join("records.jsonl").exists());
}

/// An upstream-shaped `results.json` of this domain (a short faulty offline run exported with
/// `export-tau2`) imports, re-scores and reports: `evaluate` replays every simulation against
/// the banking database and agrees with every stored reward, and `report` reads the file to
/// the same Pass^k as the run's own records, with the retrieval variant's stamp carried over.
#[test]
fn an_exported_results_json_imports_rescores_and_reports() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(&data, "bm25", 30)
        .trials(2)
        .faults("corrupt_argument = 0.4\nskip_identity = 0.3")
        .write(&tmp.path().join("bm25.toml"));
    let run = tmp.path().join("run");
    let results = tmp.path().join("results.json");
    let p = |x: &std::path::Path| s(x).to_string();
    tauguard_ok(&["run", &p(&cfg), "--out", &p(&run)]);
    tauguard_ok(&[
        "export-tau2",
        &p(&run),
        "--out",
        &p(&results),
        "--data-dir",
        &p(&data),
    ]);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert_eq!(
        file["info"]["environment_info"]["domain_name"],
        "banking_knowledge"
    );
    assert_eq!(file["tasks"].as_array().map(Vec::len), Some(30));
    assert_eq!(file["simulations"].as_array().map(Vec::len), Some(60));

    let out = tauguard_ok(&[
        "evaluate",
        &p(&results),
        "--format",
        "json",
        "--data-dir",
        &p(&data),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for (key, n) in [
        ("evaluated", 60),
        ("agree", 60),
        ("disagree", 0),
        ("skipped", 0),
    ] {
        assert_eq!(v[key], n, "{key}: {v:#}");
    }

    let report = |input: &std::path::Path| {
        let (code, out, err) = tauguard_status(&["report", &p(input), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (v[0].clone(), err)
    };
    let ((ours, _), (theirs, warned)) = (report(&run), report(&results));
    assert_eq!(theirs["domain"], "banking_knowledge");
    assert_eq!(theirs["n_simulations"], 60);
    assert_eq!(ours["pass_k"], theirs["pass_k"], "records vs their export");
    let p1 = theirs["pass_k"]["1"].as_f64().unwrap();
    assert!(p1 > 0.0 && p1 < 1.0, "faults give a mixed outcome: {p1}");
    assert!(
        warned.contains("retrieval (retrieval = bm25; upstream's default is alltools)"),
        "the variant's stamp survives the export: {warned}"
    );
}
