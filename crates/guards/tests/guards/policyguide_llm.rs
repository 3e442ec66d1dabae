//! The LLM guide (PolicyGuide's verifier) driven by a scripted mock `ChatModel` that records
//! every request: reconcile → traverse → decide over a scripted airline conversation through
//! the guard hooks, the one-shot interception gate, the byte-stable prompt prefix, prefix-cache
//! usage, the repair turn and the fail modes; and the factory's `policyguide` and
//! `policyguide-raw` configurations.

use crate::support::{agent, call, calls, root, tool_msg, user};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tauguard_core::dialogue::GUIDANCE_PREFIX;
use tauguard_core::message::Usage;
use tauguard_core::record::{GuideEvent, GuideTrigger, RequestStatus};
use tauguard_core::{Message, ToolCall};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::catalog::ToolCatalog;
use tauguard_guards::factory::{
    GuardBuildError, GuardInputs, GuardName, GuardOptions, build_guard,
};
use tauguard_guards::policyguard::{FailMode, Sampling};
use tauguard_guards::policyguide::flow::Flow;
use tauguard_guards::policyguide::frozen::load_flow;
use tauguard_guards::policyguide::guide::PolicyGuide;
use tauguard_guards::policyguide::llm::{
    FAIL_CLOSED_GUIDANCE, GuideKnowledge, LlmGuide, LlmGuideSetup,
};
use tauguard_guards::{Decision, Guard, GuardContext, GuardError, GuardState, Verdict};
use tauguard_llm::error::LlmError;
use tauguard_llm::model::{BoxFuture, ChatModel, ChatRequest, ChatResponse};

// ---------------------------------------------------------------- scripted model

/// A scripted reply that makes the model fail with HTTP 401 (fatal).
const FATAL: &str = "<401>";
/// A scripted reply that makes the model fail with a connection error (not fatal).
const DOWN: &str = "<down>";

struct MockGuideModel {
    replies: Mutex<VecDeque<String>>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl MockGuideModel {
    fn new(replies: &[&str]) -> Arc<MockGuideModel> {
        Arc::new(MockGuideModel {
            replies: Mutex::new(replies.iter().map(|r| r.to_string()).collect()),
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<ChatRequest> {
        self.seen.lock().unwrap().clone()
    }

    fn left(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

impl ChatModel for MockGuideModel {
    fn id(&self) -> &str {
        "mock/guide-1"
    }

    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(req.clone());
            let reply = self
                .replies
                .lock()
                .unwrap()
                .pop_front()
                .expect("a scripted guide reply is left");
            let connection = |message: &str| LlmError::Connection {
                provider: "mock".into(),
                model: "guide-1".into(),
                message: message.into(),
            };
            match reply.as_str() {
                FATAL => {
                    return Err(LlmError::Rejected {
                        provider: "mock".into(),
                        model: "guide-1".into(),
                        status: 401,
                        body: "invalid api key".into(),
                        should_retry: None,
                    });
                }
                DOWN => return Err(connection("connection refused")),
                _ => {}
            }
            Ok(ChatResponse {
                content: Some(reply),
                tool_calls: Vec::new(),
                usage: Usage {
                    prompt_tokens: 5000,
                    completion_tokens: 120,
                    cached_prompt_tokens: 4096,
                },
                cost: Some(0.003),
                latency: Duration::from_millis(250),
                cache_hit: false,
                attempts: 1,
                finish_reason: Some("stop".into()),
                provider_model: None,
            })
        })
    }
}

// ---------------------------------------------------------------- fixtures

/// The airline domain: τ²-bench's when the data is there, else the project's airline-shaped
/// fixture domain (the guide reads the environment only through the context it is handed).
fn airline() -> &'static DomainData {
    static DATA: OnceLock<DomainData> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = tauguard_testkit::tau2_dir().unwrap_or_else(|| root().join("tasks/fixtures"));
        let dir = DataDir::resolve(Some(&dir)).unwrap_or_else(|e| panic!("{e}"));
        DomainData::load(&dir, "airline").unwrap_or_else(|e| panic!("airline: {e}"))
    })
}

fn catalog() -> ToolCatalog {
    ToolCatalog::builtin("airline").expect("airline is registered")
}

fn graph_flow() -> Arc<Flow> {
    Arc::new(load_flow(&root().join("tasks"), &catalog()).unwrap_or_else(|e| panic!("{e}")))
}

fn setup(fail_mode: FailMode) -> LlmGuideSetup {
    LlmGuideSetup {
        policy: airline().policy.clone(),
        catalog: catalog(),
        prompts_dir: root().join("configs/prompts"),
        sampling: Sampling::default(),
        fail_mode,
    }
}

fn llm_guide(knowledge: GuideKnowledge, model: &Arc<MockGuideModel>, mode: FailMode) -> LlmGuide {
    let model: Arc<dyn ChatModel> = model.clone();
    LlmGuide::new(knowledge, model, &setup(mode)).unwrap_or_else(|e| panic!("{e}"))
}

fn guide(model: &Arc<MockGuideModel>, mode: FailMode) -> PolicyGuide {
    let g = llm_guide(GuideKnowledge::Graph(graph_flow()), model, mode);
    PolicyGuide::new("policyguide", g.flow(), Box::new(g))
}

/// Runs the guard hooks over a history, sharing one per-simulation state.
struct Sim<'a> {
    guard: &'a dyn Guard,
    state: GuardState,
    env: Box<dyn tauguard_env::Environment>,
}

impl<'a> Sim<'a> {
    fn new(guard: &'a dyn Guard) -> Sim<'a> {
        Sim {
            guard,
            state: GuardState::new(),
            env: airline().fresh_env(),
        }
    }

    fn ctx<'b>(&'b self, history: &'b [Message]) -> GuardContext<'b> {
        GuardContext {
            domain: "airline",
            policy: &airline().policy,
            task_id: "t1",
            trial: 0,
            seed: 7,
            history,
            env: self.env.as_ref(),
            state: &self.state,
            at_message: history.len() as u32,
        }
    }

    async fn turn(&self, history: &[Message]) -> Result<GuideEvent, GuardError> {
        let g = self.guard.before_agent_turn(&self.ctx(history)).await?;
        Ok(g.expect("a guide always reports its run").event)
    }

    async fn call(&self, history: &[Message], c: &ToolCall) -> Decision {
        self.guard
            .on_mutating_call(&self.ctx(history), c)
            .await
            .expect("the scripted guide answers")
    }
}

fn system() -> Message {
    Message::System {
        content: Some("agent system prompt".into()),
    }
}

fn guidance(text: &str) -> Message {
    user(&format!("{GUIDANCE_PREFIX}{text}"))
}

fn reply(requests: Value, remediation: &str) -> String {
    json!({"requests": requests, "remediation": remediation}).to_string()
}

fn card_view(e: &GuideEvent) -> Vec<(String, String, Vec<String>)> {
    e.requests
        .iter()
        .map(|c| (c.id.clone(), c.node.clone(), c.authorizations.clone()))
        .collect()
}

fn info(e: &GuideEvent) -> &serde_json::Map<String, Value> {
    e.info.as_ref().and_then(Value::as_object).expect("info")
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn system_text(req: &ChatRequest) -> &str {
    match &req.messages[0] {
        Message::System { content } => content.as_deref().expect("a system text"),
        other => panic!("the first message is the system prefix, not {other:?}"),
    }
}

fn user_text(req: &ChatRequest) -> &str {
    req.messages[1].content().expect("the dynamic part")
}

// ---------------------------------------------------------------- the scripted conversation

const R1_INTENT: &str = "cancel reservation NO6JO3";

/// Turn 1: the user asks to cancel and gives the id.
fn turn1() -> Vec<Message> {
    vec![
        system(),
        agent("Hi! How can I help you today?"),
        user("Hi, I want to cancel reservation NO6JO3. My user id is mia_li_3668."),
    ]
}

/// Turn 2: the agent looked everything up and asked the reason; the user gives it and adds a
/// second request.
fn turn2() -> Vec<Message> {
    let mut h = turn1();
    h.push(guidance(
        "Look up the user's profile with get_user_details.",
    ));
    h.push(calls(&call(
        "c1",
        "get_user_details",
        json!({"user_id": "mia_li_3668"}),
    )));
    h.push(tool_msg(
        "c1",
        r#"{"user_id": "mia_li_3668"}"#,
        false,
        false,
    ));
    h.push(calls(&call(
        "c2",
        "get_reservation_details",
        json!({"reservation_id": "NO6JO3"}),
    )));
    h.push(tool_msg(
        "c2",
        r#"{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "cabin": "business"}"#,
        false,
        false,
    ));
    h.push(agent("Why do you want to cancel?"));
    h.push(user(
        "Change of plans. Also please add a checked bag to reservation ZFA04Y.",
    ));
    h
}

/// Turn 3: the agent summarised; the user says yes and drops the bag request.
fn turn3() -> Vec<Message> {
    let mut h = turn2();
    h.push(agent(
        "I will cancel NO6JO3 and refund it to the original payment. Confirm? (yes/no)",
    ));
    h.push(user("Yes, cancel it. Forget about the bag."));
    h
}

fn cancel_call() -> ToolCall {
    call(
        "c9",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    )
}

fn bags_call(id: &str) -> ToolCall {
    call(
        id,
        "update_reservation_baggages",
        json!({"reservation_id": "ZFA04Y", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "gift_card_1"}),
    )
}

fn with_call(mut h: Vec<Message>, c: &ToolCall) -> Vec<Message> {
    h.push(calls(c));
    h
}

#[tokio::test]
async fn the_guide_reconciles_traverses_and_decides_over_a_conversation() {
    let model = MockGuideModel::new(&[
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
        // The third unauthorized call: intercepted again.
        &reply(json!([]), "Do not change baggage."),
        // Turn 4 (a new user turn): the gate closes.
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

    // The immediate retry passes exactly once, without a model call; the next is intercepted.
    let n = model.seen().len();
    let b2 = bags_call("b2");
    let d2 = sim.call(&with_call(turn3(), &b2), &b2).await;
    assert_eq!(d2.verdict, Verdict::Pass);
    assert!(d2.guide.is_none());
    assert_eq!(model.seen().len(), n);
    let b3 = bags_call("b3");
    let d3 = sim.call(&with_call(turn3(), &b3), &b3).await;
    assert_eq!(d3.verdict, Verdict::Block);
    assert_eq!(d3.remediation.as_deref(), Some("Do not change baggage."));
    assert_eq!(model.seen().len(), n + 1);

    // A new user turn closes the gate the third interception opened.
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
async fn the_static_prefix_is_byte_stable_and_the_dynamic_part_moves() {
    let ok = reply(json!([]), "");
    let model = MockGuideModel::new(&[&ok, &ok, &ok, &ok]);
    let g = guide(&model, FailMode::Closed);
    let sim = Sim::new(&g);
    sim.turn(&turn1()).await.unwrap();
    sim.turn(&turn2()).await.unwrap();
    sim.turn(&turn3()).await.unwrap();
    let b = bags_call("b1");
    sim.call(&with_call(turn3(), &b), &b).await;
    let seen = model.seen();
    assert_eq!(seen.len(), 4);
    let prefix = system_text(&seen[0]);
    for req in &seen {
        assert_eq!(system_text(req), prefix, "byte-identical system prefix");
        assert_eq!(req.messages.len(), 2);
        assert!(req.json_mode);
        assert_eq!(req.seed, Some(7));
    }
    let dynamic: Vec<&str> = seen.iter().map(user_text).collect();
    for (i, a) in dynamic.iter().enumerate() {
        for b in &dynamic[i + 1..] {
            assert_ne!(a, b, "each trigger has its own dynamic part");
        }
    }
    // A second guide of the same domain renders the same bytes.
    let other = llm_guide(
        GuideKnowledge::Graph(graph_flow()),
        &MockGuideModel::new(&[]),
        FailMode::Closed,
    );
    assert_eq!(other.prefix(), prefix);

    // The graph variant shows the policy and the graph rendering; the raw variant the policy
    // and the enumerated authorizations, never the graph.
    let rendering = graph_flow().render();
    let rendering = rendering.trim();
    assert!(prefix.contains(rendering));
    // The template loader tidies whitespace (line ends, blank-line runs); the words stay.
    assert!(squash(prefix).contains(&squash(&airline().policy)));
    assert!(prefix.contains("`cancel_reservation/cancel_authorize` enables `cancel_reservation`"));
    let raw = llm_guide(
        GuideKnowledge::RawPolicy,
        &MockGuideModel::new(&[]),
        FailMode::Closed,
    );
    assert!(squash(raw.prefix()).contains(&squash(&airline().policy)));
    assert!(!raw.prefix().contains("## Graph `"));
    assert!(!raw.prefix().contains("cancel_reservation/cancel_authorize"));
    for tool in catalog().mutating {
        assert!(
            raw.prefix()
                .contains(&format!("`raw/authorize_{tool}` enables `{tool}`")),
            "{tool}"
        );
    }
    assert_ne!(raw.prefix_hash(), other.prefix_hash());
}

#[tokio::test]
async fn prefix_cache_usage_and_the_prefix_identity_are_recorded() {
    let model = MockGuideModel::new(&[&reply(json!([]), "")]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    assert_eq!(e.usage.calls, 1);
    assert_eq!(e.usage.usage.prompt_tokens, 5000);
    assert_eq!(e.usage.usage.cached_prompt_tokens, 4096);
    assert_eq!(e.usage.cost, Some(0.003));
    assert!((e.usage.latency_seconds - 0.25).abs() < 1e-9);
    let prefix = system_text(&model.seen()[0]).to_string();
    let i = info(&e);
    assert_eq!(
        i["prefix_hash"],
        json!(blake3::hash(prefix.as_bytes()).to_hex().to_string())
    );
    assert_eq!(i["prefix_bytes"], json!(prefix.len()));
    assert_eq!(i["knowledge"], json!("graph"));
    assert_eq!(i["verifier"], json!("mock/guide-1"));
}

#[tokio::test]
async fn a_malformed_reply_gets_exactly_one_repair() {
    let good = reply(
        json!([{"id": null, "intent": R1_INTENT, "node": "authenticate_user/read_profile"}]),
        "Read the profile.",
    );
    let model = MockGuideModel::new(&["The agent should verify the user first.", &good]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    let repair = &seen[1].messages;
    assert_eq!(repair.len(), 4);
    assert_eq!(
        repair[2].content(),
        Some("The agent should verify the user first.")
    );
    assert!(matches!(repair[2], Message::Assistant(_)));
    let ask = repair[3].content().unwrap();
    assert!(
        ask.contains("could not be read: the reply contains no JSON object"),
        "{ask}"
    );
    assert_eq!(system_text(&seen[1]), system_text(&seen[0]));
    assert_eq!(card_view(&e)[0].1, "authenticate_user/read_profile");
    assert_eq!(e.guidance.as_deref(), Some("Read the profile."));
    assert_eq!(e.usage.calls, 2);
    assert_eq!(e.usage.usage.cached_prompt_tokens, 8192);
    let i = info(&e);
    assert_eq!(i["attempts"], json!(2));
    assert_eq!(i["repaired"], json!(true));
    assert!(i.get("fail_mode_used").is_none());
}

#[tokio::test]
async fn two_malformed_replies_take_the_fail_mode() {
    for mode in [FailMode::Closed, FailMode::Open] {
        let model = MockGuideModel::new(&["no idea", r#"{"verdict": "PASS"}"#]);
        let g = guide(&model, mode);
        let e = Sim::new(&g).turn(&turn1()).await.unwrap();
        assert_eq!(model.seen().len(), 2, "one repair, no more");
        assert!(e.requests.is_empty(), "no updates");
        let want = match mode {
            FailMode::Closed => Some(FAIL_CLOSED_GUIDANCE),
            FailMode::Open => None,
        };
        assert_eq!(e.guidance.as_deref(), want);
        let i = info(&e);
        assert_eq!(i["fail_mode_used"], json!(true));
        assert_eq!(i["fail_mode"], json!(mode.as_str()));
        assert_eq!(
            i["parse_error"],
            json!("no valid JSON object with a `requests` list was found")
        );
        assert_eq!(e.usage.calls, 2);
    }
}

#[tokio::test]
async fn model_failures_take_the_fail_mode_unless_fatal() {
    let model = MockGuideModel::new(&[DOWN]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    assert_eq!(e.guidance.as_deref(), Some(FAIL_CLOSED_GUIDANCE));
    let i = info(&e);
    assert!(
        i["model_error"]
            .as_str()
            .unwrap()
            .contains("connection refused"),
        "{i:?}"
    );
    assert_eq!(i["attempts"], json!(1));

    let model = MockGuideModel::new(&[FATAL]);
    let g = guide(&model, FailMode::Open);
    match Sim::new(&g).turn(&turn1()).await {
        Err(GuardError::Model(e)) => assert!(e.is_fatal()),
        other => panic!("a fatal model error ends the run, got {other:?}"),
    }
}

// ---------------------------------------------------------------- the factory

fn fixture_airline() -> DomainData {
    let dir = DataDir::resolve(Some(&root().join("tasks/fixtures"))).unwrap();
    DomainData::load(&dir, "airline").unwrap()
}

fn build(
    name: &str,
    tasks_dir: &std::path::Path,
    data: &DomainData,
    verifier: Option<Arc<dyn ChatModel>>,
) -> Result<Option<Arc<dyn Guard>>, GuardBuildError> {
    build_guard(
        GuardName::parse(name).unwrap(),
        GuardOptions::default(),
        &GuardInputs {
            tasks_dir: tasks_dir.to_path_buf(),
            prompts_dir: root().join("configs/prompts"),
            data,
            verifier,
        },
    )
}

#[tokio::test]
async fn the_factory_builds_both_guides_for_an_llm_verifier_only() {
    let data = fixture_airline();
    let tasks = root().join("tasks");
    for name in ["policyguide", "policyguide-raw"] {
        assert!(GuardName::parse(name).unwrap().uses_verifier());
        let model = MockGuideModel::new(&[&reply(json!([]), "")]);
        let m: Arc<dyn ChatModel> = model.clone();
        let g = build(name, &tasks, &data, Some(m))
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
    let sim: Arc<dyn ChatModel> = Arc::new(NamedSim);
    for verifier in [None, Some(sim)] {
        let err = build("policyguide", &tasks, &data, verifier)
            .err()
            .expect("no sim guide in this build")
            .to_string();
        assert_eq!(
            err,
            "guard `policyguide`: the offline sim guide is not available in this build"
        );
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
    let m: Arc<dyn ChatModel> = MockGuideModel::new(&[]);
    let err = build("policyguide", tasks.path(), &data, Some(m.clone()))
        .err()
        .expect("an invalid bundle is refused")
        .to_string();
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
    assert!(build("policyguide-raw", tasks.path(), &data, Some(m)).is_ok());
    // A missing bundle names its path too.
    let empty = tempfile::tempdir().unwrap();
    let m: Arc<dyn ChatModel> = MockGuideModel::new(&[]);
    let err = build("policyguide", empty.path(), &data, Some(m))
        .err()
        .expect("a missing bundle is refused")
        .to_string();
    assert!(err.contains("cannot read workflow bundle"), "{err}");
    assert!(err.contains("airline/workflow/bundle.json"), "{err}");
}

/// A model whose id marks it as one of the offline `sim` models.
struct NamedSim;

impl ChatModel for NamedSim {
    fn id(&self) -> &str {
        "sim/verifier"
    }

    fn complete<'a>(
        &'a self,
        _req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        panic!("the factory never calls a model while building")
    }
}
