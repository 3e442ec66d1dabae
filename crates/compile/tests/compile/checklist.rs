//! The checklist compiler end to end with a scripted mock model: four steps, one repair in
//! step 2, a review that stays invalid (kept pre-review), code fences and prose around the
//! documents, the artifact set reloaded with the loader, and the report's counts.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tauguard_compile::OutputError;
use tauguard_compile::checklist::{
    CompileError, CompileInput, CompileOptions, CompileReport, REPORT_FILE, Step, StepOutcome,
    StepRecord, compile_checklists, compile_checklists_with,
};
use tauguard_core::ToolSpec;
use tauguard_core::message::Usage;
use tauguard_guards::{ToolCatalog, load_domain_checklists};
use tauguard_testkit::scripted::{ScriptedModel, text_reply};

use crate::support::prompts_dir;

/// Replies from a queue, in order; records every request.
fn scripted_model(replies: &[&str]) -> Arc<ScriptedModel> {
    ScriptedModel::new("mock/scripted-1", replies, |next, _| {
        let content = next.expect("the script has a reply for every call");
        let usage = Usage {
            prompt_tokens: 1000,
            completion_tokens: 200,
            cached_prompt_tokens: 100,
        };
        Ok(text_reply(
            content,
            usage,
            Some(0.01),
            Duration::from_millis(5),
        ))
    })
}

/// The report's record of `step` on `target`.
fn step_of<'r>(report: &'r CompileReport, step: Step, target: &str) -> &'r StepRecord {
    report
        .steps
        .iter()
        .find(|s| s.step == step && s.target == target)
        .unwrap_or_else(|| panic!("no {step:?} step on `{target}` in the report"))
}

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: serde_json::json!({"type": "object", "properties": {"user_id": {"type": "string"}}}),
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        tool("book_reservation", "Book a reservation."),
        tool("cancel_reservation", "Cancel the whole reservation."),
        tool("get_user_details", "Get the details of a user."),
        tool(
            "get_reservation_details",
            "Get the details of a reservation.",
        ),
        tool(
            "calculate",
            "Calculate the result of a mathematical expression.",
        ),
    ]
}

/// Compiles the test's airline policy and [`tools`] with `model` into `out`, with `options`
/// or (through [`compile_checklists`]) the defaults.
async fn compile_airline(
    model: &ScriptedModel,
    out: &Path,
    options: Option<&CompileOptions>,
) -> Result<CompileReport, CompileError> {
    let tools = tools();
    let prompts = prompts_dir();
    let input = CompileInput {
        model,
        domain: "airline",
        policy: POLICY,
        tools: &tools,
        prompts_dir: &prompts,
    };
    match options {
        Some(options) => compile_checklists_with(input, out, options).await,
        None => compile_checklists(input, out).await,
    }
}

const POLICY: &str = "# Airline policy (test)\nThe agent must first obtain the user id. Each reservation can have at most five passengers. \
Before any database update, list the details and obtain explicit user confirmation (yes).";

const CLASSIFY: &str = r#"Here is my classification:
```json
{"tools": [
  {"name": "book_reservation", "class": "mutating", "reason": "creates a reservation"},
  {"name": "cancel_reservation", "class": "mutating", "reason": "cancels a reservation"},
  {"name": "get_user_details", "class": "read_only", "reason": "lookup"},
  {"name": "get_reservation_details", "class": "read_only", "reason": "lookup"},
  {"name": "calculate", "class": "other", "reason": "arithmetic"}
]}
```"#;

/// The requirements of both book_reservation replies (the review rewrites only the
/// constraint), spelled once.
macro_rules! book_requirements {
    () => {
        "requirements:
  - name: obtain_user_id
    type: procedural
    hint: The user gave their id.
  - name: user_details_retrieved
    type: data
    tool: get_user_details
    hint: Looked up the user.
  - name: user_confirmation
    type: procedural
    hint: The user said yes after the summary.
"
    };
}

const BOOK: &str = concat!(
    "Sure! Here is the checklist for book_reservation.

```yaml
tool: book_reservation
description: Books a reservation.
constraints:
  - name: max_five_passengers
    rule: At most five passengers.
",
    book_requirements!(),
    "```

Let me know if you need anything else."
);

/// Invalid: a data requirement names a mutating tool, and an unknown key.
const CANCEL_BAD: &str = "```yaml
tool: cancel_reservation
requirements:
  - name: reservation_details_retrieved
    type: data
    tool: book_reservation
    hint: Looked up.
```";

const CANCEL_FIXED: &str = "```yaml
tool: cancel_reservation
description: Cancels a reservation.
requirements:
  - name: reservation_details_retrieved
    type: data
    tool: get_reservation_details
    hint: Looked up the reservation.
  - name: user_confirmation
    type: procedural
    hint: The user said yes.
```";

/// Unfenced YAML between prose lines.
const GENERAL: &str = "The general rules follow.
rules:
  - name: obtain_user_id_once
    rule: Verify the user id once per conversation.
  - name: one_action_per_turn
    rule: One tool call at a time.
That is all.";

const BOOK_REVIEWED: &str = concat!(
    "```yaml
tool: book_reservation
description: Books a reservation.
constraints:
  - name: max_five_passengers
    rule: The reservation has at most five passengers.
    hint: Policy says at most five.
",
    book_requirements!(),
    "```"
);

const NOT_YAML: &str = "I think the checklist is fine as it is.";

fn full_script() -> Vec<&'static str> {
    vec![
        CLASSIFY,      // step 1
        BOOK,          // step 2: book_reservation
        CANCEL_BAD,    // step 2: cancel_reservation (invalid)
        CANCEL_FIXED,  // step 2: cancel_reservation repair
        GENERAL,       // step 3
        BOOK_REVIEWED, // step 4: book_reservation (changed)
        NOT_YAML,      // step 4: cancel_reservation (invalid)
        NOT_YAML,      // step 4: cancel_reservation repair (still invalid: keep the draft)
        GENERAL,       // step 4: general rules (unchanged)
    ]
}

#[tokio::test]
async fn compiles_a_loadable_artifact_set_with_repairs() {
    let model = scripted_model(&full_script());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("checklist");
    let report = compile_airline(&model, &out, None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(model.left(), 0, "every scripted reply was used");

    // The artifact set loads with the loader, using the compiled classification and a list
    // built independently.
    let info = ToolCatalog::new(
        "airline",
        ["book_reservation", "cancel_reservation"],
        ["get_user_details", "get_reservation_details"],
        ["calculate"],
    );
    assert_eq!(report.classification, info);
    let set = load_domain_checklists(&out, &info).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.tools.len(), 2);
    assert_eq!(set.general.len(), 2);
    // The review of book_reservation was applied; cancel_reservation kept its repaired draft.
    let book = set.get("book_reservation").unwrap();
    assert_eq!(
        book.constraints[0].hint.as_deref(),
        Some("Policy says at most five.")
    );
    let cancel = set.get("cancel_reservation").unwrap();
    assert_eq!(
        cancel.requirements[0].tool.as_deref(),
        Some("get_reservation_details")
    );

    // The report.
    assert_eq!(report.model, "mock/scripted-1");
    assert_eq!(
        report.repairs, 2,
        "one step-2 repair and one failed review repair"
    );
    assert_eq!(report.reviews_changed, 1);
    assert_eq!(report.reviews_kept_previous, 1);
    assert_eq!(report.usage.calls, 9);
    assert_eq!(report.usage.prompt_tokens, 9000);
    assert_eq!(report.usage.completion_tokens, 1800);
    assert!((report.usage.cost.unwrap() - 0.09).abs() < 1e-9);
    assert_eq!(report.counts.requirements, 5);
    assert_eq!(report.counts.data_requirements, 2);
    assert_eq!(report.counts.constraints, 1);
    let cancel_draft = step_of(&report, Step::ToolChecklist, "cancel_reservation");
    assert_eq!(cancel_draft.tally.outcome, StepOutcome::Repaired);
    assert_eq!(cancel_draft.tally.calls, 2);
    assert!(
        cancel_draft.tally.errors[0].contains("requirements[0].tool"),
        "{:?}",
        cancel_draft.tally.errors
    );
    let cancel_review = step_of(&report, Step::Review, "cancel_reservation");
    assert_eq!(cancel_review.tally.outcome, StepOutcome::KeptPrevious);
    let general_review = step_of(&report, Step::Review, "general_rules");
    assert_eq!(general_review.tally.changed, Some(false));

    // compile_report.json is written and parses back to the same report.
    let written: CompileReport =
        serde_json::from_str(&std::fs::read_to_string(out.join(REPORT_FILE)).unwrap()).unwrap();
    assert_eq!(written, report);

    // The prompts: templates rendered with the policy and tools; the repair quotes the error.
    let requests = model.seen();
    assert!(requests[0].json_mode, "classification asks for JSON");
    assert_eq!(requests[0].temperature, None, "the model's spec decides");
    let classify = requests[0].messages[1].content().unwrap();
    assert!(
        classify.contains("at most five passengers")
            && classify.contains("get_reservation_details")
    );
    let cancel_repair = &requests[3].messages;
    assert_eq!(
        cancel_repair.len(),
        4,
        "system, user, the rejected reply, the repair"
    );
    let repair_text = cancel_repair[3].content().unwrap();
    assert!(
        repair_text.contains("requirements[0].tool") && repair_text.contains("mutating"),
        "{repair_text}"
    );
    let review = requests[5].messages[1].content().unwrap();
    assert!(
        review.contains("max_five_passengers"),
        "the review shows the draft: {review}"
    );
    crate::digests::assert_unchanged("checklist_with_repairs", &requests, &out);
}

#[tokio::test]
async fn refuses_a_non_empty_output_directory_unless_overwriting() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("checklist");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("stale_tool.yaml"), "tool: stale_tool\n").unwrap();
    std::fs::write(out.join("NOTES.md"), "kept").unwrap();

    let model = scripted_model(&full_script());
    let err = compile_airline(&model, &out, None).await.unwrap_err();
    assert!(
        matches!(err, CompileError::Output(OutputError::NotEmpty(_))),
        "{err}"
    );
    assert!(model.seen().is_empty(), "refused before any model call");

    let options = CompileOptions {
        overwrite: true,
        ..Default::default()
    };
    compile_airline(&model, &out, Some(&options))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !out.join("stale_tool.yaml").exists(),
        "the previous artifact set is replaced"
    );
    assert!(out.join("NOTES.md").exists(), "other files stay");
}

#[tokio::test]
async fn a_step_invalid_after_its_repair_fails_the_compile() {
    let model = scripted_model(&[CLASSIFY, BOOK, CANCEL_BAD, CANCEL_BAD]);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("checklist");
    let err = compile_airline(&model, &out, None).await.unwrap_err();
    match &err {
        CompileError::Invalid {
            step,
            target,
            error,
        } => {
            assert_eq!(*step, Step::ToolChecklist);
            assert_eq!(target, "cancel_reservation");
            assert!(error.contains("requirements[0].tool"), "{error}");
        }
        other => panic!("unexpected error: {other}"),
    }
    assert!(!out.exists(), "nothing is written on failure");
}

#[tokio::test]
async fn classification_mismatches_are_reported() {
    let model = scripted_model(&full_script());
    let tmp = tempfile::tempdir().unwrap();
    let known = ToolCatalog::new(
        "airline",
        ["book_reservation", "cancel_reservation"],
        ["get_user_details", "get_reservation_details"],
        ["calculate", "transfer_to_human_agents"],
    );
    let options = CompileOptions {
        known_tools: Some(known),
        ..Default::default()
    };
    let report = compile_airline(&model, &tmp.path().join("c"), Some(&options))
        .await
        .unwrap();
    assert_eq!(
        report.classification_mismatches.len(),
        1,
        "{:?}",
        report.classification_mismatches
    );
    assert!(report.classification_mismatches[0].starts_with("transfer_to_human_agents"));
}
