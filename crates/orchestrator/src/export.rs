//! `tauguard export-tau2`: one grid cell's records as an upstream τ²-bench `results.json`
//! (§9), so upstream tooling (viewers, leaderboard scripts, its own metrics and its
//! `evaluate-trajs`) reads our runs.
//!
//! The document has every field upstream's `Results`, `Info`, `SimulationRun`, `RewardInfo`
//! and message models write, `null` where upstream writes null in text mode; the settings
//! upstream requires (`git_commit`, `max_steps`, `max_errors`) come from the record's cell.
//! Times are ISO 8601 (UTC, without offset, as Python's `isoformat()` of a naive datetime);
//! a simulation ends `wall_seconds` after it started, and not before its last message.
//!
//! tauguard's own provenance goes where upstream keeps free-form data: `info.tauguard` (the
//! cell) and each simulation's `info.tauguard` (the same, plus its slice and any
//! guard-blocked calls). Upstream never sees a blocked call in `messages`: it would replay
//! (execute) it, while under the guard it never ran; the blocked call and its remediation
//! move to `info.tauguard.blocked_calls` instead, and turn indices are renumbered.

use serde_json::{Map, Value, json};
use tauguard_core::Message;
use tauguard_core::comparability::{CellStamp, UPSTREAM_COMMIT};
use tauguard_core::record::SimulationRecord;
use tauguard_env::DomainData;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no records to export{0}")]
    Empty(String),
    #[error("the records hold several grid cells ({0}); choose one with --guard")]
    SeveralCells(String),
    #[error("records of domain `{records}` cannot be exported with data of domain `{data}`")]
    DomainMismatch { records: String, data: String },
    #[error(
        "record of task `{task}` trial {trial}: `started_at` `{value}` is neither Unix seconds nor an ISO time"
    )]
    BadTime {
        task: String,
        trial: u32,
        value: String,
    },
}

/// What the records do not say about the software that wrote them.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Written as `info.git_commit` (upstream requires a string).
    pub git_commit: String,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            git_commit: format!("tauguard-{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Builds the results document for the records of one cell (`guard` selects it).
pub fn results_json(
    records: &[SimulationRecord],
    data: &DomainData,
    guard: Option<&str>,
    options: &ExportOptions,
) -> Result<Value, ExportError> {
    let selected: Vec<&SimulationRecord> = records
        .iter()
        .filter(|r| guard.is_none_or(|g| r.guard == g))
        .collect();
    let first = selected.first().ok_or_else(|| {
        ExportError::Empty(
            guard
                .map(|g| format!(" for guard `{g}`"))
                .unwrap_or_default(),
        )
    })?;
    let mut cells: Vec<&str> = selected.iter().map(|r| r.cell_id.as_str()).collect();
    cells.sort_unstable();
    cells.dedup();
    if cells.len() > 1 {
        return Err(ExportError::SeveralCells(cells.join(", ")));
    }
    if first.domain != data.domain {
        return Err(ExportError::DomainMismatch {
            records: first.domain.clone(),
            data: data.domain.to_string(),
        });
    }
    let trials = selected.iter().map(|r| r.trial + 1).max().unwrap_or(1);
    let mut task_ids: Vec<&str> = selected.iter().map(|r| r.task_id.as_str()).collect();
    task_ids.sort_unstable();
    task_ids.dedup();
    let tasks: Vec<Value> = data
        .tasks
        .iter()
        .filter(|t| task_ids.contains(&t.id.as_str()))
        .map(|t| serde_json::to_value(t).expect("tasks serialise"))
        .collect();
    let simulations = selected
        .iter()
        .map(|r| simulation_run(r, &data.policy))
        .collect::<Result<Vec<Value>, ExportError>>()?;
    let setting = |key: &str, default: u32| first.cell.get(key).cloned().unwrap_or(json!(default));
    Ok(json!({
        "timestamp": iso_time(first)?,
        "info": {
            "git_commit": options.git_commit,
            "num_trials": trials,
            "max_steps": setting("max_steps", crate::config::default_max_steps()),
            "max_errors": setting("max_errors", crate::config::default_max_errors()),
            "user_info": {
                "implementation": "user_simulator",
                "llm": first.user_model,
                "llm_args": llm_args(first, "user"),
                "global_simulation_guidelines": null,
                "voice_settings": null,
                "persona_config": null,
            },
            "agent_info": {
                "implementation": "llm_agent",
                "llm": first.agent_model,
                "llm_args": llm_args(first, "agent"),
                "voice_settings": null,
            },
            "environment_info": {"domain_name": data.domain, "policy": data.policy, "tool_defs": null},
            "seed": first.cell.get("seed").cloned().unwrap_or(Value::Null),
            "text_streaming_config": {"chunk_by": "words", "chunk_size": 1},
            "speech_complexity": null,
            "audio_native_config": null,
            "retrieval_config": null,
            "retrieval_config_kwargs": null,
            "tauguard": provenance(first),
        },
        "tasks": tasks,
        "simulations": simulations,
        "simulation_index": null,
    }))
}

/// The sampling settings of a role's model (`agent.temperature` → `temperature`), as
/// upstream's `llm_args`.
fn llm_args(r: &SimulationRecord, role: &str) -> Value {
    let prefix = format!("{role}.");
    let args: Map<String, Value> = r
        .cell
        .iter()
        .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, v)))
        .filter(|(k, _)| !matches!(*k, "provider" | "model") && !k.starts_with("faults"))
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut args = args;
    // A stamped cell was run with upstream's default temperature where it set none; older
    // records sent none, so nothing is claimed for them.
    let http = r
        .cell
        .get(&format!("{prefix}provider"))
        .and_then(Value::as_str)
        .is_none_or(|p| !tauguard_llm::is_sim_provider(p));
    if http && CellStamp::of(&r.cell).is_some() && !args.contains_key("temperature") {
        args.insert(
            "temperature".into(),
            json!(crate::comparability::UPSTREAM_TEMPERATURE),
        );
    }
    Value::Object(args)
}

/// tauguard's identity of the cell a record belongs to, with its comparability stamp
/// (`null` for records written before the stamp existed).
fn provenance(r: &SimulationRecord) -> Value {
    let stamp = CellStamp::of(&r.cell).map(|s| {
        json!({
            "upstream_commit": UPSTREAM_COMMIT,
            "comparable": s.comparable,
            "summary": s.summary(),
            "deviations": s.deviations.iter()
                .map(|(item, detail)| json!({"item": item, "detail": detail}))
                .collect::<Vec<_>>(),
        })
    });
    json!({
        "run_id": r.run_id,
        "cell_id": r.cell_id,
        "guard": r.guard,
        "config_hash": r.config_hash,
        "cell_hash": r.cell_hash,
        "cell": r.cell,
        "comparability": stamp,
    })
}

fn simulation_run(r: &SimulationRecord, policy: &str) -> Result<Value, ExportError> {
    let cost = |role: &str| r.usage.get(role).and_then(|u| u.cost);
    // `started_at` holds whole seconds, message timestamps microseconds: the end is the later
    // of start + wall time and the last message, so no message falls after `end_time`.
    let last_message = r
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::User(p) | Message::Assistant(p) => p.timestamp.as_deref(),
            Message::Tool(t) => t.timestamp.as_deref(),
            Message::System { .. } => None,
        })
        .filter_map(|t| t.parse::<f64>().ok())
        .fold(f64::NEG_INFINITY, f64::max);
    let end = (start_seconds(r)? + r.wall_seconds).max(last_message);
    let start = end - r.wall_seconds;
    let (messages, mut blocked) = upstream_messages(&r.messages);
    // Blocked calls live in the guard events (records written before that kept them in the
    // trajectory, flagged; `upstream_messages` moved those out already).
    for e in r
        .guard_events
        .iter()
        .filter(|e| e.verdict == tauguard_core::record::Verdict::Block && !e.executed)
    {
        if !blocked
            .iter()
            .any(|b| b["call"]["id"] == e.call_id.as_str())
        {
            blocked.push(json!({
                "call": {"id": e.call_id, "name": e.tool, "arguments": e.arguments,
                         "requestor": "assistant"},
                "remediation": e.remediation,
            }));
        }
    }
    let mut tauguard = provenance(r);
    tauguard["slice"] = json!(r.slice);
    if !blocked.is_empty() {
        tauguard["blocked_calls"] = Value::Array(blocked);
    }
    let mut info = Map::new();
    if r.is_infra_error() {
        info.insert("error".into(), json!(r.error));
        info.insert("error_type".into(), json!("infrastructure_error"));
        info.insert("error_traceback".into(), Value::Null);
        info.insert("failed_after_attempts".into(), Value::Null);
    }
    info.insert("tauguard".into(), tauguard);
    Ok(json!({
        "id": format!("{}:{}:{}", r.cell_id, r.task_id, r.trial),
        "task_id": r.task_id,
        "timestamp": iso_from_seconds(start),
        "start_time": iso_from_seconds(start),
        "end_time": iso_from_seconds(end),
        "duration": r.wall_seconds,
        "termination_reason": r.termination_reason,
        "agent_cost": cost("agent"),
        "user_cost": cost("user"),
        "agent_usage": null,
        "reward_info": r.reward.as_ref().map(|w| reward_info(&w.details_json(), w.reward)),
        "messages": if r.is_infra_error() { Vec::new() } else { messages },
        "ticks": null,
        "trial": r.trial,
        "seed": r.seed,
        "mode": "half_duplex",
        "speech_environment": null,
        "review": null,
        "user_only_review": null,
        "info": info,
        "auth_classification": null,
        "hallucination_retries_used": 0,
        "hallucination_check": null,
        "provider_session_id": null,
        "policy": policy,
        "effect_timeline": null,
    }))
}

/// Upstream's `RewardInfo`: every field, `null` where the evaluator did not fill it.
fn reward_info(details: &Value, reward: f64) -> Value {
    let field = |k: &str| details.get(k).cloned().unwrap_or(Value::Null);
    let info = match details.get("info") {
        Some(v) => v.clone(),
        None => json!({"env": null, "nl": null, "communicate": null, "action": null}),
    };
    json!({
        "reward": reward,
        "db_check": field("db_check"),
        "env_assertions": field("env_assertions"),
        "action_checks": field("action_checks"),
        "nl_assertions": field("nl_assertions"),
        "communicate_checks": field("communicate_checks"),
        "reward_basis": field("reward_basis"),
        "reward_breakdown": field("reward_breakdown"),
        "info": info,
    })
}

/// The trajectory as upstream's messages, without guard-blocked calls (returned apart, each
/// with its remediation), turn indices renumbered 0..n-1.
fn upstream_messages(messages: &[Message]) -> (Vec<Value>, Vec<Value>) {
    let blocked: std::collections::HashMap<&str, &str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) if t.guard_blocked => Some((t.id.as_str(), t.content.as_str())),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    let mut removed = Vec::new();
    for m in messages {
        let turn_idx = out.len();
        match m {
            Message::System { .. } => {}
            Message::Tool(t) if t.guard_blocked => {}
            Message::Tool(t) => out.push(json!({
                "id": t.id,
                "role": "tool",
                "content": t.content,
                "requestor": t.requestor,
                "error": t.error,
                "turn_idx": turn_idx,
                "timestamp": t.timestamp.as_deref().map(iso_or_keep),
            })),
            Message::User(p) | Message::Assistant(p) => {
                let mut calls = Vec::new();
                for c in p.tool_calls.iter().flatten() {
                    match blocked.get(c.id.as_str()) {
                        Some(remediation) => removed.push(json!({
                            "call": c,
                            "remediation": remediation,
                        })),
                        None => calls.push(json!(c)),
                    }
                }
                if p.content.is_none() && calls.is_empty() && p.tool_calls.is_some() {
                    // Only blocked calls: nothing of it reached the environment or the user.
                    continue;
                }
                out.push(json!({
                    "role": m.role(),
                    "content": p.content,
                    "tool_calls": (!calls.is_empty()).then_some(calls),
                    "turn_idx": turn_idx,
                    "timestamp": p.timestamp.as_deref().map(iso_or_keep),
                    "cost": p.cost,
                    "usage": p.usage.map(|u| json!({
                        "completion_tokens": u.completion_tokens,
                        "prompt_tokens": u.prompt_tokens,
                    })),
                    "raw_data": null,
                    "generation_time_seconds": p.generation_time_seconds,
                }));
            }
        }
    }
    (out, removed)
}

/// Seconds since the Unix epoch of a record's start (`started_at` holds Unix seconds).
fn start_seconds(r: &SimulationRecord) -> Result<f64, ExportError> {
    r.started_at
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .or_else(|| seconds_from_iso(&r.started_at))
        .ok_or_else(|| ExportError::BadTime {
            task: r.task_id.clone(),
            trial: r.trial,
            value: r.started_at.clone(),
        })
}

fn iso_time(r: &SimulationRecord) -> Result<String, ExportError> {
    Ok(iso_from_seconds(start_seconds(r)?))
}

/// A message timestamp (`secs.micros`) as ISO; anything else is kept as written.
fn iso_or_keep(t: &str) -> String {
    match t.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => iso_from_seconds(s),
        _ => t.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff` (UTC) of Unix seconds.
pub(crate) fn iso_from_seconds(secs: f64) -> String {
    let micros_total = (secs * 1e6).round() as i64;
    let (days, rem) = (
        micros_total.div_euclid(86_400_000_000),
        micros_total.rem_euclid(86_400_000_000),
    );
    let (y, m, d) = civil_from_days(days);
    let s = rem / 1_000_000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}",
        s / 3600,
        s % 3600 / 60,
        s % 60,
        rem % 1_000_000
    )
}

/// Unix seconds of `YYYY-MM-DDTHH:MM:SS[.f]` (read as UTC), if it has that shape.
fn seconds_from_iso(t: &str) -> Option<f64> {
    let (date, time) = t.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut parts = time.splitn(3, ':');
    let (h, min) = (
        parts.next()?.parse::<i64>().ok()?,
        parts.next()?.parse::<i64>().ok()?,
    );
    let sec = parts.next()?.parse::<f64>().ok()?;
    Some((days_from_civil(y, m, day) * 86_400 + h * 3600 + min * 60) as f64 + sec)
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 → (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_match_known_dates_and_read_back() {
        assert_eq!(iso_from_seconds(0.0), "1970-01-01T00:00:00.000000");
        // date -u -d @1700000000.5 → 2023-11-14T22:13:20.5
        assert_eq!(
            iso_from_seconds(1_700_000_000.5),
            "2023-11-14T22:13:20.500000"
        );
        assert_eq!(
            iso_from_seconds(951_782_400.0),
            "2000-02-29T00:00:00.000000"
        );
        assert_eq!(
            seconds_from_iso("2023-11-14T22:13:20.500000"),
            Some(1_700_000_000.5)
        );
        assert_eq!(iso_or_keep("not a time"), "not a time");
        assert_eq!(iso_or_keep("12.5"), "1970-01-01T00:00:12.500000");
    }
}
