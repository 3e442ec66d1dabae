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
    pub slim: Vec<SimulationRecord>,
    pub bytes_written: u64,
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
    out.slim.push(slim(rec));
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

/// What the metrics read of a record, and nothing else: executed calls (attack success and
/// trace compliance), blocked results of legacy trajectories, verdicts, attempts, usage,
/// rewards without their evaluator details. `tests/view` checks the report over slim records
/// equals `tauguard report` over the full ones.
pub fn slim(mut r: SimulationRecord) -> SimulationRecord {
    r.messages = std::mem::take(&mut r.messages)
        .into_iter()
        .filter_map(|m| match m {
            Message::User(p) if p.is_tool_call() => Some(Message::User(calls_only(p))),
            Message::Assistant(p) if p.is_tool_call() => Some(Message::Assistant(calls_only(p))),
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
        for q in &mut e.requirements {
            q.reason.clear();
        }
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

fn calls_only(p: ParticipantMessage) -> ParticipantMessage {
    ParticipantMessage {
        tool_calls: p.tool_calls,
        ..ParticipantMessage::default()
    }
}
