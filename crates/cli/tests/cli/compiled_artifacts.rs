//! Compiled artifact sets end to end through the binary: `compile checklist` on airline with a
//! loopback model (it answers each step with the frozen checklist, minus one requirement of
//! `cancel_reservation`) writes `provenance.toml` beside its output; `validate checklist`
//! prints that origin; `diff-artifacts` finds exactly the dropped requirement, and a
//! hand-edited workflow copy's extra authorization node; a run with `[guard] artifacts`
//! records the compiled origin in its cell settings; a grid over the frozen and the compiled
//! set gives the checklist guard two cells (and the baseline one), which `report` and `view`
//! show apart. Hand-edited sets and broken sets: `compiled_artifacts_edits.rs`.

use crate::support::{assert_contains_all, records, s, tauguard_ok, tauguard_status as tauguard};
use serde_json::{Value, json};
use std::path::Path;
use tauguard_guards::{
    ToolCatalog, general_rules_to_yaml, load_domain_checklists, tool_checklist_to_yaml,
};
use tauguard_testkit::{SimConfig, tau2_dir, workspace_root};

/// The requirement the loopback "model" leaves out of `cancel_reservation`.
const DROPPED: &str = "obtain_cancellation_reason";

/// Answers the checklist compiler's four steps for airline from the frozen checklists.
struct FrozenAirline {
    catalog: ToolCatalog,
    checklists: tauguard_guards::DomainChecklists,
}

impl FrozenAirline {
    fn new() -> FrozenAirline {
        let catalog = ToolCatalog::builtin("airline").unwrap();
        let mut checklists =
            load_domain_checklists(&workspace_root().join("tasks/airline/checklist"), &catalog)
                .unwrap();
        let cancel = checklists.tools.get_mut("cancel_reservation").unwrap();
        let before = cancel.requirements.len();
        cancel.requirements.retain(|r| r.name != DROPPED);
        assert_eq!(cancel.requirements.len(), before - 1);
        FrozenAirline {
            catalog,
            checklists,
        }
    }

    fn answer(&self, prompt: &str) -> String {
        let first = prompt.lines().next().unwrap_or_default();
        let named = first.split('`').nth(1).unwrap_or_default();
        if first.starts_with("Step 1 of 4") {
            let c = &self.catalog;
            let class = |set: &std::collections::BTreeSet<String>, class: &str| {
                set.iter()
                    .map(|t| json!({"name": t, "class": class, "reason": "as the API does"}))
                    .collect::<Vec<_>>()
            };
            let mut tools = class(&c.mutating, "mutating");
            tools.extend(class(&c.read_only, "read_only"));
            tools.extend(class(&c.other, "other"));
            format!("```json\n{}\n```", json!({ "tools": tools }))
        } else if first.starts_with("Step 3 of 4") || first.contains("review the general rules") {
            format!(
                "```yaml\n{}```",
                general_rules_to_yaml(&self.checklists.general).unwrap()
            )
        } else if first.starts_with("Step 2 of 4") || first.starts_with("Step 4 of 4") {
            let c = &self.checklists.tools[named];
            format!("```yaml\n{}```", tool_checklist_to_yaml(c).unwrap())
        } else {
            panic!("a prompt of no known step: {first}")
        }
    }
}

impl wiremock::Respond for FrozenAirline {
    fn respond(&self, request: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let prompt = body["messages"][1]["content"].as_str().unwrap_or_default();
        let message = tauguard_testkit::assistant_text(&self.answer(prompt));
        wiremock::ResponseTemplate::new(200).set_body_json(tauguard_testkit::chat_completion(
            "m",
            "stop",
            message,
            (50, 10),
        ))
    }
}

/// Compiles airline's checklists into `set/airline/checklist` with the loopback model.
fn compile_set(data: &Path, set: &Path) {
    let server = tauguard_testkit::Loopback::serve(FrozenAirline::new());
    let llm = set.with_extension("llm.toml");
    let provider = tauguard_testkit::MockProvider::new("local", &server.uri());
    std::fs::write(&llm, provider.toml("providers")).unwrap();
    let out = set.join("airline/checklist");
    let (code, stdout, stderr) = tauguard(&[
        "compile",
        "checklist",
        "--domain",
        "airline",
        "--data-dir",
        s(data),
        "--model",
        "local/m",
        "--llm-config",
        s(&llm),
        "--out",
        s(&out),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("6 tool checklists and 8 general rules, 0 repairs")
            && stdout.contains(&out.display().to_string()),
        "{stdout}"
    );
    for f in [
        "cancel_reservation.yaml",
        "general_rules.yaml",
        "compile_report.json",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

/// `diff-artifacts A B --domain airline` with `extra` arguments: (exit code, stdout, stderr).
pub(crate) fn diff_airline(a: &str, b: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["diff-artifacts", a, b, "--domain", "airline"];
    args.extend_from_slice(extra);
    tauguard(&args)
}

/// [`diff_airline`] as JSON, which must succeed.
pub(crate) fn diff_json(a: &str, b: &str) -> Value {
    let (code, stdout, stderr) = diff_airline(a, b, &["--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// Runs `guards` over the frozen artifacts and the set `set` (`num_tasks` airline tasks from
/// `data`) as `dir/<name>.toml` into `dir/<name>`, asserting it succeeds; returns the records.
pub(crate) fn run_over_both_sets(
    dir: &Path,
    name: &str,
    data: &Path,
    guards: &[&str],
    set: &str,
    num_tasks: u32,
) -> Vec<Value> {
    let cfg = SimConfig::new(name, "airline", data)
        .guards(guards)
        .grid_line(&format!("artifacts = [\"frozen\", \"{set}\"]"))
        .run_line(&format!("num_tasks = {num_tasks}"))
        .write(&dir.join(format!("{name}.toml")));
    let out = dir.join(name);
    let (code, err) = run(&cfg, &out);
    assert_eq!(code, 0, "{err}");
    records(&out)
}

pub(crate) fn run(cfg: &Path, out: &Path) -> (i32, String) {
    let (code, _, err) = tauguard(&["run", s(cfg), "--out", s(out)]);
    (code, err)
}

#[test]
fn a_compiled_set_is_validated_diffed_run_and_reported_with_its_origin() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    compile_set(&data, &set);
    let set_arg = s(&set);

    // compile wrote where the set came from.
    let prov = std::fs::read_to_string(set.join("airline/checklist/provenance.toml")).unwrap();
    let p: toml::Value = toml::from_str(&prov).unwrap();
    let entries = p["artifacts"].as_array().unwrap();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["checklists", "general_rules"]);
    for e in entries {
        assert_eq!(e["origin"].as_str(), Some("compiled"));
        assert_eq!(e["model"].as_str(), Some("local/m"));
        assert_eq!(e["report"].as_str(), Some("compile_report.json"));
        assert!(
            e["compiler"]
                .as_str()
                .unwrap()
                .ends_with("compile checklist")
        );
        let date = e["date"].as_str().unwrap();
        assert!(date.len() == 10 && date.starts_with("20"), "{date}");
    }

    // validate prints it; the frozen --all prints hand-written.
    let (code, stdout, stderr) = tauguard(&[
        "validate",
        "checklist",
        s(&set.join("airline/checklist")),
        "--domain",
        "airline",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_contains_all(
        &stdout,
        &[
            "| airline | 6 |",
            "checklists origin (checklists): compiled by tauguard",
            "with local/m on 20",
            "general rules origin (general_rules): compiled by",
        ],
    );
    let (code, stdout, _) = tauguard(&["validate", "checklist", "--all"]);
    assert_eq!(code, 0);
    // Every registered domain with frozen checklists: its row, and the hand-written origin of
    // its checklists and of its general rules.
    let with_checklists: Vec<&str> = tauguard_env::registry::DOMAINS
        .iter()
        .map(|d| d.name())
        .filter(|d| {
            tauguard_testkit::workspace_root()
                .join("tasks")
                .join(d)
                .join("checklist")
                .is_dir()
        })
        .collect();
    assert!(with_checklists.len() >= 3, "{with_checklists:?}");
    for d in &with_checklists {
        assert!(stdout.contains(&format!("| {d} |")), "{stdout}");
    }
    assert_eq!(
        stdout
            .matches("hand-written by the tauguard maintainers")
            .count(),
        2 * with_checklists.len(),
        "{stdout}"
    );

    // diff: exactly the dropped requirement.
    let d = diff_json("tasks/airline", set_arg);
    assert_eq!(d["checklists"]["same"], false);
    assert!(d["workflow"].is_null(), "the set holds no workflow");
    for t in d["checklists"]["diff"]["tools"].as_array().unwrap() {
        let r = &t["requirements"];
        if t["tool"] == "cancel_reservation" {
            assert_eq!(r["removed"], json!([DROPPED]));
            assert_eq!((r["a"].as_u64(), r["b"].as_u64()), (Some(6), Some(5)));
        } else {
            assert_eq!(r["removed"], json!([]), "{t}");
        }
        assert_eq!(r["added"], json!([]), "{t}");
        assert_eq!(r["changed"], json!([]), "{t}");
    }
    assert!(
        d["b"]["checklists_origin"]
            .as_str()
            .unwrap()
            .contains("compiled by"),
        "{d}"
    );
    let (_, text, _) = diff_airline("tasks/airline", set_arg, &[]);
    assert_contains_all(
        &text,
        &[
            &format!("cancel_reservation: requirements 6 → 5; removed {DROPPED}"),
            "book_reservation: requirements 9, same",
            "workflow: not compared (A holds checklists and a workflow, B holds checklists only)",
        ],
    );

    // A run on the set records the compiled origin.
    let cfg = SimConfig::new("compiled", "airline", &data)
        .guards(&["pg-checklist"])
        .run_line("num_tasks = 2")
        .tail(&format!("[guard]\nartifacts = \"{set_arg}\""))
        .write(&tmp.path().join("one.toml"));
    let out = tmp.path().join("one");
    let (code, err) = run(&cfg, &out);
    assert_eq!(code, 0, "{err}");
    let recs = records(&out);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        let cell = &r["cell"];
        let origin = cell["artifacts.origin"].as_str().unwrap();
        assert!(
            origin.starts_with("checklists=compiled:local/m,general_rules=compiled:local/m,toolguard_rules=hand-written"),
            "{origin}"
        );
        assert_eq!(cell["artifacts.set"].as_str(), Some(set_arg));
        let compiled = cell["artifacts.compiled"].as_str().unwrap();
        assert_contains_all(
            compiled,
            &[
                "checklists: compiled by tauguard",
                "with local/m on 20",
                "(report: checklist/compile_report.json)",
            ],
        );
        assert!(
            r["cell_id"]
                .as_str()
                .unwrap()
                .ends_with(&format!("|artifacts={set_arg}"))
        );
    }

    // A grid over both sets: the checklist guard gets two cells, the baseline one.
    let guards = ["baseline", "pg-checklist"];
    let recs = run_over_both_sets(tmp.path(), "both", &data, &guards, set_arg, 2);
    let out = tmp.path().join("both");
    let cells: std::collections::BTreeSet<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["cell_id"].as_str().unwrap().to_string(),
                r["cell_hash"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(cells.len(), 3, "{cells:?}");
    let origins: std::collections::BTreeSet<&str> = recs
        .iter()
        .filter(|r| r["guard"] == "pg-checklist")
        .map(|r| r["cell"]["artifacts.origin"].as_str().unwrap())
        .collect();
    assert_eq!(origins.len(), 2, "{origins:?}");
    assert!(
        origins
            .iter()
            .any(|o| o.starts_with("checklists=hand-written"))
    );
    assert!(
        origins
            .iter()
            .any(|o| o.starts_with("checklists=compiled:local/m"))
    );

    // report: the artifacts table names each cell's set.
    let md = tauguard_ok(&["report", s(&out), "--no-floors"]);
    assert!(
        md.contains("| Artifacts origin | Artifact set | Compiled |"),
        "{md}"
    );
    assert!(
        md.lines()
            .any(|l| l.contains("| pg-checklist [artifacts.set=")
                && l.contains("checklists=compiled:local/m")
                && l.contains(&format!("| {set_arg} |"))
                && l.contains("compiled by tauguard")),
        "{md}"
    );
    assert!(
        md.lines()
            .any(|l| l.contains("| pg-checklist [artifacts.set=")
                && l.contains("checklists=hand-written")
                && l.contains("| frozen |")),
        "{md}"
    );

    // view: each cell carries its artifacts.
    let site = tmp.path().join("site");
    tauguard_ok(&["view", s(&out), "--out", s(&site), "--no-floors"]);
    let index = crate::view::index(&site);
    let sets: Vec<(String, Value)> = index["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["guard"].as_str().unwrap().to_string(),
                c["artifacts"].clone(),
            )
        })
        .collect();
    assert_eq!(sets.len(), 3);
    let compiled: Vec<&(String, Value)> = sets
        .iter()
        .filter(|(_, a)| a["set"].as_str() == Some(set_arg))
        .collect();
    assert_eq!(compiled.len(), 1, "{sets:?}");
    assert_eq!(compiled[0].0, "pg-checklist");
    assert!(
        compiled[0].1["compiled"]
            .as_str()
            .unwrap()
            .contains("local/m")
    );
    assert!(
        sets.iter()
            .filter(|(_, a)| a["set"].is_null())
            .all(|(_, a)| a["origin"]
                .as_str()
                .unwrap()
                .starts_with("checklists=hand-written")),
        "{sets:?}"
    );
    let js = std::fs::read_to_string(site.join("assets/overview.js")).unwrap();
    assert!(
        js.contains("\"artifacts: \" + which"),
        "the overview renders them"
    );
}
