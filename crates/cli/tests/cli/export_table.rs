//! The columnar sidecar from the command line: `run` writes it, `report` gives the same
//! numbers from it as from the records, and `export-table --format csv` writes tables that the
//! csv crate parses into the columns the README documents.

use crate::support::tauguard_ok as ok;
use std::path::Path;

/// `simulations.csv` columns as documented in the README.
const SIMULATION_COLUMNS: &[&str] = &[
    "run_id",
    "cell_id",
    "config_hash",
    "cell_hash",
    "cell",
    "domain",
    "agent_model",
    "user_model",
    "guard",
    "simulated",
    "task_id",
    "slice",
    "trial",
    "seed",
    "termination_reason",
    "reward",
    "success",
    "infra_error",
    "missing_reward_info",
    "error",
    "agent_turns",
    "user_turns",
    "wall_seconds",
    "agent_calls",
    "agent_prompt_tokens",
    "agent_cached_prompt_tokens",
    "agent_completion_tokens",
    "agent_cost",
    "agent_truncated",
    "user_calls",
    "user_prompt_tokens",
    "user_cached_prompt_tokens",
    "user_completion_tokens",
    "user_cost",
    "user_truncated",
    "judge_calls",
    "judge_prompt_tokens",
    "judge_cached_prompt_tokens",
    "judge_completion_tokens",
    "judge_cost",
    "judge_truncated",
    "guard_calls",
    "guard_prompt_tokens",
    "guard_cached_prompt_tokens",
    "guard_completion_tokens",
    "guard_cost",
    "guard_truncated",
    "discarded_calls",
    "discarded_prompt_tokens",
    "discarded_cached_prompt_tokens",
    "discarded_completion_tokens",
    "discarded_cost",
    "discarded_truncated",
    "other_usage",
    "has_fault_labels",
    "trace_gold_steps",
    "trace_matched_steps",
    "attack_success",
    "verifier_called",
    "verifier_saved",
    "verifier_decisions",
    "verifier_checked",
    "verifier_unchecked",
    "verifier_unseen",
    "verifier_inputs",
    "guide_runs",
    "guide_calls",
    "guide_prompt_tokens",
    "guide_completion_tokens",
    "guide_cached_prompt_tokens",
    "guide_costs",
    "guide_unpriced",
    "guide_fail_reasons",
];

/// `calls.csv` columns as documented in the README.
const CALL_COLUMNS: &[&str] = &[
    "sim",
    "run_id",
    "task_id",
    "trial",
    "call_id",
    "tool",
    "requestor",
    "verdict",
    "executed",
    "faults",
    "missing_prerequisites",
    "fail_reason",
];

fn read_csv(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r.records().map(Result::unwrap).collect();
    (headers, rows)
}

#[test]
fn run_writes_the_sidecar_report_reads_it_and_export_table_writes_csv() {
    let fixtures = tauguard_testkit::fixtures_dir();
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_str().unwrap().to_string();
    std::fs::write(
        tmp.path().join("grid.toml"),
        format!(
            "[run]\nname = \"grid\"\ndomain = \"airline\"\ndata_dir = \"{}\"\ntrials = 2\n\
             [grid]\nguards = [\"baseline\", \"pg-checklist\"]\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.agent.faults]\nskip_confirmation = 0.3\ncomply_forbidden = 0.3\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n",
            fixtures.display()
        ),
    )
    .unwrap();
    ok(&["run", &t("grid.toml"), "--out", &t("grid")]);
    for f in ["simulations.parquet", "calls.parquet", "sidecar.json"] {
        assert!(tmp.path().join("grid").join(f).is_file(), "{f} missing");
    }
    let args = |dir: &str| ["report", dir, "--format", "json", "--no-floors"].map(String::from);
    let report = |dir: &str| ok(&args(dir).each_ref().map(String::as_str));
    let from_sidecar = report(&t("grid"));
    std::fs::remove_file(tmp.path().join("grid/sidecar.json")).unwrap();
    let from_records = report(&t("grid"));
    assert_eq!(from_sidecar, from_records);
    assert!(from_records.contains("pg-checklist"));

    ok(&[
        "export-table",
        &t("grid"),
        "--format",
        "csv",
        "--out",
        &t("tables"),
    ]);
    let lines = std::fs::read_to_string(tmp.path().join("grid/records.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (h, sims) = read_csv(&tmp.path().join("tables/simulations.csv"));
    // The fixed columns, then the registered measures' own.
    let mut expected: Vec<&str> = SIMULATION_COLUMNS.to_vec();
    expected.extend(tauguard_metrics::sidecar_column_names());
    assert_eq!(h, expected);
    assert_eq!(sims.len(), records.len());
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    for (row, rec) in sims.iter().zip(&records) {
        assert_eq!(&row[col("task_id")], rec["task_id"].as_str().unwrap());
        assert_eq!(&row[col("guard")], rec["guard"].as_str().unwrap());
        assert_eq!(row[col("trial")].parse::<u64>().unwrap(), rec["trial"]);
        assert!(["true", "false"].contains(&&row[col("success")]));
    }
    let (h, calls) = read_csv(&tmp.path().join("tables/calls.csv"));
    assert_eq!(h, CALL_COLUMNS);
    let attempts: usize = records
        .iter()
        .map(|r| r["call_attempts"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(attempts > 0);
    assert_eq!(calls.len(), attempts);
    for row in &calls {
        assert!(row[0].parse::<usize>().unwrap() < sims.len());
        assert!(["", "pass", "block"].contains(&&row[7]), "{row:?}");
        let faults: Vec<String> = serde_json::from_str(&row[9]).unwrap();
        assert!(faults.iter().all(|f| !f.is_empty()));
    }
    assert!(calls.iter().any(|r| &r[7] == "block"));

    // Parquet beside the records is the sidecar again, manifest included.
    ok(&["export-table", &t("grid")]);
    assert!(tmp.path().join("grid/sidecar.json").is_file());
    assert_eq!(report(&t("grid")), from_records);
}
