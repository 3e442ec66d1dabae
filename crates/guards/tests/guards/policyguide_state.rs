//! The guide's state machine through the `Guard` hooks, with a scripted verifier standing in
//! for the model: several nodes in one generation, two requests in one conversation, an
//! abandoned request dropped, unknown node ids and authorizations refused, the enabled tool set
//! rebuilt from the cards, and the one-shot gate intercepting exactly once per user-turn region.

use crate::support::StubEnv;
use serde_json::{Map, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tauguard_core::message::{Message, ParticipantMessage, ToolCall};
use tauguard_core::record::{GuideTrigger, RequestStatus, Verdict};
use tauguard_guards::{
    Bundle, Flow, Guard, GuardContext, GuardState, GuideReply, GuideRequest, GuideVerifier,
    PolicyGuide, RequestUpdate, validate,
};
use tauguard_llm::BoxFuture;

/// Replies in order; records the trigger and the cards it was shown.
struct Scripted {
    replies: Mutex<Vec<GuideReply>>,
    seen: Mutex<Vec<(GuideTrigger, Vec<String>)>>,
}

impl GuideVerifier for Scripted {
    fn verify<'a>(
        &'a self,
        request: GuideRequest<'a>,
    ) -> BoxFuture<'a, Result<GuideReply, tauguard_guards::GuardError>> {
        let cards = request.cards.iter().map(|c| c.id.clone()).collect();
        self.seen.lock().unwrap().push((request.trigger, cards));
        let reply = self.replies.lock().unwrap().remove(0);
        Box::pin(async move { Ok(reply) })
    }
}

fn airline_flow() -> Arc<Flow> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tasks/airline/workflow/bundle.json");
    let bundle = Bundle::load(&path).expect("frozen airline bundle");
    let catalog = tauguard_guards::ToolCatalog::builtin("airline").expect("airline");
    assert!(validate(&bundle, &catalog).is_valid());
    Arc::new(Flow::new(bundle))
}

fn update(id: Option<&str>, node: &str, auths: &[&str]) -> RequestUpdate {
    RequestUpdate {
        id: id.map(str::to_string),
        intent: Some("x".into()),
        node: Some(node.into()),
        authorizations: Some(auths.iter().map(|s| s.to_string()).collect()),
        status: None,
        merge_into: None,
    }
}

fn reply(updates: Vec<RequestUpdate>, text: &str) -> GuideReply {
    GuideReply {
        remediation: Some(text.into()),
        updates,
        ..GuideReply::default()
    }
}

fn call(tool: &str) -> ToolCall {
    ToolCall {
        id: format!("c-{tool}"),
        name: tool.into(),
        arguments: Map::new(),
        requestor: tauguard_core::Requestor::Assistant,
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

struct Run {
    guide: PolicyGuide,
    state: GuardState,
    history: Vec<Message>,
}

impl Run {
    fn new(replies: Vec<GuideReply>) -> (Run, Arc<Scripted>) {
        let scripted = Arc::new(Scripted {
            replies: Mutex::new(replies),
            seen: Mutex::new(Vec::new()),
        });
        let verifier = ArcVerifier(scripted.clone());
        let guide = PolicyGuide::new("policyguide", airline_flow(), Box::new(verifier));
        let history = vec![Message::User(ParticipantMessage {
            content: Some("I want to cancel a reservation and add a bag".into()),
            ..Default::default()
        })];
        (
            Run {
                guide,
                state: GuardState::new(),
                history,
            },
            scripted,
        )
    }

    fn ctx(&self) -> GuardContext<'_> {
        GuardContext {
            domain: "airline",
            policy: "",
            task_id: "t",
            trial: 0,
            seed: 0,
            history: &self.history,
            env: &StubEnv,
            state: &self.state,
            at_message: self.history.len() as u32,
        }
    }

    fn turn(&self) -> tauguard_core::record::GuideEvent {
        let ctx = self.ctx();
        block_on(self.guide.before_agent_turn(&ctx))
            .expect("guide runs")
            .expect("the guide always reports")
            .event
    }

    fn mutate(&self, tool: &str) -> tauguard_guards::Decision {
        let ctx = self.ctx();
        let c = call(tool);
        block_on(self.guide.on_mutating_call(&ctx, &c)).expect("guide decides")
    }
}

struct ArcVerifier(Arc<Scripted>);

impl GuideVerifier for ArcVerifier {
    fn verify<'a>(
        &'a self,
        request: GuideRequest<'a>,
    ) -> BoxFuture<'a, Result<GuideReply, tauguard_guards::GuardError>> {
        self.0.verify(request)
    }
}

const CANCEL_AUTH: &str = "cancel_reservation/cancel_authorize";
const BAGS_AUTH: &str = "change_baggage/bags_authorize";

#[test]
fn a_request_advances_several_nodes_in_one_generation_and_unknown_ids_are_refused() {
    let (run, _) = Run::new(vec![
        reply(
            vec![update(None, "cancel_reservation/ask_reason", &[])],
            "ask",
        ),
        // Several nodes on at once, plus an unknown node and a non-authorization node.
        reply(
            vec![
                update(Some("r1"), "cancel_reservation/cancel_summary", &[]),
                update(
                    Some("r1"),
                    "cancel_reservation/no_such_node",
                    &["main/start"],
                ),
            ],
            "summarise",
        ),
    ]);
    let first = run.turn();
    assert_eq!(first.requests.len(), 1);
    assert_eq!(first.requests[0].id, "r1");
    assert_eq!(first.requests[0].node, "cancel_reservation/ask_reason");
    let second = run.turn();
    let card = &second.requests[0];
    assert_eq!(
        card.node, "cancel_reservation/cancel_summary",
        "kept, not moved"
    );
    assert!(card.authorizations.is_empty());
    assert_eq!(second.rejected.len(), 2, "{:?}", second.rejected);
    assert!(second.rejected[0].contains("unknown node id `cancel_reservation/no_such_node`"));
    assert!(second.rejected[1].contains("`main/start` is not an authorization node"));
    assert_eq!(second.guidance.as_deref(), Some("summarise"));
    assert!(second.enabled_tools.is_empty());
}

#[test]
fn two_requests_enable_their_tools_and_an_abandoned_one_is_dropped() {
    let mut abandon = update(Some("r1"), "cancel_reservation/cancel_answer", &[]);
    abandon.status = Some(RequestStatus::Abandoned);
    let (run, scripted) = Run::new(vec![
        reply(
            vec![
                update(None, "cancel_reservation/cancel_authorize", &[CANCEL_AUTH]),
                update(None, "change_baggage/bags_authorize", &[BAGS_AUTH]),
            ],
            "go ahead",
        ),
        reply(vec![abandon], ""),
    ]);
    let e = run.turn();
    assert_eq!(e.requests.len(), 2);
    assert_eq!(
        e.enabled_tools,
        vec!["cancel_reservation", "update_reservation_baggages"]
    );
    assert_eq!(run.mutate("cancel_reservation").verdict, Verdict::Pass);
    let e = run.turn();
    assert_eq!(e.requests.len(), 1, "the abandoned request left the state");
    assert_eq!(e.requests[0].id, "r2");
    assert_eq!(e.enabled_tools, vec!["update_reservation_baggages"]);
    assert_eq!(e.guidance, None, "blank guidance is no guidance");
    // The second generation was shown both cards.
    let seen = scripted.seen.lock().unwrap();
    assert_eq!(seen[1].1, vec!["r1", "r2"]);
}

#[test]
fn the_one_shot_gate_intercepts_exactly_once_per_user_turn_region() {
    let (run, scripted) = Run::new(vec![
        reply(vec![update(None, "cancel_reservation/ask_reason", &[])], ""),
        reply(vec![], "ask the user for the reason first"),
        reply(vec![], ""),
        reply(vec![], "not after a new turn either"),
    ]);
    run.turn();
    let blocked = run.mutate("cancel_reservation");
    assert_eq!(blocked.verdict, Verdict::Block);
    assert_eq!(
        blocked.remediation.as_deref(),
        Some("ask the user for the reason first")
    );
    let event = blocked.guide.expect("a corrective verification ran");
    assert_eq!(event.trigger, GuideTrigger::Interception);
    // The region's one interception is made: the retry goes through, and so does every
    // other unauthorized call of the region, with no verification.
    for (tool, gate) in [
        ("cancel_reservation", "retry"),
        ("cancel_reservation", "retry"),
        ("update_reservation_baggages", "spent"),
    ] {
        let d = run.mutate(tool);
        assert_eq!(d.verdict, Verdict::Pass, "{tool}");
        assert_eq!(d.info, Some(json!({"gate": gate})));
        assert!(d.guide.is_none());
        assert!(!d.requirements[0].met, "still not authorized");
    }
    // A new user turn re-arms the gate.
    run.turn();
    let after_turn = run.mutate("update_reservation_baggages");
    assert_eq!(after_turn.verdict, Verdict::Block);
    let triggers: Vec<GuideTrigger> = scripted.seen.lock().unwrap().iter().map(|s| s.0).collect();
    assert_eq!(
        triggers,
        vec![
            GuideTrigger::UserTurn,
            GuideTrigger::Interception,
            GuideTrigger::UserTurn,
            GuideTrigger::Interception,
        ]
    );
}
