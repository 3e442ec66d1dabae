//! The workflow compiler end to end on the real airline policy and tools, with a scripted mock
//! model that answers each stage by the `Stage N of 6` line its prompt opens with: the bundle
//! validates and the report lists the six stages; one invalid subflow gets exactly one repair;
//! a subflow invalid twice fails naming it; a composed bundle the validator rejects (a
//! mutating tool left without an authorization node) fails naming the problem.

mod script;

use script::{
    Airline, ScriptedModel, airline, asks, assert_two_tries, broken_cancel, classification, happy,
    main_node, options, prompts_dir, requests_of, stage_model, step,
};
use std::path::Path;
use std::sync::Arc;
use tauguard_compile::OutputError;
use tauguard_compile::workflow::{
    BUNDLE_FILE, CompileInput, REPORT_FILE, Stage, Step, StepOutcome, WorkflowCompileError,
    WorkflowCompileReport, compile_workflow,
};
use tauguard_env::DomainData;
use tauguard_guards::{Bundle, NodeKind, ToolCatalog, validate};

/// Compiles the airline domain's policy and agent tools with `model` into `out`.
async fn compile_airline(
    model: &ScriptedModel,
    data: &DomainData,
    out: &Path,
) -> Result<WorkflowCompileReport, WorkflowCompileError> {
    let prompts = prompts_dir();
    let input = CompileInput {
        model,
        domain: "airline",
        policy: &data.policy,
        tools: &data.tool_schemas.assistant,
        prompts_dir: &prompts,
    };
    compile_workflow(input, out, &options(data)).await
}

/// The script that plans three of the airline's subflows.
fn three_subflows() -> Arc<Airline> {
    Arc::new(Airline::new(&[
        "change_flights",
        "change_passengers",
        "change_baggage",
    ]))
}

#[allow(
    clippy::too_many_lines,
    reason = "a test's steps read in order (clippy.toml: tests are exempt)"
)]
#[tokio::test]
async fn compiles_a_valid_airline_bundle_through_six_stages() {
    let Some(data) = airline() else { return };
    let all = ["change_flights", "change_passengers", "change_baggage"];
    let script = Arc::new(Airline::new(&all));
    let model = stage_model(happy(script, classification(&data)));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("workflow.compiled");
    let report = compile_airline(&model, &data, &out)
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // The bundle on disk validates against the environment's catalogue.
    let bundle = Bundle::load(&out.join(BUNDLE_FILE)).unwrap_or_else(|e| panic!("{e}"));
    let verdict = validate(&bundle, &ToolCatalog::of(data.def));
    assert!(verdict.is_valid(), "{:?}", verdict.problems);
    assert_eq!(report.validation.catalog, "environment");
    assert_eq!(report.validation.nodes, verdict.sizes.nodes);

    // The main graph: entry spine, identify, classifier with one branch per request type.
    let classify = main_node(&bundle, "classify");
    assert_eq!(classify.kind, NodeKind::Decision);
    assert_eq!(classify.action, "Which airline request is this?");
    let mut labels: Vec<&str> = bundle
        .main
        .edges
        .iter()
        .filter(|e| e.from == "classify")
        .filter_map(|e| e.label.as_deref())
        .collect();
    labels.sort();
    assert_eq!(
        labels,
        [
            "against_policy",
            "book",
            "cancel",
            "compensation",
            "modify",
            "out_of_scope"
        ]
    );
    let identify = main_node(&bundle, "identify");
    assert_eq!(identify.subflow.as_deref(), Some("authenticate_user"));

    // flight_search was planned but no graph runs it: pruned.
    assert_eq!(report.pruned_subflows, ["flight_search"]);
    assert!(bundle.subflows.iter().all(|g| g.id != "flight_search"));
    assert_eq!(bundle.subflows.len(), 9);

    // The report: six stages in order, each with its calls.
    let stages: Vec<Stage> = report.stages.iter().map(|s| s.stage).collect();
    assert_eq!(stages, Stage::ALL);
    let numbers: Vec<usize> = report.stages.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
    let calls: Vec<u32> = report.stages.iter().map(|s| s.calls).collect();
    // plan: one repair (coverage); subflows: 10 + cancel's repair + 10 reviews + book's repair.
    assert_eq!(calls, [1, 2, 1, 22, 1, 1]);
    assert_eq!(report.stages[3].repairs, 2);
    assert_eq!(report.stages[3].kept_previous, 1);
    assert!(
        report.stages[5].result.contains("pruned flight_search"),
        "{}",
        report.stages[5].result
    );
    assert_eq!(report.repairs, 3);
    assert_eq!(report.usage.calls as usize, asks(&model).len());
    assert!((report.usage.cost.unwrap() - 0.028).abs() < 1e-9);
    assert!(report.classification_mismatches.is_empty());

    // The coverage audit caught the missing send_certificate entry, and the repair fixed it.
    assert_two_tries(
        step(&report, Step::Plan, "plan"),
        StepOutcome::Repaired,
        "mutating tool `send_certificate` has no coverage entry",
    );
    let review = step(&report, Step::PlanReview, "plan");
    assert_eq!(review.tally.changed, Some(true));
    assert_eq!(report.plan.gaps.len(), 1);

    // cancel: invalid once, exactly one repair, then valid; no other subflow was repaired.
    let cancel = step(&report, Step::Subflow, "cancel");
    assert_eq!(
        (cancel.tally.outcome, cancel.tally.calls),
        (StepOutcome::Repaired, 2)
    );
    let error = &cancel.tally.errors[0];
    assert!(
        error.contains("[tool-class]") && error.contains("get_reservation_details"),
        "{error}"
    );
    assert!(
        error.contains("mutating tool `cancel_reservation`"),
        "{error}"
    );
    assert!(
        error.contains("[dangling-edge]") && error.contains("nowhere"),
        "{error}"
    );
    let subflow_calls: Vec<u32> = report
        .steps
        .iter()
        .filter(|s| s.step == Step::Subflow && s.target != "cancel")
        .map(|s| s.tally.calls)
        .collect();
    assert_eq!(subflow_calls, [1; 9]);
    assert_eq!(
        step(&report, Step::BranchReview, "cancel").tally.changed,
        Some(true)
    );
    let book = step(&report, Step::BranchReview, "book");
    assert_eq!(
        (book.tally.outcome, book.tally.changed),
        (StepOutcome::KeptPrevious, Some(false))
    );
    let cancel_graph = bundle.subflows.iter().find(|g| g.id == "cancel").unwrap();
    assert_eq!(
        cancel_graph.nodes[2].source.as_deref(),
        Some("cancel within 24 hours of booking")
    );

    // The repair turn quotes the validation errors after the rejected reply.
    let requests = requests_of(&model);
    let (_, repair) = requests
        .iter()
        .find(|(a, _)| a.step == "subflow" && a.target == "cancel" && a.attempt == 1)
        .unwrap();
    assert_eq!(repair.messages.len(), 4);
    assert!(
        repair.messages[3]
            .content()
            .unwrap()
            .contains("[tool-class]")
    );
    assert!(repair.json_mode);
    // The subflow prompt carries the policy and the plan's tools for it.
    let (_, first) = requests
        .iter()
        .find(|(a, _)| a.step == "subflow" && a.target == "compensation")
        .unwrap();
    let prompt = first.messages[1].content().unwrap();
    assert!(prompt.contains("send_certificate (mutating)") && prompt.contains(&data.policy[..200]));
    let sent: Vec<_> = requests.iter().map(|(_, r)| r.clone()).collect();
    crate::digests::assert_unchanged("workflow_airline", &sent, &out);
    drop(requests);

    // The mapping review went to the report; the written report is the returned one.
    let mapping = report.mapping.as_ref().unwrap();
    assert_eq!(
        mapping.mappings[0].nodes,
        ["authenticate_user/call", "main/identify"]
    );
    let written: WorkflowCompileReport =
        serde_json::from_str(&std::fs::read_to_string(out.join(REPORT_FILE)).unwrap()).unwrap();
    assert_eq!(written, report);
}

#[tokio::test]
async fn a_subflow_invalid_twice_fails_naming_it() {
    let Some(data) = airline() else { return };
    let script = three_subflows();
    let happy = happy(script, classification(&data));
    let model = stage_model(move |ask| match (ask.step, ask.target.as_str()) {
        ("subflow", "cancel") => broken_cancel(),
        _ => happy(ask),
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("wf");
    let err = compile_airline(&model, &data, &out).await.unwrap_err();
    match &err {
        WorkflowCompileError::Invalid {
            step,
            target,
            error,
        } => {
            assert_eq!((*step, target.as_str()), (Step::Subflow, "cancel"));
            assert!(error.contains("[tool-class]"), "{error}");
        }
        other => panic!("unexpected error: {other}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with("stage 4 (subflows), subflow `cancel`: no valid reply after one repair"),
        "{text}"
    );
    let cancel_calls = asks(&model)
        .iter()
        .filter(|a| a.step == "subflow" && a.target == "cancel")
        .count();
    assert_eq!(cancel_calls, 2, "one try and exactly one repair");
    assert!(!out.exists(), "nothing is written on failure");
}

#[tokio::test]
async fn a_bundle_the_validator_rejects_fails_the_compile() {
    let Some(data) = airline() else { return };
    // modify_reservation's graph never runs change_baggage: the subflow is pruned, and with it
    // the only authorization of update_reservation_baggages.
    let script = Arc::new(Airline::new(&["change_flights", "change_passengers"]));
    let model = stage_model(happy(script, classification(&data)));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("wf");
    let err = compile_airline(&model, &data, &out).await.unwrap_err();
    let WorkflowCompileError::InvalidBundle { problems, .. } = &err else {
        panic!("unexpected error: {err}")
    };
    assert_eq!(
        problems,
        &[
            "graph `main`: [authorization-coverage] mutating tool `update_reservation_baggages` has no `tool_authorization` node"
        ]
    );
    let text = err.to_string();
    assert!(
        text.contains("stage 6 (validate)") && text.contains("1 problem(s)"),
        "{text}"
    );
    assert!(
        asks(&model).iter().all(|a| a.step != "mapping"),
        "no mapping review of an invalid bundle"
    );
    assert!(!out.exists(), "nothing is written on failure");
}

#[tokio::test]
async fn a_non_empty_output_directory_is_refused_before_any_model_call() {
    let Some(data) = airline() else { return };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bundle.json"), "{}").unwrap();
    let model = stage_model(|ask| panic!("no model call expected, got {ask:?}"));
    let err = compile_airline(&model, &data, tmp.path())
        .await
        .unwrap_err();
    assert!(
        matches!(err, WorkflowCompileError::Output(OutputError::NotEmpty(_))),
        "{err}"
    );
    assert!(asks(&model).is_empty());
}

#[tokio::test]
async fn invalid_wording_and_mapping_keep_the_defaults() {
    let Some(data) = airline() else { return };
    let script = three_subflows();
    let happy = happy(script, classification(&data));
    let model = stage_model(move |ask| {
        match ask.step {
        "compose" => r#"{"classify": {"action": "", "condition": "x"}, "deny": {"action": "a", "condition": "c"}}"#.to_string(),
        "mapping" => r#"{"mappings": [{"policy": "p", "nodes": ["main/nowhere"]}]}"#.to_string(),
        _ => happy(ask),
    }
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("wf");
    let report = compile_airline(&model, &data, &out)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_two_tries(
        step(&report, Step::Compose, "main"),
        StepOutcome::KeptPrevious,
        "classify.action: is empty",
    );
    let mapping = step(&report, Step::Mapping, "bundle");
    assert_eq!(mapping.tally.outcome, StepOutcome::KeptPrevious);
    assert!(
        mapping.tally.errors[0].contains("`main/nowhere` is not a `graph/node`"),
        "{:?}",
        mapping.tally.errors
    );
    assert_eq!(report.mapping, None);
    assert!(report.stages[4].result.contains("the compiler's defaults"));
    let bundle = Bundle::load(&out.join(BUNDLE_FILE)).unwrap();
    let classify = main_node(&bundle, "classify");
    assert_eq!(
        classify.action,
        "Which kind of request is it (book, modify, cancel, compensation, out_of_scope, against_policy)?"
    );
    let sent = model.seen();
    crate::digests::assert_unchanged("workflow_kept_defaults", &sent, &out);
}
