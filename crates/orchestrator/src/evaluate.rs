//! Reward computation exactly as τ²-bench's `evaluate_simulation` with evaluation type `ALL`
//! (§7): the premature-termination gate, the environment check (trajectory replay vs gold
//! replay, compared by database hash equivalence, plus env assertions), COMMUNICATE, ACTION,
//! NL_ASSERTION, and their product over the task's `reward_basis`.
//!
//! The NL judge is a model call, so it happens outside: the caller asks
//! [`nl_assertions_to_judge`], runs its judge, and passes the checks in.

use serde_json::{Map, Value, json};
use tauguard_core::message::Message;
use tauguard_core::pyjson::py_eq;
use tauguard_core::record::{ActionCheck, RewardInfo};
use tauguard_core::task::{Action, EnvAssertion, EvaluationCriteria, RewardType};
use tauguard_core::termination::Termination;
use tauguard_core::{Requestor, Task, ToolKind};
use tauguard_env::apply_initial_state;
use tauguard_env::gold_env;
use tauguard_env::{DomainData, Environment};
use tauguard_env::{Drift, replay_tool_calls};

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("initial state")]
    InitialState(#[from] tauguard_env::InitialStateError),
    #[error("trajectory replay")]
    Replay(#[from] tauguard_env::ReplayError),
    /// The assertion's function, or the sync after it, raised. The tool error displays as
    /// Python's `str(e)`, so the exception class is named here, before it.
    #[error("env assertion `{func}`: {}", cause.class)]
    Assertion {
        func: String,
        #[source]
        cause: tauguard_env::ToolError,
    },
    #[error("env assertion `{func}`: returned {value} instead of bool")]
    NotBool { func: String, value: String },
    #[error("reward basis contains NL_ASSERTION but no judge verdicts were supplied")]
    MissingNl,
}

/// One judged NL assertion.
#[derive(Debug, Clone, PartialEq)]
pub struct NlCheck {
    pub nl_assertion: String,
    pub met: bool,
    pub justification: String,
}

/// The NL assertions a judge must rule on, if the task's reward depends on them.
pub(crate) fn nl_assertions_to_judge(task: &Task) -> Option<&[String]> {
    let c = task.evaluation_criteria.as_ref()?;
    if !c.reward_basis.contains(&RewardType::NlAssertion) {
        return None;
    }
    c.nl_assertions.as_deref().filter(|a| !a.is_empty())
}

fn basis_key(t: RewardType) -> &'static str {
    match t {
        RewardType::Db => "DB",
        RewardType::EnvAssertion => "ENV_ASSERTION",
        RewardType::NlAssertion => "NL_ASSERTION",
        RewardType::Action => "ACTION",
        RewardType::Communicate => "COMMUNICATE",
    }
}

fn reward_of(met: bool) -> f64 {
    if met { 1.0 } else { 0.0 }
}

/// A task's gold actions as JSON, shared by every record of the task.
type GoldActions = std::sync::Arc<[std::sync::Arc<Value>]>;

/// Gold environments and gold-action JSON by task id. Both depend on the task alone, so a run
/// computes them once per task instead of once per simulation.
#[derive(Default)]
pub struct GoldCache {
    envs: std::sync::Mutex<
        std::collections::HashMap<String, std::sync::Arc<dyn tauguard_env::Environment>>,
    >,
    actions: std::sync::Mutex<std::collections::HashMap<String, GoldActions>>,
}

impl std::fmt::Debug for GoldCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoldCache")
            .field("envs", &self.envs.lock().map_or(0, |m| m.len()))
            .field("actions", &self.actions.lock().map_or(0, |m| m.len()))
            .finish()
    }
}

impl GoldCache {
    /// The task's gold actions as JSON, as the action checks report them.
    fn actions(&self, task: &Task) -> GoldActions {
        let mut map = self.actions.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(task.id.clone())
            .or_insert_with(|| {
                task.gold_actions()
                    .iter()
                    .map(|a| {
                        std::sync::Arc::new(serde_json::to_value(a).expect("actions serialise"))
                    })
                    .collect()
            })
            .clone()
    }

    /// The gold environment of `task`, computed on first use.
    pub fn get(
        &self,
        data: &DomainData,
        task: &Task,
    ) -> Result<std::sync::Arc<dyn tauguard_env::Environment>, EvalError> {
        if let Some(env) = self
            .envs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&task.id)
        {
            return Ok(env.clone());
        }
        let env: std::sync::Arc<dyn tauguard_env::Environment> =
            std::sync::Arc::from(gold_env(data, task)?);
        self.envs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(task.id.clone(), env.clone());
        Ok(env)
    }
}

/// A finished simulation as the evaluator reads it: its domain data, task and full trajectory
/// (task history included), how it ended, and the gold environments to compare it with.
#[derive(Clone, Copy)]
pub struct Trajectory<'a> {
    pub data: &'a DomainData,
    pub task: &'a Task,
    pub messages: &'a [Message],
    pub termination_reason: Termination,
    /// Gold environments taken from (and added to) the run's cache.
    pub gold: &'a GoldCache,
}

impl std::fmt::Debug for Trajectory<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory")
            .field("domain", &self.data.domain)
            .field("task", &self.task.id)
            .field("messages", &self.messages.len())
            .field("termination_reason", &self.termination_reason)
            .finish_non_exhaustive()
    }
}

/// Scores one finished simulation. `messages` is the full trajectory (task history included).
pub fn evaluate(
    data: &DomainData,
    task: &Task,
    messages: &[Message],
    termination_reason: Termination,
    nl: Option<Vec<NlCheck>>,
) -> Result<RewardInfo, EvalError> {
    let gold = GoldCache::default();
    let sim = Trajectory {
        data,
        task,
        messages,
        termination_reason,
        gold: &gold,
    };
    evaluate_final(sim, nl, None)
}

/// [`evaluate`] for a simulation that just ran: `final_env` is the environment it ended
/// with, which is the state the trajectory replay would rebuild, so the replay is skipped.
/// Without it (a trajectory read back from records) the trajectory is replayed as upstream
/// does. Both paths give identical results; a test holds them to that.
pub fn evaluate_final(
    sim: Trajectory<'_>,
    nl: Option<Vec<NlCheck>>,
    final_env: Option<&dyn Environment>,
) -> Result<RewardInfo, EvalError> {
    let env = EnvironmentInput {
        sim,
        final_env,
        replay: Replay::Strict,
    };
    score(&env, nl, &mut Vec::new())
}

/// How a stored trajectory's mutating calls are replayed when it is re-scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// A replayed output that differs from the recorded one is an error (upstream's live
    /// evaluation, `strict_replay=True`; `tauguard evaluate --strict-replay`).
    Strict,
    /// The mutation stands and the drift is reported (upstream's `evaluate-trajs`,
    /// `strict_replay=False`).
    Lenient,
}

/// [`evaluate_final`] for a stored trajectory, replayed as `replay` says; also returns the
/// calls whose replayed output drifted from the recorded one (always empty when strict).
pub(crate) fn rescore_trajectory(
    sim: Trajectory<'_>,
    nl: Option<Vec<NlCheck>>,
    replay: Replay,
) -> Result<(RewardInfo, Vec<Drift>), EvalError> {
    let env = EnvironmentInput {
        sim,
        final_env: None,
        replay,
    };
    let mut drifts = Vec::new();
    let reward = score(&env, nl, &mut drifts)?;
    Ok((reward, drifts))
}

fn score(
    env: &EnvironmentInput<'_>,
    nl: Option<Vec<NlCheck>>,
    drifts: &mut Vec<Drift>,
) -> Result<RewardInfo, EvalError> {
    let Trajectory {
        task,
        messages,
        termination_reason,
        ..
    } = env.sim;
    if !termination_reason.is_evaluated() {
        let details = json!({
            "reward": 0.0,
            "reward_basis": null,
            "info": {"note": format!("Simulation terminated prematurely. Termination reason: {termination_reason}")},
        });
        return Ok(RewardInfo {
            reward: 0.0,
            breakdown: Map::new(),
            details,
            action_checks: Vec::new(),
        });
    }
    let Some(criteria) = &task.evaluation_criteria else {
        return Ok(RewardInfo {
            reward: 1.0,
            breakdown: Map::new(),
            details: json!({"reward": 1.0, "info": {"note": "No evaluation criteria"}}),
            action_checks: Vec::new(),
        });
    };
    let basis = &criteria.reward_basis;
    // Sized for every key they can get, so filling them never regrows.
    let mut details = Map::with_capacity(9);
    let mut breakdown = Map::with_capacity(5);
    let mut reward = 1.0;
    let mut count = |kind: RewardType, key: &str, component: f64| {
        if basis.contains(&kind) {
            breakdown.insert(key.into(), json!(component));
            reward *= component;
        }
    };
    let (db_reward, env_assert_reward) = environment_check(env, criteria, drifts, &mut details)?;
    count(RewardType::Db, "DB", db_reward);
    count(RewardType::EnvAssertion, "ENV_ASSERTION", env_assert_reward);
    let (action_reward, action_checks) = action_check(env, criteria, &mut details);
    count(RewardType::Action, "ACTION", action_reward);
    let comm_reward = communicate_check(criteria, messages, &mut details);
    count(RewardType::Communicate, "COMMUNICATE", comm_reward);
    // NL_ASSERTION: only when in the basis (evaluation type ALL).
    if basis.contains(&RewardType::NlAssertion) {
        let nl_reward = nl_assertion_check(task, nl, &mut details)?;
        count(RewardType::NlAssertion, "NL_ASSERTION", nl_reward);
    }
    details.insert("reward".into(), json!(reward));
    details.insert(
        "reward_basis".into(),
        json!(basis.iter().map(|b| basis_key(*b)).collect::<Vec<_>>()),
    );
    details.insert("reward_breakdown".into(), Value::Object(breakdown.clone()));
    Ok(RewardInfo {
        reward,
        breakdown,
        details: Value::Object(details),
        action_checks,
    })
}

/// What the checks read: the simulation with its gold cache, and the environment it ended
/// with (or how to rebuild it).
struct EnvironmentInput<'a> {
    sim: Trajectory<'a>,
    final_env: Option<&'a dyn Environment>,
    replay: Replay,
}

/// The environment check: DB (final state vs gold, by hash equivalence) and ENV_ASSERTION;
/// their rewards.
fn environment_check(
    input: &EnvironmentInput<'_>,
    criteria: &EvaluationCriteria,
    drifts: &mut Vec<Drift>,
    details: &mut Map<String, Value>,
) -> Result<(f64, f64), EvalError> {
    if criteria.actions.is_none() && criteria.env_assertions.is_none() {
        details.insert(
            "db_check".into(),
            json!({"db_match": true, "db_reward": 1.0}),
        );
        return Ok((1.0, 1.0));
    }
    // The final environment is read as it is unless assertions are run on it, which may
    // write; then they run on a copy.
    let asserts = criteria.env_assertions.as_deref().unwrap_or_default();
    let mut owned = match input.final_env {
        Some(_) if asserts.is_empty() => None,
        Some(env) => Some(env.snapshot()),
        None => Some(replayed_env(input, drifts)?),
    };
    let gold = input.sim.gold.get(input.sim.data, input.sim.task)?;
    let db_match = owned
        .as_deref()
        .or(input.final_env)
        .expect("without a final environment the replay is owned")
        .same_state(gold.as_ref());
    details.insert(
        "db_check".into(),
        json!({"db_match": db_match, "db_reward": reward_of(db_match)}),
    );
    let env_reward = env_assertion_check(owned.as_mut(), asserts, details)?;
    Ok((reward_of(db_match), env_reward))
}

/// The environment a stored trajectory leaves: the initial data and actions, then every
/// call of the full trajectory (which includes the task history) replayed.
fn replayed_env(
    input: &EnvironmentInput<'_>,
    drifts: &mut Vec<Drift>,
) -> Result<Box<dyn Environment>, EvalError> {
    let mut predicted = input.sim.data.task_env(input.sim.task);
    let init_only =
        input
            .sim
            .task
            .initial_state
            .as_ref()
            .map(|s| tauguard_core::task::InitialState {
                message_history: None,
                ..s.clone()
            });
    apply_initial_state(predicted.as_mut(), init_only.as_ref())?;
    drifts.extend(replay_tool_calls(
        predicted.as_mut(),
        input.sim.messages,
        input.replay == Replay::Strict,
    )?);
    Ok(predicted)
}

/// ENV_ASSERTION: each assertion is a boolean function called on the final environment (a
/// copy, made whenever there are assertions); the product of their rewards.
fn env_assertion_check(
    mut predicted: Option<&mut Box<dyn Environment>>,
    asserts: &[EnvAssertion],
    details: &mut Map<String, Value>,
) -> Result<f64, EvalError> {
    let mut checks = Vec::new();
    let mut env_reward = 1.0;
    for a in asserts {
        let predicted = predicted
            .as_mut()
            .expect("a copy is made whenever there are assertions");
        let fail = |cause| EvalError::Assertion {
            func: a.func_name.clone(),
            cause,
        };
        let value = predicted
            .call(a.env_type, &a.func_name, &a.arguments)
            .map_err(fail)?;
        predicted.sync_tools().map_err(fail)?;
        let got = match value {
            tauguard_env::ToolValue::Json(Value::Bool(b)) => b,
            other => {
                return Err(EvalError::NotBool {
                    func: a.func_name.clone(),
                    value: format!("{other:?}"),
                });
            }
        };
        let met = got == a.assert_value;
        env_reward *= reward_of(met);
        checks.push(json!({"env_assertion": a, "met": met, "reward": reward_of(met)}));
    }
    details.insert("env_assertions".into(), Value::Array(checks));
    Ok(env_reward)
}

/// ACTION, always computed as a diagnostic: its reward and the typed checks.
fn action_check(
    input: &EnvironmentInput<'_>,
    criteria: &EvaluationCriteria,
    details: &mut Map<String, Value>,
) -> (f64, Vec<ActionCheck>) {
    // Tool kinds do not depend on state: any environment of the domain answers them.
    let fresh;
    let env_for_kinds = match input.final_env {
        Some(env) => env,
        None => {
            fresh = input.sim.data.task_env(input.sim.task);
            fresh.as_ref()
        }
    };
    let (action_reward, action_checks) = action_checks(
        criteria.actions.as_deref(),
        &input.sim.gold.actions(input.sim.task),
        input.sim.messages,
        |name, side| env_for_kinds.tool_kind(side, name),
    );
    // A placeholder keeps the key's place; the typed checks are written there.
    details.insert(
        "action_checks".into(),
        if action_checks.is_empty() {
            Value::Array(Vec::new())
        } else {
            Value::Null
        },
    );
    (action_reward, action_checks)
}

/// COMMUNICATE: its reward.
fn communicate_check(
    criteria: &EvaluationCriteria,
    messages: &[Message],
    details: &mut Map<String, Value>,
) -> f64 {
    let (comm_reward, comm_checks) =
        communicate_checks(criteria.communicate_info.as_deref(), messages);
    details.insert("communicate_checks".into(), Value::Array(comm_checks));
    comm_reward
}

/// NL_ASSERTION from the judge's verdicts, which the caller ran (a task without assertions
/// needs none): its reward.
fn nl_assertion_check(
    task: &Task,
    nl: Option<Vec<NlCheck>>,
    details: &mut Map<String, Value>,
) -> Result<f64, EvalError> {
    let checks = match nl_assertions_to_judge(task) {
        None => Vec::new(),
        Some(_) => nl.ok_or(EvalError::MissingNl)?,
    };
    let nl_reward = reward_of(checks.iter().all(|c| c.met));
    details.insert(
        "nl_assertions".into(),
        Value::Array(
            checks
                .iter()
                .map(|c| json!({"nl_assertion": c.nl_assertion, "met": c.met, "justification": c.justification}))
                .collect(),
        ),
    );
    Ok(nl_reward)
}

/// Whether a gold action matches a predicted call (§7.4).
pub(crate) fn action_matches(gold: &Action, name: &str, args: &Map<String, Value>) -> bool {
    if gold.name != name {
        return false;
    }
    match &gold.compare_args {
        Some(keys) if keys.is_empty() => true,
        None => {
            // Gold arguments restricted to the call's keys must equal the call's arguments.
            args.iter()
                .all(|(k, v)| arg(&gold.arguments, k).is_some_and(|g| py_eq(g, v)))
        }
        Some(keys) => keys
            .iter()
            .all(|k| match (arg(&gold.arguments, k), arg(args, k)) {
                (Some(g), Some(p)) => py_eq(g, p),
                (None, None) => true,
                _ => false,
            }),
    }
}

/// One argument by name. Argument lists are a handful of keys, so a scan beats hashing the
/// name with the map's SipHash for every call compared.
fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    args.iter().find_map(|(k, v)| (k == name).then_some(v))
}

/// ACTION component: every gold action must match at least one call of the trajectory
/// (agent or user; calls may be reused).
///
/// `gold_json` holds the gold actions as JSON, in order (see [`GoldCache`]).
pub(crate) fn action_checks(
    gold: Option<&[Action]>,
    gold_json: &[std::sync::Arc<Value>],
    messages: &[Message],
    kind_of: impl Fn(&str, Requestor) -> Option<ToolKind>,
) -> (f64, Vec<ActionCheck>) {
    let Some(gold) = gold.filter(|g| !g.is_empty()) else {
        return (1.0, Vec::new());
    };
    // Guard-blocked calls never executed: they do not count as performed actions (older
    // records still carry them in the trajectory).
    let calls: Vec<_> = tauguard_core::message::executed_calls(messages).collect();
    let mut all = true;
    let checks = gold
        .iter()
        .zip(gold_json)
        .map(|(a, a_json)| {
            let matched = calls
                .iter()
                .any(|c| action_matches(a, &c.name, &c.arguments));
            all &= matched;
            ActionCheck {
                action: a_json.clone(),
                action_match: matched,
                action_reward: reward_of(matched),
                tool_type: kind_of(&a.name, a.requestor),
            }
        })
        .collect();
    (reward_of(all), checks)
}

/// COMMUNICATE component: each required string must appear, case-insensitively, in some
/// assistant message's text with commas removed from that text.
pub(crate) fn communicate_checks(
    info: Option<&[String]>,
    messages: &[Message],
) -> (f64, Vec<Value>) {
    let Some(info) = info.filter(|i| !i.is_empty()) else {
        return (1.0, Vec::new());
    };
    let texts: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) if a.has_text() => a
                .content
                .as_deref()
                .map(|c| c.to_lowercase().replace(',', "")),
            _ => None,
        })
        .collect();
    let mut all = true;
    let checks = info
        .iter()
        .map(|s| {
            let needle = s.to_lowercase();
            let found = texts.iter().position(|t| t.contains(&needle));
            all &= found.is_some();
            let justification = match found {
                Some(i) => format!("Information '{s}' communicated in assistant message {i}"),
                None => format!("Information '{s}' not communicated."),
            };
            json!({"info": s, "met": found.is_some(), "justification": justification})
        })
        .collect();
    (reward_of(all), checks)
}

/// The conversation as the NL judge reads it: `<role>: <content>` per message.
pub(crate) fn render_for_judge(messages: &[Message]) -> String {
    messages
        .iter()
        .map(|m| format!("{}: {}", m.role(), m.content().unwrap_or("None")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
