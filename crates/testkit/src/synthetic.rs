//! Synthetic simulation records (feature `synthetic`): small builders for the metrics' and the
//! viewer's tests, and a seeded generator of large, realistic-looking populations for the
//! `report` benchmark. Test data only; no crate's code reads it.

use std::collections::BTreeMap;
use tauguard_core::SplitMix64;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::message::Usage;
use tauguard_core::record::{
    CallAttempt, GuardEvent, GuideEvent, GuideTrigger, InjectedFault, RECORD_SCHEMA_VERSION,
    RewardInfo, RoleUsage, SimulationRecord, Slice, Verdict,
};
use tauguard_core::termination::Termination;
use tauguard_core::{Message, Requestor, ToolCall};

/// A scored record of domain `airline`, agent `agent`, guard `baseline`, run `run`; reward is
/// the τ²-bench reward (1.0 = success).
pub fn record(task_id: &str, slice: Slice, trial: u32, reward: f64) -> SimulationRecord {
    SimulationRecord {
        schema_version: RECORD_SCHEMA_VERSION,
        run_id: "run".into(),
        cell_id: "cell".into(),
        config_hash: String::new(),
        cell_hash: String::new(),
        cell: Default::default(),
        domain: "airline".into(),
        agent_model: "agent".into(),
        user_model: "user".into(),
        guard: "baseline".into(),
        task_id: task_id.into(),
        slice,
        trial,
        seed: u64::from(trial),
        termination_reason: Termination::UserStop,
        reward: Some(RewardInfo {
            reward,
            ..RewardInfo::default()
        }),
        error: None,
        messages: Vec::new(),
        guard_events: Vec::new(),
        guide_events: Vec::new(),
        injected_faults: Vec::new(),
        behaviour_events: Vec::new(),
        call_attempts: Vec::new(),
        attack_target: None,
        attack: None,
        gold_trace: None,
        usage: BTreeMap::new(),
        agent_turns: 0,
        user_turns: 0,
        wall_seconds: 0.0,
        started_at: String::new(),
        attempts: Default::default(),
    }
}

/// The same record turned into an infrastructure error.
pub fn infra(mut rec: SimulationRecord) -> SimulationRecord {
    rec.termination_reason = Termination::InfrastructureError;
    rec.reward = None;
    rec.error = Some("provider unavailable".into());
    rec
}

/// An agent-side attempt of `book_reservation`.
pub fn attempt(call_id: &str, verdict: Option<Verdict>, executed: bool) -> CallAttempt {
    CallAttempt {
        call_id: call_id.into(),
        tool: "book_reservation".into(),
        requestor: Requestor::Assistant,
        verdict,
        executed,
        faults: Vec::new(),
        missing_prerequisites: None,
    }
}

/// Appends one assistant message per tool name, each carrying that call.
pub fn with_calls(mut rec: SimulationRecord, tools: &[&str]) -> SimulationRecord {
    for (i, name) in tools.iter().enumerate() {
        rec.messages.push(Message::Assistant(ParticipantMessage {
            tool_calls: Some(vec![ToolCall {
                id: format!("call_{i}"),
                name: (*name).into(),
                arguments: Default::default(),
                requestor: Requestor::Assistant,
            }]),
            ..ParticipantMessage::default()
        }));
    }
    rec
}

/// A guard decision of `guard` on the call `call_id` of `tool`, with no model usage.
pub fn guard_event(
    guard: &str,
    call_id: &str,
    tool: &str,
    verdict: Verdict,
    executed: bool,
) -> GuardEvent {
    GuardEvent {
        guard: guard.into(),
        call_id: call_id.into(),
        tool: tool.into(),
        arguments: Default::default(),
        attempt_idx: 0,
        at_message: None,
        verdict,
        requirements: Vec::new(),
        remediation: (verdict == Verdict::Block).then(|| "blocked".to_string()),
        executed,
        usage: RoleUsage::default(),
        verdict_source: Default::default(),
        fail_reason: None,
        fail_http_status: None,
        info: None,
    }
}

/// Model usage of `calls` calls with the given tokens and cost.
pub fn usage(
    calls: u64,
    prompt: u64,
    cached: u64,
    completion: u64,
    cost: Option<f64>,
) -> RoleUsage {
    RoleUsage {
        calls,
        usage: Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_prompt_tokens: cached,
        },
        cost,
        ..RoleUsage::default()
    }
}

/// A guide run of `guard` before a user turn, with `usage`, no request cards and no guidance.
pub fn guide_event(guard: &str, usage: RoleUsage) -> GuideEvent {
    GuideEvent {
        guard: guard.into(),
        trigger: GuideTrigger::UserTurn,
        at_message: 0,
        requests: Vec::new(),
        enabled_tools: Vec::new(),
        guidance: None,
        rejected: Vec::new(),
        usage,
        verdict_source: Default::default(),
        fail_reason: None,
        fail_http_status: None,
        info: None,
    }
}

/// Adds a realistic trajectory to `rec`: a user opening, agent replies and tool calls with
/// arguments and JSON results, about `text_bytes` of message text in all (the bulk of a real
/// record), in front of the calls it already carries.
pub fn add_trajectory(rec: &mut SimulationRecord, rng: &mut SplitMix64, text_bytes: usize) {
    const WORDS: [&str; 12] = [
        "reservation",
        "flight",
        "confirm",
        "passenger",
        "baggage",
        "refund",
        "certificate",
        "cabin",
        "economy",
        "policy",
        "membership",
        "payment",
    ];
    let mut text = |n: usize| {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            s.push_str(WORDS[rng.below(WORDS.len())]);
            s.push(' ');
        }
        s
    };
    let turns = 4usize;
    let per = text_bytes / (turns * 3);
    let mut msgs = Vec::with_capacity(turns * 4 + rec.messages.len());
    for i in 0..turns {
        msgs.push(Message::User(ParticipantMessage {
            content: Some(text(per)),
            turn_idx: Some(i as u32 * 3),
            ..ParticipantMessage::default()
        }));
        let id = format!("read_{i}");
        let mut args = serde_json::Map::new();
        args.insert(
            "reservation_id".into(),
            format!("R{:05}", i * 7919 % 99991).into(),
        );
        args.insert("note".into(), text(per / 8).into());
        msgs.push(Message::Assistant(ParticipantMessage {
            content: Some(text(per / 2)),
            tool_calls: Some(vec![ToolCall {
                id: id.clone(),
                name: "get_reservation_details".into(),
                arguments: args,
                requestor: Requestor::Assistant,
            }]),
            turn_idx: Some(i as u32 * 3 + 1),
            usage: Some(Usage {
                prompt_tokens: 1200,
                completion_tokens: 80,
                cached_prompt_tokens: 0,
            }),
            cost: Some(0.002),
            ..ParticipantMessage::default()
        }));
        msgs.push(Message::Tool(tauguard_core::message::ToolMessage {
            id,
            content: format!("{{\"status\": \"ok\", \"detail\": \"{}\"}}", text(per)),
            requestor: Requestor::Assistant,
            error: false,
            turn_idx: Some(i as u32 * 3 + 2),
            timestamp: None,
            guard_blocked: false,
        }));
    }
    msgs.append(&mut rec.messages);
    rec.messages = msgs;
}

/// Shape of a generated population.
#[derive(Debug, Clone)]
pub struct Population {
    pub records: usize,
    pub domains: Vec<&'static str>,
    pub agents: Vec<&'static str>,
    pub guards: Vec<&'static str>,
    pub trials: u32,
    pub seed: u64,
}

impl Population {
    /// `records` simulations over 3 domains × 4 agents × 6 guards with 4 trials per task.
    pub fn new(records: usize) -> Population {
        Population {
            records,
            domains: vec!["airline", "retail", "telecom"],
            agents: vec!["gpt-5.4", "claude-sonnet-4.6", "gemini-2.5-pro", "sim"],
            guards: vec![
                "baseline",
                "toolguard",
                "pg-raw",
                "pg-checklist",
                "pg-checklist-only",
                "policyguide",
            ],
            trials: 4,
            seed: 42,
        }
    }

    /// Generates the records, deterministic in `seed`.
    pub fn generate(&self) -> Vec<SimulationRecord> {
        self.iter().collect()
    }

    /// The records of [`Population::generate`], one at a time (for populations too large to
    /// hold).
    pub fn iter(&self) -> impl Iterator<Item = SimulationRecord> + '_ {
        let groups = self.domains.len() * self.agents.len() * self.guards.len();
        let per_group = self.records.div_ceil(groups);
        let tasks = per_group.div_ceil(self.trials as usize).max(1);
        let mut rng = SplitMix64::new(self.seed);
        let cells = self.domains.iter().flat_map(move |d| {
            self.agents.iter().flat_map(move |a| {
                self.guards
                    .iter()
                    .enumerate()
                    .map(move |(gi, g)| (*d, *a, gi, *g))
            })
        });
        cells
            .flat_map(move |cell| {
                (0..tasks).flat_map(move |t| (0..self.trials).map(move |trial| (cell, t, trial)))
            })
            .take(self.records)
            .map(move |((d, a, gi, g), t, trial)| self.one(&mut rng, d, a, g, gi, t, trial))
    }

    #[allow(clippy::too_many_arguments)]
    fn one(
        &self,
        rng: &mut SplitMix64,
        domain: &str,
        agent: &str,
        guard: &str,
        guard_idx: usize,
        task: usize,
        trial: u32,
    ) -> SimulationRecord {
        let slice = if task.is_multiple_of(2) {
            Slice::Pv
        } else {
            Slice::Mut
        };
        let task_id = task.to_string();
        // Per-task difficulty so that Pass^k falls with k; guards help a little.
        let difficulty = (task * 7919 % 100) as u64;
        let skill = 40 + guard_idx as u64 * 5;
        let success = rng.below(100) as u64 + difficulty / 2 < skill + 30;
        let mut rec = record(&task_id, slice, trial, if success { 1.0 } else { 0.0 });
        rec.domain = domain.into();
        rec.agent_model = agent.into();
        rec.guard = guard.into();
        rec.run_id = format!("{domain}-{agent}-{guard}");
        rec.cell_id = rec.run_id.clone();
        rec.seed = rng.next_u64() % 1_000_000;
        rec.agent_turns = 4 + rng.below(12) as u32;
        rec.user_turns = rec.agent_turns - 1;
        if rng.below(500) == 0 {
            rec = infra(rec);
        }
        let attempts = match slice {
            Slice::Pv => usize::from(rng.below(4) == 0),
            Slice::Mut | Slice::Unknown => 1 + rng.below(2),
        };
        for i in 0..attempts {
            let violating = slice == Slice::Pv || rng.below(5) == 0;
            let verdict = (guard != "baseline").then(|| {
                if (violating && rng.below(10) < 8) || rng.below(10) == 0 {
                    Verdict::Block
                } else {
                    Verdict::Pass
                }
            });
            let mut a = attempt(
                &format!("call_{i}"),
                verdict,
                verdict != Some(Verdict::Block),
            );
            a.missing_prerequisites = Some(if violating && slice == Slice::Mut {
                vec!["user_confirmation".into()]
            } else {
                Vec::new()
            });
            if agent == "sim" && violating {
                a.faults.push("skip_confirmation".into());
                rec.injected_faults.push(InjectedFault {
                    kind: "skip_confirmation".into(),
                    call_id: Some(a.call_id.clone()),
                    tool: Some(a.tool.clone()),
                    detail: String::new(),
                    at_message: None,
                });
            }
            rec.call_attempts.push(a);
        }
        if domain == "telecom" && slice == Slice::Mut {
            rec.gold_trace = Some(vec!["get_details_by_id".into(), "refuel_data".into()]);
            let calls: &[&str] = if rng.below(3) == 0 {
                &["refuel_data"]
            } else {
                &["get_details_by_id", "refuel_data"]
            };
            rec = with_calls(rec, calls);
        }
        if task % 25 == 3 {
            rec.attack_target = Some("book_reservation".into());
        }
        rec.usage.insert(
            "agent".into(),
            RoleUsage {
                calls: u64::from(rec.agent_turns),
                cost: Some(0.01 * f64::from(rec.agent_turns)),
                ..RoleUsage::default()
            },
        );
        rec
    }
}
