//! The LLM PolicyGuard verifier against recorded real-format replies, through a scripted mock
//! `ChatModel` that records every request it sees.

use crate::scripted::{FATAL, ScriptedModel, verifier_model};
use crate::support;

use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use support::{agent, call, calls, info, judge, root, tool_msg, user};
use tauguard_core::message::ToolMessage;
use tauguard_core::record::FailReason;
use tauguard_core::{Message, Requestor, ToolCall};
use tauguard_guards::{
    Constraint, Decision, DomainChecklists, FAIL_CLOSED_MESSAGE, FailMode, GeneralRule, Guard,
    GuardError, PolicyGuardError, PolicyGuardSetup, PolicyGuardVerifier, Requirement,
    RequirementType, ToolChecklist, Variant, Verdict, build_policyguard, parse_config_name,
};
use tauguard_llm::ChatModel;
use tauguard_llm::{RoleModel, SIM_PROVIDER};

// ---------------------------------------------------------------- fixtures

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verifier")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn checklists() -> DomainChecklists {
    let req = |name: &str, kind: RequirementType, tool: Option<&str>, hint: &str| Requirement {
        name: name.into(),
        kind,
        tool: tool.map(Into::into),
        alternative_tools: vec![],
        hint: hint.into(),
    };
    let mut tools = BTreeMap::new();
    tools.insert(
        "cancel_reservation".to_string(),
        ToolChecklist {
            tool: "cancel_reservation".into(),
            description: Some("Cancel a whole reservation.".into()),
            constraints: vec![Constraint {
                name: "cancellation_eligibility".into(),
                rule: "Only within 24 h of booking, an airline-cancelled flight, business cabin, or insured.".into(),
                hint: None,
            }],
            requirements: vec![
                req("obtain_user_id", RequirementType::Data, Some("get_user_details"), "The user id is verified."),
                req("reason_for_cancellation", RequirementType::Procedural, None, "The user gave a reason."),
                req("user_confirmation", RequirementType::Procedural, None, "Explicit yes after the summary."),
            ],
        },
    );
    tools.insert(
        "book_reservation".to_string(),
        ToolChecklist {
            tool: "book_reservation".into(),
            description: None,
            constraints: vec![Constraint {
                name: "max_five_passengers".into(),
                rule: "At most five passengers.".into(),
                hint: Some("count the passengers argument".into()),
            }],
            requirements: vec![req(
                "offer_insurance",
                RequirementType::Procedural,
                None,
                "Insurance was offered.",
            )],
        },
    );
    DomainChecklists {
        tools,
        general: vec![GeneralRule {
            name: "identity_once_per_session".into(),
            rule: "Verify the user's identity once per conversation.".into(),
            hint: None,
        }],
    }
}

fn setup() -> PolicyGuardSetup {
    PolicyGuardSetup::new("airline", root().join("configs/prompts")).with_checklists(checklists())
}

const SECRET_USER: &str = "My grandmother's maiden name is Quetzalcoatl";
const SECRET_AGENT: &str = "Certainly, I will look into the Zanzibar itinerary";

/// A compliant cancellation conversation; the last message carries the pending call.
fn cancel_history(pending: &ToolCall) -> Vec<Message> {
    let u = call("c1", "get_user_details", json!({"user_id": "mia_li_3668"}));
    let r = call(
        "c2",
        "get_reservation_details",
        json!({"reservation_id": "NO6JO3"}),
    );
    vec![
        Message::System {
            content: Some("agent system prompt with the policy".into()),
        },
        user(&format!("Hi, I want to cancel a trip. {SECRET_USER}.")),
        agent(SECRET_AGENT),
        user("My user id is mia_li_3668 and the reservation is NO6JO3."),
        calls(&u),
        tool_msg(
            "c1",
            r#"{"user_id": "mia_li_3668", "membership": "gold"}"#,
            false,
            false,
        ),
        calls(&r),
        tool_msg(
            "c2",
            r#"{"reservation_id": "NO6JO3", "cabin": "economy", "insurance": "yes"}"#,
            false,
            false,
        ),
        agent(
            "I will cancel reservation NO6JO3 and refund it to the original payment. Do you confirm? (yes/no)",
        ),
        user("Yes, please go ahead."),
        calls(pending),
    ]
}

fn pending_cancel() -> ToolCall {
    call(
        "c9",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    )
}

fn verifier(name: &str, model: &Arc<ScriptedModel>, s: &PolicyGuardSetup) -> Arc<dyn Guard> {
    build_policyguard(
        name,
        false,
        RoleModel::Built(model.clone() as Arc<dyn ChatModel>),
        s,
    )
    .expect("builds")
}

/// Judges the pending cancellation at the end of the compliant cancellation conversation.
async fn judge_cancel(g: &dyn Guard) -> Result<Decision, GuardError> {
    let p = pending_cancel();
    judge(g, &cancel_history(&p), &p).await
}

/// Whether the verifier noted `note` while parsing the reply.
fn has_note(d: &Decision, note: &str) -> bool {
    info(d)["parse_notes"]
        .as_array()
        .expect("parse notes")
        .contains(&json!(note))
}

fn text(m: &Message) -> &str {
    m.content().unwrap_or_default()
}

// ---------------------------------------------------------------- replies

#[tokio::test]
async fn valid_block_reply() {
    let model = verifier_model(&[&fixture("valid_block.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(d.requirements.len(), 4);
    assert!(!d.requirements[2].met);
    assert_eq!(d.requirements[2].name, "cancellation_eligibility");
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .starts_with("This reservation is basic economy")
    );
    assert_eq!(info(&d)["attempts"], json!(1));
    assert_eq!(info(&d)["verifier"], json!("mock/verifier-1"));
    assert!(!info(&d).contains_key("fail_mode_used"));
    // Usage of the one completion.
    assert_eq!(d.usage.calls, 1);
    assert_eq!(d.usage.usage.prompt_tokens, 1000);
    assert_eq!(d.usage.usage.cached_prompt_tokens, 800);
    assert_eq!(d.usage.cost, Some(0.002));
    assert!((d.usage.latency_seconds - 0.5).abs() < 1e-9);
    // Request shape: system prefix + user request, no forced temperature (the verifier's
    // spec decides), JSON mode, seed and trial.
    let seen = model.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].messages.len(), 2);
    assert!(matches!(seen[0].messages[0], Message::System { .. }));
    assert!(matches!(seen[0].messages[1], Message::User(_)));
    assert_eq!(seen[0].temperature, None);
    assert!(seen[0].json_mode);
    assert_eq!(seen[0].seed, Some(42));
    assert_eq!(seen[0].trial, 1);
    assert!(seen[0].tools.is_empty());
}

#[tokio::test]
async fn valid_pass_reply() {
    let model = verifier_model(&[&fixture("valid_pass.json")]);
    let g = verifier("pg-raw", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(d.remediation, None);
    assert_eq!(d.requirements.len(), 2);
    assert!(d.requirements.iter().all(|r| r.met));
}

#[tokio::test]
async fn missing_agent_message_is_synthesised_from_not_met_reasons() {
    let model = verifier_model(&[&fixture("missing_agent_message.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    let m = d.remediation.clone().unwrap();
    assert!(m.contains("user_confirmation"), "{m}");
    assert!(m.contains("never listed the booking details"), "{m}");
    assert!(
        !m.contains("obtain_user_id"),
        "only NOT MET items are named: {m}"
    );
    assert_eq!(info(&d)["synthesised_agent_message"], json!(true));
    assert!(
        has_note(&d, "missing_agent_message"),
        "{:?}",
        info(&d)["parse_notes"]
    );
}

#[tokio::test]
async fn missing_requirements_are_tolerated() {
    let model = verifier_model(&[&fixture("missing_requirements.json")]);
    let g = verifier("pg-raw", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert!(d.requirements.is_empty());
    assert!(
        has_note(&d, "missing_requirements"),
        "{:?}",
        info(&d)["parse_notes"]
    );
    assert_eq!(model.seen().len(), 1, "no repair needed");
}

#[tokio::test]
async fn prose_around_json() {
    let model = verifier_model(&[&fixture("prose_around_json.txt")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(d.requirements.len(), 2);
    assert!(
        has_note(&d, "prose_around_json"),
        "{:?}",
        info(&d)["parse_notes"]
    );
    assert_eq!(model.seen().len(), 1);
}

#[tokio::test]
async fn fenced_json() {
    let model = verifier_model(&[&fixture("fenced.md")]);
    let g = verifier("pg-checklist", &model, &setup());
    let p = call("c9", "book_reservation", json!({"user_id": "mia_li_3668"}));
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert!(
        d.remediation
            .clone()
            .unwrap()
            .starts_with("Ask the user whether they want travel insurance")
    );
    assert!(has_note(&d, "code_fence"), "{:?}", info(&d)["parse_notes"]);
}

#[tokio::test]
async fn wrong_verdict_casing_and_status_spelling() {
    let model = verifier_model(&[&fixture("verdict_casing.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let p = pending_cancel();
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    let met: Vec<bool> = d.requirements.iter().map(|r| r.met).collect();
    assert_eq!(met, vec![true, false, false]);
    assert!(
        d.remediation
            .clone()
            .unwrap()
            .starts_with("Ask the user why they want to cancel"),
        "Agent_Message key is read"
    );
    let notes = info(&d)["parse_notes"].as_array().unwrap().clone();
    assert!(
        notes.contains(&json!("verdict_casing")) && notes.contains(&json!("status_spelling")),
        "{notes:?}"
    );

    let model = verifier_model(&[&fixture("verdict_lowercase_pass.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(d.remediation, None);
}

// ---------------------------------------------------------------- repair and fail modes

#[tokio::test]
async fn unparseable_then_valid_is_repaired_with_one_retry() {
    let bad = fixture("unparseable_1.txt");
    let model = verifier_model(&[&bad, &fixture("valid_block.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(info(&d)["attempts"], json!(2));
    assert_eq!(info(&d)["repaired"], json!(true));
    assert!(!info(&d).contains_key("fail_mode_used"));
    assert_eq!(d.fail, None, "the repaired verdict is the model's");
    assert_eq!(info(&d)["failed_attempts"][0]["raw"], json!(bad));
    assert_eq!(d.usage.calls, 2);
    assert_eq!(d.usage.usage.prompt_tokens, 2000);
    assert!((d.usage.cost.unwrap() - 0.004).abs() < 1e-12);
    assert!((d.usage.latency_seconds - 1.0).abs() < 1e-9);

    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    let (first, second) = (&seen[0].messages, &seen[1].messages);
    assert_eq!(
        second.len(),
        4,
        "prefix, request, bad reply, repair instruction"
    );
    assert_eq!(second[0], first[0], "same static prefix");
    assert_eq!(second[1], first[1], "same request");
    assert!(matches!(second[2], Message::Assistant(_)));
    assert_eq!(text(&second[2]), bad);
    assert!(matches!(second[3], Message::User(_)));
    let repair = text(&second[3]);
    assert!(
        repair.contains("the reply contains no JSON object"),
        "{repair}"
    );
    assert!(
        repair.contains("\"verdict\": \"PASS\" or \"BLOCK\""),
        "{repair}"
    );
}

#[tokio::test]
async fn unparseable_twice_fails_closed_by_default() {
    let model = verifier_model(&[&fixture("unparseable_1.txt"), &fixture("unparseable_2.txt")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .contains("could not reach a verdict")
    );
    assert_eq!(info(&d)["fail_mode"], json!("closed"));
    assert_eq!(info(&d)["fail_mode_used"], json!(true));
    assert_eq!(info(&d)["attempts"], json!(2));
    assert_eq!(info(&d)["parse_errors"].as_array().unwrap().len(), 2);
    assert_eq!(d.usage.calls, 2);
    assert_eq!(model.seen().len(), 2, "exactly one repair retry");
    assert_eq!(d.fail.map(|c| c.reason), Some(FailReason::ParseFailure));
    assert_eq!(
        info(&d)["repaired"],
        json!(false),
        "the repair did not parse"
    );
    let failed = info(&d)["failed_attempts"].as_array().unwrap().clone();
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[1]["raw"], json!(fixture("unparseable_2.txt")));
    assert_eq!(failed[1]["finish_reason"], json!("stop"));
}

#[tokio::test]
async fn unparseable_twice_fails_open_when_configured() {
    let model = verifier_model(&[&fixture("unparseable_1.txt"), &fixture("unparseable_2.txt")]);
    let g = verifier("pg-raw", &model, &setup().with_fail_mode(FailMode::Open));
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(d.remediation, None);
    assert_eq!(info(&d)["fail_mode"], json!("open"));
    assert_eq!(info(&d)["fail_mode_used"], json!(true));
    assert_eq!(d.usage.calls, 2);
}

#[tokio::test]
async fn empty_reply_is_repaired() {
    let model = verifier_model(&["", &fixture("valid_pass.json")]);
    let g = verifier("pg-raw", &model, &setup());
    let d = judge_cancel(g.as_ref()).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    let seen = model.seen();
    assert_eq!(text(&seen[1].messages[2]), "(empty reply)");
    assert!(text(&seen[1].messages[3]).contains("empty"));
}

#[tokio::test]
async fn a_verifier_that_cannot_answer_gets_the_fail_mode_decision() {
    let model = verifier_model(&[]);
    let g = verifier("pg-raw", &model, &setup());
    let p = pending_cancel();
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block, "fail mode closed is the default");
    assert_eq!(d.remediation.as_deref(), Some(FAIL_CLOSED_MESSAGE));
    assert_eq!(info(&d)["fail_mode_used"], json!(true));
    assert_eq!(info(&d)["fail_mode"], json!("closed"));
    let error = info(&d)["model_error"].as_str().unwrap().to_string();
    assert!(error.contains("no scripted reply left"), "{error}");
    assert_eq!(d.fail.map(|c| c.reason), Some(FailReason::Connection));
    // After a reply that needed repair, the repair call failing is the same.
    let model = verifier_model(&[&fixture("unparseable_1.txt")]);
    let g = verifier("pg-raw", &model, &setup().with_fail_mode(FailMode::Open));
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(info(&d)["attempts"], json!(2));
    assert_eq!(d.usage.calls, 1, "the first reply is still accounted");
}

#[tokio::test]
async fn a_fatal_verifier_error_is_an_error() {
    let model = verifier_model(&[FATAL]);
    let g = verifier("pg-raw", &model, &setup());
    let p = pending_cancel();
    let err = judge(g.as_ref(), &cancel_history(&p), &p)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, GuardError::Model(e) if e.is_fatal()),
        "{err}"
    );
}

// ---------------------------------------------------------------- strict vs advisory

#[tokio::test]
async fn advisory_keeps_the_model_verdict_strict_forces_block() {
    let p = pending_cancel();
    let model = verifier_model(&[&fixture("advisory_pass_with_not_met.json")]);
    let g = verifier("pg-checklist", &model, &setup());
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(
        d.verdict,
        Verdict::Pass,
        "advisory: one inapplicable NOT MET does not block"
    );
    assert!(d.requirements.iter().any(|r| !r.met));

    let model = verifier_model(&[&fixture("advisory_pass_with_not_met.json")]);
    let g = build_policyguard(
        "pg-checklist",
        true,
        RoleModel::Built(model.clone() as Arc<dyn ChatModel>),
        &setup(),
    )
    .unwrap();
    assert_eq!(g.name(), "pg-checklist-strict");
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(info(&d)["strict_override"], json!(true));
    assert_eq!(info(&d)["model_verdict"], json!("PASS"));
    let m = d.remediation.unwrap();
    assert!(m.contains("offer_insurance"), "{m}");
    // The strict prompt states the strict rule.
    assert!(text(&model.seen()[0].messages[0]).contains("Verdict rule (strict)"));
}

// ---------------------------------------------------------------- prompts

#[tokio::test]
async fn static_prefix_is_byte_stable_across_calls() {
    let model = verifier_model(&[
        &fixture("valid_pass.json"),
        &fixture("valid_pass.json"),
        &fixture("valid_pass.json"),
    ]);
    let g = verifier("pg-checklist", &model, &setup());
    let p1 = pending_cancel();
    let h1 = cancel_history(&p1);
    judge(g.as_ref(), &h1, &p1).await.unwrap();
    // A different tool, a different (shorter) history.
    let p2 = call(
        "c5",
        "book_reservation",
        json!({"user_id": "mia_li_3668", "passengers": []}),
    );
    let h2 = vec![user("Book me a flight please."), calls(&p2)];
    judge(g.as_ref(), &h2, &p2).await.unwrap();
    // A separately built guard of the same config and domain.
    let g2 = verifier("pg-checklist", &model, &setup());
    judge(g2.as_ref(), &h1, &p1).await.unwrap();

    let seen = model.seen();
    let prefixes: Vec<&str> = seen.iter().map(|r| text(&r.messages[0])).collect();
    assert_eq!(prefixes[0].as_bytes(), prefixes[1].as_bytes());
    assert_eq!(prefixes[0].as_bytes(), prefixes[2].as_bytes());
    assert_ne!(
        text(&seen[0].messages[1]),
        text(&seen[1].messages[1]),
        "the dynamic part differs"
    );
    // The static prefix holds no per-call content.
    for s in [SECRET_USER, "NO6JO3", "mia_li_3668"] {
        assert!(!prefixes[0].contains(s), "prefix leaks `{s}`");
    }
    // The pending call is in the dynamic part, not as a history entry.
    let req = text(&seen[0].messages[1]);
    assert!(
        req.contains("cancel_reservation({\"reservation_id\":\"NO6JO3\"})"),
        "{req}"
    );
    assert!(!req.contains("AGENT CALLS cancel_reservation"), "{req}");
    assert!(
        req.contains("Judge it against the checklist for cancel_reservation"),
        "{req}"
    );
    assert!(
        text(&seen[1].messages[1]).contains("Judge it against the checklist for book_reservation")
    );
    // The verifier is given the pending tool's checklist, in the request, and no other
    // tool's; the prefix holds the general rules and no tool's checklist.
    let cancel_items = [
        "<checklist tool=\"cancel_reservation\">",
        "Action: Cancel a whole reservation.",
        "- cancellation_eligibility: Only within 24 h of booking",
        "- obtain_user_id [data, shown by get_user_details]: The user id is verified.",
        "- reason_for_cancellation [procedural]: The user gave a reason.",
        "- user_confirmation [procedural]: Explicit yes after the summary.",
    ];
    let book_items = [
        "<checklist tool=\"book_reservation\">",
        "- max_five_passengers: At most five passengers. (how to check: count the passengers argument)",
        "- offer_insurance [procedural]: Insurance was offered.",
    ];
    let (cancel_req, book_req) = (text(&seen[0].messages[1]), text(&seen[1].messages[1]));
    for item in cancel_items {
        assert!(cancel_req.contains(item), "`{item}` missing: {cancel_req}");
        assert!(
            !book_req.contains(item),
            "`{item}` in another tool's request"
        );
        assert!(!prefixes[0].contains(item), "`{item}` in the prefix");
    }
    for item in book_items {
        assert!(book_req.contains(item), "`{item}` missing: {book_req}");
        assert!(
            !cancel_req.contains(item),
            "`{item}` in another tool's request"
        );
        assert!(!prefixes[0].contains(item), "`{item}` in the prefix");
    }
    assert!(prefixes[0].contains("- identity_once_per_session: Verify the user's identity"));
}

#[tokio::test]
async fn variants_see_the_right_inputs() {
    let p = pending_cancel();
    let h = cancel_history(&p);
    let policy_marker = support::policy()
        .lines()
        .find(|l| l.trim().len() > 30)
        .unwrap()
        .trim()
        .to_string();
    let mut prompts = BTreeMap::new();
    for name in ["pg-raw", "pg-raw-traj", "pg-checklist", "pg-checklist-only"] {
        let model = verifier_model(&[&fixture("valid_pass.json")]);
        let g = verifier(name, &model, &setup());
        assert_eq!(g.name(), name);
        judge(g.as_ref(), &h, &p).await.unwrap();
        let seen = model.seen();
        prompts.insert(
            name,
            (
                text(&seen[0].messages[0]).to_string(),
                text(&seen[0].messages[1]).to_string(),
            ),
        );
    }
    let has_policy = |n: &str| prompts[n].0.contains(&policy_marker);
    // Checklist variants: the general rules in the prefix, the pending tool's checklist in
    // the request; the other variants neither.
    let rules_and_checklist = |n: &str| {
        (
            prompts[n].0.contains("identity_once_per_session"),
            prompts[n].1.contains("cancellation_eligibility"),
        )
    };
    assert!(has_policy("pg-raw") && rules_and_checklist("pg-raw") == (false, false));
    assert!(has_policy("pg-raw-traj") && rules_and_checklist("pg-raw-traj") == (false, false));
    assert!(has_policy("pg-checklist") && rules_and_checklist("pg-checklist") == (true, true));
    assert!(
        !has_policy("pg-checklist-only")
            && rules_and_checklist("pg-checklist-only") == (true, true)
    );
    // Output contract in every prefix.
    for (p, _) in prompts.values() {
        assert!(p.contains(r#"{"requirements": [{"name": "<short_snake_case_name>", "status": "MET" or "NOT MET""#), "{p}");
        assert!(p.contains(r#""verdict": "PASS" or "BLOCK", "agent_message""#));
    }
    // Dialogue visible except for pg-raw-traj.
    for n in ["pg-raw", "pg-checklist", "pg-checklist-only"] {
        assert!(
            prompts[n].1.contains(SECRET_USER) && prompts[n].1.contains(SECRET_AGENT),
            "{n}"
        );
    }
}

#[tokio::test]
async fn raw_traj_prompt_contains_no_dialogue() {
    let model = verifier_model(&[&fixture("valid_block.json")]);
    let g = verifier("pg-raw-traj", &model, &setup());
    let p = pending_cancel();
    let h = cancel_history(&p);
    judge(g.as_ref(), &h, &p).await.unwrap();
    let seen = model.seen();
    let all: String = seen[0]
        .messages
        .iter()
        .map(text)
        .collect::<Vec<_>>()
        .join("\n");
    for m in &h {
        if let Message::User(x) | Message::Assistant(x) = m
            && let Some(t) = x.content.as_deref()
        {
            assert!(!all.contains(t), "dialogue leaked: {t}");
        }
    }
    for s in [
        "Quetzalcoatl",
        "Zanzibar",
        "Yes, please go ahead",
        "Do you confirm",
    ] {
        assert!(!all.contains(s), "dialogue leaked: {s}");
    }
    let req = text(&seen[0].messages[1]);
    assert!(
        req.contains("AGENT CALLS get_user_details({\"user_id\":\"mia_li_3668\"})"),
        "{req}"
    );
    assert!(req.contains("RESULT of get_reservation_details"), "{req}");
    assert!(req.contains("dialogue removed"), "{req}");
    assert!(text(&seen[0].messages[0]).contains("have been removed"));
}

#[tokio::test]
async fn blocked_attempts_are_shown_as_blocked() {
    let model = verifier_model(&[&fixture("valid_pass.json")]);
    let g = verifier("pg-raw", &model, &setup());
    let p = pending_cancel();
    let earlier = call(
        "c8",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    );
    let mut h = cancel_history(&p);
    let last = h.pop().unwrap();
    h.push(calls(&earlier));
    h.push(Message::Tool(ToolMessage {
        id: "c8".into(),
        content: "Ask for the cancellation reason first.".into(),
        requestor: Requestor::Assistant,
        error: true,
        turn_idx: None,
        timestamp: None,
        guard_blocked: true,
    }));
    h.push(last);
    judge(g.as_ref(), &h, &p).await.unwrap();
    let req = text(&model.seen()[0].messages[1]).to_string();
    assert!(req.contains("RESULT of cancel_reservation (BLOCKED by the verifier, never executed): Ask for the cancellation reason first."), "{req}");
}

// ---------------------------------------------------------------- construction

#[test]
fn config_names_and_errors() {
    assert_eq!(
        parse_config_name("pg-checklist-only-strict"),
        Some((Variant::ChecklistOnly, true))
    );
    assert_eq!(
        parse_config_name("pg-raw-traj"),
        Some((Variant::RawTraj, false))
    );
    assert_eq!(parse_config_name("pg-raw-strict"), None);
    let model: Arc<dyn ChatModel> = verifier_model(&[]);
    let s = setup();
    // Strict mode is asked for by the name or by the flag; the name says which it got.
    for (name, strict, built) in [
        ("pg-checklist-strict", false, "pg-checklist-strict"),
        ("pg-checklist-only", true, "pg-checklist-only-strict"),
    ] {
        let g = build_policyguard(name, strict, RoleModel::Built(model.clone()), &s).unwrap();
        assert_eq!(g.name(), built);
    }
    assert!(matches!(
        build_policyguard("pg-raw", true, RoleModel::Built(model.clone()), &s),
        Err(PolicyGuardError::StrictWithoutChecklist(_))
    ));
    assert!(matches!(
        build_policyguard("pg-raw-strict", false, RoleModel::Built(model.clone()), &s),
        Err(PolicyGuardError::StrictWithoutChecklist(_))
    ));
    assert!(matches!(
        build_policyguard("pg-magic", false, RoleModel::Built(model.clone()), &s),
        Err(PolicyGuardError::UnknownVariant(_))
    ));
    let bare = PolicyGuardSetup::new("airline", root().join("configs/prompts"));
    assert!(matches!(
        build_policyguard(
            "pg-checklist",
            false,
            RoleModel::Built(model.clone()),
            &bare
        ),
        Err(PolicyGuardError::MissingChecklists { .. })
    ));
    assert!(build_policyguard("pg-raw", false, RoleModel::Built(model.clone()), &bare).is_ok());
    let nowhere = PolicyGuardSetup::new("airline", root().join("no/such/prompts"));
    let err = build_policyguard("pg-raw", false, RoleModel::Built(model), &nowhere)
        .err()
        .expect("missing templates fail");
    assert!(err.to_string().contains("system.jinja"), "{err}");
}

#[tokio::test]
async fn the_sim_role_model_gives_the_sim_verifier() {
    let s = setup();
    assert!(matches!(
        build_policyguard("pg-raw", false, RoleModel::Sim, &s),
        Err(PolicyGuardError::MissingPrerequisites(_))
    ));
    let s = s.load_prerequisites(&root().join("tasks")).unwrap();
    let p = pending_cancel();
    let g = build_policyguard("pg-checklist", true, RoleModel::Sim, &s).unwrap();
    assert_eq!(g.name(), "pg-checklist-strict");
    let d = judge(g.as_ref(), &cancel_history(&p), &p).await.unwrap();
    assert_eq!(info(&d)["verifier"], json!(SIM_PROVIDER));
    assert_eq!(d.usage.calls, 0);
}

#[test]
fn prompt_templates_render_for_every_config() {
    let model: Arc<dyn ChatModel> = verifier_model(&[]);
    for v in Variant::ALL {
        for strict in [false, true] {
            if strict && !v.supports_strict() {
                continue;
            }
            let g = PolicyGuardVerifier::new(v, strict, model.clone(), &setup()).unwrap();
            let p = pending_cancel();
            let r = g.render("POLICY TEXT", &cancel_history(&p), &p).unwrap();
            assert!(!r.prefix.contains("{{") && !r.prefix.contains("{%"));
            assert!(!r.request.contains("{{") && !r.request.contains("{%"));
            assert!(!r.prefix.contains("\n\n\n") && !r.request.contains("\n\n\n"));
            assert_eq!(r.prefix.contains("POLICY TEXT"), v.uses_policy());
        }
    }
}

#[test]
fn authored_checklists_render_per_pending_tool() {
    use tauguard_guards::ToolCatalog;
    use tauguard_guards::load_domain_checklists;
    let info_tools = ToolCatalog::from_toolkit("airline", support::AIRLINE_TOOLS);
    let checklists = load_domain_checklists(&root().join("tasks/airline/checklist"), &info_tools)
        .expect("authored airline checklists load");
    let s = PolicyGuardSetup::new("airline", root().join("configs/prompts"))
        .with_checklists(checklists.clone());
    let model: Arc<dyn ChatModel> = verifier_model(&[]);
    let g = PolicyGuardVerifier::new(Variant::ChecklistOnly, false, model, &s).unwrap();
    let mut prefixes = Vec::new();
    for (tool, cl) in &checklists.tools {
        let p = call("c9", tool, json!({}));
        let r = g.render("", &[calls(&p)], &p).unwrap();
        assert!(
            r.request.contains(&format!("<checklist tool=\"{tool}\">")),
            "{tool}"
        );
        assert_eq!(r.request.matches("<checklist tool=").count(), 1, "{tool}");
        assert!(!r.prefix.contains("<checklist tool="), "{tool}");
        for q in &cl.requirements {
            assert!(r.request.contains(&format!("- {} [", q.name)), "{}", q.name);
        }
        for c in &cl.constraints {
            assert!(r.request.contains(&format!("- {}: ", c.name)), "{}", c.name);
        }
        for rule in &checklists.general {
            assert!(
                r.prefix.contains(&format!("- {}: ", rule.name)),
                "{}",
                rule.name
            );
        }
        prefixes.push(r.prefix);
    }
    assert!(prefixes.len() > 1);
    assert!(
        prefixes.windows(2).all(|w| w[0] == w[1]),
        "one prefix per domain"
    );
}
