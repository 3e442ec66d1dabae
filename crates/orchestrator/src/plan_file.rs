//! `plan.json`: every simulation key of the whole run, written into each run directory — a
//! shard's too, not only its own part — before the first simulation starts. It is what lets
//! `tauguard merge` tell a complete union of shards from one with a task cancelled half-way
//! or never started: the records say what ran, only the plan says what should have.
//!
//! The plan is stored compactly, as each domain's selected task ids and each cell's domain
//! and trial count (a cell runs every task of its domain, every trial), so it stays small
//! beside the records even for grids of thousands of simulations.

use crate::file_error::FileError;
use crate::plan::RunPlan;
use crate::records::SimKey;
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file name inside a run directory.
pub(crate) const PLAN_FILE: &str = "plan.json";

/// The simulations of a whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFile {
    /// How many simulations the run holds (the sum over cells of tasks × trials).
    pub simulations: usize,
    /// Per domain, its selected task ids in run order.
    pub tasks: BTreeMap<String, Vec<String>>,
    /// Every cell, in grid order.
    pub cells: Vec<PlannedCell>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedCell {
    pub id: String,
    pub domain: String,
    pub trials: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    /// The file could not be read, parsed or written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The file reads but does not hold a consistent plan.
    #[error("`{path}`: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error(transparent)]
    Records(#[from] crate::records::RecordsError),
}

impl PlanFileError {
    fn file(path: &Path, cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        PlanFileError::File(FileError::new(path, cause))
    }
}

impl PlanFile {
    /// The plan of `plan`, whole (never one shard's part).
    pub fn of(plan: &RunPlan) -> PlanFile {
        let tasks = plan
            .domains
            .iter()
            .map(|d| {
                let ids = d.tasks.iter().map(|t| t.id.clone()).collect();
                (d.data.domain.to_string(), ids)
            })
            .collect();
        let cells = plan
            .cells
            .iter()
            .map(|c| PlannedCell {
                id: c.id.clone(),
                domain: plan.domains[c.domain].data.domain.to_string(),
                trials: c.trials,
            })
            .collect();
        PlanFile {
            simulations: plan.planned(),
            tasks,
            cells,
        }
    }

    /// Every simulation key of the run.
    pub fn keys(&self) -> impl Iterator<Item = SimKey> + '_ {
        self.cells.iter().flat_map(move |c| {
            let tasks = self.tasks.get(&c.domain).map_or(&[][..], Vec::as_slice);
            (0..c.trials)
                .flat_map(move |trial| tasks.iter().map(move |t| (c.id.clone(), t.clone(), trial)))
        })
    }

    /// Writes `dir/plan.json`.
    pub fn write(&self, dir: &Path) -> Result<(), PlanFileError> {
        let path = dir.join(PLAN_FILE);
        let text = serde_json::to_string(self).expect("the plan serialises");
        std::fs::write(&path, text).map_err(|e| PlanFileError::file(&path, e))
    }

    /// Reads `dir/plan.json`; `None` when the directory has none (written by a tauguard that
    /// did not record plans). A plan whose cells do not add up to its count is refused.
    pub fn read(dir: &Path) -> Result<Option<PlanFile>, PlanFileError> {
        let path = dir.join(PLAN_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PlanFileError::file(&path, e)),
        };
        let plan: PlanFile =
            serde_json::from_str(&text).map_err(|e| PlanFileError::file(&path, e))?;
        let counted = plan.keys().count();
        if counted != plan.simulations {
            return Err(PlanFileError::Invalid {
                path,
                message: format!(
                    "says {} simulations but its cells hold {counted}",
                    plan.simulations
                ),
            });
        }
        Ok(Some(plan))
    }
}

/// What a union of records lacks of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gaps {
    pub planned: usize,
    pub missing: usize,
    /// When the inputs are shards of one count: per shard with anything missing, its
    /// simulations in the plan and how many of them no record holds, in shard order.
    pub by_shard: Vec<ShardGap>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardGap {
    pub shard: Shard,
    pub expected: usize,
    pub missing: usize,
}

impl Gaps {
    /// The plan's simulations `present` lacks; split by shard when `count` is the shard
    /// count of the inputs.
    pub fn of(plan: &PlanFile, present: &BTreeSet<SimKey>, count: Option<u32>) -> Gaps {
        let mut by_index: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
        let mut missing = 0;
        for key in plan.keys() {
            let absent = !present.contains(&key);
            missing += usize::from(absent);
            if let Some(n) = count {
                let e = by_index.entry(crate::shard::shard_of(&key, n)).or_default();
                e.0 += 1;
                e.1 += usize::from(absent);
            }
        }
        let by_shard = by_index
            .into_iter()
            .filter(|(_, (_, m))| *m > 0)
            .map(|(index, (expected, missing))| ShardGap {
                shard: Shard {
                    index,
                    count: count.expect("split only with a count"),
                },
                expected,
                missing,
            })
            .collect();
        Gaps {
            planned: plan.simulations,
            missing,
            by_shard,
        }
    }

    pub fn is_complete(&self) -> bool {
        self.missing == 0
    }

    /// `1,668 of 6,672 planned simulations missing (shard 3/4: 1,668 of 1,668)`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} of {} planned simulations missing",
            thousands(self.missing),
            thousands(self.planned)
        );
        if !self.by_shard.is_empty() {
            let parts: Vec<String> = self
                .by_shard
                .iter()
                .map(|g| {
                    format!(
                        "shard {}: {} of {}",
                        g.shard,
                        thousands(g.missing),
                        thousands(g.expected)
                    )
                })
                .collect();
            s.push_str(&format!(" ({})", parts.join("; ")));
        }
        s
    }
}

/// What a run directory that a merge wrote incomplete (`merge.json` says `complete: false`)
/// still lacks of its plan, counted now — `run --resume` on it may have filled the gaps
/// since. `None` for every other directory and once nothing is missing.
pub fn open_gaps(dir: &Path) -> Result<Option<Gaps>, PlanFileError> {
    let merge_path = dir.join(crate::merge::MERGE_FILE);
    let text = match std::fs::read_to_string(&merge_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(PlanFileError::file(&merge_path, e)),
    };
    let meta: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| PlanFileError::file(&merge_path, e))?;
    if meta[crate::merge::COMPLETE_KEY] != serde_json::Value::Bool(false) {
        return Ok(None);
    }
    let Some(plan) = PlanFile::read(dir)? else {
        return Ok(None);
    };
    let counts: BTreeSet<u32> = meta["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["shard"].as_str()?.parse::<Shard>().ok())
        .map(|s| s.count)
        .collect();
    let count = (counts.len() == 1)
        .then(|| counts.first().copied())
        .flatten();
    let records_path = dir.join(crate::run_dir::RECORDS_FILE);
    let present: BTreeSet<SimKey> = crate::records::read_records(&records_path)?
        .into_iter()
        .map(|r| (r.cell_id, r.task_id, r.trial))
        .collect();
    let gaps = Gaps::of(&plan, &present, count);
    Ok((!gaps.is_complete()).then_some(gaps))
}

/// After a run into `dir`: a merge written incomplete whose gaps the run has filled is marked
/// complete in `merge.json` (`complete: true`, `completed_by_resume: true`), so what reads
/// the flag (`submit.sh`, a later `report`) sees the directory as it now is. Returns whether
/// it changed the file.
pub(crate) fn settle_merge(dir: &Path) -> Result<bool, PlanFileError> {
    let path = dir.join(crate::merge::MERGE_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(false);
    };
    let mut meta: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| PlanFileError::file(&path, e))?;
    if meta[crate::merge::COMPLETE_KEY] != serde_json::Value::Bool(false)
        || open_gaps(dir)?.is_some()
    {
        return Ok(false);
    }
    meta[crate::merge::COMPLETE_KEY] = true.into();
    meta["missing"] = 0.into();
    meta["missing_by_shard"] = serde_json::json!({});
    meta["completed_by_resume"] = true.into();
    let text = serde_json::to_string_pretty(&meta).expect("merge metadata serialises");
    std::fs::write(&path, text).map_err(|e| PlanFileError::file(&path, e))?;
    Ok(true)
}

/// `6672` as `6,672`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> PlanFile {
        PlanFile {
            // Two trials of three tasks, one of two.
            simulations: 2 * 3 + 2,
            tasks: BTreeMap::from([
                ("a".into(), vec!["0".into(), "1".into(), "2".into()]),
                ("b".into(), vec!["x".into(), "y".into()]),
            ]),
            cells: vec![
                PlannedCell {
                    id: "a|m|baseline".into(),
                    domain: "a".into(),
                    trials: 2,
                },
                PlannedCell {
                    id: "b|m|baseline".into(),
                    domain: "b".into(),
                    trials: 1,
                },
            ],
        }
    }

    #[test]
    fn keys_are_every_task_of_every_trial_of_every_cell() {
        let p = plan();
        let keys: Vec<SimKey> = p.keys().collect();
        assert_eq!(keys.len(), p.simulations);
        assert_eq!(keys[0], ("a|m|baseline".into(), "0".into(), 0));
        assert_eq!(keys[3], ("a|m|baseline".into(), "0".into(), 1));
        assert_eq!(keys[7], ("b|m|baseline".into(), "y".into(), 0));
    }

    #[test]
    fn gaps_count_what_the_union_lacks_per_shard() {
        let p = plan();
        let all: BTreeSet<SimKey> = p.keys().collect();
        assert!(Gaps::of(&p, &all, Some(3)).is_complete());
        let shard = Shard { index: 1, count: 3 };
        let without: BTreeSet<SimKey> = all.iter().filter(|k| !shard.owns(k)).cloned().collect();
        let gaps = Gaps::of(&p, &without, Some(3));
        let expected = all.len() - without.len();
        assert!(expected > 0, "the fixture puts nothing in shard 1/3");
        assert_eq!(gaps.missing, expected);
        assert_eq!(
            gaps.by_shard,
            [ShardGap {
                shard,
                expected,
                missing: expected
            }]
        );
        assert!(
            gaps.describe()
                .contains(&format!("shard 1/3: {expected} of {expected}"))
        );
        let unsplit = Gaps::of(&p, &BTreeSet::new(), None);
        assert_eq!((unsplit.missing, unsplit.by_shard.len()), (8, 0));
        assert_eq!(unsplit.describe(), "8 of 8 planned simulations missing");
    }

    #[test]
    fn a_plan_round_trips_and_a_wrong_count_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PlanFile::read(dir.path()).unwrap(), None);
        plan().write(dir.path()).unwrap();
        assert_eq!(PlanFile::read(dir.path()).unwrap(), Some(plan()));
        let mut bad = plan();
        bad.simulations = 9;
        bad.write(dir.path()).unwrap();
        let err = PlanFile::read(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("plan.json") && err.contains("9 simulations"),
            "{err}"
        );
        assert_eq!(thousands(6672), "6,672");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
