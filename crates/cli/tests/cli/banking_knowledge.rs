//! banking_knowledge through the binary: an offline run (sim agent, sim user) under a
//! retrieval variant chosen in the config, its report, and the comparability stamp that
//! records the variant; a variant tauguard cannot run is refused before anything is written.

use crate::support::tauguard_status;

fn config(dir: &std::path::Path, data: &std::path::Path, variant: &str) -> std::path::PathBuf {
    let text = format!(
        r#"[run]
name = "bk"
domain = "banking_knowledge"
num_tasks = 10
seed = 300
concurrency = 2
data_dir = "{}"

[run.domain_options.banking_knowledge]
retrieval = "{variant}"

[models.agent]
provider = "sim"
model = "sim-agent"

[models.user]
provider = "sim"
model = "sim-user"
"#,
        data.display()
    );
    let path = dir.join(format!("{variant}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_offline_run_under_a_chosen_variant_runs_reports_and_is_stamped() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cfg = config(tmp.path(), &data, "bm25_grep");
    let (code, stdout, stderr) =
        tauguard_status(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
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
    let (code, report, stderr) = tauguard_status(&["report", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        report.contains("| banking_knowledge | sim-agent | baseline | 10 | 10 |"),
        "{report}"
    );
    assert!(
        report.contains("retrieval (retrieval = bm25_grep"),
        "{report}"
    );
}

#[test]
fn a_variant_that_needs_embeddings_is_refused_by_name() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cfg = config(tmp.path(), &data, "openai_embeddings");
    let (code, _, stderr) =
        tauguard_status(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("openai_embeddings") && stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );
    assert!(!out.join("records.jsonl").exists());
}
