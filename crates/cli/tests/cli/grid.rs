//! Grids end to end through the binary: an offline grid over two domains × two agents (the
//! sim agent under two fault profiles) × three guards runs and reports one group per cell;
//! `--dry-run` prints its cells, simulations and a zero cost without writing anything, and a
//! grid of models.toml aliases gets a non-zero cost range; an interrupted grid resumes to the
//! records of an uninterrupted run, and a grown grid (more seeds) is refused naming the key; the
//! shipped configs keep their cells: written as an explicit grid they give the same cell ids,
//! cell hashes and records.
//!
//! Records are compared with their timing fields removed (`wall_seconds`, `started_at`,
//! `timestamp`, `latency_seconds`: when a simulation ran, not what happened in it).

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status as tauguard, written};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tauguard_orchestrator::{SimKey, read_records};
use tauguard_testkit::{SimConfig, fixtures_dir, tau2_dir, workspace_root};

const TIMING: [&str; 4] = ["wall_seconds", "started_at", "timestamp", "latency_seconds"];

fn strip(v: &mut serde_json::Value, extra: &[&str]) {
    match v {
        serde_json::Value::Object(map) => {
            for k in TIMING.iter().chain(extra) {
                map.remove(*k);
            }
            map.values_mut().for_each(|v| strip(v, extra));
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| strip(v, extra)),
        _ => {}
    }
}

/// A run directory's records by key, timing (and `extra` keys) removed.
fn records(dir: &Path, extra: &[&str]) -> BTreeMap<SimKey, serde_json::Value> {
    let recs = read_records(&dir.join("records.jsonl")).unwrap();
    let n = recs.len();
    let out: BTreeMap<_, _> = recs
        .into_iter()
        .map(|r| {
            let key = (r.cell_id.clone(), r.task_id.clone(), r.trial);
            let mut v = serde_json::to_value(&r).unwrap();
            strip(&mut v, extra);
            (key, v)
        })
        .collect();
    assert_eq!(out.len(), n, "`{}` holds a simulation twice", dir.display());
    out
}

/// airline and retail (3 tasks each) × careful / sloppy sim agents × three guards.
fn two_by_two_by_three(data: &Path) -> String {
    format!(
        "[run]\nname = \"grid-test\"\nsplit = \"base\"\nnum_tasks = 3\ndata_dir = \"{}\"\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
         [grid]\ndomains = [\"airline\", \"retail\"]\nguards = [\"baseline\", \"toolguard\", \"pg-checklist\"]\n\
         [[grid.agents]]\nname = \"careful\"\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
         [[grid.agents]]\nname = \"sloppy\"\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
         [grid.agents.faults]\nskip_confirmation = 0.5\ncomply_forbidden = 0.5\n",
        data.display()
    )
}

#[test]
fn an_offline_grid_over_domains_agents_and_guards_runs_and_reports_per_cell() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = written(tmp.path(), "grid.toml", two_by_two_by_three(&data));
    let out = tmp.path().join("out");
    let stdout = tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    assert!(stdout.contains("36 simulations"), "{stdout}");
    let recs = read_records(&out.join("records.jsonl")).unwrap();
    assert_eq!(recs.len(), 2 * 2 * 3 * 3);
    let cells: BTreeSet<(&str, &str)> = recs
        .iter()
        .map(|r| (r.cell_id.as_str(), r.cell_hash.as_str()))
        .collect();
    assert_eq!(cells.len(), 12, "{cells:#?}");
    assert!(
        cells
            .iter()
            .any(|(id, _)| *id == "retail|sloppy|pg-checklist")
    );

    let report = tauguard_ok(&["report", s(&out), "--format", "json", "--no-floors"]);
    let groups: Vec<serde_json::Value> = serde_json::from_str(&report).unwrap();
    assert_eq!(groups.len(), 12, "one group per cell");
    let labels: BTreeSet<String> = groups
        .iter()
        .map(|g| {
            format!(
                "{} {} {} {}",
                g["domain"], g["agent_model"], g["guard"], g["cell"]
            )
        })
        .collect();
    assert_eq!(
        labels.len(),
        12,
        "labels must tell the cells apart: {labels:#?}"
    );
    assert!(groups.iter().all(|g| g["n_simulations"] == 3));
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = written(tmp.path(), "grid.toml", two_by_two_by_three(&data));
    let before = std::fs::read_dir(workspace_root().join("results"))
        .map(|d| d.count())
        .ok();
    let text = tauguard_ok(&["run", "--dry-run", s(&cfg)]);
    assert_contains_all(
        &text,
        &[
            "12 cells, 36 simulations",
            "retail|sloppy|pg-checklist",
            "cost: $0.00 – $0.00",
        ],
    );
    for role in ["agent", "user", "verifier/guard", "judge"] {
        assert!(text.contains(&format!("  {role} ")), "{role}: {text}");
    }
    let json = tauguard_ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["simulations"], 36);
    assert_eq!(v["cells"].as_array().unwrap().len(), 12);
    assert_eq!(v["cost"]["high"], 0.0);
    let pg = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "airline|careful|pg-checklist")
        .unwrap();
    assert_eq!(
        (pg["tasks"].as_u64(), pg["trials"].as_u64()),
        (Some(3), Some(1))
    );
    assert!(
        pg["calls_per_simulation"]["verifier"]["high"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let base = &v["cells"][0];
    assert_eq!(base["id"], "airline|careful|baseline");
    assert_eq!(base["calls_per_simulation"]["verifier"]["high"], 0.0);
    assert!(
        base["calls_per_simulation"]["agent"]["low"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // Nothing written: the temporary directory holds the config only, no results directory.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    assert!(!workspace_root().join("results/grid-test").exists());
    assert_eq!(
        std::fs::read_dir(workspace_root().join("results"))
            .map(|d| d.count())
            .ok(),
        before
    );

    // Models named by alias are priced from configs/models.toml; no key is needed to plan.
    let priced = format!(
        "[run]\nname = \"priced\"\nnum_tasks = 2\ndata_dir = \"{}\"\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
         [grid]\ndomains = [\"airline\"]\nagents = [\"gpt-5.4\", \"claude-sonnet-4.6\"]\n\
         guards = [\"baseline\", \"pg-checklist\"]\n",
        data.display()
    );
    std::fs::write(&cfg, priced).unwrap();
    let json = tauguard_ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (low, high) = (
        v["cost"]["low"].as_f64().unwrap(),
        v["cost"]["high"].as_f64().unwrap(),
    );
    assert!(0.0 < low && low < high, "{v}");
    assert_eq!(v["cells"][0]["id"], "airline|gpt-5.4|baseline");
    // Models named by provider id, as the reproduction configs do, are priced from the same
    // catalog; a price the config sets itself wins.
    let by_id = |own_price: &str| {
        format!(
            "[run]\nname = \"by-id\"\ndomain = \"airline\"\nnum_tasks = 2\ndata_dir = \"{}\"\n\
             [models.agent]\nprovider = \"openai\"\nmodel = \"gpt-5.4\"\n\
             [models.user]\nprovider = \"openai\"\nmodel = \"gpt-4.1-2025-04-14\"\n{own_price}",
            data.display()
        )
    };
    let cost_of = |text: String| {
        std::fs::write(&cfg, text).unwrap();
        let json = tauguard_ok(&["run", "--dry-run", s(&cfg), "--format", "json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        (v["cost"]["low"].as_f64(), v["cost"]["high"].as_f64())
    };
    let (low, high) = cost_of(by_id(""));
    let (low, high) = (low.expect("priced"), high.expect("priced"));
    assert!(0.0 < low && low < high, "{low} {high}");
    let own = "[llm.prices.\"gpt-5.4\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 1000.0\n";
    let (own_low, _) = cost_of(by_id(own));
    assert!(
        own_low.expect("priced") > 10.0 * low,
        "{own_low:?} vs {low}"
    );
    // An unknown alias is bad input naming the known ones.
    std::fs::write(
        &cfg,
        format!("[run]\nname = \"x\"\ndata_dir = \"{}\"\n[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n[grid]\ndomains = [\"airline\"]\nagents = [\"gpt-9\"]\n", data.display()),
    )
    .unwrap();
    let (code, _, err) = tauguard(&["run", "--dry-run", s(&cfg)]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["`grid.agents[0]`", "gpt-9", "gpt-5.4-mini"]);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

/// The fixture airline and the toy domain × baseline and block-all, two trials.
fn small_grid(dir: &Path, guards: &[&str]) -> PathBuf {
    SimConfig::grid_of("resume-grid", &["airline", "toy"], &fixtures_dir())
        .trials(2)
        .faults("skip_confirmation = 0.4\ncomply_forbidden = 0.4")
        .guards(guards)
        .write(&dir.join(format!("grid-{}.toml", guards.len())))
}

#[test]
fn an_interrupted_grid_resumes_to_the_uninterrupted_records() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = small_grid(tmp.path(), &["baseline", "block-all"]);
    let (whole, part) = (tmp.path().join("whole"), tmp.path().join("part"));
    for out in [&whole, &part] {
        tauguard_ok(&["run", s(&cfg), "--out", s(out)]);
    }
    let full = records(&whole, &[]);
    // (5 airline + 4 toy tasks) × 2 trials × 2 guards.
    assert_eq!(full.len(), 36);
    // Interrupt: drop every third record, across cells and domains.
    let path = part.join("records.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 3 != 1)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let stdout = tauguard_ok(&["run", s(&cfg), "--out", s(&part), "--resume"]);
    assert!(
        stdout.contains("36 simulations (24 already complete, 12 run now)"),
        "{stdout}"
    );
    assert_eq!(records(&part, &[]), full);

    // A grid with one more guard is another configuration: refused, naming the key.
    let grown = SimConfig::grid_of("resume-grid", &["airline", "toy"], &fixtures_dir())
        .trials(2)
        .faults("skip_confirmation = 0.4\ncomply_forbidden = 0.4")
        .guards(&["baseline", "block-all"])
        .grid_line("seeds = [300, 301]")
        .write(&tmp.path().join("grown.toml"));
    let (code, _, err) = tauguard(&["run", s(&grown), "--out", s(&part), "--resume"]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["grid.seeds", "another configuration"]);
    assert_eq!(records(&part, &[]), full, "a refused resume writes nothing");
}

/// `configs/<name>` with `num_tasks = 3` and one trial (cells do not depend on either).
fn shipped(name: &str, dir: &Path) -> String {
    let text = std::fs::read_to_string(workspace_root().join("configs").join(name)).unwrap();
    let data = tau2_dir().expect("checked by the caller");
    let text = text.replacen(
        "[run]\n",
        &format!("[run]\nnum_tasks = 3\ndata_dir = \"{}\"\n", data.display()),
        1,
    );
    let text = text.replace("trials = 4", "trials = 1");
    std::fs::write(dir.join(name), &text).unwrap();
    text
}

/// The same config with every axis written out as a grid.
fn explicit(text: &str) -> String {
    let agent_start = text.find("[models.agent]").unwrap();
    let agent_end = text.find("[models.user]").unwrap();
    let agent = text[agent_start..agent_end]
        .replace("[models.agent.faults]", "[grid.agents.faults]")
        .replace("[models.agent]", "[[grid.agents]]");
    let rest = format!("{}{}", &text[..agent_start], &text[agent_end..])
        .replace("domain = \"airline\"\n", "")
        .replace("seed = 300\n", "");
    let grid = "domains = [\"airline\"]\nseeds = [300]\nverifiers = [\"paired\"]\n";
    let rest = if rest.contains("[grid]\n") {
        rest.replace("[grid]\n", &format!("[grid]\n{grid}"))
    } else {
        format!("{rest}\n[grid]\n{grid}")
    };
    // Tables of the agent last, after every key of `[grid]`.
    format!("{rest}\n{agent}")
}

#[test]
fn shipped_configs_keep_their_cells_when_written_as_explicit_grids() {
    if tau2_dir().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for name in ["quickstart.toml", "guards-offline.toml"] {
        let short = shipped(name, tmp.path());
        let long = tmp.path().join(format!("explicit-{name}"));
        std::fs::write(&long, explicit(&short)).unwrap();
        let short = tmp.path().join(name);
        let dirs = [tmp.path().join("short"), tmp.path().join("long")];
        for (cfg, out) in [(&short, &dirs[0]), (&long, &dirs[1])] {
            let _ = std::fs::remove_dir_all(out);
            let (code, _, err) = tauguard(&["run", s(cfg), "--out", s(out)]);
            assert_eq!(code, 0, "{name}: {err}");
        }
        // The config hash covers how the config is written; cells and records do not.
        let (a, b) = (
            records(&dirs[0], &["config_hash"]),
            records(&dirs[1], &["config_hash"]),
        );
        assert!(!a.is_empty());
        assert_eq!(a, b, "{name}");
        let ids: BTreeSet<&str> = a.keys().map(|(c, _, _)| c.as_str()).collect();
        assert!(ids.contains("airline|sim-agent|baseline"), "{ids:?}");
    }
}

/// One cell of one simulation: the dry run says so in the singular ("1 cell, 1 simulation"),
/// as the progress and closing lines of the run itself do.
#[test]
fn a_one_simulation_config_is_counted_in_the_singular() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("one", "airline", &data)
        .trials(1)
        .run_line("num_tasks = 1")
        .write(&tmp.path().join("one.toml"));
    let text = tauguard_ok(&["run", "--dry-run", s(&cfg)]);
    assert!(text.contains("): 1 cell, 1 simulation; nothing"), "{text}");
    let out = tmp.path().join("out");
    let text = tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    assert_contains_all(
        &text,
        &[
            "1 simulation (0 already complete, 1 run now): ",
            ", 0 infrastructure errors, cost ",
        ],
    );
}

/// The shipped offline grid covers the four τ²-bench domains: its dry run validates and plans
/// banking_knowledge cells, and a cut-down run of it (3 tasks, 1 trial) reports every domain
/// with its floors.
#[test]
fn the_offline_grid_runs_four_domains_and_reports_their_floors() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(workspace_root().join("configs/grid-offline.toml"))
        .unwrap()
        .replacen(
            "[run]\n",
            &format!("[run]\ndata_dir = \"{}\"\n", data.display()),
            1,
        );
    let full_path = written(tmp.path(), "full.toml", full);
    let plan = tauguard_ok(&["run", "--dry-run", s(&full_path)]);
    assert_contains_all(
        &plan,
        &[": 24 cells,", "banking_knowledge|sim-agent|policyguide"],
    );

    shipped("grid-offline.toml", tmp.path());
    let out = tmp.path().join("out");
    let cfg = tmp.path().join("grid-offline.toml");
    tauguard_ok(&["run", s(&cfg), "--out", s(&out)]);
    let report = tauguard_ok(&["report", s(&out)]);
    for domain in ["airline", "retail", "telecom", "banking_knowledge"] {
        assert!(
            report.contains(&format!("| {domain} | gold-no-procedure |"))
                && report.contains(&format!("| {domain} | refuse-all |")),
            "{domain}: no floors in\n{report}"
        );
        assert!(
            report.contains(&format!("| {domain} | sim-agent | policyguide |")),
            "{domain}: no policyguide row in\n{report}"
        );
    }
}
