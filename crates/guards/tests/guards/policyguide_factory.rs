//! The guard factory's PolicyGuide configurations: `policyguide` and `policyguide-raw` build
//! the LLM guide for a real verifier model and the offline guide otherwise, and an
//! invalid or missing frozen bundle stops the build naming the file; a guide refuses a graph
//! of another domain and a prompts directory without its templates.

use crate::guide_support::*;
use crate::support::root;
use serde_json::{Value, json};
use std::sync::Arc;
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{
    Guard, GuardBuildError, GuardInputs, GuardName, GuardOptions, GuideKnowledge, LlmGuide,
    ToolCatalog, build_guard,
};
use tauguard_llm::ChatModel;
use tauguard_llm::{RoleModel, SIM_PROVIDER};

fn fixture_airline() -> DomainData {
    let dir = DataDir::resolve(Some(&root().join("tasks/fixtures"))).unwrap();
    DomainData::load(&dir, "airline").unwrap()
}

fn build(
    name: &str,
    tasks_dir: &std::path::Path,
    data: &DomainData,
    verifier: RoleModel,
) -> Result<Option<Arc<dyn Guard>>, GuardBuildError> {
    build_guard(
        GuardName::parse(name).unwrap(),
        GuardOptions::default(),
        &GuardInputs {
            tasks_dir: tasks_dir.to_path_buf(),
            prompts_dir: root().join("configs/prompts"),
            data,
            verifier,
            artifacts: None,
        },
    )
}

#[tokio::test]
async fn the_factory_builds_both_guides_for_an_llm_verifier_only() {
    let data = fixture_airline();
    let tasks = root().join("tasks");
    for name in ["policyguide", "policyguide-raw"] {
        assert!(GuardName::parse(name).unwrap().uses_verifier());
        let model = guide_model(&[&reply(json!([]), "")]);
        let m: Arc<dyn ChatModel> = model.clone();
        let g = build(name, &tasks, &data, RoleModel::Built(m))
            .unwrap_or_else(|e| panic!("{e}"))
            .expect("a guard");
        assert_eq!(g.name(), name);
        let e = Sim::new(g.as_ref()).turn(&turn1()).await.unwrap();
        assert_eq!(e.guard, name);
        let want = if name == "policyguide" {
            "graph"
        } else {
            "raw_policy"
        };
        assert_eq!(info(&e)["knowledge"], json!(want));
        // The prompt follows what the guide was built with, not its name.
        let prefix = system_text(&model.seen()[0]).to_string();
        assert_eq!(prefix.contains("<workflow>"), name == "policyguide");
    }
    // With the `sim` family's verifier, the same names build the offline guide.
    for name in ["policyguide", "policyguide-raw"] {
        let g = build(name, &tasks, &data, RoleModel::Sim)
            .unwrap_or_else(|e| panic!("{e}"))
            .expect("a guard");
        let e = Sim::new(g.as_ref()).turn(&turn1()).await.unwrap();
        assert_eq!(info(&e)["verifier"], json!(SIM_PROVIDER));
        assert_eq!(e.usage.calls, 0, "the offline guide calls no model");
    }
}

#[test]
fn an_invalid_bundle_stops_the_build_naming_the_file_and_its_problems() {
    let data = fixture_airline();
    let tasks = tempfile::tempdir().unwrap();
    let path = tasks.path().join("airline/workflow/bundle.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut bundle: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tasks/airline/workflow/bundle.json")).unwrap(),
    )
    .unwrap();
    // The cancellation authorization becomes a plain agent step: `cancel_reservation` loses
    // its only authorization node.
    for g in bundle["subflows"].as_array_mut().unwrap() {
        for n in g["nodes"].as_array_mut().unwrap() {
            if n["id"] == "cancel_authorize" {
                n["kind"] = json!("agent_action");
                n.as_object_mut().unwrap().remove("tool");
            }
        }
    }
    std::fs::write(&path, bundle.to_string()).unwrap();
    let m: Arc<dyn ChatModel> = guide_model(&[]);
    let err = build(
        "policyguide",
        tasks.path(),
        &data,
        RoleModel::Built(m.clone()),
    )
    .err()
    .expect("an invalid bundle is refused");
    let err = tauguard_core::chain_text(&err);
    assert!(
        err.starts_with("guard `policyguide`: workflow bundle "),
        "{err}"
    );
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains(
            "[authorization-coverage] mutating tool `cancel_reservation` has no `tool_authorization` node"
        ),
        "{err}"
    );
    // The raw variant needs no bundle.
    assert!(build("policyguide-raw", tasks.path(), &data, RoleModel::Built(m)).is_ok());
    // A missing bundle names its path too.
    let empty = tempfile::tempdir().unwrap();
    let m: Arc<dyn ChatModel> = guide_model(&[]);
    let err = build("policyguide", empty.path(), &data, RoleModel::Built(m))
        .err()
        .expect("a missing bundle is refused");
    let err = tauguard_core::chain_text(&err);
    assert!(err.contains("cannot read workflow bundle"), "{err}");
    assert!(err.contains("airline/workflow/bundle.json"), "{err}");
}

#[test]
fn a_guide_is_refused_a_graph_of_another_domain_and_missing_templates() {
    let model: Arc<dyn ChatModel> = guide_model(&[]);
    let mut retail = setup(tauguard_guards::FailMode::Closed);
    retail.catalog = ToolCatalog::builtin("retail").expect("retail is registered");
    let err = LlmGuide::new(GuideKnowledge::Graph(graph_flow()), model.clone(), &retail)
        .expect_err("an airline graph for a retail guide")
        .to_string();
    assert_eq!(
        err,
        "the workflow is for domain `airline`, the tool catalogue for `retail`"
    );

    let prompts = tempfile::tempdir().unwrap();
    let mut bare = setup(tauguard_guards::FailMode::Closed);
    bare.prompts_dir = prompts.path().to_path_buf();
    let err = LlmGuide::new(GuideKnowledge::RawPolicy, model, &bare)
        .expect_err("no templates")
        .to_string();
    assert!(err.contains("cannot read prompt template"), "{err}");
    assert!(err.contains("guide/system.md"), "{err}");
}
