//! The comparability stamp from config to every output: `run --dry-run` prints it, records
//! carry it in their cell settings, and `report`, `view` and `export-tau2` flag a cell whose
//! benchmark definition is not upstream's, naming the items. A researcher's own agent
//! instruction (`[prompts]`) is the deviation exercised, beside the shipped quickstart, which
//! runs upstream's definition.

use crate::support::{assert_contains_all, s, tauguard_ok as ok, tauguard_status};
use crate::view::index;
use serde_json::Value;
use std::path::Path;
use tauguard_testkit::SimConfig;

#[test]
fn the_quickstart_is_comparable_and_says_so() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let out = ok(&[
        "run",
        "--dry-run",
        "configs/quickstart.toml",
        "--data-dir",
        s(&data),
    ]);
    assert!(
        out.contains("stamp (every cell): comparable with τ²-bench a2c0247"),
        "{out}"
    );
    assert!(!out.contains("not comparable"), "{out}");
    for item in [
        "agent_instruction",
        "user_guidelines",
        "policy",
        "database",
        "tool_schemas",
        "tasks",
        "evaluator",
        "sampling",
        "limits",
    ] {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with("upstream") && l.contains(item)),
            "{item}: {out}"
        );
    }
}

/// A one-task airline config of sim models whose agent instruction is the researcher's own.
fn own_prompt_config(dir: &Path, data: &Path) -> std::path::PathBuf {
    let own = dir.join("my_instruction.md");
    std::fs::write(&own, "Be brief and kind.\n").unwrap();
    SimConfig::new("own-prompt", "airline", data)
        .run_line("num_tasks = 2")
        .tail(&format!(
            "[prompts]\nagent_instruction = \"{}\"",
            own.display()
        ))
        .write(&dir.join("own.toml"))
}

#[test]
fn an_own_agent_instruction_is_flagged_in_every_output() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = own_prompt_config(tmp.path(), &data);
    let dry = ok(&["run", "--dry-run", s(&cfg)]);
    assert!(
        dry.contains("not comparable with τ²-bench a2c0247: agent_instruction"),
        "{dry}"
    );
    assert!(
        dry.lines().any(|l| l.contains("DEVIATES")
            && l.contains("agent_instruction")
            && l.contains("my_instruction.md")),
        "{dry}"
    );
    let json: Value =
        serde_json::from_str(&ok(&["run", "--dry-run", s(&cfg), "--format", "json"])).unwrap();
    let items = json["cells"][0]["stamp"]["items"].as_array().unwrap();
    let failing: Vec<&str> = items
        .iter()
        .filter(|i| i["holds"] == false)
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["agent_instruction"], "{items:?}");

    // The run: every record carries the stamp in its cell settings.
    let run = tmp.path().join("run");
    ok(&["run", s(&cfg), "--out", s(&run)]);
    let records = std::fs::read_to_string(run.join("records.jsonl")).unwrap();
    for line in records.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["cell"]["benchmark.comparable"], false);
        assert!(
            r["cell"]["benchmark.agent_instruction"]
                .as_str()
                .unwrap()
                .contains("my_instruction.md")
        );
        assert_eq!(r["cell"]["benchmark.policy"], "upstream");
    }

    // The report warns and its comparability table says "no", naming the item.
    let md = ok(&["report", s(&run), "--no-floors"]);
    assert!(
        md.contains("not comparable with τ²-bench a2c0247: agent_instruction"),
        "{md}"
    );
    let table = md
        .split("Comparability with τ²-bench a2c0247")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparability table: {md}"));
    let row = table.lines().find(|l| l.contains("baseline")).unwrap();
    assert_contains_all(row, &["| no", "agent_instruction"]);
    let groups: Value =
        serde_json::from_str(&ok(&["report", s(&run), "--format", "json", "--no-floors"])).unwrap();
    assert_eq!(groups[0]["comparability"]["comparable"], false);

    // The viewer's index holds the stamp of each cell, and its overview flags it.
    let site = tmp.path().join("site");
    ok(&["view", s(&run), "--out", s(&site), "--no-floors"]);
    let idx = index(&site);
    assert_eq!(
        idx["cells"][0]["report"]["comparability"]["comparable"],
        false
    );
    assert!(
        idx["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("agent_instruction")),
        "{idx}"
    );

    // export-tau2 writes the stamp into `info`.
    let results = tmp.path().join("results.json");
    ok(&[
        "export-tau2",
        s(&run),
        "--out",
        s(&results),
        "--data-dir",
        s(&data),
    ]);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let stamp = &doc["info"]["tauguard"]["comparability"];
    assert_eq!(stamp["comparable"], false, "{stamp}");
    assert_eq!(
        stamp["upstream_commit"],
        "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
    );
    assert_eq!(stamp["deviations"][0]["item"], "agent_instruction");
}

#[test]
fn a_missing_benchmark_text_is_an_input_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let fixture = tauguard_testkit::workspace_root().join("tasks/fixtures/airline");
    std::fs::create_dir_all(data.join("airline")).unwrap();
    for e in std::fs::read_dir(&fixture).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, data.join("airline").join(p.file_name().unwrap())).unwrap();
    }
    let cfg = SimConfig::new("no-texts", "airline", &data).write(&tmp.path().join("c.toml"));
    let (code, _, err) = tauguard_status(&["run", "--dry-run", s(&cfg)]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["agent/agent_instruction.md", "fetch-tau2-data.sh"]);
}
