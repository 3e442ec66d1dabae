//! Scale-out end to end: a multi-guard offline config run as three shards in three processes
//! and merged holds exactly the records of the same config run in one process (timing fields
//! aside); each shard holds a disjoint part and the union is the whole; `--shard auto` takes
//! the shard from Slurm or Kubernetes variables; merge refuses another config's shard, keeps
//! one record per simulation (a scored one over an infrastructure error), is reproducible,
//! and leaves its inputs as they were; the merged directory carries a fresh columnar sidecar,
//! and its report is the single-process run's.
//!
//! Normalisation before comparing records: the keys `wall_seconds`, `started_at` (the record's
//! clock), `timestamp` (each message's clock) and `latency_seconds` (per-role usage) are
//! removed wherever they occur; they are the only fields that depend on when a simulation ran.
//! Nothing in a record depends on its run directory (`run_id` is the config's `run.name`), so
//! every other field — config hash, cell hash, trajectory, reward — must be equal.

use crate::support::{
    assert_contains_all, s, tauguard_in_env, tauguard_ok, tauguard_status as tauguard,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tauguard_metrics::fresh_manifest;
use tauguard_orchestrator::{Shard, SimKey, read_records};
use tauguard_testkit::{SimConfig, tau2_dir};

/// Fields that record when a simulation ran, not what happened in it.
const TIMING: [&str; 4] = ["wall_seconds", "started_at", "timestamp", "latency_seconds"];

fn strip_timing(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for k in TIMING {
                map.remove(k);
            }
            map.values_mut().for_each(strip_timing);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_timing),
        _ => {}
    }
}

/// A run directory's records by key, timing removed.
pub(crate) fn normalised(dir: &Path) -> BTreeMap<SimKey, serde_json::Value> {
    let records = read_records(&dir.join("records.jsonl")).unwrap();
    let n = records.len();
    let out: BTreeMap<SimKey, serde_json::Value> = records
        .into_iter()
        .map(|r| {
            let key = (r.cell_id.clone(), r.task_id.clone(), r.trial);
            let mut v = serde_json::to_value(&r).unwrap();
            strip_timing(&mut v);
            (key, v)
        })
        .collect();
    assert_eq!(out.len(), n, "`{}` holds a simulation twice", dir.display());
    out
}

pub(crate) fn keys(dir: &Path) -> BTreeSet<SimKey> {
    normalised(dir).into_keys().collect()
}

/// The multi-guard offline config of these tests, with faults on so guards decide something.
pub(crate) fn config(dir: &Path, data: &Path, name: &str, seed: u64) -> PathBuf {
    SimConfig::new("shards", "airline", data)
        .trials(2)
        .seed(seed)
        .run_line("num_tasks = 8")
        .faults("skip_confirmation = 0.3\ncomply_forbidden = 0.3\nskip_identity = 0.2")
        .guards(&["baseline", "toolguard", "pg-checklist"])
        .write(&dir.join(name))
}

/// [`config`] with `seed` over the τ²-bench data, written as `c.toml` into a new temporary
/// directory; `None` (the test skips) without the data.
pub(crate) fn scratch_config(seed: u64) -> Option<(tempfile::TempDir, PathBuf)> {
    let data = tau2_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &data, "c.toml", seed);
    Some((tmp, cfg))
}

/// Runs the whole of `cfg` (no shard) into `out`; the keys of its simulations.
pub(crate) fn run_whole(cfg: &Path, out: &Path) -> BTreeSet<SimKey> {
    run(cfg, out, &[]);
    keys(out)
}

pub(crate) fn run(cfg: &Path, out: &Path, extra: &[&str]) {
    let mut args = vec!["run", s(cfg), "--out", s(out)];
    args.extend_from_slice(extra);
    let (code, _, err) = tauguard(&args);
    assert_eq!(code, 0, "run {extra:?}: {err}");
}

/// Runs shards `0/n` … `n-1/n` of `cfg` in `n` concurrent processes, into `<tmp>/shard-<i>`.
pub(crate) fn run_shards(tmp: &Path, cfg: &Path, n: u32) -> Vec<PathBuf> {
    let dirs: Vec<PathBuf> = (0..n).map(|i| tmp.join(format!("shard-{i}"))).collect();
    std::thread::scope(|s| {
        for (i, dir) in dirs.iter().enumerate() {
            s.spawn(move || run(cfg, dir, &["--shard", &format!("{i}/{n}")]));
        }
    });
    dirs
}

pub(crate) fn merge(inputs: &[&Path], out: &Path) -> (i32, String, String) {
    let mut args = vec!["merge"];
    args.extend(inputs.iter().map(|p| s(p)));
    args.extend(["--out", s(out)]);
    tauguard(&args)
}

/// `tauguard report DIR --format FORMAT` (no floors: they do not depend on the records).
pub(crate) fn report(dir: &Path, format: &str) -> String {
    let (code, out, err) = tauguard(&["report", s(dir), "--format", format, "--no-floors"]);
    assert_eq!(code, 0, "report `{}`: {err}", dir.display());
    out
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("`{}`: {e}", path.display()))
}

/// The bytes of each directory's records and config, in order.
fn run_files(dirs: &[PathBuf]) -> Vec<Vec<u8>> {
    dirs.iter()
        .flat_map(|d| {
            [
                bytes(&d.join("records.jsonl")),
                bytes(&d.join("config.json")),
            ]
        })
        .collect()
}

#[test]
fn three_shards_in_three_processes_merge_into_the_single_process_run() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(tmp.path(), &data, "c.toml", 300);
    let single = tmp.path().join("single");
    let whole = run_whole(&cfg, &single);
    let shards = run_shards(tmp.path(), &cfg, 3);

    // Disjoint, each by the stable hash, and together the whole run.
    assert_eq!(whole.len(), 3 * 8 * 2);
    let mut union = BTreeSet::new();
    for (i, dir) in shards.iter().enumerate() {
        let part = keys(dir);
        assert!(!part.is_empty(), "shard {i} ran nothing");
        let shard = Shard {
            index: i as u32,
            count: 3,
        };
        assert!(part.iter().all(|k| shard.owns(k)), "shard {i}: {part:?}");
        assert!(union.is_disjoint(&part), "shard {i} overlaps another");
        union.extend(part);
        let config: serde_json::Value =
            serde_json::from_slice(&bytes(&dir.join("config.json"))).unwrap();
        assert_eq!(config["shard"], format!("{i}/3"));
    }
    assert_eq!(union, whole);

    let before = run_files(&shards);
    let merged = tmp.path().join("merged");
    let (code, out, err) = merge(&[&shards[2], &shards[0], &shards[1]], &merged);
    assert_eq!(code, 0, "{err}");
    assert_contains_all(
        &out,
        &["merged 48 records from 3 directories", "0 duplicates"],
    );
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(normalised(&merged), normalised(&single));
    // Like a run, the merge leaves a fresh sidecar, and `report` on it prints what it prints
    // on the single-process run, as Markdown and as JSON.
    let manifest = fresh_manifest(&merged.join("records.jsonl"))
        .unwrap_or_else(|| panic!("no fresh sidecar in `{}`", merged.display()));
    assert_eq!(manifest.simulations, 48);
    for format in ["md", "json"] {
        assert_eq!(report(&merged, format), report(&single, format), "{format}");
    }

    // Reproducible whatever the order of the inputs; the inputs untouched.
    let again = tmp.path().join("again");
    let (code, _, err) = merge(&[&shards[0], &shards[1], &shards[2]], &again);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        bytes(&merged.join("records.jsonl")),
        bytes(&again.join("records.jsonl"))
    );
    let after = run_files(&shards);
    assert!(before == after, "merge modified an input directory");
    // Guard in grid order, then trial, then task.
    let order: Vec<(String, u32)> = read_records(&merged.join("records.jsonl"))
        .unwrap()
        .into_iter()
        .map(|r| (r.guard, r.trial))
        .collect();
    assert_eq!(order.first(), Some(&("baseline".to_string(), 0)));
    assert_eq!(order.last(), Some(&("pg-checklist".to_string(), 1)));

    // The merged directory is a run directory like any other.
    let m = s(&merged);
    let json = tauguard_ok(&["report", m, "--format", "json", "--no-floors"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap()
            .as_array()
            .map(Vec::len),
        Some(3)
    );
    let results = tmp.path().join("results.json");
    tauguard_ok(&[
        "export-tau2",
        m,
        "--guard",
        "toolguard",
        "--data-dir",
        s(&data),
        "--out",
        s(&results),
    ]);
    let out = tauguard_ok(&["run", s(&cfg), "--out", m, "--resume"]);
    assert!(out.contains("48 already complete, 0 run now"), "{out}");

    // A shard resumes only as itself.
    let s0 = shards[0].to_str().unwrap();
    for (flags, needle) in [
        (&["--shard", "1/3"][..], "asks for shard 1/3"),
        (&[][..], "asks for the whole run"),
    ] {
        let mut args = vec!["run", s(&cfg), "--out", s0, "--resume"];
        args.extend_from_slice(flags);
        let (code, _, err) = tauguard(&args);
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert_contains_all(&err, &["holds shard 0/3 of a run", needle, "--shard 0/3"]);
    }
    let out = tauguard_ok(&["run", s(&cfg), "--out", s0, "--resume", "--shard", "0/3"]);
    assert!(
        out.starts_with("shard 0/3: ") && out.contains("0 run now"),
        "{out}"
    );
}

/// A record of `dir` rewritten as an infrastructure error, into a copy of `dir` at `to`.
fn copy_with_infra_error(dir: &Path, to: &Path, which: usize) -> SimKey {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(dir.join("config.json"), to.join("config.json")).unwrap();
    let mut records = read_records(&dir.join("records.jsonl")).unwrap();
    let r = &mut records[which];
    r.termination_reason = tauguard_core::termination::Termination::InfrastructureError;
    r.reward = None;
    r.error = Some("injected by the test".into());
    let key = (r.cell_id.clone(), r.task_id.clone(), r.trial);
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(to.join("records.jsonl"), text).unwrap();
    key
}

#[test]
fn merge_keeps_one_record_per_simulation_and_prefers_a_scored_one() {
    let Some((tmp, cfg)) = scratch_config(300) else {
        return;
    };
    let shards = run_shards(tmp.path(), &cfg, 2);
    let clean = tmp.path().join("clean");
    let (code, _, err) = merge(&[&shards[0], &shards[1]], &clean);
    assert_eq!(code, 0, "{err}");
    let n0 = read_records(&shards[0].join("records.jsonl"))
        .unwrap()
        .len();

    // `a-…` sorts before `shard-0` and `z-…` after it: the infrastructure error is met first in
    // one and last in the other, and the scored record wins both times.
    let a = tmp.path().join("a-copy");
    let z = tmp.path().join("z-copy");
    let ka = copy_with_infra_error(&shards[0], &a, 0);
    let kz = copy_with_infra_error(&shards[0], &z, 1);
    let merged = tmp.path().join("merged");
    let (code, out, err) = merge(&[&z, &shards[1], &a, &shards[0]], &merged);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("{} duplicates dropped (1 of them", 2 * n0)),
        "{out}"
    );
    assert_eq!(
        bytes(&merged.join("records.jsonl")),
        bytes(&clean.join("records.jsonl"))
    );
    // Without a scored copy, the infrastructure error is the record kept.
    let only = tmp.path().join("only");
    let (code, _, err) = merge(&[&a, &shards[1]], &only);
    assert_eq!(code, 0, "{err}");
    let kept: Vec<SimKey> = read_records(&only.join("records.jsonl"))
        .unwrap()
        .into_iter()
        .filter(|r| r.is_infra_error())
        .map(|r| (r.cell_id, r.task_id, r.trial))
        .collect();
    assert_eq!(kept, [ka]);
    assert_ne!(kz, kept[0]);
    let meta: serde_json::Value =
        serde_json::from_slice(&bytes(&merged.join("merge.json"))).unwrap();
    assert_eq!(meta["duplicates_dropped"], 2 * n0);
    assert_eq!(meta["infrastructure_errors_replaced"], 1);

    // The same directory twice, a non-empty --out, a missing shard.
    let (code, _, err) = merge(
        &[&shards[0], &tmp.path().join("shard-0/")],
        &tmp.path().join("x"),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("given twice"), "{err}");
    let (code, _, err) = merge(&[&shards[0]], &merged);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["--out", "not an empty directory"]);
    let half = tmp.path().join("half");
    let (code, _, err) = merge(&[&shards[1]], &half);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 0/2 (not given)"), "{err}");
    assert!(!half.exists());
}

#[test]
fn merge_refuses_a_shard_of_another_config() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let ours = config(tmp.path(), &data, "c.toml", 300);
    let theirs = config(tmp.path(), &data, "other.toml", 301);
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    run(&ours, &a, &["--shard", "0/2"]);
    run(&theirs, &b, &["--shard", "1/2"]);
    let out = tmp.path().join("merged");
    let (code, _, err) = merge(&[&a, &b], &out);
    assert_eq!(code, 2, "{err}");
    for needle in [s(&a), s(&b), "run.seed", "different configurations"] {
        assert!(err.contains(needle), "`{needle}` not in {err}");
    }
    assert!(!out.exists(), "a refused merge left `{}`", out.display());
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("merging"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Same config, but one cell ran with other prompts (as after an edit between shards).
    let edited = tmp.path().join("edited");
    std::fs::create_dir(&edited).unwrap();
    std::fs::copy(a.join("config.json"), edited.join("config.json")).unwrap();
    let mut records = read_records(&a.join("records.jsonl")).unwrap();
    let cell = records[0].cell_id.clone();
    for r in records.iter_mut().filter(|r| r.cell_id == cell) {
        r.cell.insert("prompts".into(), serde_json::json!("edited"));
        r.cell_hash = "0123456789abcdef".into();
    }
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(edited.join("records.jsonl"), text).unwrap();
    let (code, _, err) = merge(&[&a, &edited], &out);
    assert_eq!(code, 2, "{err}");
    for needle in [&cell, "different settings", "prompts", "0123456789abcdef"] {
        assert!(err.contains(needle), "`{needle}` not in {err}");
    }

    // A shard still running (its lock held) is not read.
    let lock = std::fs::File::open(a.join(".tauguard.lock")).unwrap();
    lock.lock().unwrap();
    let (code, _, err) = merge(&[&a], &out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("in use by a running tauguard run"), "{err}");
    drop(lock);
    assert!(!out.exists());
}

#[test]
fn shard_auto_reads_the_job_array_variables() {
    let Some((tmp, cfg)) = scratch_config(300) else {
        return;
    };
    let all = run_whole(&cfg, &tmp.path().join("whole"));
    let cases: [(&[(&str, &str)], Shard); 3] = [
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            Shard { index: 1, count: 3 },
        ),
        // An array numbered from 1, without COUNT: task 3 of 1-3 is shard 2/3.
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "3"),
            ],
            Shard { index: 2, count: 3 },
        ),
        (
            &[("JOB_COMPLETION_INDEX", "0"), ("TAUGUARD_SHARD_COUNT", "3")],
            Shard { index: 0, count: 3 },
        ),
    ];
    for (i, (env, shard)) in cases.into_iter().enumerate() {
        let out = tmp.path().join(format!("auto-{i}"));
        let args = ["run", s(&cfg), "--out", s(&out), "--shard", "auto"];
        let (code, stdout, err) = tauguard_in_env(&args, env);
        assert_eq!(code, 0, "{env:?}: {err}");
        assert!(stdout.starts_with(&format!("shard {shard}: ")), "{stdout}");
        let expected: BTreeSet<SimKey> = all.iter().filter(|k| shard.owns(k)).cloned().collect();
        assert_eq!(keys(&out), expected, "{env:?}");
    }
    let out = tmp.path().join("none");
    let args = ["run", s(&cfg), "--out", s(&out), "--shard", "auto"];
    for (env, needles) in [
        (
            &[][..],
            &[
                "--shard auto",
                "SLURM_ARRAY_TASK_ID",
                "JOB_COMPLETION_INDEX",
            ][..],
        ),
        (
            &[("JOB_COMPLETION_INDEX", "1")][..],
            &["TAUGUARD_SHARD_COUNT"][..],
        ),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "7"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ][..],
            &["7/3"][..],
        ),
    ] {
        let (code, _, err) = tauguard_in_env(&args, env);
        assert_eq!(code, 2, "{env:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "`{n}` not in {err}");
        }
    }
    assert!(!out.join("records.jsonl").exists());
}

#[test]
fn bad_shard_syntax_is_bad_input_naming_the_flag() {
    for bad in ["3/3", "a/b", "0/0", "1", "auto/2"] {
        let (code, _, err) = tauguard(&["run", "configs/guards-offline.toml", "--shard", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--shard") && err.contains(bad), "{bad}: {err}");
    }
}
