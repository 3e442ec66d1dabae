//! The offline sim verifier over hand-built histories, with the authored
//! `tasks/<domain>/prerequisites.toml`.

use crate::support;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use support::{agent, call, calls, info, read, root, tool_msg, user};
use tauguard_core::record::RequirementResult;
use tauguard_core::{Message, ToolCall};
use tauguard_guards::{
    Decision, DomainChecklists, Guard, GuardContext, PolicyGuardSetup, Prerequisites, Requirement,
    RequirementType, RuleSources, Ruling, SimVerifier, ToolChecklist, Variant, Verdict,
    build_policyguard,
};

pub(crate) fn prerequisites(domain: &str) -> Prerequisites {
    Prerequisites::load_domain(&root().join("tasks"), domain).expect("authored prerequisites")
}

/// A policy stating every passage of a domain's prerequisites (the fixture policy quotes none).
pub(crate) fn stated_policy(domain: &str) -> String {
    prerequisites(domain)
        .tools
        .values()
        .filter_map(|p| p.policy.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

const SUMMARY: &str = "Here is what I am going to do: `cancel_reservation` with {\"reservation_id\": \"NO6JO3\"}. \
                       Do you confirm that I should proceed? Please answer yes or no.";
pub(crate) const YES: &str = "Yes, I confirm. Please go ahead.";

pub(crate) fn pending() -> ToolCall {
    call(
        "p1",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    )
}

pub(crate) fn compliant() -> Vec<Message> {
    let mut h = vec![
        user("I need to cancel my trip."),
        agent("Could you please provide your user id?"),
        user("mia_li_3668"),
    ];
    h.extend(read(
        "r1",
        "get_user_details",
        json!({"user_id": "mia_li_3668"}),
        "{\"ok\": true}",
    ));
    h.extend(read(
        "r2",
        "get_reservation_details",
        json!({"reservation_id": "NO6JO3"}),
        "{\"ok\": true}",
    ));
    h.push(agent(SUMMARY));
    h.push(user(YES));
    h.push(calls(&pending()));
    h
}

/// The compliant history without the user's yes.
pub(crate) fn unconfirmed() -> Vec<Message> {
    compliant()
        .into_iter()
        .filter(|m| m.content() != Some(YES))
        .collect()
}

/// The sim verifier of `domain` over `checklists`, given a policy that states every
/// prerequisite passage of the domain.
pub(crate) fn stated(
    domain: &str,
    variant: Variant,
    strict: bool,
    checklists: DomainChecklists,
) -> SimVerifier {
    SimVerifier::new(variant, strict, prerequisites(domain), checklists)
        .with_policy(&stated_policy(domain))
}

pub(crate) fn sim(variant: Variant, strict: bool) -> SimVerifier {
    stated("airline", variant, strict, DomainChecklists::default())
}

pub(crate) async fn judge(guard: &dyn Guard, history: &[Message], c: &ToolCall) -> Decision {
    support::judge(guard, history, c)
        .await
        .expect("the sim verifier never fails")
}

pub(crate) fn req<'a>(d: &'a Decision, name: &str) -> &'a RequirementResult {
    d.requirements
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no requirement `{name}` in {:?}", d.requirements))
}

#[tokio::test]
async fn compliant_cancellation_passes() {
    let g = sim(Variant::Raw, false);
    assert_eq!(g.name(), "pg-raw");
    let d = judge(&g, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
    assert_eq!(d.remediation, None);
    let names: Vec<&str> = d.requirements.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "identity_verified",
            "read_get_reservation_details",
            "argument_link_reservation_id",
            "user_confirmation"
        ]
    );
    assert!(d.requirements.iter().all(|r| r.met));
    assert_eq!(info(&d)["verifier"], json!("sim"));
}

#[tokio::test]
async fn identity_missing_blocks_naming_the_requirement() {
    let h: Vec<Message> = compliant()
        .into_iter()
        .filter(|m| !matches!(m.tool_calls().first(), Some(c) if c.name == "get_user_details"))
        .filter(|m| !matches!(m, Message::Tool(t) if t.id == "r1"))
        .collect();
    let d = judge(&sim(Variant::Checklist, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "identity_verified").met);
    assert!(req(&d, "user_confirmation").met);
    let m = d.remediation.unwrap();
    assert!(m.contains("identity_verified"), "{m}");
    assert!(
        m.contains("verify the user's identity with get_user_details"),
        "{m}"
    );
    assert!(!m.contains("user_confirmation"), "{m}");
}

#[tokio::test]
async fn failed_or_wrong_reads_do_not_count() {
    // The reservation lookup failed.
    let mut h = compliant();
    for m in &mut h {
        if let Message::Tool(t) = m
            && t.id == "r2"
        {
            t.error = true;
        }
    }
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "read_get_reservation_details").met);

    // The reservation looked up is not the one being cancelled.
    let other = call(
        "p1",
        "cancel_reservation",
        json!({"reservation_id": "ZZZ999"}),
    );
    let mut h = compliant();
    *h.last_mut().unwrap() = calls(&other);
    let d = judge(&sim(Variant::Raw, false), &h, &other).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(req(&d, "read_get_reservation_details").met);
    let link = req(&d, "argument_link_reservation_id");
    assert!(!link.met && link.reason.contains("ZZZ999"), "{link:?}");
    assert!(
        d.remediation
            .unwrap()
            .contains("look up get_reservation_details for reservation_id `ZZZ999`")
    );
}

#[tokio::test]
async fn confirmation_must_follow_the_last_summary() {
    // No summary at all.
    let h: Vec<Message> = compliant()
        .into_iter()
        .filter(|m| m.content() != Some(SUMMARY) && m.content() != Some(YES))
        .collect();
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(
        req(&d, "user_confirmation")
            .reason
            .contains("never summarised")
    );

    // The yes came before a later summary that the user has not answered.
    let mut h = compliant();
    let last = h.pop().unwrap();
    h.push(agent("Also, I will refund $120 to your credit card. Do you confirm that I should proceed? (yes/no)"));
    h.push(last);
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "user_confirmation").met);
    assert!(d.remediation.unwrap().contains("user_confirmation"));

    // A "no" is not a confirmation.
    let mut h = compliant();
    let n = h.len();
    h[n - 2] = user("No, wait, I'm not sure yet.");
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
}

#[tokio::test]
async fn a_mutation_after_the_yes_uses_it_up_but_reads_and_blocked_attempts_do_not() {
    // A state-changing call executed between the yes and the pending call.
    let mut h = compliant();
    let last = h.pop().unwrap();
    let bags = call(
        "m1",
        "update_reservation_baggages",
        json!({"reservation_id": "NO6JO3", "total_baggages": 1}),
    );
    h.push(calls(&bags));
    h.push(tool_msg("m1", "{\"ok\": true}", false, false));
    h.push(last.clone());
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(
        req(&d, "user_confirmation")
            .reason
            .contains("update_reservation_baggages")
    );

    // Reads and an earlier guard-blocked attempt of the same call are fine.
    let mut h = compliant();
    h.pop();
    let earlier = call(
        "p0",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    );
    h.push(calls(&earlier));
    h.push(tool_msg(
        "p0",
        "Look up the flight status first.",
        true,
        true,
    ));
    h.extend(read(
        "r3",
        "get_flight_status",
        json!({"flight_number": "HAT001", "date": "2024-05-20"}),
        "{\"ok\": true}",
    ));
    h.push(last);
    let d = judge(&sim(Variant::Raw, false), &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
}

#[tokio::test]
async fn raw_traj_cannot_see_a_confirmation_so_it_is_not_met() {
    let g = sim(Variant::RawTraj, false);
    assert_eq!(g.name(), "pg-raw-traj");
    // The policy asks for a confirmation, the dialogue is not given: no evidence of a
    // confirmation is not a confirmation, so it is NOT MET, unseen, and the call blocks.
    let d = judge(&g, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Block, "{:?}", d.requirements);
    let c = req(&d, "user_confirmation");
    assert!(!c.met && c.reason.contains("dialogue"), "{c:?}");
    assert_eq!(info(&d)["unseen"], json!(["user_confirmation"]));
    assert!(info(&d).get("unchecked").is_none());
    assert_eq!(info(&d)["inputs"], json!(["policy", "tool_trace"]));
    assert_eq!(info(&d)["checked"], json!(4));
    // With the dialogue (pg-raw) the same history passes.
    let raw = judge(&sim(Variant::Raw, false), &compliant(), &pending()).await;
    assert_eq!(raw.verdict, Verdict::Pass, "{:?}", raw.requirements);
    assert!(info(&raw).get("unseen").is_none());
    // Tool-call evidence is still judged: a missing lookup blocks.
    let h: Vec<Message> = compliant()
        .into_iter()
        .filter(
            |m| !matches!(m.tool_calls().first(), Some(c) if c.name == "get_reservation_details"),
        )
        .filter(|m| !matches!(m, Message::Tool(t) if t.id == "r2"))
        .collect();
    let d = judge(&g, &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "read_get_reservation_details").met);
}

#[test]
fn raw_traj_passes_tools_without_confirmation() {
    // Telecom `enable_roaming` needs identity and a line lookup but no confirmation.
    let g = stated(
        "telecom",
        Variant::RawTraj,
        false,
        DomainChecklists::default(),
    );
    let c = call(
        "p",
        "enable_roaming",
        json!({"customer_id": "C1001", "line_id": "L1002"}),
    );
    let mut h = vec![user("Roaming does not work abroad.")];
    h.extend(read(
        "a",
        "get_customer_by_phone",
        json!({"phone_number": "555-123-2002"}),
        "{\"ok\": true}",
    ));
    h.extend(read(
        "b",
        "get_details_by_id",
        json!({"id": "L1002"}),
        "{\"ok\": true}",
    ));
    h.push(calls(&c));
    let mutating = |n: &str| {
        [
            "enable_roaming",
            "disable_roaming",
            "resume_line",
            "suspend_line",
        ]
        .contains(&n)
    };
    let d = g.decide(&c, g.evaluate(&h, &c, &mutating));
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
}

#[test]
fn required_any_reads_groups() {
    let g = stated("retail", Variant::Raw, false, DomainChecklists::default());
    let c = call(
        "p",
        "modify_pending_order_items",
        json!({"order_id": "#W1"}),
    );
    let mutating = |n: &str| n.starts_with("modify_") || n.starts_with("cancel_");
    let base = |extra: Option<&str>| {
        let mut h = vec![user("Change my order.")];
        h.extend(read(
            "a",
            "find_user_id_by_email",
            json!({"email": "a@b.c"}),
            "{\"ok\": true}",
        ));
        h.extend(read(
            "b",
            "get_order_details",
            json!({"order_id": "#W1"}),
            "{\"ok\": true}",
        ));
        if let Some(t) = extra {
            h.extend(read("x", t, json!({"item_id": "1"}), "{}"));
        }
        h.push(agent("I will change the item. Do you confirm? (yes/no)"));
        h.push(user("yes"));
        h.push(calls(&c));
        h
    };
    let d = g.decide(&c, g.evaluate(&base(None), &c, &mutating));
    assert_eq!(d.verdict, Verdict::Block);
    assert!(
        d.remediation
            .unwrap()
            .contains("read_any_get_product_details_or_get_item_details")
    );
    let d = g.decide(
        &c,
        g.evaluate(&base(Some("get_item_details")), &c, &mutating),
    );
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
}

fn over_specified_checklist() -> DomainChecklists {
    let mut tools = BTreeMap::new();
    tools.insert(
        "cancel_reservation".to_string(),
        ToolChecklist {
            tool: "cancel_reservation".into(),
            description: None,
            constraints: vec![],
            requirements: vec![
                Requirement {
                    name: "obtain_user_id".into(),
                    kind: RequirementType::Data,
                    tool: Some("get_user_details".into()),
                    alternative_tools: vec![],
                    hint: "identity".into(),
                },
                Requirement {
                    name: "flight_status_checked".into(),
                    kind: RequirementType::Data,
                    tool: Some("get_flight_status".into()),
                    alternative_tools: vec![],
                    hint: "over-specified: not needed for every cancellation".into(),
                },
                Requirement {
                    name: "user_confirmation".into(),
                    kind: RequirementType::Procedural,
                    tool: None,
                    alternative_tools: vec![],
                    hint: "explicit yes".into(),
                },
                Requirement {
                    name: "reason_for_cancellation".into(),
                    kind: RequirementType::Procedural,
                    tool: None,
                    alternative_tools: vec![],
                    hint: "the user gave a reason".into(),
                },
            ],
        },
    );
    DomainChecklists {
        tools,
        general: vec![],
    }
}

#[tokio::test]
async fn advisory_checklist_items_block_only_in_strict_mode() {
    let advisory = stated(
        "airline",
        Variant::Checklist,
        false,
        over_specified_checklist(),
    );
    let strict = stated(
        "airline",
        Variant::Checklist,
        true,
        over_specified_checklist(),
    );
    assert_eq!(strict.name(), "pg-checklist-strict");

    let d = judge(&advisory, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass);
    assert!(!req(&d, "flight_status_checked").met);
    assert_eq!(
        info(&d)["advisory_not_met"],
        json!(["flight_status_checked"])
    );
    assert_eq!(
        info(&d)["unchecked"],
        json!(["reason_for_cancellation: a dialogue predicate the rules cannot evaluate"])
    );
    let mapped = info(&d)["mapped"].as_array().unwrap();
    assert!(mapped.contains(&json!("user_confirmation -> user_confirmation")));

    let d = judge(&strict, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    let m = d.remediation.unwrap();
    assert!(
        m.contains("flight_status_checked") && m.contains("look up get_flight_status"),
        "{m}"
    );

    // Hard prerequisites block in both modes.
    let h: Vec<Message> = unconfirmed();
    assert_eq!(
        judge(&advisory, &h, &pending()).await.verdict,
        Verdict::Block
    );
    assert_eq!(judge(&strict, &h, &pending()).await.verdict, Verdict::Block);

    // The raw variants ignore the checklist.
    let raw = stated("airline", Variant::Raw, false, over_specified_checklist());
    let d = judge(&raw, &compliant(), &pending()).await;
    assert!(
        d.requirements
            .iter()
            .all(|r| r.name != "flight_status_checked")
    );
}

#[tokio::test]
async fn constraint_guard_adds_hard_requirements() {
    struct MaxBags;
    impl Guard for MaxBags {
        fn name(&self) -> &str {
            "toolguard"
        }
        fn on_mutating_call<'a>(
            &'a self,
            _ctx: &'a GuardContext<'a>,
            call: &'a ToolCall,
        ) -> Ruling<'a> {
            let bags = call
                .arguments
                .get("total_baggages")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let r = RequirementResult {
                name: "max_bags".into(),
                met: bags <= 5,
                reason: format!("{bags} bags"),
            };
            if r.met {
                Decision::pass(vec![r])
            } else {
                Decision::block(vec![r], "Too many bags.")
            }
            .into_ruling()
        }
    }
    // The rule's passage is in the policy the verifier is given, so `pg-raw` checks it.
    let passage = "A reservation may carry at most five checked bags in total.";
    let sources = RuleSources {
        tools: BTreeMap::from([(
            "update_reservation_baggages".to_string(),
            BTreeMap::from([("max_bags".to_string(), Some(passage.to_string()))]),
        )]),
    };
    let s = PolicyGuardSetup::new("airline", root().join("configs/prompts"))
        .with_prerequisites(prerequisites("airline"))
        .with_policy(format!("{}\n{passage}", stated_policy("airline")))
        .with_constraints(Arc::new(MaxBags), sources.clone());
    let g = build_policyguard("pg-raw", false, tauguard_llm::RoleModel::Sim, &s).unwrap();
    let c = call(
        "p1",
        "update_reservation_baggages",
        json!({"reservation_id": "NO6JO3", "total_baggages": 9}),
    );
    let mut h = compliant();
    *h.last_mut().unwrap() = calls(&c);
    let d = judge(g.as_ref(), &h, &c).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "max_bags").met);
    assert_eq!(info(&d)["constraints"], json!("toolguard"));
    assert!(d.remediation.unwrap().contains("max_bags"));

    let c = call(
        "p1",
        "update_reservation_baggages",
        json!({"reservation_id": "NO6JO3", "total_baggages": 2}),
    );
    *h.last_mut().unwrap() = calls(&c);
    assert_eq!(judge(g.as_ref(), &h, &c).await.verdict, Verdict::Pass);

    // A policy text without the passage states no such rule: unchecked, not NOT MET.
    let s = s.with_policy(stated_policy("airline"));
    let g = build_policyguard("pg-raw", false, tauguard_llm::RoleModel::Sim, &s).unwrap();
    let c = call(
        "p1",
        "update_reservation_baggages",
        json!({"reservation_id": "NO6JO3", "total_baggages": 9}),
    );
    *h.last_mut().unwrap() = calls(&c);
    let d = judge(g.as_ref(), &h, &c).await;
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
    let unchecked = info(&d)["unchecked"].as_array().unwrap();
    assert!(unchecked.contains(&json!("max_bags: stated by no input given")));
}
