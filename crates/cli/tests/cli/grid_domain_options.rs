//! A domain's options as a grid axis through the binary (`[grid.domain_options.<domain>]`): an
//! offline grid over three banking_knowledge retrieval variants is one cell per variant — the
//! dry run counts them, records carry distinct cell ids and hashes with the variant in their
//! settings, the report has one row per variant labelled by it, a resume finds nothing left,
//! two shards merge into the single-process run —; a one-value axis is the
//! `[run.domain_options]` shorthand (the same cell ids and hashes, and no suffix); bad input on
//! the axis exits 2 naming its key; and the floor agents play alike under every value of every
//! declared option, which is why `report` computes a domain's floors once.

use crate::shard_merge::{merge, normalised, report, run, run_shards};
use crate::support::{s, tauguard_ok, tauguard_status as tauguard};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tauguard_orchestrator::read_records;
use tauguard_testkit::{SimConfig, tau2_dir};

const VARIANTS: [&str; 3] = ["bm25", "grep_only", "no_knowledge"];

/// banking_knowledge, 3 tasks, the faulty sim agent, under `tail` (the options).
fn config(dir: &Path, data: &Path, name: &str, tail: &str) -> PathBuf {
    SimConfig::new("bk-variants", "banking_knowledge", data)
        .seed(300)
        .run_line("num_tasks = 3")
        .faults("skip_confirmation = 0.3\ncorrupt_argument = 0.3")
        .tail(tail)
        .write(&dir.join(name))
}

fn axis(values: &[&str]) -> String {
    let list: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    format!(
        "[grid.domain_options.banking_knowledge]\nretrieval = [{}]",
        list.join(", ")
    )
}

fn id(variant: &str) -> String {
    format!("banking_knowledge|sim-agent|baseline|retrieval={variant}")
}

/// cell id → cell hash of a run directory's records.
fn cells(dir: &Path) -> BTreeMap<String, String> {
    read_records(&dir.join("records.jsonl"))
        .unwrap()
        .into_iter()
        .map(|r| (r.cell_id, r.cell_hash))
        .collect()
}

#[test]
fn a_grid_over_retrieval_variants_runs_reports_resumes_and_merges_per_variant() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &data, "grid.toml", &axis(&VARIANTS));

    let stdout = tauguard_ok(&["run", s(&cfg), "--dry-run"]);
    assert!(stdout.contains("3 cells, 9 simulations"), "{stdout}");
    for v in VARIANTS {
        let row: Vec<&str> = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(id(v).as_str()))
            .unwrap_or_else(|| panic!("no dry-run row for {v}:\n{stdout}"))
            .split_whitespace()
            .collect();
        assert_eq!(row.last(), Some(&"3"), "{v}: 3 simulations: {row:?}");
    }

    let single = tmp.path().join("single");
    run(&cfg, &single, &[]);
    let records = read_records(&single.join("records.jsonl")).unwrap();
    assert_eq!(records.len(), 9);
    let mut per_cell: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &records {
        *per_cell.entry(r.cell_id.as_str()).or_default() += 1;
        let v = r.cell_id.rsplit('=').next().unwrap();
        assert_eq!(
            r.cell["benchmark.retrieval"],
            format!("retrieval = {v}; upstream's default is alltools"),
            "{}: its settings name its variant",
            r.cell_id
        );
    }
    let want: BTreeMap<String, usize> = VARIANTS.iter().map(|v| (id(v), 3)).collect();
    let got: BTreeMap<String, usize> = per_cell
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
    assert_eq!(got, want);
    let hashes: BTreeSet<String> = cells(&single).into_values().collect();
    assert_eq!(hashes.len(), 3, "one cell hash per variant");

    // One group per variant, told apart by the variant alone.
    let json: serde_json::Value = serde_json::from_str(&report(&single, "json")).unwrap();
    let groups = json.as_array().unwrap();
    assert_eq!(groups.len(), 3, "{json:#}");
    let labelled: BTreeSet<String> = groups
        .iter()
        .map(|g| {
            assert_eq!(g["n_simulations"], 3, "{g:#}");
            g["cell"]["benchmark.retrieval"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(labelled.len(), 3, "{labelled:?}");
    let md = report(&single, "md");
    for v in VARIANTS {
        let row = format!("| banking_knowledge | sim-agent | baseline [retrieval={v}] |");
        assert!(md.contains(&row), "no row `{row}`:\n{md}");
    }

    // Resumed, nothing is left; two shards merge into the single-process run.
    let stdout = tauguard_ok(&["run", s(&cfg), "--out", s(&single), "--resume"]);
    assert!(stdout.contains("9 already complete, 0 run now"), "{stdout}");
    let shards = run_shards(tmp.path(), &cfg, 2);
    let merged = tmp.path().join("merged");
    let (code, out, err) = merge(&[&shards[0], &shards[1]], &merged);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("merged 9 records"), "{out}");
    assert_eq!(normalised(&merged), normalised(&single));
    assert_eq!(report(&merged, "json"), report(&single, "json"));
}

/// A one-value axis is the run option: same cell ids (no suffix) and hashes, as with
/// `grid.seeds = [s]` for `run.seed = s`. A config without the axis is untouched by it: its
/// cells are those of the run option, which no code path of the axis reaches.
#[test]
fn a_one_value_axis_gives_the_cells_of_the_run_option() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let by_run = config(
        tmp.path(),
        &data,
        "run.toml",
        "[run.domain_options.banking_knowledge]\nretrieval = \"grep_only\"",
    );
    let by_grid = config(tmp.path(), &data, "grid.toml", &axis(&["grep_only"]));
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&by_run, &a, &[]);
    run(&by_grid, &b, &[]);
    let cells_a = cells(&a);
    assert_eq!(
        cells_a.keys().collect::<Vec<_>>(),
        ["banking_knowledge|sim-agent|baseline"]
    );
    assert_eq!(cells_a, cells(&b));
    // Everything but the config hash (the configs differ) is the same.
    let strip_config = |dir: &Path| -> Vec<serde_json::Value> {
        normalised(dir)
            .into_values()
            .map(|mut v| {
                v.as_object_mut().unwrap().remove("config_hash");
                v
            })
            .collect()
    };
    assert_eq!(strip_config(&a), strip_config(&b));
}

#[test]
fn bad_domain_option_axes_are_refused_naming_their_key() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("no-data");
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "banking_knowledge",
            "[run.domain_options.banking_knowledge]\nretrieval = \"bm25\"\n\
             [grid.domain_options.banking_knowledge]\nretrieval = [\"grep_only\", \"full_kb\"]",
            &[
                "at `grid.domain_options.banking_knowledge.retrieval`",
                "`run.domain_options.banking_knowledge.retrieval`",
            ],
        ),
        (
            "banking_knowledge",
            &axis(&["bm25", "bm25_reranker"]),
            &[
                "at `grid.domain_options.banking_knowledge.retrieval[1]`",
                "`bm25_reranker`",
                "(valid: no_knowledge, full_kb, golden_retrieval, bm25, bm25_grep, grep_only, openai_embeddings, openai_embeddings_grep, qwen_embeddings, qwen_embeddings_grep)",
            ],
        ),
        (
            "airline",
            &axis(&["bm25"]),
            &[
                "at `grid.domain_options.banking_knowledge`",
                "not a domain of the run (domains: airline)",
            ],
        ),
        (
            "airline",
            "[grid.domain_options.airline]\nretrieval = [\"bm25\"]",
            &[
                "at `grid.domain_options.airline.retrieval`",
                "has no option `retrieval` (options: none)",
            ],
        ),
        (
            "banking_knowledge",
            &axis(&["bm25", "bm25"]),
            &["at `grid.domain_options.banking_knowledge.retrieval[1]`: `bm25` is listed twice"],
        ),
    ];
    for (i, (domain, tail, expected)) in cases.iter().enumerate() {
        let cfg = SimConfig::new("bad", domain, &data)
            .tail(tail)
            .write(&tmp.path().join(format!("bad-{i}.toml")));
        let out = tmp.path().join(format!("out-{i}"));
        let (code, _, err) = tauguard(&["run", s(&cfg), "--out", s(&out)]);
        assert_eq!(code, 2, "case {i}: {err}");
        assert!(err.contains(s(&cfg)), "case {i} names the file: {err}");
        for e in *expected {
            assert!(err.contains(e), "case {i}: `{e}` missing from: {err}");
        }
        assert!(!out.exists(), "case {i}: nothing is written");
    }
    // An empty axis is no axis: refused too, with the values it could list.
    let cfg = SimConfig::new("bad", "banking_knowledge", &data)
        .tail(&axis(&[]))
        .write(&tmp.path().join("empty.toml"));
    let (code, _, err) = tauguard(&["run", s(&cfg), "--dry-run"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("at `grid.domain_options.banking_knowledge.retrieval`: list at least one value (valid: no_knowledge,"),
        "{err}"
    );
}

/// Why `report` computes a domain's floors once, under its default options, whatever variants
/// its records ran: for every option a domain declares, the floor agents play every task alike
/// — the same reward and the same conversation (roles, texts, tool calls) — under each of its
/// values. Run as one grid over the option's values and both floor agents.
#[test]
fn the_floor_agents_play_alike_under_every_value_of_every_domain_option() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for def in tauguard_env::registry::DOMAINS {
        for option in def.options() {
            let agents: String = tauguard_orchestrator::FLOOR_AGENTS
                .iter()
                .map(|a| format!("[[grid.agents]]\nprovider = \"sim\"\nmodel = \"{a}\"\n"))
                .collect();
            // A value whose `KB_search` ranks by embeddings needs an embedding model, which
            // this offline test has none of; the floor agents never search (asserted below),
            // and such a value's toolkit is one of the played values' (the env suite checks the
            // schemas), so it plays as they do.
            let dir = tauguard_env::DataDir::resolve(Some(&data)).unwrap();
            let offline: Vec<&str> = option
                .values
                .iter()
                .copied()
                .filter(|v| {
                    let options = [(option.name.to_string(), v.to_string())].into();
                    let loaded = tauguard_env::DomainData::load_with(&dir, def.name(), &options);
                    loaded.unwrap().base.dense().is_none()
                })
                .collect();
            let values: Vec<String> = offline.iter().map(|v| format!("\"{v}\"")).collect();
            let text = format!(
                "[run]\nname = \"floors\"\ndomain = \"{}\"\nsplit = \"*\"\nconcurrency = 2\n\
                 data_dir = \"{}\"\n[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
                 {agents}[grid.domain_options.{}]\n{} = [{}]\n",
                def.name(),
                data.display(),
                def.name(),
                option.name,
                values.join(", ")
            );
            let cfg = tmp
                .path()
                .join(format!("{}-{}.toml", def.name(), option.name));
            std::fs::write(&cfg, text).unwrap();
            let out = tmp.path().join(format!("{}-{}", def.name(), option.name));
            run(&cfg, &out, &[]);
            // (agent, task) → value → what happened.
            let mut played: BTreeMap<(String, String), BTreeMap<String, serde_json::Value>> =
                BTreeMap::new();
            for r in read_records(&out.join("records.jsonl")).unwrap() {
                let value = r.cell_id.rsplit('=').next().unwrap().to_string();
                let talk: Vec<serde_json::Value> = serde_json::to_value(&r.messages)
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| serde_json::json!([m["role"], m["content"], m["tool_calls"]]))
                    .collect();
                assert!(
                    !talk.iter().any(|m| m[2].to_string().contains("KB_search")),
                    "a floor agent searched the knowledge base: {}",
                    r.task_id
                );
                let what = serde_json::json!({"reward": r.reward, "talk": talk});
                played
                    .entry((r.agent_model.clone(), r.task_id.clone()))
                    .or_default()
                    .insert(value, what);
            }
            assert!(!played.is_empty());
            for ((agent, task), by_value) in &played {
                assert_eq!(by_value.len(), offline.len(), "{agent} {task}");
                let first = by_value.values().next().unwrap();
                for (value, what) in by_value {
                    assert_eq!(
                        what,
                        first,
                        "{}: {agent} on {task} plays differently under {}={value}",
                        def.name(),
                        option.name
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no registered domain declares an option");
}
