//! The lean view of a simulation record: only the fields a metric reads, borrowed from either a
//! JSON line (without building the trajectory: message text is skipped, tool-call arguments
//! stay raw JSON until an attack target needs them) or a `SimulationRecord` in memory. Every
//! per-simulation fact a metric derives from a record (trace steps, attack outcome, fault
//! labels, verifier and guide usage, fail-mode verdicts) is derived once from this view in
//! `summary.rs`, so both sources give the same summary.
//!
//! Required fields follow `SimulationRecord`: a line missing one is rejected as before.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use tauguard_core::Message;
use tauguard_core::record::{
    AttackSpec, CallAttempt, FailReason, InjectedFault, RoleUsage, SimulationRecord, Slice,
    VerdictSource,
};
use tauguard_core::termination::Termination;

/// A record's cell settings: raw JSON from a line (parsed once per distinct text), or the
/// record's map.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CellSrc<'a> {
    Raw(Option<&'a RawValue>),
    Map(&'a BTreeMap<String, Value>),
}

impl Default for CellSrc<'_> {
    fn default() -> Self {
        CellSrc::Raw(None)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for CellSrc<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(CellSrc::Raw(Some(<&'a RawValue>::deserialize(d)?)))
    }
}

/// Tool-call arguments: raw JSON from a line, or the call's map.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum ArgsSrc<'a> {
    Raw(&'a RawValue),
    Map(&'a Map<String, Value>),
    #[default]
    None,
}

impl<'de: 'a, 'a> Deserialize<'de> for ArgsSrc<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ArgsSrc::Raw(<&'a RawValue>::deserialize(d)?))
    }
}

impl ArgsSrc<'_> {
    /// Runs `f` on the arguments as a map (empty when absent or not an object).
    pub(crate) fn with_map<R>(self, f: impl FnOnce(&Map<String, Value>) -> R) -> R {
        match self {
            ArgsSrc::Raw(raw) => f(&serde_json::from_str(raw.get()).unwrap_or_default()),
            ArgsSrc::Map(m) => f(m),
            ArgsSrc::None => f(&Map::new()),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct LeanCall<'a> {
    #[serde(default, borrow)]
    pub id: Cow<'a, str>,
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(default, borrow)]
    pub arguments: ArgsSrc<'a>,
    /// Who made the call (`ToolCall::requestor`): the agent's calls are told from the user
    /// simulator's.
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "for measures that tell the agent's calls from the user's"
    )]
    pub requestor: tauguard_core::Requestor,
}

/// One trajectory message: the tool calls of a user or assistant message, or the id and
/// guard flag of a tool message. Text is skipped.
#[derive(Debug, Deserialize)]
pub(crate) struct LeanMessage<'a> {
    #[serde(default, borrow)]
    pub tool_calls: Option<Vec<LeanCall<'a>>>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub guard_blocked: bool,
}

#[derive(Debug, Deserialize)]
pub(crate) struct LeanGuardEvent<'a> {
    #[serde(borrow)]
    pub guard: Cow<'a, str>,
    #[serde(borrow)]
    pub call_id: Cow<'a, str>,
    #[serde(rename = "tool")]
    _tool: IgnoredAny,
    #[serde(rename = "verdict")]
    _verdict: IgnoredAny,
    pub executed: bool,
    #[serde(default)]
    pub attempt_idx: u32,
    #[serde(default)]
    pub usage: RoleUsage,
    #[serde(default)]
    pub verdict_source: VerdictSource,
    #[serde(default)]
    pub fail_reason: Option<FailReason>,
    #[serde(default)]
    pub info: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct LeanGuideEvent {
    pub usage: RoleUsage,
    #[serde(default)]
    pub verdict_source: VerdictSource,
    #[serde(default)]
    pub fail_reason: Option<FailReason>,
}

/// The reward and whether an imported simulation had no `reward_info` (its `details` say so).
#[derive(Debug)]
pub(crate) struct LeanReward {
    pub reward: f64,
    pub missing_reward_info: bool,
}

impl<'de> Deserialize<'de> for LeanReward {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Stored<'a> {
            reward: f64,
            #[serde(default, borrow)]
            details: Option<&'a RawValue>,
        }
        let s = Stored::deserialize(d)?;
        // Only imported results carry the flag; other details are never parsed.
        let missing_reward_info = s.details.is_some_and(|raw| {
            raw.get().contains("\"missing_reward_info\"")
                && serde_json::from_str::<Value>(raw.get())
                    .ok()
                    .and_then(|v| v.get("missing_reward_info").and_then(Value::as_bool))
                    == Some(true)
        });
        Ok(LeanReward {
            reward: s.reward,
            missing_reward_info,
        })
    }
}

/// The part of a record's `attempts` metrics read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LeanAttempts {
    #[serde(default)]
    pub discarded: RoleUsage,
}

/// What metrics read of one simulation record.
#[derive(Debug, Deserialize)]
pub(crate) struct Lean<'a> {
    #[serde(borrow)]
    pub run_id: Cow<'a, str>,
    #[serde(borrow)]
    pub cell_id: Cow<'a, str>,
    #[serde(borrow)]
    pub config_hash: Cow<'a, str>,
    #[serde(default, borrow)]
    pub cell_hash: Cow<'a, str>,
    #[serde(default, borrow)]
    pub cell: CellSrc<'a>,
    #[serde(borrow)]
    pub domain: Cow<'a, str>,
    #[serde(borrow)]
    pub agent_model: Cow<'a, str>,
    #[serde(default, borrow)]
    pub user_model: Cow<'a, str>,
    #[serde(borrow)]
    pub guard: Cow<'a, str>,
    #[serde(borrow)]
    pub task_id: Cow<'a, str>,
    pub slice: Slice,
    pub trial: u32,
    pub seed: u64,
    pub termination_reason: Termination,
    #[serde(default)]
    pub reward: Option<LeanReward>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default, borrow)]
    pub messages: Vec<LeanMessage<'a>>,
    #[serde(default, borrow)]
    pub guard_events: Vec<LeanGuardEvent<'a>>,
    #[serde(default)]
    pub guide_events: Vec<LeanGuideEvent>,
    #[serde(default)]
    pub injected_faults: Cow<'a, [InjectedFault]>,
    #[serde(default)]
    pub call_attempts: Cow<'a, [CallAttempt]>,
    #[serde(default)]
    pub attack_target: Option<String>,
    #[serde(default)]
    pub attack: Option<AttackSpec>,
    #[serde(default)]
    pub gold_trace: Option<Vec<String>>,
    #[serde(default)]
    pub usage: Cow<'a, BTreeMap<String, RoleUsage>>,
    /// Of the record's `attempts`, what its discarded attempts and failed calls spent.
    #[serde(default)]
    pub attempts: LeanAttempts,
    pub agent_turns: u32,
    pub user_turns: u32,
    pub wall_seconds: f64,
}

impl<'a> Lean<'a> {
    /// The view of a record in memory (borrowed but for a few small fields).
    pub(crate) fn of(rec: &'a SimulationRecord) -> Lean<'a> {
        let b = |s: &'a String| Cow::Borrowed(s.as_str());
        Lean {
            run_id: b(&rec.run_id),
            cell_id: b(&rec.cell_id),
            config_hash: b(&rec.config_hash),
            cell_hash: b(&rec.cell_hash),
            cell: CellSrc::Map(&rec.cell),
            domain: b(&rec.domain),
            agent_model: b(&rec.agent_model),
            user_model: b(&rec.user_model),
            guard: b(&rec.guard),
            task_id: b(&rec.task_id),
            slice: rec.slice,
            trial: rec.trial,
            seed: rec.seed,
            termination_reason: rec.termination_reason,
            reward: rec.reward.as_ref().map(|r| LeanReward {
                reward: r.reward,
                missing_reward_info: r
                    .details
                    .get("missing_reward_info")
                    .and_then(Value::as_bool)
                    == Some(true),
            }),
            error: rec.error.clone(),
            messages: rec.messages.iter().map(lean_message).collect(),
            guard_events: rec
                .guard_events
                .iter()
                .map(|e| LeanGuardEvent {
                    guard: b(&e.guard),
                    call_id: b(&e.call_id),
                    _tool: IgnoredAny,
                    _verdict: IgnoredAny,
                    executed: e.executed,
                    attempt_idx: e.attempt_idx,
                    usage: e.usage.clone(),
                    verdict_source: e.verdict_source,
                    fail_reason: e.fail_reason,
                    info: e.info.clone(),
                })
                .collect(),
            guide_events: rec
                .guide_events
                .iter()
                .map(|e| LeanGuideEvent {
                    usage: e.usage.clone(),
                    verdict_source: e.verdict_source,
                    fail_reason: e.fail_reason,
                })
                .collect(),
            injected_faults: Cow::Borrowed(&rec.injected_faults),
            call_attempts: Cow::Borrowed(&rec.call_attempts),
            attack_target: rec.attack_target.clone(),
            attack: rec.attack.clone(),
            gold_trace: rec.gold_trace.clone(),
            usage: Cow::Borrowed(&rec.usage),
            attempts: LeanAttempts {
                discarded: rec.attempts.discarded.clone(),
            },
            agent_turns: rec.agent_turns,
            user_turns: rec.user_turns,
            wall_seconds: rec.wall_seconds,
        }
    }

    /// The calls of the trajectory that were not answered by a guard-blocked result, in
    /// trajectory order: `tauguard_core::message::executed_calls` over the lean messages.
    pub(crate) fn executed_calls(&self) -> impl Iterator<Item = &LeanCall<'a>> {
        let blocked: Vec<&str> = self
            .messages
            .iter()
            .filter(|m| m.guard_blocked)
            .filter_map(|m| m.id.as_deref())
            .collect();
        self.messages
            .iter()
            .flat_map(|m| m.tool_calls.as_deref().unwrap_or(&[]))
            .filter(move |c| !blocked.contains(&c.id.as_ref()))
    }
}

fn lean_message(m: &Message) -> LeanMessage<'_> {
    let calls = match m {
        Message::User(p) | Message::Assistant(p) => p.tool_calls.as_ref(),
        _ => None,
    };
    let (id, guard_blocked) = match m {
        Message::Tool(t) => (Some(Cow::Borrowed(t.id.as_str())), t.guard_blocked),
        _ => (None, false),
    };
    LeanMessage {
        tool_calls: calls.map(|cs| {
            cs.iter()
                .map(|c| LeanCall {
                    id: Cow::Borrowed(c.id.as_str()),
                    name: Cow::Borrowed(c.name.as_str()),
                    arguments: ArgsSrc::Map(&c.arguments),
                    requestor: c.requestor,
                })
                .collect()
        }),
        id,
        guard_blocked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::message::ToolMessage;
    use tauguard_core::{Requestor, message::executed_calls};
    use tauguard_testkit::synthetic::{record, with_calls};

    #[test]
    fn executed_calls_agree_with_core_from_memory_and_from_json() {
        let mut rec = with_calls(record("t", Slice::Mut, 0, 1.0), &["a", "b", "c"]);
        rec.messages.push(Message::Tool(ToolMessage {
            id: "call_1".into(),
            content: "Blocked: no.".into(),
            requestor: Requestor::Assistant,
            error: true,
            turn_idx: None,
            timestamp: None,
            guard_blocked: true,
        }));
        let want: Vec<&str> = executed_calls(&rec.messages)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(want, ["a", "c"]);
        let mem: Vec<String> = Lean::of(&rec)
            .executed_calls()
            .map(|c| c.name.to_string())
            .collect();
        assert_eq!(mem, want);
        let line = serde_json::to_string(&rec).unwrap();
        let lean: Lean<'_> = serde_json::from_str(&line).unwrap();
        let json: Vec<String> = lean.executed_calls().map(|c| c.name.to_string()).collect();
        assert_eq!(json, want);
    }
}
