//! The offline `sim` family as a provider like any other, through the binary: a model
//! catalog alias whose provider is `sim` resolves, is checked and runs exactly as the same
//! model table written in the config (same cells, hashes and records); a sim alias naming a
//! model the family lacks fails at its key as a written table does; an unknown provider lists
//! every built-in name, `sim` among them; and the name `sim` cannot be configured as an HTTP
//! provider.

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status as tauguard, written};
use std::path::Path;
use tauguard_llm::BUILTIN_PROVIDERS;
use tauguard_testkit::tau2_dir;

/// A record with when it ran removed (not what happened in it).
fn strip(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for k in ["wall_seconds", "started_at", "timestamp", "latency_seconds"] {
                map.remove(k);
            }
            map.values_mut().for_each(strip);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("records.jsonl")).unwrap();
    let mut out: Vec<serde_json::Value> = text
        .lines()
        .map(|l| {
            let mut v = serde_json::from_str(l).unwrap();
            strip(&mut v);
            v
        })
        .collect();
    out.sort_by_key(|v| {
        (
            v["cell_id"].to_string(),
            v["task_id"].to_string(),
            v["trial"].to_string(),
        )
    });
    out
}

/// A one-domain grid of two tasks whose agents are `agents` (TOML after `[grid]`).
fn config(data: &Path, agents: &str) -> String {
    format!(
        "[run]\nname = \"sim-provider\"\nnum_tasks = 2\ndata_dir = \"{}\"\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
         [grid]\ndomains = [\"airline\"]\nguards = [\"baseline\", \"pg-checklist\"]\n{agents}",
        data.display()
    )
}

#[test]
fn a_sim_catalog_alias_resolves_and_runs_as_its_written_table() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let catalog = written(
        tmp.path(),
        "models.toml",
        "[models.careful]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
         [models.floor]\nprovider = \"sim\"\nmodel = \"refuse-all\"\n\
         [models.wizard]\nprovider = \"sim\"\nmodel = \"sim-wizard\"\n",
    );
    let by_alias = written(
        tmp.path(),
        "alias.toml",
        config(&data, "agents = [\"careful\", \"floor\"]\n"),
    );
    let by_table = written(
        tmp.path(),
        "written.toml",
        config(
            &data,
            "[[grid.agents]]\nname = \"careful\"\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [[grid.agents]]\nname = \"floor\"\nprovider = \"sim\"\nmodel = \"refuse-all\"\n",
        ),
    );
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    tauguard_ok(&["run", s(&by_alias), "--models", s(&catalog), "--out", s(&a)]);
    tauguard_ok(&["run", s(&by_table), "--out", s(&b)]);
    let (ra, rb) = (records(&a), records(&b));
    assert_eq!(ra.len(), 2 * 2 * 2, "two agents × two guards × two tasks");
    assert_eq!(ra, rb, "the alias runs as the table it stands for");
    let cells: std::collections::BTreeSet<&str> =
        ra.iter().map(|r| r["cell_id"].as_str().unwrap()).collect();
    assert!(cells.contains("airline|floor|pg-checklist"), "{cells:?}");
    // The paired verifier of a sim agent is the sim verifier: no model is called.
    assert!(ra.iter().all(|r| r["cell"]["agent.provider"] == "sim"));

    // A sim alias naming a model the family lacks fails at its key, naming the catalog.
    std::fs::write(&by_alias, config(&data, "agents = [\"wizard\"]\n")).unwrap();
    let (code, _, err) = tauguard(&["run", "--dry-run", s(&by_alias), "--models", s(&catalog)]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(
        &err,
        &[
            "at `grid.agents[0].model`",
            "sim-wizard",
            "refuse-all",
            "models.toml",
        ],
    );
}

#[test]
fn an_unknown_provider_lists_every_builtin_name_and_sim_cannot_be_configured() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = written(
        tmp.path(),
        "c.toml",
        config(
            &data,
            "[[grid.agents]]\nprovider = \"nope\"\nmodel = \"x\"\n",
        ),
    );
    let (code, _, err) = tauguard(&["run", "--dry-run", s(&cfg)]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(
        &err,
        &["at `grid.agents[0].provider`", "unknown provider `nope`"],
    );
    for (name, _) in BUILTIN_PROVIDERS {
        assert!(err.contains(name), "{name}: {err}");
    }
    let builtin: Vec<&str> = BUILTIN_PROVIDERS.iter().map(|(n, _)| *n).collect();
    assert!(
        err.contains(&format!("built-in: {}", builtin.join(", "))),
        "{err}"
    );

    std::fs::write(
        &cfg,
        config(
            &data,
            "[[grid.agents]]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [llm.providers.sim]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        ),
    )
    .unwrap();
    let (code, _, err) = tauguard(&["run", "--dry-run", s(&cfg)]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["at `llm`", "provider `sim`", "offline sim family"]);
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "nothing written"
    );
}
