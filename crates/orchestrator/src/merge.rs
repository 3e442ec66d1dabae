//! `tauguard merge`: the run directories of a run's shards (see [`crate::shard`]), or of any
//! runs of one configuration, unioned into a new run directory that `report`, `export-tau2`
//! and `run --resume` take like any other.
//!
//! Only runs of one configuration are pooled: the inputs' `config.json` must agree on every
//! key the config hash covers (the shard aside) and their records on the config hash, and
//! each cell must carry one cell hash throughout (the prompts and guard artifacts it ran with
//! are in it) — a refusal names both directories and the keys that differ. A simulation held
//! by several inputs (key: cell id, task id, trial, as `--resume` uses) is kept once: a scored
//! record over an infrastructure error, else the one from the input whose path sorts first.
//! Records are written sorted — guard in grid order, cell id, trial, task id (numbers
//! numerically) — so the output does not depend on the order inputs are given in or
//! finished in.
//!
//! The merge knows the plan: every run directory holds the whole run's `plan.json` (see
//! [`crate::plan_file`]), so the union is checked against it, and one lacking simulations —
//! a shard not given, or one cancelled part-way — is refused, naming each shard and how many
//! of its simulations are missing. With `allow_incomplete` it is written anyway and marked
//! so in `merge.json` (`complete: false`), which `report` flags above every table.
//!
//! Inputs are only read (a running shard is refused through its lock); the output is built in
//! a hidden sibling directory and renamed into place, and only onto a new or empty `--out`,
//! so nothing written before is ever lost.

use crate::file_error::FileError;
use crate::plan_file::{Gaps, PLAN_FILE, PlanFile, PlanFileError, thousands};
use crate::provenance::differing_keys;
use crate::records::{RecordsError, SimKey, read_records};
use crate::run_dir::{CONFIG_FILE, LOCK_FILE, RECORDS_FILE, identity_keys, saved_shard};
use crate::shard::Shard;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

/// Metadata the merge leaves beside the records: inputs, their shards, what was dropped.
pub(crate) const MERGE_FILE: &str = "merge.json";
/// The key of `merge.json` saying whether the union held every planned simulation.
pub(crate) const COMPLETE_KEY: &str = "complete";

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no run directories to merge")]
    NoInputs,
    #[error("`{0}` is given twice")]
    Repeated(PathBuf),
    #[error("`{path}` is not a run directory: {reason}")]
    NotARun { path: PathBuf, reason: String },
    /// The given directory could not be resolved.
    #[error("`{path}` is not a run directory")]
    Unresolved {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    #[error("`{0}` is in use by a running tauguard run; merge it once the run has ended")]
    Running(PathBuf),
    #[error(transparent)]
    Records(RecordsError),
    /// An input's file (its `config.json`, its lock) or the output that cannot be read,
    /// parsed or written.
    #[error(transparent)]
    File(#[from] FileError),
    #[error("`{path}`: {message}")]
    Config { path: PathBuf, message: String },
    #[error(
        "`{a}` and `{b}` hold runs of different configurations; these keys differ: {}\n  hint: only shards of one config can be merged",
        keys.join(", ")
    )]
    ConfigDiffers {
        a: PathBuf,
        b: PathBuf,
        keys: Vec<String>,
    },
    #[error(
        "cell `{cell}` ran with different settings in `{a}` and `{b}` (cell hashes {hashes}); these keys differ: {}",
        keys.join(", ")
    )]
    CellDiffers {
        cell: String,
        a: PathBuf,
        b: PathBuf,
        /// `<hash in a> vs <hash in b>`.
        hashes: String,
        keys: Vec<String>,
    },
    #[error(
        "--out `{0}` exists and is not an empty directory; merge writes only a new run directory"
    )]
    OutNotEmpty(PathBuf),
    #[error(transparent)]
    Plan(#[from] PlanFileError),
    #[error(
        "`{a}` and `{b}` hold different plans ({PLAN_FILE}: other tasks or trials); only shards of one run can be merged"
    )]
    PlanDiffers { a: PathBuf, b: PathBuf },
    #[error(
        "no input has a {PLAN_FILE}, so whether the union is complete cannot be told\n  hint: `tauguard run CONFIG --resume --out DIR` (with the shard's --shard) writes it without running anything finished; or pass --allow-incomplete"
    )]
    NoPlan,
    #[error(
        "the union is incomplete: {}\n  hint: finish the shards first (`tauguard run CONFIG --shard I/N --resume --out DIR` runs only what a shard lacks), or pass --allow-incomplete to write it marked incomplete",
        describe_gaps(gaps, inputs)
    )]
    Incomplete {
        gaps: Gaps,
        /// Every input with the shard it holds, to name a shard's directory.
        inputs: Vec<(PathBuf, Option<Shard>)>,
    },
}

/// What [`merge`] may do beyond the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// Write a union that lacks planned simulations (marked `complete: false`).
    pub allow_incomplete: bool,
}

/// [`Gaps::describe`], each shard followed by its input directory or `not given`.
fn describe_gaps(gaps: &Gaps, inputs: &[(PathBuf, Option<Shard>)]) -> String {
    let mut s = format!(
        "{} of {} planned simulations missing",
        thousands(gaps.missing),
        thousands(gaps.planned)
    );
    for g in &gaps.by_shard {
        let dir = inputs
            .iter()
            .find(|(_, sh)| *sh == Some(g.shard))
            .map_or_else(
                || "not given".to_string(),
                |(p, _)| format!("`{}`", p.display()),
            );
        s.push_str(&format!(
            "\n  shard {} ({dir}): {} of its {} simulations missing",
            g.shard,
            thousands(g.missing),
            thousands(g.expected)
        ));
    }
    s
}

/// One input as the summary reports it.
#[derive(Debug, Clone)]
pub struct MergedInput {
    pub path: PathBuf,
    /// The shard it holds (`None`: a whole run, or a merge).
    pub shard: Option<Shard>,
    pub records: usize,
}

/// What a merge did.
#[derive(Debug, Clone)]
pub struct MergeSummary {
    pub out: PathBuf,
    /// In the order they were read (sorted by path).
    pub inputs: Vec<MergedInput>,
    pub written: usize,
    /// Records dropped because another input held the same simulation.
    pub duplicates: usize,
    /// Of those, infrastructure errors dropped for a scored record of the same simulation.
    pub infra_replaced: usize,
    /// Shards of the run no input holds, when every input is a shard of one count.
    pub missing_shards: Vec<Shard>,
    /// What the union lacks of the plan (`None`: no input had a plan).
    pub gaps: Option<Gaps>,
}

/// A read input.
struct Input {
    given: PathBuf,
    config: Value,
    shard: Option<Shard>,
    records: Vec<SimulationRecord>,
    plan: Option<PlanFile>,
    /// A shared lock on the run's lock file, held while the merge reads it.
    _lock: Option<File>,
}

/// Merges the run directories `inputs` into the new run directory `out`.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    options: MergeOptions,
) -> Result<MergeSummary, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError::NoInputs);
    }
    check_out(out)?;
    let mut canonical = BTreeMap::new();
    for given in inputs {
        let c = given
            .canonicalize()
            .map_err(|cause| MergeError::Unresolved {
                path: given.clone(),
                cause,
            })?;
        if canonical.insert(c, given.clone()).is_some() {
            return Err(MergeError::Repeated(given.clone()));
        }
    }
    // Sorted by path: which of two equal-ranked duplicates is kept never depends on the
    // order of the command line.
    let inputs: Vec<Input> = canonical
        .into_values()
        .map(|p| read_input(&p))
        .collect::<Result<_, _>>()?;
    check_same_config(&inputs)?;
    check_same_cells(&inputs)?;
    let plan = one_plan(&inputs)?;

    let mut chosen: BTreeMap<SimKey, &SimulationRecord> = BTreeMap::new();
    let (mut duplicates, mut infra_replaced) = (0, 0);
    for input in &inputs {
        for r in &input.records {
            let key = (r.cell_id.clone(), r.task_id.clone(), r.trial);
            match chosen.get_mut(&key) {
                None => {
                    chosen.insert(key, r);
                }
                Some(kept) => {
                    duplicates += 1;
                    if kept.is_infra_error() && !r.is_infra_error() {
                        *kept = r;
                        infra_replaced += 1;
                    }
                }
            }
        }
    }
    // A guard entry is a name or a table with one (`[[grid.guards]]`).
    let guards: Vec<&str> = inputs[0].config["grid"]["guards"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|g| g.as_str().or_else(|| g["name"].as_str()))
                .collect()
        })
        .unwrap_or_default();
    let gaps = match plan {
        Some(plan) => {
            let present: BTreeSet<SimKey> = chosen.keys().cloned().collect();
            Some(Gaps::of(plan, &present, shard_count(&inputs)))
        }
        None if options.allow_incomplete => None,
        None => return Err(MergeError::NoPlan),
    };
    if let Some(g) = &gaps
        && !g.is_complete()
        && !options.allow_incomplete
    {
        return Err(MergeError::Incomplete {
            gaps: g.clone(),
            inputs: inputs.iter().map(|i| (i.given.clone(), i.shard)).collect(),
        });
    }
    let mut records: Vec<&SimulationRecord> = chosen.into_values().collect();
    records.sort_by_cached_key(|r| order_key(r, &guards));

    let mut config = inputs[0].config.clone();
    if let Some(map) = config.as_object_mut() {
        map.remove(crate::run_dir::SHARD_KEY);
    }
    let summary = MergeSummary {
        out: out.to_path_buf(),
        inputs: inputs
            .iter()
            .map(|i| MergedInput {
                path: i.given.clone(),
                shard: i.shard,
                records: i.records.len(),
            })
            .collect(),
        written: records.len(),
        duplicates,
        infra_replaced,
        missing_shards: missing_shards(&inputs),
        gaps,
    };
    let dirs: Vec<&Path> = inputs.iter().map(|i| i.given.as_path()).collect();
    write_out(out, &records, &config, plan, &summary, &dirs)?;
    Ok(summary)
}

/// Spend logs a run directory keeps beside its records, which a merge carries over
/// (concatenated in input order) so `report` on the merged run still counts every dollar:
/// records `--resume` superseded, and simulations cut off by an interrupt.
const SPEND_LOGS: [&str; 2] = [
    crate::run_dir::SUPERSEDED_FILE,
    tauguard_core::interrupted::INTERRUPTED_FILE,
];

/// `out` must not exist, or be an empty directory.
fn check_out(out: &Path) -> Result<(), MergeError> {
    match std::fs::read_dir(out) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(MergeError::OutNotEmpty(out.to_path_buf())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) if out.exists() => Err(MergeError::OutNotEmpty(out.to_path_buf())),
        Err(cause) => Err(FileError::new(out, cause).into()),
    }
}

fn read_input(dir: &Path) -> Result<Input, MergeError> {
    let not_a_run = |reason: String| MergeError::NotARun {
        path: dir.to_path_buf(),
        reason,
    };
    if !dir.is_dir() {
        return Err(not_a_run("not a directory".into()));
    }
    let lock_path = dir.join(LOCK_FILE);
    let lock = match File::open(&lock_path) {
        Ok(f) => match f.try_lock_shared() {
            Ok(()) => Some(f),
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(MergeError::Running(dir.to_path_buf()));
            }
            Err(std::fs::TryLockError::Error(cause)) => {
                return Err(FileError::new(lock_path, cause).into());
            }
        },
        Err(_) => None,
    };
    let config_path = dir.join(CONFIG_FILE);
    let records_path = dir.join(RECORDS_FILE);
    if !config_path.is_file() {
        return Err(not_a_run(format!("no {CONFIG_FILE}")));
    }
    if !records_path.is_file() {
        return Err(not_a_run(format!("no {RECORDS_FILE}")));
    }
    let bad_config = |message: String| MergeError::Config {
        path: config_path.clone(),
        message,
    };
    let text =
        std::fs::read_to_string(&config_path).map_err(|e| FileError::new(&config_path, e))?;
    let config: Value = serde_json::from_str(&text).map_err(|e| FileError::new(&config_path, e))?;
    if !config.is_object() {
        return Err(bad_config("expected a JSON object".into()));
    }
    let shard = saved_shard(&config).map_err(bad_config)?;
    let records = read_records(&records_path).map_err(MergeError::Records)?;
    let plan = PlanFile::read(dir)?;
    Ok(Input {
        given: dir.to_path_buf(),
        config,
        shard,
        records,
        plan,
        _lock: lock,
    })
}

/// Every input's config equals the first's on the keys the config hash covers, and their
/// records carry one config hash.
fn check_same_config(inputs: &[Input]) -> Result<(), MergeError> {
    let hashes = |i: &Input| -> BTreeSet<String> {
        i.records.iter().map(|r| r.config_hash.clone()).collect()
    };
    let first = &inputs[0];
    let first_keys = identity_keys(&first.config);
    let first_hashes = hashes(first);
    for input in inputs {
        let own = hashes(input);
        if own.len() > 1 {
            return Err(MergeError::Config {
                path: input.given.join(RECORDS_FILE),
                message: format!(
                    "records of several configurations (config hashes {})",
                    own.into_iter().collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    for input in &inputs[1..] {
        let mut keys = differing_keys(&first_keys, &identity_keys(&input.config));
        let own = hashes(input);
        if keys.is_empty()
            && let (Some(a), Some(b)) = (first_hashes.first(), own.first())
            && a != b
        {
            keys.push(format!("config_hash ({a} vs {b})"));
        }
        if !keys.is_empty() {
            return Err(MergeError::ConfigDiffers {
                a: first.given.clone(),
                b: input.given.clone(),
                keys,
            });
        }
    }
    Ok(())
}

/// Each cell id carries one cell hash over all inputs (same config, but the prompts or guard
/// artifacts could have changed between shards).
fn check_same_cells(inputs: &[Input]) -> Result<(), MergeError> {
    let mut seen: BTreeMap<&str, (&SimulationRecord, &Path)> = BTreeMap::new();
    for input in inputs {
        for r in &input.records {
            match seen.get(r.cell_id.as_str()) {
                None => {
                    seen.insert(&r.cell_id, (r, &input.given));
                }
                Some((first, path)) if first.cell_hash != r.cell_hash => {
                    return Err(MergeError::CellDiffers {
                        cell: r.cell_id.clone(),
                        a: path.to_path_buf(),
                        b: input.given.clone(),
                        hashes: format!("{} vs {}", first.cell_hash, r.cell_hash),
                        keys: differing_keys(&first.cell, &r.cell),
                    });
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// Where a record goes in the merged file: guard in grid order, cell id, trial, task id (a
/// number by its value, before names).
fn order_key(r: &SimulationRecord, guards: &[&str]) -> (usize, String, u32, (u8, u64), String) {
    // The guard entry's name is the cell id's third part (a named entry's differs from
    // `r.guard`, the configuration).
    let label = r.cell_id.split('|').nth(2).unwrap_or(&r.guard);
    let rank = guards
        .iter()
        .position(|g| *g == label)
        .unwrap_or(usize::MAX);
    let task = r.task_id.parse::<u64>().map_or((1, 0), |n| (0, n));
    (rank, r.cell_id.clone(), r.trial, task, r.task_id.clone())
}

/// The plan of the inputs that have one; they must all agree.
fn one_plan(inputs: &[Input]) -> Result<Option<&PlanFile>, MergeError> {
    let mut first: Option<(&PlanFile, &Path)> = None;
    for input in inputs {
        let Some(plan) = &input.plan else { continue };
        match first {
            None => first = Some((plan, &input.given)),
            Some((p, path)) if p != plan => {
                return Err(MergeError::PlanDiffers {
                    a: path.to_path_buf(),
                    b: input.given.clone(),
                });
            }
            Some(_) => {}
        }
    }
    Ok(first.map(|(p, _)| p))
}

/// The shard count of the inputs when every one that is a shard has the same count (whole
/// runs and merges among them hold every shard's part).
fn shard_count(inputs: &[Input]) -> Option<u32> {
    let counts: BTreeSet<u32> = inputs
        .iter()
        .filter_map(|i| i.shard.map(|s| s.count))
        .collect();
    match counts.len() {
        1 => counts.first().copied(),
        _ => None,
    }
}

/// The shards of a sharded run no input holds: only when every input is a shard of one count.
fn missing_shards(inputs: &[Input]) -> Vec<Shard> {
    let shards: Option<Vec<Shard>> = inputs.iter().map(|i| i.shard).collect();
    let Some(shards) = shards else {
        return Vec::new();
    };
    let count = shards[0].count;
    if shards.iter().any(|s| s.count != count) {
        return Vec::new();
    }
    (0..count)
        .map(|index| Shard { index, count })
        .filter(|s| !shards.contains(s))
        .collect()
}

/// Writes the merged run into a hidden sibling of `out`, then renames it into place.
fn write_out(
    out: &Path,
    records: &[&SimulationRecord],
    config: &Value,
    plan: Option<&PlanFile>,
    summary: &MergeSummary,
    inputs: &[&Path],
) -> Result<(), MergeError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| MergeError::OutNotEmpty(out.to_path_buf()))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |cause: std::io::Error| MergeError::from(FileError::new(path, cause))
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let tmp = parent.join(format!(".{name}.merging-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir(&tmp).map_err(io(&tmp))?;
    let written = (|| {
        let path = tmp.join(RECORDS_FILE);
        let mut file = std::io::BufWriter::new(File::create(&path).map_err(io(&path))?);
        for r in records {
            let mut line = serde_json::to_string(r).expect("records serialise");
            line.push('\n');
            file.write_all(line.as_bytes()).map_err(io(&path))?;
        }
        let file = file.into_inner().map_err(|e| io(&path)(e.into_error()))?;
        file.sync_all().map_err(io(&path))?;
        let path = tmp.join(CONFIG_FILE);
        let text = serde_json::to_string_pretty(config).expect("config serialises");
        std::fs::write(&path, text).map_err(io(&path))?;
        if let Some(plan) = plan {
            plan.write(&tmp).map_err(MergeError::Plan)?;
        }
        for log in SPEND_LOGS {
            let mut text = String::new();
            for dir in inputs {
                let from = dir.join(log);
                if from.is_file() {
                    let part = std::fs::read_to_string(&from).map_err(io(&from))?;
                    text.push_str(part.trim_end_matches('\n'));
                    text.push('\n');
                }
            }
            if !text.is_empty() {
                let path = tmp.join(log);
                std::fs::write(&path, text).map_err(io(&path))?;
            }
        }
        let path = tmp.join(MERGE_FILE);
        std::fs::write(&path, merge_json(summary)).map_err(io(&path))?;
        // Onto a missing or empty `out` (POSIX rename replaces an empty directory).
        std::fs::rename(&tmp, out).map_err(io(out))
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written
}

fn merge_json(s: &MergeSummary) -> String {
    let inputs: Vec<Value> = s
        .inputs
        .iter()
        .map(|i| {
            json!({
                "path": i.path.display().to_string(),
                "shard": i.shard.map(|s| s.to_string()),
                "records": i.records,
            })
        })
        .collect();
    let doc = json!({
        "inputs": inputs,
        "records": s.written,
        "duplicates_dropped": s.duplicates,
        "infrastructure_errors_replaced": s.infra_replaced,
        "missing_shards": s.missing_shards.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        // `null` when no input had a plan: completeness unknown.
        COMPLETE_KEY: s.gaps.as_ref().map(Gaps::is_complete),
        "planned": s.gaps.as_ref().map(|g| g.planned),
        "missing": s.gaps.as_ref().map(|g| g.missing),
        "missing_by_shard": s.gaps.as_ref().map(|g| {
            g.by_shard
                .iter()
                .map(|g| (g.shard.to_string(), json!({"expected": g.expected, "missing": g.missing})))
                .collect::<serde_json::Map<_, _>>()
        }),
    });
    serde_json::to_string_pretty(&doc).expect("merge metadata serialises")
}
