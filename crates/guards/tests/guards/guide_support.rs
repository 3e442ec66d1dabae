//! Shared pieces of the LLM guide tests: the scripted guide model (from `scripted.rs`), the
//! airline guide built from the frozen bundle, a driver that calls the guard hooks with one
//! per-simulation state, and a scripted airline conversation in three user turns.

pub(crate) use crate::scripted::{DOWN, FATAL, ScriptedModel, guide_model};
use crate::support::{agent, call, calls, read, root, user};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use tauguard_core::dialogue::GUIDANCE_PREFIX;
use tauguard_core::record::GuideEvent;
use tauguard_core::{Message, ToolCall};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{
    Decision, FailMode, Flow, Guard, GuardContext, GuardError, GuardState, GuideKnowledge,
    LlmGuide, LlmGuideSetup, PolicyGuide, Sampling, ToolCatalog, load_flow,
};
use tauguard_llm::{ChatModel, ChatRequest};

// ---------------------------------------------------------------- fixtures

/// The airline domain: τ²-bench's when the data is there, else the project's airline-shaped
/// fixture domain (the guide reads the environment only through the context it is handed).
pub(crate) fn airline() -> &'static DomainData {
    static DATA: OnceLock<DomainData> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = tauguard_testkit::tau2_dir().unwrap_or_else(|| root().join("tasks/fixtures"));
        let dir = DataDir::resolve(Some(&dir)).unwrap_or_else(|e| panic!("{e}"));
        DomainData::load(&dir, "airline").unwrap_or_else(|e| panic!("airline: {e}"))
    })
}

pub(crate) fn catalog() -> ToolCatalog {
    ToolCatalog::builtin("airline").expect("airline is registered")
}

pub(crate) fn graph_flow() -> Arc<Flow> {
    Arc::new(load_flow(&root().join("tasks"), &catalog()).unwrap_or_else(|e| panic!("{e}")))
}

pub(crate) fn setup(fail_mode: FailMode) -> LlmGuideSetup {
    LlmGuideSetup {
        policy: airline().policy.clone(),
        catalog: catalog(),
        prompts_dir: root().join("configs/prompts"),
        sampling: Sampling::default(),
        fail_mode,
    }
}

pub(crate) fn llm_guide(
    knowledge: GuideKnowledge,
    model: &Arc<ScriptedModel>,
    mode: FailMode,
) -> LlmGuide {
    let model: Arc<dyn ChatModel> = model.clone();
    LlmGuide::new(knowledge, model, &setup(mode)).unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn guide(model: &Arc<ScriptedModel>, mode: FailMode) -> PolicyGuide {
    let g = llm_guide(GuideKnowledge::Graph(graph_flow()), model, mode);
    PolicyGuide::new("policyguide", g.flow(), Box::new(g))
}

/// Runs the guard hooks over a history, sharing one per-simulation state.
pub(crate) struct Sim<'a> {
    guard: &'a dyn Guard,
    state: GuardState,
    env: Box<dyn tauguard_env::Environment>,
}

impl<'a> Sim<'a> {
    pub(crate) fn new(guard: &'a dyn Guard) -> Sim<'a> {
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

    pub(crate) async fn turn(&self, history: &[Message]) -> Result<GuideEvent, GuardError> {
        let g = self.guard.before_agent_turn(&self.ctx(history)).await?;
        Ok(g.expect("a guide always reports its run").event)
    }

    pub(crate) async fn call(&self, history: &[Message], c: &ToolCall) -> Decision {
        self.guard
            .on_mutating_call(&self.ctx(history), c)
            .await
            .expect("the scripted guide answers")
    }
}

pub(crate) fn system() -> Message {
    Message::System {
        content: Some("agent system prompt".into()),
    }
}

pub(crate) fn guidance(text: &str) -> Message {
    user(&format!("{GUIDANCE_PREFIX}{text}"))
}

pub(crate) fn reply(requests: Value, remediation: &str) -> String {
    json!({"requests": requests, "remediation": remediation}).to_string()
}

pub(crate) fn card_view(e: &GuideEvent) -> Vec<(String, String, Vec<String>)> {
    e.requests
        .iter()
        .map(|c| (c.id.clone(), c.node.clone(), c.authorizations.clone()))
        .collect()
}

pub(crate) fn info(e: &GuideEvent) -> &serde_json::Map<String, Value> {
    e.info.as_ref().and_then(Value::as_object).expect("info")
}

pub(crate) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn system_text(req: &ChatRequest) -> &str {
    match &req.messages[0] {
        Message::System { content } => content.as_deref().expect("a system text"),
        other => panic!("the first message is the system prefix, not {other:?}"),
    }
}

pub(crate) fn user_text(req: &ChatRequest) -> &str {
    req.messages[1].content().expect("the dynamic part")
}

// ---------------------------------------------------------------- the scripted conversation

pub(crate) const R1_INTENT: &str = "cancel reservation NO6JO3";

/// Turn 1: the user asks to cancel and gives the id.
pub(crate) fn turn1() -> Vec<Message> {
    vec![
        system(),
        agent("Hi! How can I help you today?"),
        user("Hi, I want to cancel reservation NO6JO3. My user id is mia_li_3668."),
    ]
}

/// Turn 2: the agent looked everything up and asked the reason; the user gives it and adds a
/// second request.
pub(crate) fn turn2() -> Vec<Message> {
    let mut h = turn1();
    h.push(guidance(
        "Look up the user's profile with get_user_details.",
    ));
    h.extend(read(
        "c1",
        "get_user_details",
        json!({"user_id": "mia_li_3668"}),
        r#"{"user_id": "mia_li_3668"}"#,
    ));
    h.extend(read(
        "c2",
        "get_reservation_details",
        json!({"reservation_id": "NO6JO3"}),
        r#"{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "cabin": "business"}"#,
    ));
    h.push(agent("Why do you want to cancel?"));
    h.push(user(
        "Change of plans. Also please add a checked bag to reservation ZFA04Y.",
    ));
    h
}

/// Turn 3: the agent summarised; the user says yes and drops the bag request.
pub(crate) fn turn3() -> Vec<Message> {
    let mut h = turn2();
    h.push(agent(
        "I will cancel NO6JO3 and refund it to the original payment. Confirm? (yes/no)",
    ));
    h.push(user("Yes, cancel it. Forget about the bag."));
    h
}

pub(crate) fn cancel_call() -> ToolCall {
    call(
        "c9",
        "cancel_reservation",
        json!({"reservation_id": "NO6JO3"}),
    )
}

pub(crate) fn bags_call(id: &str) -> ToolCall {
    call(
        id,
        "update_reservation_baggages",
        json!({"reservation_id": "ZFA04Y", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "gift_card_1"}),
    )
}

pub(crate) fn with_call(mut h: Vec<Message>, c: &ToolCall) -> Vec<Message> {
    h.push(calls(c));
    h
}
