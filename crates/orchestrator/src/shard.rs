//! Scale-out of one run over processes or cluster nodes: `tauguard run --shard I/N` runs only
//! the simulations whose key — (cell id, task id, trial), the key `--resume` de-duplicates by
//! — hashes to `I` mod `N`, so `N` processes given `0/N` … `N-1/N` split a grid between them
//! without talking to each other, and `tauguard merge` (see [`crate::merge`]) unions their
//! run directories.
//!
//! The hash is blake3 of the key, never std's randomised hasher: every process, machine and
//! release must put a simulation in the same shard. The shard is not part of the config: the
//! config hash and the cell hashes of all shards are those of the whole run, which is what
//! lets merge pool them. It is written to the run directory's `config.json` (key `shard`), and
//! a resume under another shard is refused.
//!
//! `--shard auto` takes the shard from a job array: Slurm's `SLURM_ARRAY_TASK_ID` with
//! `SLURM_ARRAY_TASK_COUNT` (or `SLURM_ARRAY_TASK_MIN`/`_MAX`), else a Kubernetes Indexed
//! Job's `JOB_COMPLETION_INDEX` with `TAUGUARD_SHARD_COUNT`. Slurm's count is the array's own
//! size — 1 for a task resubmitted alone — so `scripts/slurm/grid.sbatch` passes `I/N`
//! itself; a shard directory records the whole plan (`crate::plan_file`) for merge to check.

use crate::records::SimKey;
use std::fmt;
use std::str::FromStr;

/// One of `count` disjoint parts of a run, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// What `--shard` asked for: a shard, or the one the job array's environment names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardRequest {
    Fixed(Shard),
    Auto,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("`{text}` is not a shard: expected I/N with 0 ≤ I < N (e.g. `0/4`), or `auto`")]
    Syntax { text: String },
    #[error("`{text}`: a run has at least one shard (N ≥ 1)")]
    NoShards { text: String },
    #[error("`{text}`: shards of {count} are numbered 0 to {}; {index} is not one", count - 1)]
    OutOfRange {
        text: String,
        index: u32,
        count: u32,
    },
    /// `--shard auto` found no usable job-array variables.
    #[error("--shard auto: {message}")]
    Environment { message: String },
}

/// Slurm's job-array variables, in the order they are read.
pub(crate) const SLURM_VARS: [&str; 4] = [
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_COUNT",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
];
/// A Kubernetes Indexed Job's index, and the shard count its pod template sets.
pub(crate) const K8S_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";
pub(crate) const SHARD_COUNT_VAR: &str = "TAUGUARD_SHARD_COUNT";

impl Shard {
    /// Checks `index < count` and `count ≥ 1`; `text` is what the error quotes.
    pub fn new(index: u32, count: u32, text: &str) -> Result<Shard, ShardError> {
        if count == 0 {
            return Err(ShardError::NoShards { text: text.into() });
        }
        if index >= count {
            return Err(ShardError::OutOfRange {
                text: text.into(),
                index,
                count,
            });
        }
        Ok(Shard { index, count })
    }

    /// Whether the simulation `key` belongs to this shard.
    pub fn owns(&self, key: &SimKey) -> bool {
        shard_of(key, self.count) == self.index
    }

    /// The shard `--shard auto` means in an environment read through `var`: a Slurm job
    /// array first, then a Kubernetes Indexed Job. Errors name the variables.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let env = |message: String| ShardError::Environment { message };
        let number = |name: &str, value: &str| -> Result<u32, ShardError> {
            value.trim().parse::<u32>().map_err(|_| {
                env(format!(
                    "`{name}` = `{value}` is not a non-negative whole number"
                ))
            })
        };
        if let Some(id) = get(SLURM_VARS[0]) {
            let id = number(SLURM_VARS[0], &id)?;
            let count = get(SLURM_VARS[1])
                .map(|v| number(SLURM_VARS[1], &v))
                .transpose()?;
            let min = get(SLURM_VARS[2])
                .map(|v| number(SLURM_VARS[2], &v))
                .transpose()?;
            let max = get(SLURM_VARS[3])
                .map(|v| number(SLURM_VARS[3], &v))
                .transpose()?;
            // Arrays may start anywhere (`--array=1-8`): the shard index counts from MIN.
            let offset = min.unwrap_or(0);
            let span = match (min, max) {
                (Some(lo), Some(hi)) if hi >= lo => Some(hi - lo + 1),
                (Some(lo), Some(hi)) => {
                    return Err(env(format!(
                        "`SLURM_ARRAY_TASK_MAX` = {hi} is below `SLURM_ARRAY_TASK_MIN` = {lo}"
                    )));
                }
                _ => None,
            };
            let count = match (count, span) {
                (Some(c), Some(s)) if c != s => {
                    return Err(env(format!(
                        "the job array is not contiguous (`SLURM_ARRAY_TASK_COUNT` = {c}, but MIN..MAX spans {s}); submit it as `--array=0-<N-1>`"
                    )));
                }
                (Some(c), _) => c,
                (None, Some(s)) => s,
                (None, None) => {
                    return Err(env(
                        "`SLURM_ARRAY_TASK_ID` is set but neither `SLURM_ARRAY_TASK_COUNT` nor `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_MAX` are".into(),
                    ));
                }
            };
            let index = id.checked_sub(offset).ok_or_else(|| {
                env(format!(
                    "`SLURM_ARRAY_TASK_ID` = {id} is below `SLURM_ARRAY_TASK_MIN` = {offset}"
                ))
            })?;
            return Shard::new(index, count, &format!("{index}/{count}")).map_err(|e| {
                env(format!(
                    "the Slurm array variables give shard {e}; submit the array as `--array=0-<N-1>`"
                ))
            });
        }
        if let Some(index) = get(K8S_INDEX_VAR) {
            let index = number(K8S_INDEX_VAR, &index)?;
            let count = get(SHARD_COUNT_VAR).ok_or_else(|| {
                env(format!(
                    "`{K8S_INDEX_VAR}` is set but `{SHARD_COUNT_VAR}` is not; set it to the Job's `completions`"
                ))
            })?;
            let count = number(SHARD_COUNT_VAR, &count)?;
            return Shard::new(index, count, &format!("{index}/{count}")).map_err(|e| {
                env(format!(
                    "`{K8S_INDEX_VAR}` and `{SHARD_COUNT_VAR}` give shard {e}"
                ))
            });
        }
        Err(env(format!(
            "not in a job array: set `{}` with `{}` (or `{}` and `{}`), or `{K8S_INDEX_VAR}` with `{SHARD_COUNT_VAR}`; or pass --shard I/N",
            SLURM_VARS[0], SLURM_VARS[1], SLURM_VARS[2], SLURM_VARS[3]
        )))
    }
}

impl ShardRequest {
    /// The shard itself, reading the process environment for `auto`.
    pub fn resolve(self) -> Result<Shard, ShardError> {
        match self {
            ShardRequest::Fixed(s) => Ok(s),
            ShardRequest::Auto => Shard::from_env(|name| std::env::var(name).ok()),
        }
    }
}

/// Which of `count` shards `key` falls in: the first eight bytes of blake3 over the key's
/// parts (NUL-separated, the trial in decimal), little-endian, mod `count`.
pub(crate) fn shard_of(key: &SimKey, count: u32) -> u32 {
    let (cell, task, trial) = key;
    let mut h = blake3::Hasher::new();
    h.update(cell.as_bytes());
    h.update(&[0]);
    h.update(task.as_bytes());
    h.update(&[0]);
    h.update(trial.to_string().as_bytes());
    let bytes = h.finalize();
    let first: [u8; 8] = bytes.as_bytes()[..8]
        .try_into()
        .expect("blake3 has 32 bytes");
    (u64::from_le_bytes(first) % u64::from(count)) as u32
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax { text: text.into() };
        let (i, n) = text.trim().split_once('/').ok_or_else(syntax)?;
        let i: u32 = i.trim().parse().map_err(|_| syntax())?;
        let n: u32 = n.trim().parse().map_err(|_| syntax())?;
        Shard::new(i, n, text)
    }
}

impl FromStr for ShardRequest {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<ShardRequest, ShardError> {
        if text.trim() == "auto" {
            Ok(ShardRequest::Auto)
        } else {
            text.parse().map(ShardRequest::Fixed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn shard_syntax_is_index_slash_count_or_auto() {
        assert_eq!("2/5".parse(), Ok(Shard { index: 2, count: 5 }));
        assert_eq!("auto".parse(), Ok(ShardRequest::Auto));
        assert_eq!(
            "0/1".parse(),
            Ok(ShardRequest::Fixed(Shard { index: 0, count: 1 }))
        );
        for (text, needle) in [
            ("3/3", "numbered 0 to 2"),
            ("a/b", "expected I/N"),
            ("0/0", "at least one shard"),
            ("1", "expected I/N"),
            ("-1/3", "expected I/N"),
        ] {
            let err = text.parse::<ShardRequest>().unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains(text), "{text}: {err}");
        }
    }

    #[test]
    fn the_hash_is_fixed_and_every_key_lands_in_exactly_one_shard() {
        // Pinned values: a change of hash would silently re-split half-finished sharded runs.
        let key = |c: &str, t: &str, n: u32| (c.to_string(), t.to_string(), n);
        assert_eq!(shard_of(&key("airline|sim-agent|baseline", "0", 0), 1), 0);
        let pinned: Vec<u32> = (0..6)
            .map(|t| shard_of(&key("airline|sim-agent|baseline", &t.to_string(), 0), 7))
            .collect();
        assert_eq!(pinned, [6, 5, 2, 3, 6, 2], "blake3 of the key changed");
        let shards: Vec<Shard> = (0..4).map(|i| Shard { index: i, count: 4 }).collect();
        let mut sizes = [0usize; 4];
        for t in 0..400 {
            let k = key("retail|m|hybrid", &t.to_string(), t % 3);
            let owners: Vec<usize> = (0..4).filter(|i| shards[*i].owns(&k)).collect();
            assert_eq!(owners.len(), 1, "{k:?}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|n| (60..=140).contains(n)), "{sizes:?}");
    }

    #[test]
    fn auto_reads_slurm_then_kubernetes() {
        let s = |pairs: &[(&str, &str)]| Shard::from_env(env(pairs));
        assert_eq!(
            s(&[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ]),
            Ok(Shard { index: 2, count: 4 })
        );
        // MIN/MAX without COUNT; an array starting at 1.
        assert_eq!(
            s(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "3")
            ]),
            Ok(Shard { index: 2, count: 3 })
        );
        // Slurm wins over Kubernetes.
        assert_eq!(
            s(&[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
                ("JOB_COMPLETION_INDEX", "1"),
                ("TAUGUARD_SHARD_COUNT", "2")
            ]),
            Ok(Shard { index: 0, count: 2 })
        );
        assert_eq!(
            s(&[("JOB_COMPLETION_INDEX", "4"), ("TAUGUARD_SHARD_COUNT", "5")]),
            Ok(Shard { index: 4, count: 5 })
        );
        for (pairs, needles) in [
            (
                &[][..],
                &[
                    "SLURM_ARRAY_TASK_ID",
                    "JOB_COMPLETION_INDEX",
                    "TAUGUARD_SHARD_COUNT",
                ][..],
            ),
            (
                &[("SLURM_ARRAY_TASK_ID", "1")][..],
                &["SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"][..],
            ),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "x"),
                    ("SLURM_ARRAY_TASK_COUNT", "2"),
                ][..],
                &["`SLURM_ARRAY_TASK_ID` = `x`"][..],
            ),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "5"),
                    ("SLURM_ARRAY_TASK_COUNT", "5"),
                ][..],
                &["5/5", "--array=0-<N-1>"][..],
            ),
            (
                &[
                    ("SLURM_ARRAY_TASK_ID", "4"),
                    ("SLURM_ARRAY_TASK_COUNT", "3"),
                    ("SLURM_ARRAY_TASK_MIN", "0"),
                    ("SLURM_ARRAY_TASK_MAX", "4"),
                ][..],
                &["not contiguous"][..],
            ),
            (
                &[("JOB_COMPLETION_INDEX", "0")][..],
                &["TAUGUARD_SHARD_COUNT"][..],
            ),
            (
                &[("JOB_COMPLETION_INDEX", "0"), ("TAUGUARD_SHARD_COUNT", "0")][..],
                &["at least one shard", "TAUGUARD_SHARD_COUNT"][..],
            ),
        ] {
            let err = s(pairs).unwrap_err().to_string();
            assert!(err.starts_with("--shard auto: "), "{err}");
            for n in needles {
                assert!(err.contains(n), "{pairs:?}: `{n}` not in {err}");
            }
        }
    }
}
