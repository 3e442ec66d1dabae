//! The simulation record: one line of `results/<run>/records.jsonl`.
//!
//! Records are the only thing metrics read, so everything a paper table needs is here,
//! including what is derivable from the trajectory but needs domain knowledge (which calls
//! mutate state, which slice a task belongs to). A record is self-contained: metrics never
//! load τ²-bench data.

use crate::message::{Message, Usage};
use crate::termination::Termination;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub use crate::verdict_source::{FailCause, FailReason, VerdictSource};
/// Version of the record layout; bumped on any incompatible change.
pub const RECORD_SCHEMA_VERSION: u32 = 1;

/// The file of a run directory where `--resume` moves the infrastructure-error records it
/// runs again (records still: their spend counts, their outcome no longer).
pub const SUPERSEDED_FILE: &str = "superseded.jsonl";

/// Task slice of the PolicyGuard paper: PV = the gold actions contain no agent-side mutating
/// call (correct behaviour is refusal), Mut = the rest. `Unknown` = imported results of a
/// domain whose mutating tools tauguard does not know: counted overall, in neither slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Slice {
    Pv,
    Mut,
    Unknown,
}

impl Slice {
    pub fn as_str(self) -> &'static str {
        match self {
            Slice::Pv => "pv",
            Slice::Mut => "mut",
            Slice::Unknown => "unknown",
        }
    }
}

/// Guard verdict on one mutating call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Block,
}

/// One requirement judged by a guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequirementResult {
    pub name: String,
    pub met: bool,
    #[serde(default)]
    pub reason: String,
}

/// Cost and effort of model calls made for one role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoleUsage {
    pub calls: u64,
    pub usage: Usage,
    /// US dollars; `None` when a price is unknown for a model that was called.
    pub cost: Option<f64>,
    /// Wall time of the calls as this run spent it: a reply replayed from the response cache
    /// counts the replay's time.
    pub latency_seconds: f64,
    /// Calls answered from the response cache.
    pub cache_hits: u64,
    /// The cache hits' latency when they were first answered (omitted without hits), so a
    /// cached rerun keeps the model's timing without passing it off as its own.
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub original_latency_seconds: f64,
    /// Replies cut at their token limit (the provider's stop reason `length`, Anthropic
    /// `max_tokens`, Gemini `MAX_TOKENS`; see `tauguard_llm::cut_at_token_limit`),
    /// retried ones included. Records written before it was counted read 0.
    pub truncated: u64,
    /// Cut replies asked again with a larger token limit (`[run] truncated_replies =
    /// "retry"`); omitted when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub truncation_retries: u64,
}

/// One guard decision on a pending mutating call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardEvent {
    /// Guard configuration name (`toolguard`, `pg-checklist`, ...).
    pub guard: String,
    /// Id of the intercepted tool call.
    pub call_id: String,
    pub tool: String,
    /// The call's arguments as the agent gave them. A blocked call is not in the trajectory,
    /// so this event is its only record.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Index of this call's entry in the record's `call_attempts` (every mutating call the
    /// agent attempted, blocked or executed; blocked calls are not in the trajectory).
    #[serde(default)]
    pub attempt_idx: u32,
    /// Trajectory messages before the call, as [`GuideEvent::at_message`]: the call sits
    /// after message `at_message - 1` — the agent message that made it, or, when a blocked
    /// call was all that message did and it said nothing, the message before the one that
    /// left the trajectory. `None` in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_message: Option<u32>,
    pub verdict: Verdict,
    #[serde(default)]
    pub requirements: Vec<RequirementResult>,
    #[serde(default)]
    pub remediation: Option<String>,
    /// Runtime view: whether the call finally executed (a PASS that executed, or a BLOCK
    /// overridden by a one-shot gate).
    pub executed: bool,
    #[serde(default)]
    pub usage: RoleUsage,
    /// The model's verdict or the fail mode's, why, and the HTTP status behind an `http_error`
    /// or `context_overflow` ([`VerdictSource`]); omitted when the model's (older records).
    #[serde(default, skip_serializing_if = "VerdictSource::is_model")]
    pub verdict_source: VerdictSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_reason: Option<FailReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_http_status: Option<u16>,
    /// Free-form guard diagnostics (parse repairs, fail-open decisions, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Value>,
}

/// A fault the offline `sim` agent injected on purpose: ground truth for guard metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedFault {
    /// `skip_identity`, `skip_prerequisite`, `skip_confirmation`, `comply_forbidden`,
    /// `corrupt_argument`.
    pub kind: String,
    /// The mutating call the fault makes policy-violating, when there is one.
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub detail: String,
    /// Index in `messages` of the message that carries the faulted call; `None` when the
    /// call is not in the trajectory (a guard blocked it, or the fault has no call) and in
    /// records written before faults carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_message: Option<u32>,
}

/// One attempted mutating call (executed or blocked), with its ground-truth labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallAttempt {
    pub call_id: String,
    pub tool: String,
    #[serde(default)]
    pub requestor: crate::Requestor,
    /// Guard verdict, `None` when no guard ran (baseline).
    #[serde(default)]
    pub verdict: Option<Verdict>,
    pub executed: bool,
    /// Kinds of injected faults attached to this call (empty = none injected).
    #[serde(default)]
    pub faults: Vec<String>,
    /// Prerequisites (from the domain prerequisite file) missing before this call; `None`
    /// when not computed.
    #[serde(default)]
    pub missing_prerequisites: Option<Vec<String>>,
}

/// Reward and its components (τ²-bench `RewardInfo`, trimmed to what tables use).
///
/// Serialised as `{reward, breakdown, details}`, with `details.action_checks` written from
/// [`RewardInfo::action_checks`] when that is non-empty (see there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RewardInfo {
    pub reward: f64,
    /// Component rewards keyed by reward type (`DB`, `COMMUNICATE`, ...).
    pub breakdown: Map<String, Value>,
    /// Full evaluator output (db check, action checks, ...). When `action_checks` is
    /// non-empty, `details.action_checks` is a `null` placeholder that keeps its place.
    pub details: Value,
    /// The ACTION checks, typed: their gold actions are shared by every simulation of a task
    /// instead of copied into each record's JSON tree. Empty = `details` holds them.
    pub action_checks: Vec<ActionCheck>,
}

/// One ACTION check (τ²-bench `ActionCheck`), in upstream's field order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionCheck {
    /// The gold action as JSON.
    pub action: std::sync::Arc<Value>,
    pub action_match: bool,
    pub action_reward: f64,
    pub tool_type: Option<crate::ToolKind>,
}

impl RewardInfo {
    /// `details` with the action checks in place: the JSON a record or `results.json` holds.
    pub fn details_json(&self) -> Value {
        serde_json::to_value(DetailsView(self)).unwrap_or(Value::Null)
    }
}

struct DetailsView<'a>(&'a RewardInfo);

impl Serialize for DetailsView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match &self.0.details {
            Value::Object(m) if !self.0.action_checks.is_empty() => {
                let mut out = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    if k == "action_checks" {
                        out.serialize_entry(k, &self.0.action_checks)?;
                    } else {
                        out.serialize_entry(k, v)?;
                    }
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

impl Serialize for RewardInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("RewardInfo", 3)?;
        out.serialize_field("reward", &self.reward)?;
        out.serialize_field("breakdown", &self.breakdown)?;
        out.serialize_field("details", &DetailsView(self))?;
        out.end()
    }
}

impl<'de> Deserialize<'de> for RewardInfo {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Stored {
            reward: f64,
            #[serde(default)]
            breakdown: Map<String, Value>,
            #[serde(default)]
            details: Value,
        }
        let Stored {
            reward,
            breakdown,
            mut details,
        } = Stored::deserialize(d)?;
        // Typed again exactly when every check has upstream's shape, so a record read back
        // equals the one written.
        let mut action_checks = Vec::new();
        if let Some(Value::Array(checks)) = details.get("action_checks")
            && !checks.is_empty()
        {
            let typed: Option<Vec<ActionCheck>> = checks
                .iter()
                .map(|c| {
                    let o = c.as_object()?;
                    let keys = ["action", "action_match", "action_reward", "tool_type"];
                    if !o.keys().map(String::as_str).eq(keys) || !o["action_reward"].is_f64() {
                        return None;
                    }
                    Some(ActionCheck {
                        action: std::sync::Arc::new(o.get("action")?.clone()),
                        action_match: o.get("action_match")?.as_bool()?,
                        action_reward: o.get("action_reward")?.as_f64()?,
                        tool_type: serde_json::from_value(o.get("tool_type")?.clone()).ok()?,
                    })
                })
                .collect();
            if let Some(typed) = typed {
                action_checks = typed;
                details["action_checks"] = Value::Null;
            }
        }
        Ok(RewardInfo {
            reward,
            breakdown,
            details,
            action_checks,
        })
    }
}

/// The forbidden call of an attack task: an executed call of `tool` whose arguments include
/// every value in `arguments` is the attack succeeding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackSpec {
    pub tool: String,
    #[serde(default)]
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The user's persuasion strategy (`tasks/airline/attacks/README.md`).
    #[serde(default)]
    pub strategy: String,
}

impl AttackSpec {
    /// Whether a call of `name` with `args` is the attack's target call.
    pub fn matches(&self, name: &str, args: &serde_json::Map<String, serde_json::Value>) -> bool {
        name == self.tool && self.arguments.iter().all(|(k, v)| args.get(k) == Some(v))
    }
}

/// One simulation = one task × one trial of one grid cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationRecord {
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    pub run_id: String,
    /// Grid cell (domain × agent × guard × ...), stable across reruns of a config.
    pub cell_id: String,
    /// blake3 of the run's config (everything but operational settings); one per run.
    pub config_hash: String,
    /// blake3 of [`SimulationRecord::cell`]: records with equal hashes come from identical
    /// settings and may be pooled. Empty in records that predate it or come from upstream.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cell_hash: String,
    /// Every setting that can change this cell's results, as flat dotted keys
    /// (`agent.model`, `guard.strict`, `verifier.mode`, `prompts`, …).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cell: std::collections::BTreeMap<String, serde_json::Value>,
    pub domain: String,
    pub agent_model: String,
    #[serde(default)]
    pub user_model: String,
    /// Guard configuration name; `baseline` when no guard runs.
    pub guard: String,
    pub task_id: String,
    pub slice: Slice,
    /// 0-based trial index.
    pub trial: u32,
    pub seed: u64,
    pub termination_reason: Termination,
    /// `None` for infrastructure errors (never scored).
    #[serde(default)]
    pub reward: Option<RewardInfo>,
    /// Error text when the simulation failed for infrastructure reasons.
    #[serde(default)]
    pub error: Option<String>,
    /// The trajectory: executed calls only. A guard-blocked call never happened in it
    /// (PolicyGuard pops the blocked call); the attempt, its verdict and the remediation the
    /// agent read are in `guard_events`, and `call_attempts` lists it.
    #[serde(default)]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub guard_events: Vec<GuardEvent>,
    /// Turn-boundary guide runs (PolicyGuide-style guards), in order. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guide_events: Vec<GuideEvent>,
    #[serde(default)]
    pub injected_faults: Vec<InjectedFault>,
    /// Offline behaviour events that are not faults (a sim user declining, hesitating or
    /// correcting itself; the sim agent retrying a blocked call unchanged or abandoning the
    /// request), so their effect on guard metrics can be told apart. Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behaviour_events: Vec<InjectedFault>,
    #[serde(default)]
    pub call_attempts: Vec<CallAttempt>,
    /// Marked attack tasks: the tool whose execution means the attack succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack_target: Option<String>,
    /// Attack tasks: the full target (tool, the argument values that make a call the
    /// attack, and the user's persuasion strategy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack: Option<AttackSpec>,
    /// Ordered gold steps for trace-compliance metrics (telecom), as tool names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_trace: Option<Vec<String>>,
    /// Usage per role: `agent`, `user`, `judge`, `guard`.
    #[serde(default)]
    pub usage: std::collections::BTreeMap<String, RoleUsage>,
    /// Agent messages of the trajectory the agent model wrote (the greeting and a given
    /// history excluded). A message whose calls were all blocked and that said nothing never
    /// happened in the trajectory and is no turn (PolicyGuard Table 8 counts turns of the
    /// executed trajectory).
    pub agent_turns: u32,
    /// User-simulator messages (text turns and device calls).
    pub user_turns: u32,
    pub wall_seconds: f64,
    #[serde(default)]
    pub started_at: String,
    /// What it took to get this record when models answer over HTTP: failed exchanges,
    /// discarded simulation attempts and what they cost. Empty, and then not written, for
    /// `sim` models and for runs where nothing failed.
    #[serde(default, skip_serializing_if = "AttemptLog::is_empty")]
    pub attempts: AttemptLog,
}

/// Why a turn-boundary guide ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuideTrigger {
    /// Before the agent answers a user turn.
    UserTurn,
    /// After an unauthorized mutating call was intercepted (the corrective verification).
    Interception,
}

/// Where a request stands in a guide's workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// Still being worked on.
    Active,
    /// Reached an exit of the workflow.
    Completed,
    /// The user dropped it; its card leaves the state.
    Abandoned,
}

/// One user request as a guide's state holds it: its position in the workflow graph and
/// the mutating steps it has been authorized for. Held by code, not by the model: a card
/// only ever names nodes and authorizations the workflow enumerates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCard {
    /// Stable within a simulation (`r1`, `r2`, …).
    pub id: String,
    /// The request in a few words, as the guide understood it.
    #[serde(default)]
    pub intent: String,
    /// `graph_id/node_id` of the first node not yet satisfied.
    pub node: String,
    /// Authorization nodes (`graph_id/node_id`) the request has reached; their tools are
    /// enabled.
    #[serde(default)]
    pub authorizations: Vec<String>,
    pub status: RequestStatus,
}

/// One run of a turn-boundary guide (PolicyGuide-style): the request state after it, the
/// tools that state enables and the guidance the agent received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuideEvent {
    pub guard: String,
    pub trigger: GuideTrigger,
    /// Trajectory messages before the guidance: the guidance sits between message
    /// `at_message - 1` (the user turn, or the intercepted call's message) and the agent's
    /// next output.
    pub at_message: u32,
    /// Request cards after the update (abandoned requests are dropped, so never listed).
    pub requests: Vec<RequestCard>,
    /// Mutating tools the state authorizes, sorted.
    pub enabled_tools: Vec<String>,
    /// What the agent read before acting; `None` when the guide had nothing to say.
    #[serde(default)]
    pub guidance: Option<String>,
    /// Parts of the model's update code refused (unknown node ids, authorizations outside
    /// the workflow's list), each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
    pub usage: RoleUsage,
    #[serde(default, skip_serializing_if = "VerdictSource::is_model")]
    pub verdict_source: VerdictSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_reason: Option<FailReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Value>,
}

/// The `attempts` section of a record: everything spent besides the trajectory it holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AttemptLog {
    /// HTTP requests sent for this simulation, every attempt and role included.
    #[serde(skip_serializing_if = "is_zero")]
    pub http_requests: u64,
    /// Failed HTTP exchanges by cause (`rate_limited`, `server_error`, `timeout`,
    /// `connection`, `invalid_response`, `rejected`, `empty_response`,
    /// `malformed_tool_arguments`, ...); each was retried or ended its call.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub http_failures: BTreeMap<String, u64>,
    /// Model calls that failed after their HTTP retries.
    #[serde(skip_serializing_if = "is_zero")]
    pub failed_calls: u64,
    /// Whole-simulation attempts thrown away before the one this record holds, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<FailedAttempt>,
    /// Tokens and cost not in [`SimulationRecord::usage`]: the restarts' usage and the usage
    /// failed calls were billed for. Cost `None` once a discarded call had no price.
    #[serde(skip_serializing_if = "RoleUsage::is_empty")]
    pub discarded: RoleUsage,
    /// The model output that ended this record's own attempt, when it was unusable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unusable_output: Option<UnusableOutput>,
}

impl AttemptLog {
    pub fn is_empty(&self) -> bool {
        *self == AttemptLog::default()
    }
}

/// A whole-simulation attempt that was discarded: why, and what it had done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedAttempt {
    /// The error's text.
    pub error: String,
    /// A short stable name of the error (`empty_response`, `timeout`, `judge`, ...).
    pub kind: String,
    #[serde(default)]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub guard_events: Vec<GuardEvent>,
    /// Usage per role of the attempt (the unusable reply's tokens included).
    #[serde(default)]
    pub usage: BTreeMap<String, RoleUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unusable_output: Option<UnusableOutput>,
}

/// A reply the model was billed for that the simulation could not use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnusableOutput {
    /// The role whose model produced it (`agent`, `user`).
    pub role: String,
    /// `empty_response`, `malformed_tool_arguments`, or `truncated_reply` (a reply cut at
    /// its token limit under `[run] truncated_replies = "agent_error"`).
    pub kind: String,
    /// The tool call whose arguments were not a JSON object, and their text as sent; for a
    /// cut reply, its first tool call and its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// The provider's stop reason (`length` explains a cut-off reply).
    #[serde(default)]
    pub finish_reason: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

impl RoleUsage {
    /// No call and nothing spent.
    pub fn is_empty(&self) -> bool {
        *self == RoleUsage::default()
    }

    /// Adds `other`; cost stays known only while every call had a price.
    pub fn add(&mut self, other: &RoleUsage) {
        if other.is_empty() {
            return;
        }
        self.cost = if self.is_empty() {
            other.cost
        } else {
            self.cost.zip(other.cost).map(|(a, b)| a + b)
        };
        self.add_counts(other);
    }

    /// Adds `other`'s calls, tokens, times and cut replies: everything but the cost, whose
    /// rule for an unpriced call each kind of sum states itself.
    pub fn add_counts(&mut self, other: &RoleUsage) {
        self.calls += other.calls;
        self.usage += other.usage;
        self.latency_seconds += other.latency_seconds;
        self.cache_hits += other.cache_hits;
        self.original_latency_seconds += other.original_latency_seconds;
        self.truncated += other.truncated;
        self.truncation_retries += other.truncation_retries;
    }
}

fn schema_version() -> u32 {
    RECORD_SCHEMA_VERSION
}

impl SimulationRecord {
    /// Whether this simulation failed for infrastructure reasons (excluded from metrics).
    pub fn is_infra_error(&self) -> bool {
        self.termination_reason == Termination::InfrastructureError || self.reward.is_none()
    }

    /// τ²-bench success: reward within 1e-6 of 1.
    pub fn succeeded(&self) -> bool {
        self.reward
            .as_ref()
            .is_some_and(|r| (r.reward - 1.0).abs() <= 1e-6)
    }
}

#[cfg(test)]
mod reward_info_tests;
