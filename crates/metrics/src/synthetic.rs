//! Synthetic simulation records: small builders for tests, and a seeded generator of large,
//! realistic-looking populations for the `report` benchmark. Nothing here is used by the
//! metrics themselves.

use crate::bootstrap::SplitMix64;
use std::collections::BTreeMap;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::message::Usage;
use tauguard_core::record::{
    CallAttempt, GuardEvent, GuideEvent, GuideTrigger, InjectedFault, RECORD_SCHEMA_VERSION,
    RewardInfo, RoleUsage, SimulationRecord, Slice, Verdict,
};
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
        termination_reason: "user_stop".into(),
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
    rec.termination_reason = "infrastructure_error".into();
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
        info: None,
    }
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
        let groups = self.domains.len() * self.agents.len() * self.guards.len();
        let per_group = self.records.div_ceil(groups);
        let tasks = per_group.div_ceil(self.trials as usize).max(1);
        let mut rng = SplitMix64::new(self.seed);
        let mut out = Vec::with_capacity(self.records);
        'outer: for domain in &self.domains {
            for agent in &self.agents {
                for (gi, guard) in self.guards.iter().enumerate() {
                    for t in 0..tasks {
                        for trial in 0..self.trials {
                            if out.len() == self.records {
                                break 'outer;
                            }
                            out.push(self.one(&mut rng, domain, agent, guard, gi, t, trial));
                        }
                    }
                }
            }
        }
        out
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
