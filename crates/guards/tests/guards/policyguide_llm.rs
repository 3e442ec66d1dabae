//! The LLM guide driven through reconcile → traverse → decide over a scripted airline
//! conversation by the guard hooks: request cards after each turn, refused node ids and
//! authorizations, the enabled tools, the remediation, and the one-shot interception gate.

use crate::guide_support::*;
use crate::support::{agent, user};
use serde_json::json;
use tauguard_core::record::{GuideTrigger, RequestStatus};
use tauguard_guards::{FailMode, Verdict};

#[allow(
    clippy::too_many_lines,
    reason = "a test's steps read in order (clippy.toml: tests are exempt)"
)]
#[tokio::test]
async fn the_guide_reconciles_traverses_and_decides_over_a_conversation() {
    let model = guide_model(&[
        // Turn 1: a new request advances from the entry through several nodes to the profile
        // read; a non-authorization node offered as an authorization is refused.
        &reply(
            json!([{"id": null, "intent": R1_INTENT, "node": "authenticate_user/read_profile",
                    "authorizations": ["cancel_reservation/cancel_summary"], "status": "active", "merge_into": null}]),
            "Look up the user's profile with get_user_details.",
        ),
        // Turn 2: r1 advances to the summary; a second request is opened with an unknown node.
        &reply(
            json!([
                {"id": "r1", "intent": R1_INTENT, "node": "cancel_reservation/cancel_summary",
                 "authorizations": [], "status": "active", "merge_into": null},
                {"id": null, "intent": "add a bag to ZFA04Y", "node": "change_baggage/teleport",
                 "authorizations": [], "status": "active", "merge_into": null}
            ]),
            "Summarise the cancellation of NO6JO3 and ask for an explicit yes; then handle the bag.",
        ),
        // Turn 3: the yes authorizes the cancellation; the bag request is abandoned.
        &reply(
            json!([
                {"id": "r1", "intent": R1_INTENT, "node": "cancel_reservation/cancel_authorize",
                 "authorizations": ["cancel_reservation/cancel_authorize"], "status": "active", "merge_into": null},
                {"id": "r2", "intent": "add a bag to ZFA04Y", "node": "main/start",
                 "authorizations": [], "status": "abandoned", "merge_into": null}
            ]),
            "",
        ),
        // The interception's corrective verification: nothing authorizes the bag change.
        &reply(
            json!([{"id": "r1", "node": "cancel_reservation/cancel_authorize",
                    "authorizations": ["cancel_reservation/cancel_authorize"], "status": "active"}]),
            "The user dropped the bag request; do not change baggage. Cancel NO6JO3 as confirmed.",
        ),
        // Turn 4 (a new user turn): the gate is armed again.
        &reply(json!([]), ""),
        // The retry after the new turn is intercepted again.
        &reply(json!([]), "Still no baggage change."),
    ]);
    let g = guide(&model, FailMode::Closed);
    let sim = Sim::new(&g);

    // Turn 1.
    let e1 = sim.turn(&turn1()).await.unwrap();
    assert_eq!(e1.trigger, GuideTrigger::UserTurn);
    assert_eq!(
        card_view(&e1),
        [(
            "r1".into(),
            "authenticate_user/read_profile".into(),
            Vec::new()
        )]
    );
    assert_eq!(e1.requests[0].intent, R1_INTENT);
    assert_eq!(
        e1.rejected,
        [
            "request `r1`: `cancel_reservation/cancel_summary` is not an authorization node of the workflow"
        ]
    );
    assert!(e1.enabled_tools.is_empty());
    assert_eq!(
        e1.guidance.as_deref(),
        Some("Look up the user's profile with get_user_details.")
    );

    // Turn 2: two requests; the unknown node is refused and r2 stays at the entry.
    let e2 = sim.turn(&turn2()).await.unwrap();
    assert_eq!(
        card_view(&e2),
        [
            (
                "r1".into(),
                "cancel_reservation/cancel_summary".into(),
                Vec::new()
            ),
            ("r2".into(), "main/start".into(), Vec::new()),
        ]
    );
    assert_eq!(
        e2.rejected,
        ["request `r2`: unknown node id `change_baggage/teleport`; it stays at `main/start`"]
    );
    assert!(e2.enabled_tools.is_empty());

    // Turn 3: r1 authorized, r2 abandoned and dropped.
    let e3 = sim.turn(&turn3()).await.unwrap();
    assert_eq!(
        card_view(&e3),
        [(
            "r1".into(),
            "cancel_reservation/cancel_authorize".into(),
            vec!["cancel_reservation/cancel_authorize".to_string()]
        )]
    );
    assert!(
        e3.requests
            .iter()
            .all(|c| c.status == RequestStatus::Active)
    );
    assert_eq!(e3.enabled_tools, ["cancel_reservation"]);
    assert_eq!(e3.guidance, None, "an empty remediation says nothing");
    assert!(e3.rejected.is_empty(), "{:?}", e3.rejected);

    // The authorized call passes without a model call.
    let calls_before = model.seen().len();
    let d = sim
        .call(&with_call(turn3(), &cancel_call()), &cancel_call())
        .await;
    assert_eq!(d.verdict, Verdict::Pass);
    assert!(d.guide.is_none());
    assert_eq!(model.seen().len(), calls_before);

    // An unauthorized call is intercepted with a corrective verification.
    let b1 = bags_call("b1");
    let d1 = sim.call(&with_call(turn3(), &b1), &b1).await;
    assert_eq!(d1.verdict, Verdict::Block);
    let ev = d1
        .guide
        .as_ref()
        .expect("the corrective verification's event");
    assert_eq!(ev.trigger, GuideTrigger::Interception);
    assert_eq!(
        d1.remediation.as_deref(),
        Some(
            "The user dropped the bag request; do not change baggage. Cancel NO6JO3 as confirmed."
        )
    );
    assert_eq!(ev.enabled_tools, ["cancel_reservation"]);
    let intercepted = model.seen().last().cloned().unwrap();
    let dynamic = user_text(&intercepted);
    assert!(
        dynamic.contains("update_reservation_baggages({\"reservation_id\":\"ZFA04Y\""),
        "{dynamic}"
    );
    assert!(
        !dynamic.contains("AGENT CALLS update_reservation_baggages"),
        "{dynamic}"
    );

    // One interception per user-turn region: the retry, and every later unauthorized call of
    // the region, pass without a model call.
    let n = model.seen().len();
    for id in ["b2", "b3"] {
        let b = bags_call(id);
        let d = sim.call(&with_call(turn3(), &b), &b).await;
        assert_eq!(d.verdict, Verdict::Pass, "{id}");
        assert!(d.guide.is_none());
    }
    assert_eq!(model.seen().len(), n);

    // A new user turn re-arms the gate.
    let mut h4 = turn3();
    h4.push(agent("Done. Anything else?"));
    h4.push(user("Please add the bag after all."));
    sim.turn(&h4).await.unwrap();
    let b4 = bags_call("b4");
    let d4 = sim.call(&with_call(h4, &b4), &b4).await;
    assert_eq!(d4.verdict, Verdict::Block);
    assert!(d4.guide.is_some());
    assert_eq!(model.left(), 0, "every scripted reply was used");

    // What the model was sent: the cards as code holds them, and earlier guidance marked.
    let seen = model.seen();
    assert!(user_text(&seen[0]).contains("(no requests yet)"));
    let second = user_text(&seen[1]);
    assert!(second.contains("\"id\": \"r1\""), "{second}");
    assert!(second.contains("\"node\": \"authenticate_user/read_profile\""));
    assert!(
        second.contains("GUIDE (your earlier guidance, read by the agent only): Look up"),
        "{second}"
    );
    assert!(!second.contains("USER: [Policy guide]"), "{second}");
}

#[tokio::test]
async fn a_duplicate_request_is_merged_into_the_one_kept() {
    let model = guide_model(&[
        &reply(
            json!([
                {"id": null, "intent": R1_INTENT, "node": "authenticate_user/read_profile"},
                {"id": null, "intent": "cancel NO6JO3 (again)", "node": "main/start"}
            ]),
            "Look up the user's profile.",
        ),
        &reply(
            json!([
                {"id": "r1", "node": "cancel_reservation/ask_reason"},
                {"id": "r2", "merge_into": "r1"}
            ]),
            "Ask why the user wants to cancel.",
        ),
    ]);
    let g = guide(&model, FailMode::Closed);
    let sim = Sim::new(&g);
    let e1 = sim.turn(&turn1()).await.unwrap();
    assert_eq!(
        e1.requests
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["r1", "r2"]
    );
    let e2 = sim.turn(&turn2()).await.unwrap();
    assert_eq!(
        card_view(&e2),
        [(
            "r1".into(),
            "cancel_reservation/ask_reason".into(),
            Vec::new()
        )]
    );
    assert!(e2.rejected.is_empty(), "{:?}", e2.rejected);
    // The second generation was shown both cards by their ids.
    let shown = user_text(&model.seen()[1]).to_string();
    assert!(shown.contains("\"id\": \"r2\""), "{shown}");
}
