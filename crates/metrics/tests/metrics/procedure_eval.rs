//! The process evaluator on hand-made trajectories: the deterministic confirmation matcher
//! (an explicit yes after a summary naming the arguments, LLM phrasing included), linked and
//! state-checked reads, blocked calls outside the trajectory, the position of a first
//! deviation, and which judge decided each predicate.

use serde_json::{Value, json};
use tauguard_core::Message;
use tauguard_core::record::Slice;
use tauguard_metrics::procedure::{JudgeKind, Position, ProcedureSpec, StandInJudge, evaluate};
use tauguard_testkit::synthetic::record;

const SPEC: &str = r#"
schema = "tauguard.procedure/1"
domain = "shop"
guarded = ["cancel_order"]
identity_tools = ["find_user"]
reads = ["get_order"]

[provenance]
origin = "hand-written"
authors = "tauguard maintainers (test)"
policy_files = ["policy.md"]
sections = ["Cancel"]
date = "2026-12-02"

[[requirement]]
id = "identity"
level = "P"
file = "policy.md"
section = "Cancel"
passage = "authenticate first"
check = { kind = "identity_before", tools = ["*", "get_order"] }

[[requirement]]
id = "status_pending"
level = "P"
file = "policy.md"
section = "Cancel"
passage = "only pending orders"
check = { kind = "read_before", tools = ["cancel_order"], reads = ["get_order"], link = { order_id = "order_id" }, field = "status", one_of = ["pending"] }

[[requirement]]
id = "confirm"
level = "P"
file = "policy.md"
section = "Cancel"
passage = "explicit confirmation"
check = { kind = "confirm_before", tools = ["*"], arguments = ["order_id"] }

[[requirement]]
id = "as_confirmed"
level = "A"
file = "policy.md"
section = "Cancel"
passage = "list the action details"
check = { kind = "confirmed_arguments", tools = ["*"] }

[[requirement]]
id = "reason"
level = "P"
file = "policy.md"
section = "Cancel"
passage = "obtain the reason"
check = { kind = "dialogue", predicate = "reason_obtained", question = "Did the agent ask why?", before = ["cancel_order"], cues = ["why", "reason"] }

[[requirement]]
id = "no_advice"
level = "P"
file = "policy.md"
section = "Cancel"
passage = "no recommendations"
check = { kind = "dialogue", predicate = "information_conveyed", question = "Only facts?" }
"#;

fn spec() -> ProcedureSpec {
    ProcedureSpec::from_toml(SPEC, "shop/procedure.toml").unwrap()
}

fn agent(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null,
           "tool_calls": [{"id": id, "name": name, "arguments": args}]})
}

fn result(id: &str, content: Value, blocked: bool) -> Value {
    json!({"role": "tool", "id": id, "content": content.to_string(), "guard_blocked": blocked})
}

/// A cancellation after identity, the order read and a summary, with the user's `answer`.
fn trajectory(summary: &str, answer: &str, status: &str) -> Vec<Value> {
    vec![
        user("I want to cancel my order #W1."),
        agent("Could you tell me your email, and the reason for cancelling?"),
        user("a@b.c, I no longer need it"),
        call("c1", "find_user", json!({"email": "a@b.c"})),
        result("c1", json!("u1"), false),
        call("c2", "get_order", json!({"order_id": "#W1"})),
        result("c2", json!({"order_id": "#W1", "status": status}), false),
        agent(summary),
        user(answer),
        call(
            "c3",
            "cancel_order",
            json!({"order_id": "#W1", "reason": "no longer needed"}),
        ),
        result("c3", json!({"status": "cancelled"}), false),
        agent("Done."),
    ]
}

fn verdict_of(messages: Vec<Value>) -> tauguard_metrics::procedure::ProcessVerdict {
    let mut rec = record("t", Slice::Mut, 0, 1.0);
    rec.domain = "shop".into();
    rec.messages = messages
        .into_iter()
        .map(|m| serde_json::from_value::<Message>(m).unwrap())
        .collect();
    evaluate(&rec, &spec(), &StandInJudge)
}

const SUMMARY: &str = "I'll cancel order #W1 with reason \"no longer needed\". Shall I proceed with the cancellation?";

#[test]
fn an_llm_style_summary_and_yes_is_process_valid() {
    let v = verdict_of(trajectory(SUMMARY, "Yes, please go ahead.", "pending"));
    assert!(v.process_valid, "{:?}", v.violations);
    let judge = |id: &str| v.judgements.iter().find(|j| j.requirement == id).unwrap();
    assert_eq!(judge("confirm").judge, JudgeKind::Deterministic);
    assert_eq!(judge("reason").judge, JudgeKind::StandIn);
    // Without cues the stand-in cannot decide: unjudged, never a violation.
    assert_eq!(judge("no_advice").judge, JudgeKind::Unjudged);
    assert_eq!(judge("no_advice").unjudged, 1);
}

#[test]
fn a_qualified_yes_or_a_summary_without_the_arguments_is_no_confirmation() {
    for (summary, answer, detail) in [
        (SUMMARY, "Yes, but wait a second", "no explicit yes"),
        (
            "I'll cancel your order. Shall I proceed?",
            "Yes.",
            "does not name #w1",
        ),
        ("Here is the order.", "Yes.", "no confirmation request"),
    ] {
        let v = verdict_of(trajectory(summary, answer, "pending"));
        let d = v.first_deviation.as_ref().unwrap();
        assert_eq!(
            (d.requirement.as_str(), d.message_index),
            ("confirm", 9),
            "{v:?}"
        );
        assert_eq!(d.position, Position::InsideGuardedCall);
        assert!(d.detail.contains(detail), "{}", d.detail);
    }
    // A summary naming other values than the call's: the action is not the one confirmed.
    let v = verdict_of(trajectory(
        "I'll cancel order #W1 with reason \"ordered by mistake\". Shall I proceed?",
        "Yes.",
        "pending",
    ));
    assert_eq!(v.violations.len(), 1, "{:?}", v.violations);
    assert_eq!(v.violations[0].requirement, "as_confirmed");
}

#[test]
fn a_read_showing_the_wrong_state_breaks_the_state_check() {
    let v = verdict_of(trajectory(SUMMARY, "Yes.", "delivered"));
    let d = v.first_deviation.unwrap();
    assert_eq!(d.requirement, "status_pending");
    assert!(d.detail.contains("\"delivered\""), "{}", d.detail);
}

#[test]
fn a_blocked_call_is_outside_the_trajectory_and_positions_are_relative_to_guarded_calls() {
    let mut m = trajectory(SUMMARY, "Yes.", "pending");
    // The identity read is dropped: the order read before it deviates before the first
    // guarded call, the cancellation itself inside one.
    m.drain(3..5);
    let v = verdict_of(m.clone());
    let d = v.first_deviation.as_ref().unwrap();
    assert_eq!(
        (d.requirement.as_str(), d.position),
        ("identity", Position::BeforeFirstGuardedCall)
    );
    assert!(
        v.violations
            .iter()
            .any(|x| x.requirement == "identity" && x.position == Position::InsideGuardedCall)
    );
    // A cancellation a guard blocked never happened: nothing is checked at it, and with no
    // guarded call left the order read's deviation lies outside any.
    let n = m.len();
    m[n - 2] = result("c3", json!("blocked: identity not verified"), true);
    let v = verdict_of(m);
    assert_eq!(v.violations.len(), 1, "{:?}", v.violations);
    assert_eq!(v.violations[0].position, Position::OutsideGuardedCalls);
    // Nor is the reason judged at a call that did not happen.
    let reason = v
        .judgements
        .iter()
        .find(|j| j.requirement == "reason")
        .unwrap();
    assert_eq!(reason.checked, 0);
}

#[test]
fn without_a_cue_the_stand_in_finds_the_predicate_unmet() {
    // The summary says "reason" too: a cue anywhere before the call counts (the stand-in is
    // no NL judge), so both messages lose it here.
    let mut m = trajectory(
        "I'll cancel order #W1 (no longer needed). Shall I proceed?",
        "Yes.",
        "pending",
    );
    m[1] = agent("Could you tell me your email?");
    let v = verdict_of(m);
    let d = v.first_deviation.unwrap();
    assert_eq!(
        (d.requirement.as_str(), d.judge),
        ("reason", JudgeKind::StandIn)
    );
}
