//! The cluster launchers (`scripts/slurm/`, `scripts/k8s/`) call the binary with flags it has:
//! every `--flag` they pass to `tauguard run` or `tauguard merge` appears in that command's
//! `--help`, shards come from `--shard auto`, and the Kubernetes shard count, completions and
//! the merge's input directories agree — so a renamed flag breaks a test, not a cluster job.

use crate::support::tauguard_status as tauguard;
use serde_json::Value;
use std::collections::BTreeSet;
use tauguard_testkit::workspace_root;

pub(crate) fn read(rel: &str) -> String {
    let path = workspace_root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("`{}`: {e}", path.display()))
}

/// The flags `tauguard <command> --help` lists.
fn help_flags(command: &str) -> BTreeSet<String> {
    let (code, out, err) = tauguard(&[command, "--help"]);
    assert_eq!(code, 0, "{err}");
    flags(out.split_whitespace())
}

/// Tokens that are long flags, without what follows the name (`--out=x`, `--shard,`).
fn flags<'a>(tokens: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    tokens
        .filter(|t| t.starts_with("--") && t.len() > 2)
        .map(|t| {
            let end = t[2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(t.len(), |i| i + 2);
            t[..end].to_string()
        })
        .collect()
}

/// Checks the flags of every `tauguard <command> …` in shell text; returns the commands seen.
fn check_shell(file: &str, text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let Some((_, rest)) = line.split_once("tauguard ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(command) = words.next() else {
            continue;
        };
        if !["run", "merge"].contains(&command) {
            continue;
        }
        let known = help_flags(command);
        for flag in flags(words) {
            assert!(
                known.contains(&flag),
                "{file}: `tauguard {command}` has no {flag}: {line}"
            );
        }
        seen.insert(command.to_string());
    }
    seen
}

#[test]
fn slurm_scripts_pass_the_shard_count_and_merge_after_the_array() {
    let sbatch = read("scripts/slurm/grid.sbatch");
    let submit = read("scripts/slurm/submit.sh");
    let merge = read("scripts/slurm/merge.sh");
    assert_eq!(
        check_shell("grid.sbatch", &sbatch),
        BTreeSet::from(["run".to_string()])
    );
    assert_eq!(
        check_shell("merge.sh", &merge),
        BTreeSet::from(["merge".to_string()])
    );
    // submit.sh's only tauguard command is the one its refusal suggests.
    assert_eq!(
        check_shell("submit.sh", &submit),
        BTreeSet::from(["run".to_string()])
    );
    // The shard count is an argument, never the array's size (1 for a task resubmitted
    // alone), and each task writes the directory merge.sh reads.
    assert!(
        !sbatch.contains("--shard auto"),
        "grid.sbatch must not use --shard auto"
    );
    assert!(sbatch.contains("--shard \"$INDEX/$SHARDS\""));
    assert!(sbatch.contains("--out \"results/$NAME/shard-$INDEX\""));
    assert!(merge.contains("dir=\"results/$NAME/shard-$i\""));
    assert!(submit.contains("--dependency=\"afterok:$ARRAY_JOB\""));
    assert!(submit.contains("\"$HERE/grid.sbatch\" \"$CONFIG\" \"$NAME\" \"$SHARDS\""));
    assert!(submit.contains("\"$HERE/merge.sh\" \"$NAME\" \"$SHARDS\""));
}

pub(crate) fn container<'a>(job: &'a Value, name: &str) -> &'a Value {
    job["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no container `{name}` in {job}"))
}

fn args(c: &Value) -> Vec<&str> {
    c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

#[test]
fn kubernetes_indexed_job_agrees_with_its_merge() {
    let text = read("scripts/k8s/grid-indexed-job.yaml");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("the YAML parses");
    let job = |name: &str| {
        docs.iter()
            .find(|d| d["kind"] == "Job" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no Job `{name}`"))
    };
    let grid = job("tauguard-grid");
    let spec = &grid["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    assert!(spec["parallelism"].as_u64().unwrap() <= n);
    let shard = container(grid, "shard");
    assert_eq!(shard["command"][0], "tauguard");
    let run = args(shard);
    assert_eq!(run[0], "run");
    assert!(run.windows(2).any(|w| w == ["--shard", "auto"]), "{run:?}");
    let env = |name: &str| {
        shard["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no env {name}"))
            .clone()
    };
    assert_eq!(env("TAUGUARD_SHARD_COUNT")["value"], n.to_string());
    assert!(
        env("JOB_COMPLETION_INDEX")["valueFrom"]["fieldRef"]["fieldPath"]
            .as_str()
            .unwrap()
            .contains("job-completion-index")
    );
    let out = run
        .iter()
        .position(|a| *a == "--out")
        .map(|i| run[i + 1])
        .unwrap();
    let known = help_flags("run");
    for f in flags(run.iter().copied()) {
        assert!(known.contains(&f), "tauguard run has no {f}");
    }

    let merge_job = job("tauguard-merge");
    let merge = args(container(merge_job, "merge"));
    assert_eq!(merge[0], "merge");
    let known = help_flags("merge");
    for f in flags(merge.iter().copied()) {
        assert!(known.contains(&f), "tauguard merge has no {f}");
    }
    // One input per shard, each where a shard pod writes.
    let inputs: Vec<String> = merge[1..]
        .iter()
        .take_while(|a| !a.starts_with("--"))
        .map(|a| a.to_string())
        .collect();
    let expected: Vec<String> = (0..n)
        .map(|i| out.replace("$(JOB_COMPLETION_INDEX)", &i.to_string()))
        .collect();
    assert_eq!(inputs, expected);
    // The merge waits for this grid Job, by name.
    let wait = merge_job["spec"]["template"]["spec"]["initContainers"][0]["args"].to_string();
    assert!(wait.contains("get job tauguard-grid"), "{wait}");
}
