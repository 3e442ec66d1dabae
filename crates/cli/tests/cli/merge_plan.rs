//! Merges that know the plan, and the Slurm array script that knows the shard count. Every
//! shard's directory holds the whole run's `plan.json`, so a merge of three of four shards —
//! or of four with one cancelled part-way — is refused, naming the shard and how many of its
//! simulations are missing; `--allow-incomplete` writes it marked incomplete, `report` flags
//! every table of it, and `run --resume` on it fills the gaps (after which the flag goes).
//! `scripts/slurm/grid.sbatch` is run here as Slurm would run a task resubmitted alone
//! (`SLURM_ARRAY_TASK_COUNT=1`): it runs exactly its shard of the count it is given, and
//! `submit.sh` run again over a finished or half-merged name does nothing or refuses with
//! the commands to use. A real Slurm cluster runs the same scripts in `slurm_cluster.rs`.

use crate::shard_merge::{keys, merge, normalised, report, run_shards, run_whole, scratch_config};
use crate::support::{
    assert_contains_all, path_with_tauguard, s, tauguard_ok, tauguard_status as tauguard,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tauguard_orchestrator::{Shard, SimKey};
use tauguard_testkit::workspace_root;

fn merge_json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("merge.json")).unwrap()).unwrap()
}

/// Every table heading of a Markdown report.
fn headings(md: &str) -> Vec<&str> {
    md.lines().filter(|l| l.starts_with("### ")).collect()
}

#[test]
fn three_of_four_shards_are_refused_and_allow_incomplete_is_flagged_until_resumed() {
    let Some((tmp, cfg)) = scratch_config(300) else {
        return;
    };
    let shards = run_shards(tmp.path(), &cfg, 4);
    let single = tmp.path().join("single");
    let planned = run_whole(&cfg, &single).len();
    let fourth = keys(&shards[3]).len();
    assert!(fourth > 0, "shard 3/4 holds nothing");
    for dir in &shards {
        let plan: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
        assert_eq!(plan["simulations"], planned, "{}", dir.display());
    }

    let three: Vec<&Path> = shards[..3].iter().map(PathBuf::as_path).collect();
    let out = tmp.path().join("merged");
    let (code, _, err) = merge(&three, &out);
    assert_eq!(code, 2, "{err}");
    for needle in [
        format!("{fourth} of {planned} planned simulations missing"),
        format!("shard 3/4 (not given): {fourth} of its {fourth} simulations missing"),
        "--allow-incomplete".to_string(),
    ] {
        assert!(err.contains(&needle), "`{needle}` not in {err}");
    }
    assert!(!err.contains("shard 0/4"), "{err}");
    assert!(!out.exists(), "a refused merge wrote `{}`", out.display());

    let mut args = vec!["merge"];
    args.extend(three.iter().map(|p| s(p)));
    args.extend(["--out", s(&out), "--allow-incomplete"]);
    let (code, _, err) = tauguard(&args);
    assert_eq!(code, 0, "{err}");
    assert_contains_all(&err, &["written incomplete", "--resume"]);
    let meta = merge_json(&out);
    assert_eq!(meta["complete"], false);
    assert_eq!(meta["planned"], planned);
    assert_eq!(meta["missing"], fourth);
    assert_eq!(meta["missing_by_shard"]["3/4"]["missing"], fourth);
    assert_eq!(meta["missing_shards"], serde_json::json!(["3/4"]));

    // Every table says so, in every text format; the warning names the shard.
    let flag = format!("[incomplete: {fourth} of {planned} planned simulations missing]");
    let m = s(&out);
    let (code, md, err) = tauguard(&["report", m, "--no-floors"]);
    assert_eq!(code, 0, "{err}");
    let heads = headings(&md);
    assert!(heads.len() > 3, "{md}");
    for h in &heads {
        assert!(h.ends_with(&flag), "`{h}` lacks {flag}");
    }
    assert_contains_all(&err, &["is an incomplete merge", "shard 3/4"]);
    let (code, tex, _) = tauguard(&["report", m, "--no-floors", "--format", "latex"]);
    assert_eq!(code, 0);
    let captions: Vec<&str> = tex.lines().filter(|l| l.contains("\\caption{")).collect();
    assert!(!captions.is_empty());
    assert!(captions.iter().all(|c| c.contains("incomplete")), "{tex}");
    // A complete merge is not flagged.
    let all: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let whole = tmp.path().join("whole");
    let (code, _, err) = merge(&all, &whole);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merge_json(&whole)["complete"], true);
    let (code, md, _) = tauguard(&["report", s(&whole), "--no-floors"]);
    assert_eq!(code, 0);
    assert!(!md.contains("incomplete"), "{md}");

    // `run --resume` on the incomplete merge runs exactly what it lacks; then it is whole.
    let stdout = tauguard_ok(&["run", s(&cfg), "--out", m, "--resume"]);
    assert!(
        stdout.contains(&format!(
            "{} already complete, {fourth} run now",
            planned - fourth
        )),
        "{stdout}"
    );
    assert_eq!(normalised(&out), normalised(&single));
    assert_eq!(report(&out, "md"), report(&single, "md"));
    let meta = merge_json(&out);
    assert_eq!(meta["complete"], true, "{meta}");
    assert_eq!(meta["completed_by_resume"], true);
    assert_eq!(meta["missing"], 0);
}

#[test]
fn a_shard_cancelled_part_way_is_named_with_its_missing_count() {
    let Some((tmp, cfg)) = scratch_config(301) else {
        return;
    };
    let shards = run_shards(tmp.path(), &cfg, 4);
    // Shard 1 as a cancelled task leaves it: the first records only.
    let path = shards[1].join("records.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines.len() / 2;
    assert!(kept > 0 && kept < lines.len());
    std::fs::write(&path, lines[..kept].join("\n") + "\n").unwrap();
    let all: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let out = tmp.path().join("merged");
    let (code, _, err) = merge(&all, &out);
    assert_eq!(code, 2, "{err}");
    let missing = lines.len() - kept;
    let needle = format!(
        "shard 1/4 (`{}`): {missing} of its {} simulations missing",
        shards[1].display(),
        lines.len()
    );
    assert!(err.contains(&needle), "`{needle}` not in {err}");
    // Resuming that shard as itself completes it; then the merge goes through.
    let stdout = tauguard_ok(&[
        "run",
        s(&cfg),
        "--out",
        shards[1].to_str().unwrap(),
        "--resume",
        "--shard",
        "1/4",
    ]);
    assert!(stdout.contains(&format!("{missing} run now")), "{stdout}");
    let (code, _, err) = merge(&all, &out);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merge_json(&out)["complete"], true);
}

/// A directory standing in for a project checkout on a cluster: the scripts' relative
/// `results/` and `logs/` land here; `tauguard` is found on PATH.
fn job_env(cmd: &mut Command, cwd: &Path) {
    cmd.current_dir(cwd)
        .env("PATH", path_with_tauguard())
        .env("TAUGUARD_HOME", workspace_root());
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX",
    ] {
        cmd.env_remove(var);
    }
}

fn script(cwd: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(workspace_root().join("scripts/slurm").join(name))
        .args(args);
    job_env(&mut cmd, cwd);
    let out = cmd.envs(env.iter().copied()).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What `sbatch --array=<task>` sets for a task submitted alone.
fn alone(task: &str) -> [(&'static str, &str); 4] {
    [
        ("SLURM_ARRAY_TASK_ID", task),
        ("SLURM_ARRAY_TASK_COUNT", "1"),
        ("SLURM_ARRAY_TASK_MIN", task),
        ("SLURM_ARRAY_TASK_MAX", task),
    ]
}

#[test]
fn a_task_resubmitted_alone_runs_exactly_its_shard_of_the_count_given() {
    let Some((tmp, cfg)) = scratch_config(302) else {
        return;
    };
    let single = tmp.path().join("single");
    let whole = run_whole(&cfg, &single);
    let c = s(&cfg);
    let owned = |index: u32| -> BTreeSet<SimKey> {
        let s = Shard { index, count: 4 };
        whole.iter().filter(|k| s.owns(k)).cloned().collect()
    };

    // Task 3 never started; resubmitted alone it runs shard 3/4 and only it.
    let (code, stdout, err) = script(tmp.path(), "grid.sbatch", &[c, "g", "4"], &alone("3"));
    assert_eq!(code, 0, "{err}");
    let expected = owned(3);
    assert!(
        stdout.starts_with(&format!(
            "shard 3/4: {} simulations (0 already complete, {} run now)",
            expected.len(),
            expected.len()
        )),
        "{stdout}"
    );
    assert_eq!(keys(&tmp.path().join("results/g/shard-3")), expected);
    // Again: finished, it runs nothing.
    let (code, stdout, err) = script(tmp.path(), "grid.sbatch", &[c, "g", "4"], &alone("3"));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("0 run now"), "{stdout}");
    // An array numbered from 1: task 4 is shard 0.
    let (code, stdout, err) = script(tmp.path(), "grid.sbatch", &[c, "g", "4"], &alone("4"));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.starts_with("shard 0/4: "), "{stdout}");
    assert_eq!(keys(&tmp.path().join("results/g/shard-0")), owned(0));
    // Ids past the count, and task N of an array 0-N, are refused before anything runs.
    let (code, _, err) = script(tmp.path(), "grid.sbatch", &[c, "g", "4"], &alone("5"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0-3 or 1-4"), "{err}");
    let (code, _, err) = script(
        tmp.path(),
        "grid.sbatch",
        &[c, "g", "4"],
        &[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "5"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("shard 0 twice"), "{err}");
    let (code, _, err) = script(tmp.path(), "grid.sbatch", &[c, "g"], &alone("1"));
    assert_ne!(code, 0);
    assert!(
        err.contains("usage: sbatch --array=0-<N-1> grid.sbatch CONFIG NAME N"),
        "{err}"
    );

    // merge.sh with two shards missing: refused, naming both and their counts.
    let (code, _, err) = script(tmp.path(), "merge.sh", &["g", "4"], &[]);
    assert_eq!(code, 2, "{err}");
    for i in [1, 2] {
        let n = owned(i).len();
        assert!(
            err.contains(&format!("results/g/shard-{i} does not exist"))
                && err.contains(&format!("shard {i}/4 (not given): {n} of its {n}")),
            "shard {i}: {err}"
        );
    }
    for i in [1, 2] {
        let env = alone(if i == 1 { "1" } else { "2" });
        let (code, _, err) = script(tmp.path(), "grid.sbatch", &[c, "g", "4"], &env);
        assert_eq!(code, 0, "{err}");
    }
    let (code, _, err) = script(tmp.path(), "merge.sh", &["g", "4"], &[]);
    assert_eq!(code, 0, "{err}");
    let merged = tmp.path().join("results/g/merged");
    assert_eq!(normalised(&merged), normalised(&single));

    // submit.sh over a finished name: nothing to do, before any sbatch is called.
    let (code, stdout, err) = script(tmp.path(), "submit.sh", &[c, "4", "g"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("already a complete merge: nothing to submit"),
        "{stdout}"
    );
    // Another shard count over the same name is refused.
    std::fs::rename(&merged, tmp.path().join("set-aside")).unwrap();
    let (code, _, err) = script(tmp.path(), "submit.sh", &[c, "8", "g"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["holds shard", "SHARDS=4"]);
    // A merge written incomplete (shard 2 set aside): refused, with the commands to fill it
    // or set it aside.
    let s2 = tmp.path().join("results/g/shard-2");
    let away = tmp.path().join("shard-2-away");
    std::fs::rename(&s2, &away).unwrap();
    let (code, _, err) = script(
        tmp.path(),
        "merge.sh",
        &["g", "4", "--allow-incomplete"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(merge_json(&merged)["complete"], false);
    std::fs::rename(&away, &s2).unwrap();
    let (code, _, err) = script(tmp.path(), "submit.sh", &[c, "4", "g"], &[]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(
        &err,
        &[
            &format!("tauguard run {c} --resume --out results/g/merged"),
            "mv results/g/merged results/g/merged.partial",
        ],
    );
}
