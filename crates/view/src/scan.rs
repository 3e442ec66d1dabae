//! Streaming the inputs: each record is read one line at a time, its data file written at
//! once, and only two small things kept — its index row and a slim copy for the metrics
//! (messages reduced to the executed calls attack and trace metrics read, texts dropped) — so
//! building a site costs memory in proportion to the index, not to the records.

use crate::embed::script_call;
use crate::error::ViewError;
use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use tauguard_core::Message;
use tauguard_core::message::ParticipantMessage;
use tauguard_core::record::{SimulationRecord, Verdict};

/// Simulations per data subdirectory (`data/sims/<i / SHARD>/<i>.js`).
pub const SHARD: usize = 1000;

/// Outcome of one simulation as the grid colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    Infra,
    /// A guard blocked a call and the simulation still passed.
    Recovered,
}

/// One simulation in the index.
#[derive(Debug, Clone)]
pub struct Row {
    pub domain: String,
    pub agent: String,
    pub guard: String,
    pub cell_hash: String,
    pub task: String,
    pub trial: u32,
    pub outcome: Outcome,
    pub termination: String,
    pub slice: &'static str,
    pub blocked: u32,
    pub reward: Option<f64>,
    pub run: String,
}

/// What streaming the inputs leaves behind.
#[derive(Debug, Default)]
pub struct Scanned {
    pub rows: Vec<Row>,
    /// Slim records (see [`slim`]), filled by [`Scanned::parse_slim`] after the scan.
    pub slim: Vec<SimulationRecord>,
    slim_json: Vec<String>,
    pub bytes_written: u64,
    /// The first task of each report group (domain, agent, guard, cell hash).
    first_task: std::collections::HashMap<(String, String, String, String), String>,
}

impl Scanned {
    /// Parses the slim records kept as text, freeing each text as it goes.
    fn parse_slim(&mut self) {
        let texts = std::mem::take(&mut self.slim_json);
        self.slim.reserve_exact(texts.len());
        for text in texts {
            let rec = serde_json::from_str(&text).expect("a slim record reads back");
            self.slim.push(rec);
        }
    }
}

/// The data file of simulation `i`, relative to the site directory.
pub fn sim_file(i: usize) -> String {
    format!("data/sims/{}/{i}.js", i / SHARD)
}

/// Streams every input into `site`: one data file per simulation, in input order.
pub fn scan(inputs: &[PathBuf], site: &Path) -> Result<Scanned, ViewError> {
    let mut out = Scanned::default();
    for input in inputs {
        let file = resolve(input)?;
        if file.extension().is_some_and(|e| e == "json") {
            // An upstream results.json is one JSON document: the metrics importer reads it
            // whole (such files are small; tauguard runs stream below).
            let records = tauguard_metrics::load_input(&file, &Default::default())
                .map_err(ViewError::Input)?;
            for rec in records {
                let json = serde_json::to_string(&rec).expect("a record serializes");
                add(&mut out, site, rec, &json)?;
            }
            continue;
        }
        let f = std::fs::File::open(&file).map_err(|e| ViewError::io(&file, e))?;
        let mut reader = BufReader::with_capacity(1 << 16, f);
        let mut line = String::new();
        let mut n = 0usize;
        loop {
            line.clear();
            let read = reader
                .read_line(&mut line)
                .map_err(|e| ViewError::io(&file, e))?;
            if read == 0 {
                break;
            }
            n += 1;
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            let rec: SimulationRecord =
                serde_json::from_str(text).map_err(|e| ViewError::BadRecord {
                    path: file.clone(),
                    line: n,
                    message: e.to_string(),
                })?;
            add(&mut out, site, rec, text)?;
        }
    }
    out.parse_slim();
    Ok(out)
}

/// A directory means its `records.jsonl`, else its `results.json` (as `tauguard report`).
fn resolve(path: &Path) -> Result<PathBuf, ViewError> {
    let meta = std::fs::metadata(path).map_err(|e| ViewError::io(path, e))?;
    if meta.is_dir() {
        for name in ["records.jsonl", "results.json"] {
            let candidate = path.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        return Err(ViewError::Input(
            tauguard_metrics::MetricsError::UnknownInput {
                path: path.to_path_buf(),
            },
        ));
    }
    Ok(path.to_path_buf())
}

fn add(out: &mut Scanned, site: &Path, rec: SimulationRecord, json: &str) -> Result<(), ViewError> {
    let i = out.rows.len();
    let rel = sim_file(i);
    let path = site.join(&rel);
    if i.is_multiple_of(SHARD) {
        let dir = path.parent().expect("a data file has a directory");
        std::fs::create_dir_all(dir).map_err(|e| ViewError::io(dir, e))?;
    }
    let text = script_call("window.__tg_sim", &i.to_string(), json);
    let mut f = std::fs::File::create(&path).map_err(|e| ViewError::io(&path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| ViewError::io(&path, e))?;
    out.bytes_written += text.len() as u64;
    out.rows.push(row(&rec));
    let mut slim = slim(rec);
    // A cell's settings are the same in all its records (the cell hash is their hash); the
    // report reads them from the group's first record after sorting by (task, trial), which
    // is a record of the group's first task, so only those keep them.
    let group = (
        slim.domain.clone(),
        slim.agent_model.clone(),
        slim.guard.clone(),
        slim.cell_hash.clone(),
    );
    let first_task = out
        .first_task
        .entry(group)
        .or_insert_with(|| slim.task_id.clone());
    if !slim.cell_hash.is_empty() && *first_task != slim.task_id {
        slim.cell = Default::default();
    }
    // Kept as JSON text until the scan ends: parsed then in one go, the slim records sit
    // together instead of pinning memory between each full record's freed allocations.
    out.slim_json
        .push(serde_json::to_string(&slim).expect("a record serializes"));
    Ok(())
}

fn row(rec: &SimulationRecord) -> Row {
    let blocked = rec
        .guard_events
        .iter()
        .filter(|e| e.verdict == Verdict::Block)
        .count() as u32;
    let outcome = if rec.is_infra_error() {
        Outcome::Infra
    } else if rec.succeeded() {
        if blocked > 0 {
            Outcome::Recovered
        } else {
            Outcome::Pass
        }
    } else {
        Outcome::Fail
    };
    Row {
        domain: rec.domain.clone(),
        agent: rec.agent_model.clone(),
        guard: rec.guard.clone(),
        cell_hash: rec.cell_hash.clone(),
        task: rec.task_id.clone(),
        trial: rec.trial,
        outcome,
        termination: rec.termination_reason.clone(),
        slice: rec.slice.as_str(),
        blocked,
        reward: rec.reward.as_ref().map(|r| r.reward),
        run: rec.run_id.clone(),
    }
}

/// The keys of a guard event's `info` the metrics read.
const INFO_KEYS: [&str; 4] = ["verifier_called", "checked", "unchecked", "inputs"];

/// What the metrics read of a record, and nothing else: executed calls of attack and
/// gold-trace records (attack success, trace compliance), blocked results of legacy trajectories, verdicts without requirements,
/// the verifier counts of guard `info`, attempts, usage, rewards without evaluator details. `tests/view` checks the report over slim records
/// equals `tauguard report` over the full ones.
pub fn slim(mut r: SimulationRecord) -> SimulationRecord {
    // Executed calls are read for attack success (with arguments) and trace compliance
    // (names) only.
    let keep_calls = r.attack_target.is_some() || r.gold_trace.is_some();
    let keep_args = r.attack_target.is_some();
    if !keep_calls {
        r.messages = Vec::new();
    }
    r.messages = std::mem::take(&mut r.messages)
        .into_iter()
        .filter_map(|m| match m {
            Message::User(p) if p.is_tool_call() => Some(Message::User(calls_only(p, keep_args))),
            Message::Assistant(p) if p.is_tool_call() => {
                Some(Message::Assistant(calls_only(p, keep_args)))
            }
            Message::Tool(mut t) if t.guard_blocked => {
                t.content = String::new();
                Some(Message::Tool(t))
            }
            _ => None,
        })
        .collect();
    if let Some(reward) = &mut r.reward {
        reward.action_checks.clear();
        let keep = reward
            .details
            .get("missing_reward_info")
            .cloned()
            .map(|v| serde_json::json!({ "missing_reward_info": v }));
        reward.details = keep.unwrap_or(serde_json::Value::Null);
    }
    for e in &mut r.guard_events {
        e.arguments.clear();
        e.remediation = None;
        e.requirements.clear();
        // Only the layered and offline verifiers' counts are read (verifier_calls.rs,
        // verifier_inputs.rs).
        e.info = e.info.take().and_then(|info| {
            let kept: serde_json::Map<String, serde_json::Value> = info
                .as_object()?
                .iter()
                .filter(|(k, _)| INFO_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (!kept.is_empty()).then_some(serde_json::Value::Object(kept))
        });
    }
    for g in &mut r.guide_events {
        g.guidance = None;
        g.requests.clear();
        g.rejected.clear();
    }
    for a in &mut r.attempts.restarts {
        a.messages.clear();
        a.guard_events.clear();
    }
    r
}

fn calls_only(p: ParticipantMessage, keep_args: bool) -> ParticipantMessage {
    let mut calls = p.tool_calls;
    if !keep_args {
        calls.iter_mut().flatten().for_each(|c| c.arguments.clear());
    }
    ParticipantMessage {
        tool_calls: calls,
        ..ParticipantMessage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauguard_core::record::{AttackSpec, Slice};
    use tauguard_metrics::attack::attack_succeeded;
    use tauguard_metrics::synthetic::{record, with_calls};
    use tauguard_metrics::trace::trace_compliance;

    #[test]
    fn slim_keeps_calls_exactly_where_the_metrics_read_them() {
        let mut base = with_calls(record("1", Slice::Mut, 0, 1.0), &["get", "book"]);
        if let Message::Assistant(p) = &mut base.messages[1] {
            p.tool_calls.as_mut().unwrap()[0]
                .arguments
                .insert("id".into(), "A1".into());
        }
        assert!(
            slim(base.clone()).messages.is_empty(),
            "plain records drop them"
        );

        let mut attack = base.clone();
        attack.attack_target = Some("book".into());
        attack.attack = Some(AttackSpec {
            tool: "book".into(),
            arguments: [("id".to_string(), "A1".into())].into_iter().collect(),
            strategy: String::new(),
        });
        assert_eq!(attack_succeeded(&slim(attack.clone())), Some(true));
        assert_eq!(attack_succeeded(&attack), Some(true));

        let mut traced = base;
        traced.gold_trace = Some(vec!["get".into(), "book".into()]);
        let s = slim(traced.clone());
        assert_eq!(
            trace_compliance(&[&s]).map(|t| serde_json::to_value(t).unwrap()),
            trace_compliance(&[&traced]).map(|t| serde_json::to_value(t).unwrap())
        );
        assert!(
            s.messages
                .iter()
                .flat_map(|m| m.tool_calls())
                .all(|c| c.arguments.is_empty())
        );
    }
}
