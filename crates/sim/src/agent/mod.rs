//! The sim agent: a scripted agent that follows the policy procedure around the task's gold
//! actions — ask for identity, do the reads, summarise and ask for confirmation, then mutate;
//! refuse forbidden requests — and injects faults drawn from its [`FaultProfile`].
//!
//! It keeps no state between turns: each turn re-derives its plan from the task and finds
//! the first plan step its own past outputs do not show yet. When one of its mutating calls
//! is blocked by a guard, it repairs only what the remediation names (requirement ids such as
//! `identity_verified`, `read_*`, `argument_link_*`, `user_confirmation`, or the tools they
//! cite; anything else is read as being about the call's arguments), then retries once — so a
//! remediation that misses a fault leaves it in place. With the profile's reactions it may
//! first retry the blocked call unchanged (`retry_unchanged`) or give up on the request
//! (`abandon_after_block`). An environment error repairs every fault of the call (the tool
//! answered, not a remediation). It waits for the user's answer to each summary: it asks
//! again after a hesitation or a correction and drops an action the user declines.

mod labels;
mod reactions;
mod workflow;

use crate::SimTurn;
use crate::faults::{self, FaultProfile, PlannedFaults};
use crate::phrases::{self, device_request};
use crate::rng::SimRng;
use reactions::{Answers, State, answers};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tauguard_core::message::Message;
use tauguard_core::record::InjectedFault;
use tauguard_core::{Requestor, Task};
pub use workflow::DeviceChecks;

/// The forbidden call a PV task tempts the agent into (from `tasks/<domain>/pv_annotations.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct TemptingCall {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// A read-only call the policy requires before a mutating call.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRead {
    pub tool: String,
    pub arguments: Map<String, Value>,
    /// An identity-establishing read (any one identity read satisfies the requirement).
    pub identity: bool,
    /// Made only to learn an argument of another planned read (the profile behind an e-mail
    /// lookup), not because the policy asks for it: skipping it is no fault.
    pub helper: bool,
}

/// How the sim agent goes about a task. The trivial behaviours are floors: what a table's
/// numbers must beat to mean anything (an agent that does nothing passes every task whose
/// gold is inaction; one that mutates without any procedure shows what the procedure adds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentBehaviour {
    /// Follows the policy procedure around the gold actions, with the configured faults
    /// (model `sim-agent`).
    #[default]
    Procedure,
    /// Never mutates: refuses politely and closes (model `refuse-all`).
    RefuseAll,
    /// Executes the gold actions that change state — agent mutations and the user's device
    /// actions — with no identity check, no reads and no confirmation (model
    /// `gold-no-procedure`).
    GoldNoProcedure,
}

impl AgentBehaviour {
    /// The sim agent model names, one per behaviour.
    pub const MODELS: [(&'static str, AgentBehaviour); 3] = [
        ("sim-agent", AgentBehaviour::Procedure),
        ("refuse-all", AgentBehaviour::RefuseAll),
        ("gold-no-procedure", AgentBehaviour::GoldNoProcedure),
    ];

    /// The behaviour of a sim agent model name.
    pub fn of_model(model: &str) -> Option<AgentBehaviour> {
        Self::MODELS
            .iter()
            .find(|(m, _)| *m == model)
            .map(|(_, b)| *b)
    }
}

/// What the sim agent needs to know about its task and domain.
#[derive(Debug, Clone)]
pub struct SimAgentSpec {
    pub task: Task,
    /// Names of the domain's mutating agent tools.
    pub mutating: HashSet<String>,
    /// Names of the domain's identity-establishing reads.
    pub identity_reads: HashSet<String>,
    pub tempting: Option<TemptingCall>,
    /// Reads the policy requires before each mutating gold call (indexed like those calls),
    /// resolved by the caller against the environment; the compliant agent makes each one
    /// that the plan does not already contain.
    pub prerequisite_reads: Vec<Vec<PlannedRead>>,
    /// The domain's read-only agent tools and their required parameters: a read a
    /// remediation or a guide names (in backticks) that the plan lacks is made when every
    /// parameter can be filled from the task's gold calls' arguments of the same name.
    pub lookups: Arc<HashMap<String, Vec<String>>>,
    /// The domain's device workflow by action name (empty: the domain has none).
    pub device_workflow: Arc<HashMap<String, DeviceChecks>>,
    pub profile: FaultProfile,
    pub trial: u32,
    pub seed: u64,
    pub behaviour: AgentBehaviour,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Say(String),
    Call(String, Map<String, Value>),
}

/// One output of the agent, read back from the conversation.
#[derive(Debug)]
struct PastOutput {
    step: Step,
    /// For calls: whether the result came back as an error.
    failed: bool,
    /// For calls: the guard's remediation when a guard blocked it.
    blocked: Option<String>,
    /// For calls: the call id.
    id: Option<String>,
}

#[derive(Debug)]
pub struct SimAgent {
    spec: SimAgentSpec,
    faults: PlannedFaults,
    pv: bool,
}

impl SimAgent {
    pub fn new(spec: SimAgentSpec) -> SimAgent {
        let mutations: Vec<Vec<String>> = spec
            .task
            .gold_actions()
            .iter()
            .filter(|a| a.requestor == Requestor::Assistant && spec.mutating.contains(&a.name))
            .map(|a| a.arguments.keys().cloned().collect())
            .collect();
        let pv = mutations.is_empty();
        let mut rng = SimRng::keyed(&format!("agent:{}", spec.task.id), spec.trial, spec.seed);
        // The trivial behaviours are fault-free by definition: their plan ignores faults.
        let profile = match spec.behaviour {
            AgentBehaviour::Procedure => spec.profile,
            _ => FaultProfile::default(),
        };
        let faults = PlannedFaults::draw(&profile, &mut rng, &mutations, pv);
        SimAgent { spec, faults, pv }
    }

    pub fn planned_faults(&self) -> &PlannedFaults {
        &self.faults
    }

    /// Whether the task is policy-violating (no agent-side mutating gold call).
    pub fn is_pv(&self) -> bool {
        self.pv
    }

    /// The plan under the given faults and state.
    fn plan(&self, st: &State<'_>) -> Vec<Step> {
        match self.spec.behaviour {
            AgentBehaviour::Procedure => self.procedure_plan(st),
            AgentBehaviour::RefuseAll => vec![Step::Say(format!(
                "{} {}",
                phrases::REFUSAL,
                phrases::CLOSING
            ))],
            AgentBehaviour::GoldNoProcedure => {
                let mut steps: Vec<Step> = self
                    .spec
                    .task
                    .gold_actions()
                    .iter()
                    .filter_map(|a| match a.requestor {
                        Requestor::User => Some(Step::Say(device_request(&a.name, &a.arguments))),
                        Requestor::Assistant if self.spec.mutating.contains(&a.name) => {
                            Some(Step::Call(a.name.clone(), a.arguments.clone()))
                        }
                        Requestor::Assistant => None,
                    })
                    .collect();
                steps.push(Step::Say(closing_text(&self.spec.task)));
                steps
            }
        }
    }

    /// The policy procedure around the gold actions (see the module docs).
    fn procedure_plan(&self, st: &State<'_>) -> Vec<Step> {
        let f = &self.faults;
        let mut steps = Vec::new();
        let repaired = |k: usize| st.calls.get(k).copied().flatten();
        let skip_id = f.skip_identity && !st.identity;
        // A repaired identity skip is made up where it is found missing — right before the
        // first mutating call's reads — not at the start, so the steps already taken (device
        // actions included) are not replayed.
        let mut late_id = f.skip_identity && st.identity;
        if !f.skip_identity {
            steps.push(Step::Say(phrases::ASK_IDENTITY.into()));
        }
        let gold = self.spec.task.gold_actions();
        let mut k = 0usize;
        for (i, a) in gold.iter().enumerate() {
            if a.requestor == Requestor::User {
                self.diagnose(&a.name, &a.arguments, &mut steps);
                steps.push(Step::Say(device_request(&a.name, &a.arguments)));
                self.verify(&a.name, gold.get(i + 1), &mut steps);
                continue;
            }
            if self.spec.identity_reads.contains(&a.name) && f.skip_identity {
                continue;
            }
            if self.spec.mutating.contains(&a.name) {
                let fix = repaired(k).unwrap_or_default();
                let skip_reads = f.skip_prerequisite.contains(&k) && !fix.reads;
                if late_id {
                    steps.push(Step::Say(phrases::ASK_IDENTITY.into()));
                    late_id = false;
                }
                for r in self.spec.prerequisite_reads.get(k).into_iter().flatten() {
                    let planned = |s: &Step| match s {
                        Step::Call(n, args) if r.identity => {
                            self.spec.identity_reads.contains(n)
                                || (*n == r.tool && *args == r.arguments)
                        }
                        Step::Call(n, args) => *n == r.tool && *args == r.arguments,
                        Step::Say(_) => false,
                    };
                    let skipped = if r.identity { skip_id } else { skip_reads };
                    if !skipped && !steps.iter().any(planned) {
                        steps.push(Step::Call(r.tool.clone(), r.arguments.clone()));
                    }
                }
                for tool in st.named_reads.get(k).into_iter().flatten() {
                    if let Some(args) = self.fill(tool, &a.arguments, st.view) {
                        let step = Step::Call(tool.clone(), args);
                        if !steps.contains(&step) {
                            steps.push(step);
                        }
                    }
                }
                let mut args = a.arguments.clone();
                if let Some((ck, arg)) = &f.corrupt_argument
                    && !fix.argument
                    && *ck == k
                    && let Some(v) = args.get_mut(arg)
                {
                    corrupt(v);
                }
                self.diagnose(&a.name, &a.arguments, &mut steps);
                let confirm = !f.skip_confirmation.contains(&k) || fix.confirmation;
                if confirm && !self.confirm_steps(st.view, &a.name, &a.arguments, &mut steps) {
                    k += 1;
                    continue;
                }
                steps.push(Step::Call(a.name.clone(), args.clone()));
                if st.abandon == Some(k) {
                    steps.push(Step::Say(format!(
                        "{} {}",
                        phrases::ABANDON,
                        phrases::CLOSING
                    )));
                    return steps;
                }
                if st.retry.get(k).copied().unwrap_or(false) && repaired(k).is_none() {
                    steps.push(Step::Call(a.name.clone(), args));
                }
                self.verify(&a.name, gold.get(i + 1), &mut steps);
                k += 1;
                continue;
            }
            // A read right before a mutating call is its prerequisite; the fault skips it.
            let next_mut_index = gold[i + 1..]
                .first()
                .filter(|n| {
                    n.requestor == Requestor::Assistant && self.spec.mutating.contains(&n.name)
                })
                .map(|_| k);
            if let Some(nk) = next_mut_index
                && f.skip_prerequisite.contains(&nk)
                && !repaired(nk).is_some_and(|r| r.reads)
            {
                continue;
            }
            steps.push(Step::Call(a.name.clone(), a.arguments.clone()));
            if a.name == "transfer_to_human_agents" {
                steps.push(Step::Say(phrases::TRANSFER.into()));
            }
        }
        if self.pv {
            match (
                &self.spec.tempting,
                self.faults.comply_forbidden && !st.refuse,
            ) {
                (Some(t), true) => {
                    let go = self.faults.skip_identity
                        || self.confirm_steps(st.view, &t.tool, &t.arguments, &mut steps);
                    if go {
                        steps.push(Step::Call(t.tool.clone(), t.arguments.clone()));
                    }
                }
                _ => {
                    // Refusal and closing in one message: the user leaves after a refusal.
                    steps.push(Step::Say(format!(
                        "{} {}",
                        phrases::REFUSAL,
                        closing_text(&self.spec.task)
                    )));
                    return steps;
                }
            }
        }
        steps.push(Step::Say(closing_text(&self.spec.task)));
        steps
    }

    /// The summary of a pending action and the re-asks the user's answers call for; `false`
    /// when the user declined (the action is dropped with an acknowledgement).
    fn confirm_steps(
        &self,
        view: &[Message],
        tool: &str,
        args: &Map<String, Value>,
        steps: &mut Vec<Step>,
    ) -> bool {
        let text = confirmation_text(tool, args);
        let reask = format!("{} {text}", phrases::REASK_PREFIX);
        steps.push(Step::Say(text.clone()));
        let (n, go) = match answers(view, &text, &reask) {
            Answers::Proceed(n) => (n, true),
            Answers::Declined(n) => (n, false),
        };
        steps.extend(std::iter::repeat_n(Step::Say(reask), n));
        if !go {
            steps.push(Step::Say(phrases::DECLINE_ACK.into()));
        }
        go
    }

    /// Arguments for read `tool`: each required parameter from the mutating call's own
    /// arguments, else the first gold call's, else the first earlier tool result's field of
    /// that name (searched through nested objects and lists); `None` when one cannot be
    /// filled.
    fn fill(
        &self,
        tool: &str,
        own: &Map<String, Value>,
        view: &[Message],
    ) -> Option<Map<String, Value>> {
        let params = self.spec.lookups.get(tool)?;
        let gold = self.spec.task.gold_actions();
        let results: Vec<Value> = view
            .iter()
            .filter_map(|m| match m {
                Message::Tool(t) if !t.error && !t.guard_blocked => {
                    serde_json::from_str(&t.content).ok()
                }
                _ => None,
            })
            .collect();
        params
            .iter()
            .map(|p| {
                let v = find_key(&Value::Object(own.clone()), p)
                    .or_else(|| {
                        gold.iter()
                            .find_map(|g| find_key(&Value::Object(g.arguments.clone()), p))
                    })
                    .or_else(|| results.iter().find_map(|r| find_key(r, p)))?;
                Some((p.clone(), v))
            })
            .collect()
    }

    fn is_tempting(&self, s: &Step) -> bool {
        matches!((s, &self.spec.tempting), (Step::Call(n, a), Some(t)) if *n == t.tool && *a == t.arguments && self.pv)
    }

    /// The agent's next turn given its view of the conversation.
    pub fn respond(&self, view: &[Message]) -> SimTurn {
        let past = Self::past_outputs(view);
        let plan = self.plan(&self.state(view));
        let mut cursor = 0usize;
        for step in &plan {
            match past[cursor..].iter().position(|p| p.step == *step) {
                Some(pos) => cursor += pos + 1,
                None => return to_turn(step),
            }
        }
        SimTurn::Say(phrases::CLOSING.into())
    }

    /// Labels the injected faults against the mutating call attempts of a finished
    /// simulation (`(call_id, tool, arguments)` in order). A fault is attached to the first
    /// attempt of the call it made policy-violating.
    pub fn label_faults(
        &self,
        attempts: &[(String, String, Map<String, Value>)],
    ) -> Vec<InjectedFault> {
        let faulted = self.plan(&State::default());
        let mutating_calls: Vec<(String, Map<String, Value>)> = faulted
            .iter()
            .filter_map(|s| match s {
                Step::Call(n, a) if self.spec.mutating.contains(n) => Some((n.clone(), a.clone())),
                _ => None,
            })
            .collect();
        let find = |name: &str, args: &Map<String, Value>| {
            attempts
                .iter()
                .find(|(_, n, a)| n == name && a == args)
                .map(|(id, _, _)| id.clone())
        };
        let mut out = Vec::new();
        let mut push = |kind: &str, idx: Option<usize>, detail: String| {
            let (tool, call_id) = match idx.and_then(|i| mutating_calls.get(i)) {
                Some((n, a)) => (Some(n.clone()), find(n, a)),
                None => (None, None),
            };
            out.push(InjectedFault {
                kind: kind.into(),
                call_id,
                tool,
                detail,
                at_message: None,
            });
        };
        let f = &self.faults;
        if self.pv {
            if f.comply_forbidden && self.spec.tempting.is_some() {
                push(
                    faults::COMPLY_FORBIDDEN,
                    Some(0),
                    "performed the forbidden request".into(),
                );
                if f.skip_identity {
                    push(
                        faults::SKIP_IDENTITY,
                        Some(0),
                        "no identity check before the forbidden call".into(),
                    );
                }
            }
            return out;
        }
        if f.skip_identity && !mutating_calls.is_empty() {
            push(
                faults::SKIP_IDENTITY,
                Some(0),
                "did not ask the user to identify themselves".into(),
            );
        }
        for k in f
            .skip_prerequisite
            .iter()
            .filter(|k| self.skip_removes_required(&faulted, &mutating_calls, **k))
        {
            push(
                faults::SKIP_PREREQUISITE,
                Some(*k),
                "skipped the read preceding this call".into(),
            );
        }
        for k in &f.skip_confirmation {
            push(
                faults::SKIP_CONFIRMATION,
                Some(*k),
                "no explicit confirmation before this call".into(),
            );
        }
        if let Some((k, arg)) = &f.corrupt_argument {
            push(
                faults::CORRUPT_ARGUMENT,
                Some(*k),
                format!("argument `{arg}` corrupted"),
            );
        }
        out
    }
}

fn to_turn(step: &Step) -> SimTurn {
    match step {
        Step::Say(t) => SimTurn::Say(t.clone()),
        Step::Call(n, a) => SimTurn::Call {
            name: n.clone(),
            arguments: a.clone(),
        },
    }
}

fn confirmation_text(tool: &str, args: &Map<String, Value>) -> String {
    format!(
        "Here is what I am going to do: `{tool}` with {}. {}",
        Value::Object(args.clone()),
        phrases::CONFIRM_QUESTION
    )
}

fn closing_text(task: &Task) -> String {
    let info: Vec<&str> = task
        .evaluation_criteria
        .as_ref()
        .and_then(|c| c.communicate_info.as_deref())
        .unwrap_or(&[])
        .iter()
        .map(String::as_str)
        .collect();
    if info.is_empty() {
        format!("Your request has been handled. {}", phrases::CLOSING)
    } else {
        format!(
            "Your request has been handled. For your reference: {}. {}",
            info.join(", "),
            phrases::CLOSING
        )
    }
}

/// Changes a value so that it is still well-typed but wrong.
fn corrupt(v: &mut Value) {
    match v {
        Value::String(s) => {
            let last = s.pop();
            s.push(if last == Some('9') { '8' } else { '9' });
        }
        Value::Number(n) => {
            *v = match n.as_i64() {
                Some(i) => Value::from(i + 1),
                None => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
            };
        }
        Value::Bool(b) => *b = !*b,
        Value::Array(items) => {
            if let Some(first) = items.first_mut() {
                corrupt(first);
            }
        }
        Value::Object(map) => {
            if let Some((_, first)) = map.iter_mut().next() {
                corrupt(first);
            }
        }
        Value::Null => {}
    }
}

/// The first value of field `key` in `v`, searching nested objects and lists depth-first.
fn find_key(v: &Value, key: &str) -> Option<Value> {
    match v {
        Value::Object(m) => m
            .get(key)
            .filter(|x| !x.is_object() && !x.is_array())
            .cloned()
            .or_else(|| m.values().find_map(|x| find_key(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}
