//! Hand-edited and broken artifact sets through the binary: a workflow copy with one more
//! authorization node diffs by exactly that edit and gets the workflow guards a cell of
//! their own, and a missing or malformed set stops the run before anything is written,
//! naming the key and the directory.

use crate::compiled_artifacts::{diff_airline, diff_json, run, run_over_both_sets};
use crate::support::{assert_contains_all, s, tauguard_status as tauguard};
use serde_json::{Value, json};
use tauguard_testkit::{SimConfig, tau2_dir, workspace_root};

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
    let d = diff_json(s(&frozen), s(&wf.join("bundle.json")));
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
    let edit_arg = s(&edit);
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
        assert_contains_all(&err, &[key, what]);
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
        s(&wf.join("bundle.json")),
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
    assert_contains_all(&err, &["grid.artifacts[1]", edit_arg, "bundle.json"]);
    assert!(!out.exists());

    // Undo the edit: the set's workflow is the guide's, and only the guides read it — the
    // checklist guard gets one cell on the frozen set.
    std::fs::copy(&frozen, wf.join("bundle.json")).unwrap();
    let (_, text, _) = diff_airline("tasks/airline", edit_arg, &[]);
    assert_contains_all(
        &text,
        &["workflow: the same shape", "checklists: not compared"],
    );
    let guards = ["policyguide", "pg-checklist"];
    let recs = run_over_both_sets(tmp.path(), "guide", &data, &guards, edit_arg, 1);
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
