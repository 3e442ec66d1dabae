//! `tauguard reproduce`: the papers' experiments under `configs/repro/` load, their configs
//! validate and plan without a key, their published numbers are cited to a paper table of a
//! seed that states them, and an offline reproduction prints its table — with the floors of
//! its domains — beside the published numbers with the difference per cell and writes it as
//! Markdown, tidy CSV and JSON.

use crate::support::tauguard_status as tauguard;
use std::path::{Path, PathBuf};
use tauguard_metrics::repro::{Cite, Published, quote_digits, quote_value};
use tauguard_orchestrator::config::RunConfig;
use tauguard_orchestrator::plan::RunPlan;
use tauguard_orchestrator::runner::RunOptions;
use tauguard_testkit::{skip, tau2_candidate, tau2_dir, workspace_root};

fn repro_dir() -> PathBuf {
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
    let (code, out, err) = tauguard(&["reproduce", "--list"]);
    assert_eq!(code, 0, "{err}");
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
        let faults: tauguard_orchestrator::offline::FaultProfile =
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
                data.to_str().unwrap(),
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

/// The experiments as the binary's registry lists them (`reproduce --list`).
fn registry() -> Vec<String> {
    let (code, out, err) = tauguard(&["reproduce", "--list"]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// The numbers a text states (`0.35`, `24`), as a cited note is checked against its seed.
fn numbers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars().chain([' ']) {
        if ch.is_ascii_digit() || (ch == '.' && !cur.is_empty()) {
            cur.push(ch);
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches('.').to_string());
            cur.clear();
        }
    }
    out
}

/// Every published number of every experiment in the registry is cited to a paper table (or,
/// where the seed names none, a section) of a seed, and the seed states it: the quote's
/// digits and the table's name are both in the cited seed file. Notes with numbers are held
/// to the same rule.
#[test]
fn every_published_number_is_cited_to_a_seed_table() {
    let seeds = tau2_candidate().parent().map(|p| p.join("seeds")).unwrap();
    if !seeds.is_dir() {
        skip(&format!("the seeds are not at {}", seeds.display()));
        return;
    }
    let seed_text = |seed: &str, at: &str| -> String {
        std::fs::read_to_string(seeds.join(seed))
            .unwrap_or_else(|e| panic!("{at}: cited seed `{seed}` cannot be read: {e}"))
    };
    let check_cite = |c: &Cite, at: &str| -> String {
        let text = seed_text(&c.seed, at);
        assert!(
            c.table.is_some() || c.section.is_some(),
            "{at}: cites no table"
        );
        for place in c.table.iter().chain(&c.section) {
            assert!(
                text.contains(place.as_str()),
                "{at}: `{place}` is not in seed {}",
                c.seed
            );
        }
        text
    };
    let names = registry();
    assert!(names.len() >= 17, "{names:?}");
    let mut checked = 0;
    for name in &names {
        let path = repro_dir().join("published").join(format!("{name}.toml"));
        let raw = std::fs::read_to_string(&path).unwrap();
        assert!(
            !raw.contains("papers.md") && !raw.contains("digest"),
            "{}: cites the digest, not the papers' tables",
            path.display()
        );
        let published: Published =
            toml::from_str(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        published
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for c in &published.cells {
            let at = format!(
                "{}: {} / {} / {} `{}`",
                path.display(),
                c.domain,
                c.agent,
                c.guard,
                c.quote
            );
            let text = check_cite(&c.cite, &at);
            let digits = quote_digits(&c.quote);
            assert!(
                text.contains(&digits),
                "{at}: `{digits}` is not in seed {}",
                c.cite.seed
            );
            assert_eq!(quote_value(&c.quote), Some(c.value), "{at}");
            checked += 1;
        }
        for n in &published.notes {
            let at = format!("{}: note `{}`", path.display(), n.text);
            let text = check_cite(&n.cite, &at);
            for x in numbers_in(&n.text) {
                assert!(
                    text.contains(&x),
                    "{at}: {x} is not in seed {}",
                    n.cite.seed
                );
            }
        }
    }
    assert!(checked >= 80, "only {checked} published cells");
}

/// Every experiment in the registry, offline on its first task: its table has the floors of
/// its domains and carries every published cell with its citation, and the committed
/// `results/<name>/table.md` shows the floors and names the same source tables.
#[test]
fn every_experiment_renders_floors_and_its_published_numbers() {
    if tau2_dir().is_none() {
        return;
    }
    for name in registry() {
        let Some((md, tmp)) = reproduce_offline(&name, "1") else {
            return;
        };
        assert!(md.contains("Floor Pass^1 — trivial agents"), "{name}: {md}");
        assert!(md.contains("| refuse-all |"), "{name}: {md}");
        assert!(md.contains("| gold-no-procedure |"), "{name}: {md}");
        let path = repro_dir().join("published").join(format!("{name}.toml"));
        let published: Published =
            toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join("out/table.json")).unwrap(),
        )
        .unwrap();
        let with_published: Vec<&serde_json::Value> = json["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !c["published"].is_null())
            .collect();
        assert_eq!(
            with_published.len(),
            published.cells.len(),
            "{name}: every published cell has its place"
        );
        assert!(
            with_published.iter().all(|c| c["cite"].is_string()),
            "{name}"
        );
        assert!(!json["floors"].as_array().unwrap().is_empty(), "{name}");
        let committed = workspace_root()
            .join("results")
            .join(&name)
            .join("table.md");
        let committed = std::fs::read_to_string(&committed)
            .unwrap_or_else(|e| panic!("{}: {e}", committed.display()));
        assert!(
            committed.contains("Floor Pass^1 — trivial agents"),
            "results/{name}/table.md has no floors"
        );
        for (cite, _) in published.cited() {
            assert!(md.contains(&cite), "{name}: {cite} not named");
            assert!(
                committed.contains(&cite),
                "results/{name}/table.md does not name {cite}: regenerate it"
            );
        }
    }
}

/// Runs `reproduce NAME --offline` on the first `n` tasks of each config into a temp dir;
/// returns (stdout, the out dir).
fn reproduce_offline(name: &str, n: &str) -> Option<(String, tempfile::TempDir)> {
    let data = tau2_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let (code, md, err) = tauguard(&[
        "reproduce",
        name,
        "--offline",
        "--num-tasks",
        n,
        "--data-dir",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for file in ["table.md", "table.csv", "table.json", "report/report.md"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    // Each run directory gets its sidecar, as after `tauguard run`.
    let runs: Vec<_> = std::fs::read_dir(out.join("runs")).unwrap().collect();
    assert!(!runs.is_empty());
    for run in runs {
        let records = run.unwrap().path().join("records.jsonl");
        assert!(
            tauguard_metrics::sidecar::fresh_manifest(&records).is_some(),
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
fn csv_rows(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
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

fn cell<'a>(
    rows: &'a [std::collections::HashMap<String, String>],
    keys: &[(&str, &str)],
) -> &'a std::collections::HashMap<String, String> {
    rows.iter()
        .find(|r| keys.iter().all(|(k, v)| r[*k] == *v))
        .unwrap_or_else(|| panic!("no row {keys:?}"))
}

fn num(s: &str) -> f64 {
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
    assert!(md.contains("simulated models — not a paper result"), "{md}");
    assert!(md.contains("ours / published / ours − published"), "{md}");
    for agent in ["GPT 5.4", "Sonnet 4.6", "Gemini 2.5 Pro"] {
        for guard in ["baseline", "toolguard", "pg-checklist"] {
            assert!(
                md.contains(&format!("| airline | {agent} | {guard} |")),
                "{agent} {guard}: {md}"
            );
        }
    }
    // Published values are visible, with the difference column beside them.
    for shown in [
        "/ 0.460 /",
        "/ 0.958 /",
        "/ +0.120 /",
        "/ +0.060 /",
        "/ −0.140 /",
    ] {
        assert!(md.contains(shown), "{shown} missing: {md}");
    }
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
    assert_eq!(json["cells"].as_array().unwrap().len(), rows.len());
}

#[test]
fn policyguide_main_offline_adds_the_mean_over_three_domains() {
    let Some((md, tmp)) = reproduce_offline("policyguide-main", "3") else {
        return;
    };
    assert!(
        md.contains("PolicyGuide Table 1: Main results on the base splits"),
        "{md}"
    );
    assert!(md.contains("simulated models — not a paper result"), "{md}");
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
        .args(["--data-dir", data.to_str().unwrap()])
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

/// PolicyGuard Table 7 offline: the per-call figures in both views, row by guard, beside the
/// published verdict-view numbers (which left the Table 2 rows), with the floors under it.
#[test]
fn policyguard_per_call_offline_shows_both_views_beside_table_7() {
    let Some((md, tmp)) = reproduce_offline("policyguard-per-call", "4") else {
        return;
    };
    assert!(
        md.starts_with("### PolicyGuard Table 7: Per-call verdict confusion"),
        "{md}"
    );
    assert!(
        md.contains("| Domain | Agent (row; played by sim-agent) | Guard | PV rec | Block% | Runtime PV rec | Runtime Block% |"),
        "{md}"
    );
    for shown in ["/ 100.0% /", "/ 94.7% /", "/ 44.1% /", "/ 59.0% /"] {
        assert!(md.contains(shown), "{shown} missing: {md}");
    }
    assert!(
        md.contains("- PolicyGuard Table 7 (seed 000_183cb6c87febe71a.txt): 7 cells"),
        "{md}"
    );
    assert!(md.contains("| airline | refuse-all | 4 |"), "{md}");
    let rows = csv_rows(tmp.path());
    let pg = cell(
        &rows,
        &[
            ("agent", "Gemini 2.5 Pro"),
            ("guard", "pg-checklist"),
            ("metric", "pv_recall"),
        ],
    );
    assert_eq!(pg["published"], "0.947000");
    assert!(!pg["ours"].is_empty(), "{pg:?}");
    let runtime = cell(
        &rows,
        &[
            ("agent", "GPT 5.4"),
            ("guard", "toolguard"),
            ("metric", "runtime_block_rate"),
        ],
    );
    assert!(!runtime["ours"].is_empty(), "{runtime:?}");
    assert_eq!(runtime["published"], "");
    // The floors are rows of the tidy CSV too, one per domain, floor agent and slice.
    let floors: Vec<_> = rows.iter().filter(|r| r["guard"] == "floor").collect();
    assert_eq!(floors.len(), 6, "{floors:?}");
}

/// PolicyGuide Table 12 offline: McNemar p per domain and pooled over the three domains; the
/// published upper bounds sit in the pooled row and are never subtracted.
#[test]
fn policyguide_significance_offline_pools_mcnemar_over_domains() {
    let Some((md, tmp)) = reproduce_offline("policyguide-significance", "3") else {
        return;
    };
    assert!(md.contains("/ p<10^{-8} / — |"), "{md}");
    assert!(md.contains("/ p<10^{-12} / — |"), "{md}");
    let rows = csv_rows(tmp.path());
    let pooled = cell(
        &rows,
        &[
            ("domain", "pooled"),
            ("guard", "policyguide"),
            ("column", "McNemar p vs ReAct"),
        ],
    );
    let p = num(&pooled["ours"]);
    assert!((0.0..=1.0).contains(&p), "{pooled:?}");
    assert_eq!(
        (pooled["quote"].as_str(), pooled["diff"].as_str()),
        ("p<10^{-8}", "")
    );
    // A guard against itself has no test.
    let own = cell(
        &rows,
        &[
            ("domain", "airline"),
            ("guard", "baseline"),
            ("column", "McNemar p vs ReAct"),
        ],
    );
    assert_eq!(own["ours"], "");
    for d in ["airline", "retail", "telecom"] {
        let c = cell(
            &rows,
            &[
                ("domain", d),
                ("guard", "policyguide"),
                ("column", "McNemar p vs ReAct"),
            ],
        );
        assert!((0.0..=1.0).contains(&num(&c["ours"])), "{c:?}");
    }
}
