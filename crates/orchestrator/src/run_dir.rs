//! The output directory of a run: one run at a time (a lock held for the whole run), records
//! never overwritten without `--resume`, and a resume only of the same configuration.
//!
//! A shard's directory (`--shard I/N`, see [`crate::shard`]) records the shard in
//! `config.json` under `shard`, beside the config; a resume under another shard (or none) is
//! refused, since its records would not be the shard's.
//!
//! The lock is an advisory file lock on `.tauguard.lock`: the operating system releases it
//! when the process ends however it ends, so a killed run never leaves a stale lock behind.

use crate::config::RunConfig;
use crate::provenance::{CellSpec, differing_keys, flatten};
use crate::records::{RecordWriter, SimKey};
use crate::runner::RunError;
use crate::shard::Shard;
use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// An open run directory; the lock lasts as long as this value.
#[derive(Debug)]
pub struct RunDir {
    pub path: PathBuf,
    _lock: File,
}

pub(crate) const LOCK_FILE: &str = ".tauguard.lock";
pub(crate) const CONFIG_FILE: &str = "config.json";
pub(crate) const RECORDS_FILE: &str = "records.jsonl";
pub(crate) use tauguard_core::record::SUPERSEDED_FILE;

/// The key of `config.json` holding a shard's `I/N`; not part of the config.
pub(crate) const SHARD_KEY: &str = "shard";

impl RunDir {
    /// Creates or reopens `path` for `cfg`: takes the lock, refuses existing records without
    /// `resume` and a resume under another configuration (naming the keys that differ) or
    /// with a cell whose inputs changed (prompts, benchmark texts, guard artifacts: any input
    /// of a cell hash; `cells` are the plan's, by id), and writes `config.json` (with `shard`
    /// when the run is one). With `redo_infra`, a resume moves infrastructure-error records to
    /// `superseded.jsonl` so their simulations run again. Returns the record writer and the
    /// simulations already complete.
    pub fn open(
        path: &Path,
        cfg: &RunConfig,
        cells: &BTreeMap<&str, (&str, &CellSpec)>,
        resume: bool,
        redo_infra: bool,
        shard: Option<Shard>,
    ) -> Result<(RunDir, RecordWriter, HashSet<SimKey>), RunError> {
        let input = |message: String| RunError::Input {
            path: path.to_path_buf(),
            message,
        };
        if path.exists() && !path.is_dir() {
            return Err(input(
                "is a file, not a directory; --out (or `run.name` under results/) names the run's directory"
                    .into(),
            ));
        }
        std::fs::create_dir_all(path).map_err(|cause| RunError::CreateOutput {
            path: path.to_path_buf(),
            cause,
        })?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path.join(LOCK_FILE))
            .map_err(|e| RunError::file(path, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RunError::Locked(path.to_path_buf()));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(RunError::file(path, e)),
        }
        let records = path.join(RECORDS_FILE);
        let has_records = std::fs::metadata(&records).is_ok_and(|m| m.len() > 0);
        if has_records && !resume {
            return Err(RunError::OutputExists(path.to_path_buf()));
        }
        let config_path = path.join(CONFIG_FILE);
        if resume && config_path.exists() {
            check_saved_config(path, &config_path, cfg, shard)?;
        }
        let mut stored = crate::records::scan(&records)?;
        let hash = cfg.hash();
        if let Some(other) = stored.config_hashes.iter().find(|h| **h != hash) {
            return Err(RunError::ConfigChanged {
                path: path.to_path_buf(),
                keys: vec![format!(
                    "config_hash (records were written under {other}, this config is {hash})"
                )],
            });
        }
        check_cells(path, &stored.cells, cells)?;
        if redo_infra && stored.infra_records > 0 {
            crate::records::supersede_infra(&records, &path.join(SUPERSEDED_FILE))?;
            for key in &stored.infra_only {
                stored.done.remove(key);
            }
        }
        let writer = RecordWriter::open(&records)?;
        let done = stored.done;
        let mut doc = serde_json::to_value(cfg).expect("config serialises");
        if let (Some(s), Some(map)) = (shard, doc.as_object_mut()) {
            map.insert(SHARD_KEY.into(), s.to_string().into());
        }
        std::fs::write(
            &config_path,
            serde_json::to_string_pretty(&doc).expect("config serialises"),
        )
        .map_err(|e| RunError::file(&config_path, e))?;
        Ok((
            RunDir {
                path: path.to_path_buf(),
                _lock: lock,
            },
            writer,
            done,
        ))
    }
}

/// The shard a saved `config.json` records (`None`: the whole run).
pub(crate) fn saved_shard(saved: &serde_json::Value) -> Result<Option<Shard>, String> {
    match saved.get(SHARD_KEY) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|e| format!("at `{SHARD_KEY}`: {e}")),
        Some(other) => Err(format!("at `{SHARD_KEY}`: expected \"I/N\", found {other}")),
    }
}

/// A saved `config.json` as the flat keys the config hash covers: without the settings that
/// cannot change a result and without the shard.
pub(crate) fn identity_keys(saved: &serde_json::Value) -> BTreeMap<String, serde_json::Value> {
    let mut saved = saved.clone();
    if let Some(map) = saved.as_object_mut() {
        map.remove(SHARD_KEY);
    }
    if let Some(run) = saved.get_mut("run").and_then(|r| r.as_object_mut()) {
        run.remove("concurrency");
        for key in crate::config::OUTAGE_LIMIT_KEYS {
            run.remove(key);
        }
    }
    let mut out = BTreeMap::new();
    flatten("", &saved, &mut out);
    out
}

/// The keys whose values differ between a saved `config.json` and `cfg`, ignoring the
/// settings the config hash ignores.
/// A resumed run's saved config: the same shard, and no key changed.
fn check_saved_config(
    path: &Path,
    config_path: &Path,
    cfg: &RunConfig,
    shard: Option<Shard>,
) -> Result<(), RunError> {
    let text = std::fs::read_to_string(config_path).map_err(|e| RunError::file(config_path, e))?;
    let saved: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| RunError::file(config_path, e))?;
    let saved_shard = saved_shard(&saved).map_err(|message| RunError::Input {
        path: config_path.to_path_buf(),
        message,
    })?;
    if saved_shard != shard {
        return Err(RunError::ShardChanged {
            path: path.to_path_buf(),
            saved: saved_shard,
            now: shard,
        });
    }
    let keys = config_changes(&saved, cfg);
    if !keys.is_empty() {
        return Err(RunError::ConfigChanged {
            path: path.to_path_buf(),
            keys,
        });
    }
    Ok(())
}

/// Every cell with records keeps its hash; a changed one is reported with the keys that
/// differ.
fn check_cells(
    path: &Path,
    stored: &BTreeMap<String, (String, CellSpec)>,
    cells: &BTreeMap<&str, (&str, &CellSpec)>,
) -> Result<(), RunError> {
    for (id, (saved_hash, saved_cell)) in stored {
        let Some((hash, spec)) = cells.get(id.as_str()) else {
            continue;
        };
        // Records without a cell hash (older tauguard) cannot be checked.
        if !saved_hash.is_empty() && saved_hash != hash {
            let keys = differing_keys(saved_cell, spec)
                .into_iter()
                .map(|k| {
                    let show = |v: Option<&serde_json::Value>| {
                        v.map_or_else(|| "unset".to_string(), |v| v.to_string())
                    };
                    format!(
                        "{k} ({} → {})",
                        show(saved_cell.get(&k)),
                        show(spec.get(&k))
                    )
                })
                .collect();
            return Err(RunError::CellChanged {
                path: path.to_path_buf(),
                cell: id.clone(),
                hashes: format!("{saved_hash} → {hash}"),
                keys,
            });
        }
    }
    Ok(())
}

fn config_changes(saved: &serde_json::Value, cfg: &RunConfig) -> Vec<String> {
    differing_keys(&identity_keys(saved), &identity_keys(&cfg.identity_json()))
}
