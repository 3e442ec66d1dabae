//! Compiled artifact sets end to end through the binary: `compile checklist` on airline with a
//! loopback model (it answers each step with the frozen checklist, minus one requirement of
//! `cancel_reservation`) writes `provenance.toml` beside its output; `validate checklist`
//! prints that origin; `diff-artifacts` finds exactly the dropped requirement, and a
//! hand-edited workflow copy's extra authorization node; a run with `[guard] artifacts`
//! records the compiled origin in its cell settings; a grid over the frozen and the compiled
//! set gives the checklist guard two cells (and the baseline one), which `report` and `view`
//! show apart; and a missing or malformed set stops the run before anything is written,
//! naming the key and the directory.

use crate::support::tauguard_status as tauguard;
use serde_json::{Value, json};
use std::path::Path;
use tauguard_guards::catalog::ToolCatalog;
use tauguard_guards::policyguard::checklist::{
    general_rules_to_yaml, load_domain_checklists, tool_checklist_to_yaml,
};
use tauguard_testkit::{SimConfig, tau2_dir, workspace_root};

/// The requirement the loopback "model" leaves out of `cancel_reservation`.
const DROPPED: &str = "obtain_cancellation_reason";

/// Answers the checklist compiler's four steps for airline from the frozen checklists.
struct FrozenAirline {
    catalog: ToolCatalog,
    checklists: tauguard_guards::policyguard::checklist::DomainChecklists,
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
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "id": "r", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": self.answer(prompt)}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
        }))
    }
}

/// Compiles airline's checklists into `set/airline/checklist` with the loopback model.
fn compile_set(data: &Path, set: &Path) {
    use wiremock::{Mock, MockServer, matchers::method};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(FrozenAirline::new())
            .mount(&server)
            .await;
        server
    });
    let llm = set.with_extension("llm.toml");
    std::fs::write(
        &llm,
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let out = set.join("airline/checklist");
    let (code, stdout, stderr) = tauguard(&[
        "compile",
        "checklist",
        "--domain",
        "airline",
        "--data-dir",
        data.to_str().unwrap(),
        "--model",
        "local/m",
        "--llm-config",
        llm.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
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

fn records(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn run(cfg: &Path, out: &Path) -> (i32, String) {
    let (code, _, err) = tauguard(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    (code, err)
}

#[test]
fn a_compiled_set_is_validated_diffed_run_and_reported_with_its_origin() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("set");
    compile_set(&data, &set);
    let set_arg = set.to_str().unwrap();

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
        set.join("airline/checklist").to_str().unwrap(),
        "--domain",
        "airline",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("| airline | 6 |")
            && stdout.contains("checklists origin (checklists): compiled by tauguard")
            && stdout.contains("with local/m on 20")
            && stdout.contains("general rules origin (general_rules): compiled by"),
        "{stdout}"
    );
    let (code, stdout, _) = tauguard(&["validate", "checklist", "--all"]);
    assert_eq!(code, 0);
    for d in ["airline", "banking_knowledge", "retail", "telecom"] {
        assert!(stdout.contains(&format!("| {d} |")), "{stdout}");
    }
    // Checklists and general rules of each of the four domains.
    assert_eq!(
        stdout
            .matches("hand-written by the tauguard maintainers")
            .count(),
        8
    );

    // diff: exactly the dropped requirement.
    let (code, stdout, stderr) = tauguard(&[
        "diff-artifacts",
        "tasks/airline",
        set_arg,
        "--domain",
        "airline",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let d: Value = serde_json::from_str(&stdout).unwrap();
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
    let (_, text, _) = tauguard(&[
        "diff-artifacts",
        "tasks/airline",
        set_arg,
        "--domain",
        "airline",
    ]);
    assert!(
        text.contains(&format!("cancel_reservation: requirements 6 → 5; removed {DROPPED}"))
            && text.contains("book_reservation: requirements 9, same")
            && text.contains("workflow: not compared (A holds checklists and a workflow, B holds checklists only)"),
        "{text}"
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
        assert!(
            compiled.contains("checklists: compiled by tauguard")
                && compiled.contains("with local/m on 20")
                && compiled.contains("(report: checklist/compile_report.json)"),
            "{compiled}"
        );
        assert!(
            r["cell_id"]
                .as_str()
                .unwrap()
                .ends_with(&format!("|artifacts={set_arg}"))
        );
    }

    // A grid over both sets: the checklist guard gets two cells, the baseline one.
    let cfg = SimConfig::new("both", "airline", &data)
        .guards(&["baseline", "pg-checklist"])
        .grid_line(&format!("artifacts = [\"frozen\", \"{set_arg}\"]"))
        .run_line("num_tasks = 2")
        .write(&tmp.path().join("both.toml"));
    let out = tmp.path().join("both");
    let (code, err) = run(&cfg, &out);
    assert_eq!(code, 0, "{err}");
    let recs = records(&out);
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
    let (code, md, err) = tauguard(&["report", out.to_str().unwrap(), "--no-floors"]);
    assert_eq!(code, 0, "{err}");
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
    let (code, _, err) = tauguard(&[
        "view",
        out.to_str().unwrap(),
        "--out",
        site.to_str().unwrap(),
        "--no-floors",
    ]);
    assert_eq!(code, 0, "{err}");
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

#[test]
fn a_hand_edited_workflow_copy_diffs_by_its_edit_and_a_broken_set_stops_the_run() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    // A copy of the frozen bundle with one more authorization node in its first subflow.
    let frozen = workspace_root().join("tasks/airline/workflow/bundle.json");
    let mut bundle: Value =
        serde_json::from_str(&std::fs::read_to_string(&frozen).unwrap()).unwrap();
    let sub = &mut bundle["subflows"][0];
    let sub_id = sub["id"].as_str().unwrap().to_string();
    sub["nodes"].as_array_mut().unwrap().push(json!({
        "id": "extra_authorization", "kind": "tool_authorization", "actor": "agent",
        "action": "authorize a cancellation", "condition": "never reached",
        "tool": "cancel_reservation",
    }));
    let wf = tmp.path().join("edit/airline/workflow");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(
        wf.join("bundle.json"),
        serde_json::to_string_pretty(&bundle).unwrap(),
    )
    .unwrap();
    let (code, stdout, stderr) = tauguard(&[
        "diff-artifacts",
        frozen.to_str().unwrap(),
        wf.join("bundle.json").to_str().unwrap(),
        "--domain",
        "airline",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let d: Value = serde_json::from_str(&stdout).unwrap();
    let w = &d["workflow"]["diff"];
    assert_eq!(d["workflow"]["same_shape"], false);
    let pair = |v: &Value| (v["a"].as_u64().unwrap(), v["b"].as_u64().unwrap());
    let (na, nb) = pair(&w["nodes"]);
    assert_eq!(nb, na + 1);
    let (aa, ab) = pair(&w["authorization_nodes"]);
    assert_eq!(ab, aa + 1);
    assert_eq!(pair(&w["edges"]).0, pair(&w["edges"]).1);
    assert_eq!(w["subflows_added"], json!([]));
    assert_eq!(w["subflows_removed"], json!([]));
    let changed = w["subflows_changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["id"].as_str(), Some(sub_id.as_str()));
    let tools = w["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!(tools[0]["tool"], "cancel_reservation");
    let (ta, tb) = pair(&tools[0]["authorizations"]);
    assert_eq!(tb, ta + 1);
    assert!(
        d["b"]["workflow_origin"]
            .as_str()
            .unwrap()
            .starts_with("origin: none stated")
    );

    // The edited copy as a set: without provenance.toml, then with one but invalid (the extra
    // node is unreachable); each error names the key and the directory, and nothing is written.
    let edit = tmp.path().join("edit");
    let edit_arg = edit.to_str().unwrap();
    let config = |name: &str, tail: &str| {
        SimConfig::new(name, "airline", &data)
            .guards(&["policyguide"])
            .run_line("num_tasks = 1")
            .tail(tail)
            .write(&tmp.path().join(format!("{name}.toml")))
    };
    let cases = [
        (
            "missing",
            format!(
                "[guard]\nartifacts = \"{}\"",
                tmp.path().join("nope").display()
            ),
            "at `guard.artifacts`",
            "no such directory",
        ),
        (
            "noprov",
            format!("[guard]\nartifacts = \"{edit_arg}\""),
            "at `guard.artifacts`",
            "no `provenance.toml`",
        ),
    ];
    for (name, tail, key, what) in cases {
        let out = tmp.path().join(name);
        let (code, err) = run(&config(name, &tail), &out);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(key) && err.contains(what), "{err}");
        assert!(!out.exists(), "nothing is written: {err}");
    }
    // Both keys, or a set listed twice, are refused at config load.
    let both = SimConfig::new("both", "airline", &data)
        .grid_line(&format!("artifacts = [\"{edit_arg}\"]"))
        .tail(&format!("[guard]\nartifacts = \"{edit_arg}\""))
        .write(&tmp.path().join("both.toml"));
    let (code, err) = run(&both, &tmp.path().join("both"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("at `grid.artifacts`: the grid's artifact sets replace `[guard] artifacts`"),
        "{err}"
    );
    let twice = SimConfig::new("twice", "airline", &data)
        .grid_line("artifacts = [\"frozen\", \"frozen\"]")
        .write(&tmp.path().join("twice.toml"));
    let (code, err) = run(&twice, &tmp.path().join("twice"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("at `grid.artifacts[1]`: `frozen` is listed twice"),
        "{err}"
    );
    std::fs::write(
        wf.join("provenance.toml"),
        "schema = \"tauguard.provenance/1\"\ndomain = \"airline\"\n[[artifacts]]\nkind = \"workflow\"\npaths = [\"bundle.json\"]\n\
         origin = \"hand-written\"\nby = \"a test\"\ndate = \"2026-12-02\"\nsources = [\"airline/policy.md\"]\n",
    )
    .unwrap();
    let (code, stdout, _) = tauguard(&[
        "validate",
        "workflow",
        wf.join("bundle.json").to_str().unwrap(),
        "--domain",
        "airline",
    ]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains("origin (workflow): hand-written by a test on 2026-12-02"),
        "{stdout}"
    );
    let cfg = SimConfig::new("invalid", "airline", &data)
        .guards(&["policyguide"])
        .grid_line(&format!("artifacts = [\"frozen\", \"{edit_arg}\"]"))
        .run_line("num_tasks = 1")
        .write(&tmp.path().join("invalid.toml"));
    let out = tmp.path().join("invalid");
    let (code, err) = run(&cfg, &out);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("grid.artifacts[1]") && err.contains(edit_arg) && err.contains("bundle.json"),
        "{err}"
    );
    assert!(!out.exists());

    // Undo the edit: the set's workflow is the guide's, and only the guides read it — the
    // checklist guard gets one cell on the frozen set.
    std::fs::copy(&frozen, wf.join("bundle.json")).unwrap();
    let (_, text, _) = tauguard(&[
        "diff-artifacts",
        "tasks/airline",
        edit_arg,
        "--domain",
        "airline",
    ]);
    assert!(
        text.contains("workflow: the same shape") && text.contains("checklists: not compared"),
        "{text}"
    );
    let cfg = SimConfig::new("guide", "airline", &data)
        .guards(&["policyguide", "pg-checklist"])
        .grid_line(&format!("artifacts = [\"frozen\", \"{edit_arg}\"]"))
        .run_line("num_tasks = 1")
        .write(&tmp.path().join("guide.toml"));
    let out = tmp.path().join("guide");
    let (code, err) = run(&cfg, &out);
    assert_eq!(code, 0, "{err}");
    let recs = records(&out);
    let mut ids: Vec<&str> = recs
        .iter()
        .map(|r| r["cell_id"].as_str().unwrap())
        .collect();
    ids.sort();
    let on_set_id = format!("airline|sim-agent|policyguide|artifacts={edit_arg}");
    assert_eq!(
        ids,
        [
            "airline|sim-agent|pg-checklist",
            "airline|sim-agent|policyguide",
            on_set_id.as_str(),
        ],
    );
    let by_id = |id: &str| recs.iter().find(|r| r["cell_id"] == id).unwrap();
    let (frozen_rec, set_rec) = (by_id("airline|sim-agent|policyguide"), by_id(&on_set_id));
    let on_set = &set_rec["cell"];
    assert_eq!(on_set["artifacts.set"].as_str(), Some(edit_arg));
    assert_eq!(
        on_set["artifacts.compiled"].as_str(),
        Some("workflow: hand-written by a test on 2026-12-02, from airline/policy.md")
    );
    // The same bytes as the frozen bundle, yet another cell: its origin differs.
    assert_ne!(frozen_rec["cell_hash"], set_rec["cell_hash"]);
    assert!(frozen_rec["cell"].get("artifacts.set").is_none());
}
