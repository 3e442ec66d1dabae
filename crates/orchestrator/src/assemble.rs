//! Record assembly: one simulation's attempts and its place in the plan become the
//! [`SimulationRecord`] appended to `records.jsonl`. A simulation whose attempts all failed
//! becomes an `infrastructure_error` record carrying the last error and what that attempt had
//! done (trajectory, guard events, usage, the unusable output); every record carries its
//! `attempts` section (HTTP tally, discarded attempts, their cost).

use crate::attempt::{AttemptError, AttemptFailure, Attempts};
use crate::plan::{RunPlan, SimIndex, task_slice};
use crate::simulation::SimulationError;
use crate::simulation::SimulationOutcome;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tauguard_core::chain_text;
use tauguard_core::record::{
    AttemptLog, FailedAttempt, GuardEvent, GuideEvent, RoleUsage, SimulationRecord, UnusableOutput,
};
use tauguard_core::termination::Termination;
use tauguard_guards::Prerequisites;
use tauguard_llm::LlmError;
use tauguard_sim::agent::SimAgent;

/// The record of simulation `at`, started at `started_at` and lasting `wall_seconds`.
pub(crate) fn assemble_record(
    plan: &RunPlan,
    at: SimIndex,
    attempts: Attempts,
    started_at: String,
    wall_seconds: f64,
) -> SimulationRecord {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let mut record = blank_record(plan, at, &attempts, started_at, wall_seconds);
    let (o, reward) = match attempts.outcome {
        Ok(done) => done,
        Err(failure) => {
            fill_failed(&mut record, failure, cell.guard.is_some());
            return record;
        }
    };
    if let Some(e) = &attempts.scored_error {
        record.error = Some(chain_text(e));
        record.attempts.unusable_output = unusable_output(e);
    }
    if let Some(agent) = &attempts.sim_agent {
        label_sim_agent(&mut record, agent, &o, domain.prereqs.as_ref());
    }
    if plan.models.user.is_sim() {
        record
            .behaviour_events
            .extend(tauguard_sim::behaviour::user_events(&o.messages));
    }
    record.call_attempts = o.call_attempts;
    if let Some(oracle) = &domain.oracle {
        crate::prerequisites::label_missing_prerequisites(
            &mut record.call_attempts,
            o.agent_view.as_deref().unwrap_or(&o.messages),
            oracle,
        );
    }
    record.guard_events = o.guard_events;
    record.guide_events = o.guide_events;
    if cell.guard.is_some() {
        record.usage.insert(
            "guard".into(),
            guard_usage(&record.guard_events, &record.guide_events),
        );
    }
    for a in &mut record.call_attempts {
        a.faults = record
            .injected_faults
            .iter()
            .filter(|f| f.call_id.as_deref() == Some(a.call_id.as_str()))
            .map(|f| f.kind.clone())
            .collect();
    }
    record.termination_reason = o.termination_reason;
    record.reward = Some(reward);
    record.messages = o.messages;
    locate_faults(&mut record);
    record.agent_turns = o.agent_turns;
    record.user_turns = o.user_turns;
    record.usage.insert("agent".into(), o.agent_usage);
    record.usage.insert("user".into(), o.user_usage);
    if let Some(j) = o.judge_usage {
        record.usage.insert("judge".into(), j);
    }
    if let Some(e) = o.embeddings_usage {
        record.usage.insert("embeddings".into(), e);
    }
    record
}

/// The record of simulation `at` before its outcome is in: its place in the plan, the task,
/// the attempts log.
fn blank_record(
    plan: &RunPlan,
    at: SimIndex,
    attempts: &Attempts,
    started_at: String,
    wall_seconds: f64,
) -> SimulationRecord {
    let cell = &plan.cells[at.cell];
    let domain = &plan.domains[cell.domain];
    let task = &domain.tasks[at.task];
    let cfg = &plan.cfg;
    SimulationRecord {
        schema_version: tauguard_core::record::RECORD_SCHEMA_VERSION,
        run_id: plan.run_id.clone(),
        cell_id: cell.id.clone(),
        config_hash: plan.config_hash.clone(),
        cell_hash: cell.hash.clone(),
        cell: cell.spec.clone(),
        domain: domain.data.domain.to_string(),
        agent_model: plan.agents[cell.agent].section.model.clone(),
        user_model: cfg.models.user.model.clone(),
        guard: cell.guard_name.as_str().to_string(),
        task_id: task.id.clone(),
        slice: task_slice(task, &domain.mutating),
        trial: at.trial,
        seed: cell.seeds[at.trial as usize],
        termination_reason: Termination::InfrastructureError,
        reward: None,
        error: None,
        messages: Vec::new(),
        guard_events: Vec::new(),
        guide_events: Vec::new(),
        injected_faults: Vec::new(),
        behaviour_events: Vec::new(),
        call_attempts: Vec::new(),
        attack_target: domain.attacks.get(&task.id).map(|a| a.spec.tool.clone()),
        attack: domain.attacks.get(&task.id).map(|a| a.spec.clone()),
        gold_trace: domain
            .data
            .def
            .ordered_gold_trace()
            .then(|| task.gold_actions().iter().map(|a| a.name.clone()).collect()),
        usage: BTreeMap::new(),
        agent_turns: 0,
        user_turns: 0,
        wall_seconds,
        started_at,
        attempts: attempt_log(attempts),
    }
}

/// An `infrastructure_error` record: the last attempt explains itself with its error,
/// trajectory, guard events, usage and the unusable output that ended it.
fn fill_failed(record: &mut SimulationRecord, failure: AttemptFailure, guarded: bool) {
    // The last attempt explains itself: its error, trajectory, guard events, usage
    // and the unusable output that ended it.
    record.error = Some(chain_text(&failure.error));
    record.attempts.unusable_output = unusable_output(&failure.error);
    let o = *failure.partial;
    record.guard_events = o.guard_events;
    record.guide_events = o.guide_events;
    record.messages = o.messages;
    record.agent_turns = o.agent_turns;
    record.user_turns = o.user_turns;
    record.usage = role_usage(o.agent_usage, o.user_usage, o.judge_usage);
    if guarded && !(record.guard_events.is_empty() && record.guide_events.is_empty()) {
        record.usage.insert(
            "guard".into(),
            guard_usage(&record.guard_events, &record.guide_events),
        );
    }
}

/// What the sim agent injected (faults it labels on the calls it attempted) and did.
fn label_sim_agent(
    record: &mut SimulationRecord,
    agent: &SimAgent,
    o: &SimulationOutcome,
    prereqs: Option<&Prerequisites>,
) {
    let attempted: Vec<(String, String, Map<String, Value>)> = o
        .agent_view
        .as_deref()
        .unwrap_or(&o.messages)
        .iter()
        .flat_map(|m| m.tool_calls())
        .filter(|c| o.call_attempts.iter().any(|a| a.call_id == c.id))
        .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect();
    record.injected_faults = agent.label_faults(&attempted);
    // Skipping a confirmation the policy does not ask for is no fault.
    if let Some(p) = prereqs {
        record.injected_faults.retain(|f| {
            f.kind != tauguard_sim::faults::SKIP_CONFIRMATION
                || f.tool
                    .as_ref()
                    .is_none_or(|t| p.tools.get(t).is_none_or(|tp| tp.confirmation))
        });
    }
    record.behaviour_events =
        agent.behaviour_events(o.agent_view.as_deref().unwrap_or(&o.messages));
}

/// Usage per role of an attempt: agent always, user and judge when they were called.
fn role_usage(
    agent: RoleUsage,
    user: RoleUsage,
    judge: Option<RoleUsage>,
) -> BTreeMap<String, RoleUsage> {
    let mut roles = BTreeMap::from([("agent".to_string(), agent)]);
    if !user.is_empty() {
        roles.insert("user".into(), user);
    }
    if let Some(j) = judge {
        roles.insert("judge".into(), j);
    }
    roles
}

/// The record's `attempts` section, but for the unusable output of its own attempt: the
/// HTTP tally, the discarded attempts, and what they and the failed calls cost.
fn attempt_log(attempts: &Attempts) -> AttemptLog {
    let calls = &attempts.calls;
    let mut discarded = RoleUsage::default();
    discarded.add(&RoleUsage {
        usage: calls.failed_usage,
        cost: calls.failed_cost,
        ..Default::default()
    });
    let restarts = attempts
        .restarts
        .iter()
        .map(|f| {
            let o = &f.partial;
            let mut usage = role_usage(
                o.agent_usage.clone(),
                o.user_usage.clone(),
                o.judge_usage.clone(),
            );
            if !(o.guard_events.is_empty() && o.guide_events.is_empty()) {
                usage.insert(
                    "guard".into(),
                    guard_usage(&o.guard_events, &o.guide_events),
                );
            }
            for u in usage.values() {
                discarded.add(u);
            }
            FailedAttempt {
                error: chain_text(&f.error),
                kind: f.error.kind().to_string(),
                messages: o.messages.clone(),
                guard_events: o.guard_events.clone(),
                usage,
                unusable_output: unusable_output(&f.error),
            }
        })
        .collect();
    AttemptLog {
        http_requests: calls.requests,
        http_failures: calls
            .failures
            .iter()
            .map(|(k, n)| (k.to_string(), *n))
            .collect(),
        failed_calls: calls.failed_calls,
        restarts,
        discarded,
        unusable_output: None,
    }
}

/// The reply a model was billed for that the simulation could not use, when that is `e`.
fn unusable_output(e: &AttemptError) -> Option<UnusableOutput> {
    let role = e.model_output_role()?.to_string();
    let kind = e.kind().to_string();
    if let AttemptError::Simulation(SimulationError::TruncatedReply { reply, .. }) = e {
        return Some(UnusableOutput {
            role,
            kind,
            tool: reply.tool.clone(),
            raw: reply.arguments.clone().or_else(|| reply.content.clone()),
            finish_reason: Some(reply.finish_reason.clone()),
        });
    }
    Some(match e.llm() {
        Some(LlmError::MalformedToolArguments(m)) => UnusableOutput {
            role,
            kind,
            tool: Some(m.tool.clone()),
            raw: Some(m.raw.clone()),
            finish_reason: m.finish_reason.clone(),
        },
        Some(LlmError::EmptyResponse { finish_reason, .. }) => UnusableOutput {
            role,
            kind,
            tool: None,
            raw: None,
            finish_reason: finish_reason.clone(),
        },
        _ => UnusableOutput {
            role,
            kind,
            tool: None,
            raw: None,
            finish_reason: None,
        },
    })
}

/// The guard role's usage: the sum over every verification at a mutating call and every
/// guide run. An unpriced verifier call makes the total cost unknown, never silently zero; an
/// event that reports no calls (an external guard may report tokens without them) adds its
/// tokens but never makes the cost unknown — the rule `RoleUsage::add` and the llm tracker's
/// sum do not follow, so this sum stays its own.
fn guard_usage(events: &[GuardEvent], guide: &[GuideEvent]) -> RoleUsage {
    let mut total = RoleUsage {
        cost: Some(0.0),
        ..Default::default()
    };
    let usages = events.iter().map(|e| &e.usage);
    for u in usages.chain(guide.iter().map(|e| &e.usage)) {
        total.add_counts(u);
        total.cost = match (total.cost, u.cost) {
            (Some(a), Some(b)) => Some(a + b),
            (Some(a), None) if u.calls == 0 => Some(a),
            _ => None,
        };
    }
    total
}

/// Sets each injected fault's `at_message`: the trajectory message carrying its call (ground
/// truth for the process evaluator, which reports deviations by message).
fn locate_faults(record: &mut SimulationRecord) {
    for f in &mut record.injected_faults {
        f.at_message = f.call_id.as_deref().and_then(|id| {
            let at = record
                .messages
                .iter()
                .position(|m| m.tool_calls().iter().any(|c| c.id == id))?;
            u32::try_from(at).ok()
        });
    }
}
