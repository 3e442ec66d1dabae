//! The Slurm launchers on a real cluster: a single-node cluster started for the test
//! (`scripts/slurm/local-cluster.sh`: munged, slurmctld and slurmd as this user, no cgroups),
//! `submit.sh` queuing an offline grid as 4 array tasks and the merge, one task cancelled
//! mid-shard and one before it started, both recovered with the command `submit.sh`
//! documents, then `merge.sh` by hand — and the merged records equal a one-process run of
//! the same config (keys, rewards, config hash: every field but timing).
//!
//! The node's two CPUs and the script's `--cpus-per-task=2` run one task at a time, so a
//! later task is reliably still pending when it is cancelled. Without Slurm (Debian's
//! `slurm-wlm` and `munge`) the test prints `SKIPPED: slurm not available`; `.ci/run`
//! installs them where it may and then sets `TAUGUARD_REQUIRE_SLURM`, under which a missing
//! Slurm fails instead.

use crate::shard_merge::{keys, normalised, run};
use crate::support::{path_with_tauguard, s};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tauguard_orchestrator::{Shard, SimKey};
use tauguard_testkit::{SimConfig, skip, tau2_dir, workspace_root};

/// The programs the cluster needs, looked up on PATH and in sbin.
const PROGRAMS: [&str; 6] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "scancel",
];

fn slurm_available() -> bool {
    let path = std::env::var("PATH").unwrap_or_default() + ":/usr/sbin:/sbin";
    PROGRAMS
        .iter()
        .all(|p| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
}

/// The cluster, stopped on drop — also when the test fails.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let out = Command::new("bash")
            .arg(workspace_root().join("scripts/slurm/local-cluster.sh"))
            .args(["start", s(dir)])
            .output()
            .unwrap();
        let cluster = Cluster {
            dir: dir.to_path_buf(),
            conf: dir.join("slurm.conf"),
        };
        assert!(
            out.status.success(),
            "local-cluster.sh start: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }

    /// A client command (`sbatch`, `squeue`, `bash submit.sh`) run from `cwd` as a user on a
    /// login node would: the cluster's config, `tauguard` on PATH, the project's home.
    fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd)
            .env("SLURM_CONF", &self.conf)
            .env("PATH", path_with_tauguard())
            .env("TAUGUARD_HOME", workspace_root());
        cmd
    }

    /// The ids (`<job>_<task>` or `<job>`) and states of the queue's jobs.
    fn queue(&self, cwd: &Path) -> Vec<(String, String)> {
        let out = checked(
            self.command("squeue", cwd)
                .args(["-h", "-r", "-o", "%i %T"]),
        );
        out.lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(id, st)| (id.to_string(), st.to_string()))
            .collect()
    }

    fn wait_until(
        &self,
        what: &str,
        cwd: &Path,
        mut done: impl FnMut(&[(String, String)]) -> bool,
    ) {
        let start = Instant::now();
        loop {
            let q = self.queue(cwd);
            if done(&q) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "timed out waiting for {what}; queue {q:?}; logs in {}",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(workspace_root().join("scripts/slurm/local-cluster.sh"))
            .args(["stop", self.dir.to_str().unwrap()])
            .status();
    }
}

fn checked(cmd: &mut Command) -> String {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    );
    assert!(status.success(), "{cmd:?}: {out}{err}");
    out
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_cancelled_task_recovers_and_the_merge_equals_one_process() {
    let Some(data) = tau2_dir() else { return };
    if !slurm_available() {
        assert!(
            std::env::var_os("TAUGUARD_REQUIRE_SLURM").is_none(),
            "TAUGUARD_REQUIRE_SLURM is set but {} are not all installed",
            PROGRAMS.join(", ")
        );
        skip("slurm not available (install Debian's `slurm-wlm` and `munge`)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cluster = Cluster::start(&tmp.path().join("cluster"));
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    // About 200 simulations a shard, one at a time: a few seconds each, long enough to
    // cancel one part-way.
    let sim = |concurrency: u32| {
        SimConfig::new("slurm", "airline", &data)
            .trials(4)
            .seed(300)
            .faults("skip_confirmation = 0.3\ncomply_forbidden = 0.3")
            .guards(&["baseline", "toolguard", "pg-checklist", "pg-raw"])
            .run_line(&format!("concurrency = {concurrency}"))
    };
    sim(1).write(&project.join("grid.toml"));
    // The reference, in one process; concurrency is outside the config hash.
    let single = tmp.path().join("single");
    run(&sim(8).write(&tmp.path().join("single.toml")), &single, &[]);
    let whole = keys(&single);
    let owned = |index: u32| -> BTreeSet<SimKey> {
        let s = Shard { index, count: 4 };
        whole.iter().filter(|k| s.owns(k)).cloned().collect()
    };

    let submit = workspace_root().join("scripts/slurm/submit.sh");
    let out = checked(
        cluster
            .command("bash", &project)
            .args([s(&submit), "grid.toml", "4", "g"]),
    );
    let array: String = out
        .strip_prefix("array job ")
        .and_then(|r| r.split(':').next())
        .unwrap_or_else(|| panic!("no array job id in {out}"))
        .to_string();
    // Task 3 never starts; task 1 is cancelled once it has written some records.
    checked(
        cluster
            .command("scancel", &project)
            .arg(format!("{array}_3")),
    );
    let shard1 = project.join("results/g/shard-1/records.jsonl");
    cluster.wait_until("task 1 to run part of its shard", &project, |q| {
        q.iter()
            .any(|(id, st)| *id == format!("{array}_1") && st == "RUNNING")
            && lines(&shard1) >= 5
    });
    checked(
        cluster
            .command("scancel", &project)
            .arg(format!("{array}_1")),
    );
    cluster.wait_until(
        "the array and the merge job to leave the queue",
        &project,
        |q| q.is_empty(),
    );
    let partial = lines(&shard1);
    assert!(
        partial < owned(1).len(),
        "task 1 finished its {} simulations before the cancel",
        owned(1).len()
    );
    assert!(!project.join("results/g/shard-3").exists());
    assert!(
        !project.join("results/g/merged").exists(),
        "the merge ran although a task failed"
    );

    // Recovery as documented: the two tasks alone, then the merge by hand.
    let sbatch = workspace_root().join("scripts/slurm/grid.sbatch");
    let out = checked(cluster.command("sbatch", &project).args([
        "--parsable",
        "--array=1,3",
        s(&sbatch),
        "grid.toml",
        "g",
        "4",
    ]));
    let again = out.trim().split(';').next().unwrap().to_string();
    cluster.wait_until("the resubmitted tasks to finish", &project, |q| {
        q.is_empty()
    });
    let log = |task: u32| {
        let path = project.join(format!("logs/tauguard-grid-{again}_{task}.out"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("`{}`: {e}", path.display()))
    };
    let n3 = owned(3).len();
    assert!(
        log(3).contains(&format!(
            "shard 3/4: {n3} simulations (0 already complete, {n3} run now)"
        )),
        "{}",
        log(3)
    );
    let n1 = owned(1).len();
    assert!(
        log(1).contains(&format!("shard 1/4: {n1} simulations (")),
        "{}",
        log(1)
    );
    assert!(
        !log(1).contains(&format!("(0 already complete, {n1} run now)")),
        "{}",
        log(1)
    );
    for i in 0..4 {
        assert_eq!(
            keys(&project.join(format!("results/g/shard-{i}"))),
            owned(i),
            "shard {i}"
        );
    }
    let merge = workspace_root().join("scripts/slurm/merge.sh");
    checked(
        cluster
            .command("bash", &project)
            .args([s(&merge), "g", "4"]),
    );
    let merged = project.join("results/g/merged");
    assert_eq!(normalised(&merged), normalised(&single));

    // submit.sh again: a complete merge, nothing queued.
    let out = checked(
        cluster
            .command("bash", &project)
            .args([s(&submit), "grid.toml", "4", "g"]),
    );
    assert!(out.contains("nothing to submit"), "{out}");
    assert!(cluster.queue(&project).is_empty());
}
