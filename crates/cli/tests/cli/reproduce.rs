//! `tauguard reproduce`: the papers' experiments under `configs/repro/` load, their configs
//! validate and plan without a key, their published numbers are cited to a paper table of a
//! seed that states them, and an offline reproduction prints its table — with the floors of
//! its domains — beside the published numbers with the difference per cell and writes it as
//! Markdown, tidy CSV and JSON.

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status as tauguard};
use std::path::{Path, PathBuf};
use tauguard_orchestrator::{RunConfig, RunOptions, RunPlan};
use tauguard_testkit::{tau2_dir, workspace_root};

pub(crate) fn repro_dir() -> PathBuf {
    workspace_root().join("configs/repro")
}

/// Every experiment directory (one holding a manifest), sorted.
fn experiments() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repro_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("manifest.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn toml_file(path: &Path) -> toml::Table {
    toml::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn list_names_every_experiment_and_an_unknown_name_is_bad_input() {
    let names = experiments();
    for expected in [
        "policyguard-main",
        "dialogue-ablation",
        "policy-text-ablation",
        "small-verifier",
        "policyguide-main",
        "workflow-ablations",
        "flowagent-telecom",
        "cross-agent",
        "attacks",
        "policyguard-per-call",
        "policyguard-turns",
        "policyguard-call-nmr",
        "policyguide-trace",
        "policyguide-significance",
        "policyguide-usage",
        "policyguide-wall-clock",
        "policyguide-call-nmr",
    ] {
        assert!(names.iter().any(|n| n == expected), "missing {expected}");
    }
    // `--list` loads and checks every experiment (configs, layout, published cells).
    let out = tauguard_ok(&["reproduce", "--list"]);
    let listed: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(listed, names, "{out}");
    assert!(out.contains("policyguard-main\tPolicyGuard Table 2: Main results on airline"));

    let (code, out, err) = tauguard(&["reproduce", "no-such-table"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("unknown experiment `no-such-table`"), "{err}");
    for n in &names {
        assert!(err.contains(n.as_str()), "{n} not listed in: {err}");
    }
    let (code, _, err) = tauguard(&["reproduce"]);
    assert_eq!(code, 2);
    assert!(err.contains("known experiments: "), "{err}");
}

#[test]
fn every_config_validates_and_its_offline_twin_plans() {
    let Some(data) = tau2_dir() else { return };
    for name in experiments() {
        let dir = repro_dir().join(&name);
        let manifest = toml_file(&dir.join("manifest.toml"));
        let faults: tauguard_orchestrator::FaultProfile =
            manifest["offline"]["faults"].clone().try_into().unwrap();
        for entry in manifest["config"].as_array().unwrap() {
            let path = dir.join(entry["file"].as_str().unwrap());
            let at = path.display().to_string();
            // Parsing validates guard names, provider names and every key.
            let cfg = RunConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                cfg.uses_network(),
                "{at}: a reproduction config names real models"
            );
            assert_eq!(cfg.run.trials, 4, "{at}");
            // Building real models reads API keys (`ModelFactory` fails without one), so the
            // real side is checked as far as it goes without them: each model's provider
            // resolves and its capabilities are known.
            let factory = tauguard_llm::ModelFactory::new(cfg.llm.clone()).unwrap();
            let agent = cfg
                .models
                .agent
                .as_ref()
                .expect("a reproduction config names its agent");
            let mut models = vec![agent, &cfg.models.user];
            models.extend(cfg.models.judge.as_ref());
            models.extend(cfg.guard.verifier.as_ref());
            for m in models {
                factory
                    .capabilities(&m.spec())
                    .unwrap_or_else(|e| panic!("{at}: {}: {e}", m.model));
            }
            // The data side: the offline twin builds its whole plan (tasks of the split or
            // task set, every guard with its artifacts, prompts).
            let seed = entry.get("offline_seed").and_then(|s| s.as_integer());
            let off = cfg.offline(faults, seed.map(|s| s as u64));
            let opts = RunOptions {
                data_dir: Some(data.clone()),
                project_dir: Some(workspace_root()),
                ..Default::default()
            };
            let plan = RunPlan::build(off, &opts).unwrap_or_else(|e| panic!("{at}: {e}"));
            let tasks = plan.domains[0].tasks.len();
            let expected = match (cfg.run.domain.as_str(), cfg.run.split.as_str()) {
                _ if cfg.run.task_set.is_some() => 20,
                ("airline", "base") => 50,
                (_, "base") => 114,
                (_, "test") => 40,
                other => panic!("{at}: unexpected split {other:?}"),
            };
            assert_eq!(tasks, expected, "{at}");
            assert_eq!(plan.planned(), tasks * 4 * cfg.grid.guards.len(), "{at}");
        }
    }
}

/// Each reproduction config through `tauguard run --dry-run`, as a researcher checks it before
/// spending: it plans every simulation, and every model is priced (from the catalog, since the
/// configs name provider ids), so the cost is a range, not unknown.
#[test]
fn every_config_dry_runs_to_a_priced_plan() {
    let Some(data) = tau2_dir() else { return };
    for name in experiments() {
        let dir = repro_dir().join(&name);
        let manifest = toml_file(&dir.join("manifest.toml"));
        for entry in manifest["config"].as_array().unwrap() {
            let path = dir.join(entry["file"].as_str().unwrap());
            let at = path.display().to_string();
            let (code, json, err) = tauguard(&[
                "run",
                "--dry-run",
                &at,
                "--data-dir",
                s(&data),
                "--format",
                "json",
            ]);
            assert_eq!(code, 0, "{at}: {err}");
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let cfg = RunConfig::load(&path).unwrap();
            let sims = v["simulations"].as_u64().unwrap();
            assert_eq!(
                sims % (4 * cfg.grid.guards.len() as u64),
                0,
                "{at}: {sims} simulations"
            );
            let (low, high) = (v["cost"]["low"].as_f64(), v["cost"]["high"].as_f64());
            assert!(
                low.is_some_and(|l| l > 0.0) && high > low,
                "{at}: cost {}",
                v["cost"]
            );
        }
    }
}

/// Runs `reproduce NAME --offline` on the first `n` tasks of each config into a temp dir;
/// returns (stdout, the out dir).
pub(crate) fn reproduce_offline(name: &str, n: &str) -> Option<(String, tempfile::TempDir)> {
    let data = tau2_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let md = tauguard_ok(&[
        "reproduce",
        name,
        "--offline",
        "--num-tasks",
        n,
        "--data-dir",
        s(&data),
        "--out",
        s(&out),
    ]);
    for file in ["table.md", "table.csv", "table.json", "report/report.md"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    // Each run directory gets its sidecar, as after `tauguard run`.
    let runs: Vec<_> = std::fs::read_dir(out.join("runs")).unwrap().collect();
    assert!(!runs.is_empty());
    for run in runs {
        let records = run.unwrap().path().join("records.jsonl");
        assert!(
            tauguard_metrics::fresh_manifest(&records).is_some(),
            "no fresh sidecar beside {}",
            records.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("table.md")).unwrap(),
        md.trim_end_matches('\n').to_string() + "\n"
    );
    Some((md, tmp))
}

/// The tidy CSV's rows as maps.
pub(crate) fn csv_rows(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(dir.join("out/table.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

pub(crate) fn cell<'a>(
    rows: &'a [std::collections::HashMap<String, String>],
    keys: &[(&str, &str)],
) -> &'a std::collections::HashMap<String, String> {
    rows.iter()
        .find(|r| keys.iter().all(|(k, v)| r[*k] == *v))
        .unwrap_or_else(|| panic!("no row {keys:?}"))
}

pub(crate) fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: `{s}`"))
}

#[test]
fn policyguard_main_offline_prints_its_table_beside_the_published_numbers() {
    let Some((md, tmp)) = reproduce_offline("policyguard-main", "4") else {
        return;
    };
    assert!(
        md.starts_with("### PolicyGuard Table 2: Main results on airline — first 4 tasks"),
        "{md}"
    );
    assert_contains_all(
        &md,
        &[
            "simulated models — not a paper result",
            "ours / published / ours − published",
        ],
    );
    for agent in ["GPT 5.4", "Sonnet 4.6", "Gemini 2.5 Pro"] {
        for guard in ["baseline", "toolguard", "pg-checklist"] {
            assert!(
                md.contains(&format!("| airline | {agent} | {guard} |")),
                "{agent} {guard}: {md}"
            );
        }
    }
    // Published values are visible, with the difference column beside them.
    assert_contains_all(
        &md,
        &[
            "/ 0.460 /",
            "/ 0.958 /",
            "/ +0.120 /",
            "/ +0.060 /",
            "/ −0.140 /",
        ],
    );
    let rows = csv_rows(tmp.path());
    assert!(rows.iter().all(|r| r["simulated"] == "true"));
    let base = cell(
        &rows,
        &[
            ("agent", "GPT 5.4"),
            ("guard", "baseline"),
            ("metric", "pass"),
            ("slice", "all"),
        ],
    );
    assert_eq!(base["published"], "0.460000");
    let (ours, diff) = (num(&base["ours"]), num(&base["diff"]));
    assert!((ours - 0.46 - diff).abs() < 1e-6, "{base:?}");
    // A cell the paper states no number for has none, and no difference.
    let none = cell(
        &rows,
        &[
            ("agent", "GPT 5.4"),
            ("guard", "toolguard"),
            ("metric", "pass"),
            ("slice", "pv"),
        ],
    );
    assert_eq!(
        (none["published"].as_str(), none["diff"].as_str()),
        ("", "")
    );
    assert!(!none["ours"].is_empty());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("out/table.json")).unwrap())
            .unwrap();
    assert_eq!(json["simulated"], true);
    let cell_rows = rows.iter().filter(|r| r["guard"] != "floor").count();
    assert_eq!(json["cells"].as_array().unwrap().len(), cell_rows);
}

#[test]
fn policyguide_main_offline_adds_the_mean_over_three_domains() {
    let Some((md, tmp)) = reproduce_offline("policyguide-main", "3") else {
        return;
    };
    assert_contains_all(
        &md,
        &[
            "PolicyGuide Table 1: Main results on the base splits",
            "simulated models — not a paper result",
        ],
    );
    for domain in ["airline", "retail", "telecom"] {
        assert!(
            md.contains(&format!("| {domain} | GPT 5.4 | policyguide |")),
            "{md}"
        );
    }
    // ToolGuard runs on airline only, so it has no mean row.
    assert!(md.contains("| unweighted mean over 3 domains | GPT 5.4 | policyguide |"));
    assert!(!md.contains("| unweighted mean over 3 domains | GPT 5.4 | toolguard |"));
    for shown in ["/ 0.620 /", "/ 0.866 /", "/ 0.420 /"] {
        assert!(md.contains(shown), "{shown} missing: {md}");
    }
    let rows = csv_rows(tmp.path());
    let mean = cell(
        &rows,
        &[
            ("domain", "mean"),
            ("guard", "baseline"),
            ("k", "4"),
            ("slice", "all"),
        ],
    );
    assert_eq!(mean["published"], "0.420000");
    let per_domain: Vec<f64> = ["airline", "retail", "telecom"]
        .iter()
        .map(|d| {
            num(&cell(
                &rows,
                &[
                    ("domain", d),
                    ("guard", "baseline"),
                    ("k", "4"),
                    ("slice", "all"),
                ],
            )["ours"])
        })
        .collect();
    let expected = per_domain.iter().sum::<f64>() / 3.0;
    assert!((num(&mean["ours"]) - expected).abs() < 1e-6, "{mean:?}");
}

/// A quick look (`--num-tasks`) without `--out` writes `results/<NAME>-quick`, never over the
/// committed `results/<NAME>` tables.
#[test]
fn a_quick_look_writes_beside_the_committed_reproduction() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tmp.path())
        .args(["--project-dir", workspace_root().to_str().unwrap()])
        .args([
            "reproduce",
            "dialogue-ablation",
            "--offline",
            "--num-tasks",
            "1",
        ])
        .args(["--data-dir", s(&data)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tmp.path().join("results");
    assert!(results.join("dialogue-ablation-quick/table.md").is_file());
    assert!(!results.join("dialogue-ablation").exists());
}
