//! The Kubernetes manifests (`scripts/k8s/`) are valid for the Kubernetes versions they claim
//! — `kubernetes-validate --strict` (PyPI, installed into `.ci/venv` by `.ci/run`) for 1.29
//! and later, where `backoffLimitPerIndex` is on — and say what a cluster does on a bad day:
//! a shard's bad input (tauguard's exit 2) fails the grid Job at once, only other failures are
//! retried (per index), disruptions do not count, every image is taken as loaded
//! (`IfNotPresent`), the merge fails as soon as the grid Job has failed, and every volume
//! the Jobs mount is a claim `work-volume.yaml` declares.
//!
//! Without the validator the validation prints `SKIPPED:`; `.ci/run` sets
//! `TAUGUARD_REQUIRE_K8S_VALIDATE` once it has installed it, and then it must run.

use crate::cluster_scripts::{container, read};
use crate::support::assert_contains_all;
use crate::support::tauguard_status as tauguard;
use serde_json::Value;
use std::process::Command;
use tauguard_testkit::{skip, workspace_root};

const MANIFESTS: [&str; 2] = [
    "scripts/k8s/work-volume.yaml",
    "scripts/k8s/grid-indexed-job.yaml",
];

/// The Kubernetes versions the manifests are checked against: the first with
/// `backoffLimitPerIndex` on by default, the one where it became stable, the newest the
/// validator knows.
const VERSIONS: [&str; 3] = ["1.29.0", "1.33.0", "1.37.0"];

fn docs() -> Vec<Value> {
    MANIFESTS
        .iter()
        .flat_map(|m| serde_saphyr::from_multiple::<Value>(&read(m)).expect("the YAML parses"))
        .collect()
}

fn job<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == "Job" && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no Job `{name}`"))
}

/// The pod failure policy's rules of `job`.
fn rules(job: &Value) -> &Vec<Value> {
    job["spec"]["podFailurePolicy"]["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("no podFailurePolicy in {}", job["metadata"]["name"]))
}

/// The exit codes a rule with `action` matches for `container`.
fn exit_codes(job: &Value, action: &str, container: &str) -> Vec<u64> {
    rules(job)
        .iter()
        .filter(|r| r["action"] == action && r["onExitCodes"]["containerName"] == container)
        .inspect(|r| assert_eq!(r["onExitCodes"]["operator"], "In", "{r}"))
        .flat_map(|r| r["onExitCodes"]["values"].as_array().unwrap().clone())
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn kubernetes_manifests_validate_strictly() {
    let validator = workspace_root().join(".ci/venv/bin/kubernetes-validate");
    if !validator.is_file() {
        assert!(
            std::env::var_os("TAUGUARD_REQUIRE_K8S_VALIDATE").is_none(),
            "TAUGUARD_REQUIRE_K8S_VALIDATE is set but `{}` is missing",
            validator.display()
        );
        skip(
            "kubernetes-validate not installed (run .ci/run, or `.ci/venv/bin/pip install kubernetes-validate`)",
        );
        return;
    }
    let resources = docs().len();
    for version in VERSIONS {
        let out = Command::new(&validator)
            .current_dir(workspace_root())
            .args(["--strict", "-k", version])
            .args(MANIFESTS)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "Kubernetes {version}: {text}");
        let passed = text
            .lines()
            .filter(|l| l.contains(" passed for resource "))
            .count();
        assert_eq!(passed, resources, "Kubernetes {version}: {text}");
    }
}

#[test]
fn bad_input_fails_the_grid_at_once_and_only_infrastructure_failures_retry() {
    let docs = docs();
    let grid = job(&docs, "tauguard-grid");
    let merge = job(&docs, "tauguard-merge");
    // Exit 2 is tauguard's bad input.
    let (code, _, _) = tauguard(&["run", "no-such-config.toml"]);
    assert_eq!(code, 2);

    // Per-index retries, and the bad-input rule is the first one matching exit 2.
    assert!(grid["spec"]["backoffLimitPerIndex"].as_u64().unwrap() >= 1);
    assert!(
        grid["spec"].get("backoffLimit").is_none(),
        "backoffLimit is shared by every index"
    );
    assert_eq!(exit_codes(grid, "FailJob", "shard"), [2]);
    let first_on_exit = rules(grid)
        .iter()
        .find(|r| r.get("onExitCodes").is_some())
        .unwrap();
    assert_eq!(first_on_exit["action"], "FailJob");
    assert!(
        rules(grid)
            .iter()
            .any(|r| r["action"] == "Ignore"
                && r["onPodConditions"][0]["type"] == "DisruptionTarget"),
        "disruptions must not use up retries"
    );
    assert_eq!(container(grid, "shard")["command"][0], "tauguard");
    // The merge refusing (exit 2) is not retried either.
    assert_eq!(exit_codes(merge, "FailJob", "merge"), [2]);

    // The merge fails once the grid has failed: its wait exits with the code its policy
    // fails the Job on, and it watches for both ends.
    let wait = &merge["spec"]["template"]["spec"]["initContainers"][0];
    let script = wait["args"][0].as_str().unwrap();
    let codes = exit_codes(merge, "FailJob", wait["name"].as_str().unwrap());
    assert_eq!(codes.len(), 1, "{codes:?}");
    assert!(script.contains(&format!("exit {}", codes[0])), "{script}");
    for state in ["Complete", "Failed"] {
        assert!(
            script.contains(&format!("\" {state} \"")),
            "no {state} in {script}"
        );
    }
    assert!(!script.contains("--timeout=48h"));
}

#[test]
fn every_image_is_used_as_loaded_and_every_volume_is_declared() {
    let docs = docs();
    let claims: Vec<&str> = docs
        .iter()
        .filter(|d| d["kind"] == "PersistentVolumeClaim")
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    let jobs: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "Job").collect();
    assert_eq!(jobs.len(), 2);
    for job in jobs {
        let pod = &job["spec"]["template"]["spec"];
        let name = &job["metadata"]["name"];
        let containers: Vec<&Value> = ["initContainers", "containers"]
            .iter()
            .flat_map(|k| pod[k].as_array().into_iter().flatten())
            .collect();
        assert!(!containers.is_empty());
        for c in containers {
            assert_eq!(c["imagePullPolicy"], "IfNotPresent", "{name}/{}", c["name"]);
        }
        for v in pod["volumes"].as_array().unwrap() {
            if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
                assert!(
                    claims.contains(&claim),
                    "{name}: no claim `{claim}` declared"
                );
            }
        }
    }
    let pvc = docs
        .iter()
        .find(|d| d["kind"] == "PersistentVolumeClaim")
        .unwrap();
    assert_eq!(pvc["spec"]["accessModes"][0], "ReadWriteMany");

    // The data step fills the directory the shards read, with the project's fetch script.
    let grid = job(&docs, "tauguard-grid");
    let load = &grid["spec"]["template"]["spec"]["initContainers"][0];
    let step = load["args"][0].as_str().unwrap();
    let data_dir = container(grid, "shard")["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "TAUGUARD_DATA_DIR")
        .and_then(|e| e["value"].as_str())
        .unwrap()
        .to_string();
    assert_contains_all(
        step,
        &[
            &format!("scripts/fetch-tau2-data.sh {data_dir}"),
            &format!("{data_dir}/agent/agent_instruction.md"),
        ],
    );
    assert!(
        workspace_root()
            .join("scripts/fetch-tau2-data.sh")
            .is_file()
    );
}
