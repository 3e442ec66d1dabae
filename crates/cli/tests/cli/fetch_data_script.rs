//! `scripts/fetch-tau2-data.sh` is the only way a fresh machine gets a data directory, and a
//! run refuses one without `agent/agent_instruction.md` — a text upstream keeps in its code,
//! not its data. So the script runs here against a local repository laid out like upstream
//! (our own invented content, no network): the instruction is extracted as upstream's
//! `.strip()` gives it plus one newline, the guidelines are copied byte for byte, the domains
//! are copied, and a file without the instruction fails the fetch loudly.

use crate::support::assert_contains_all;
use std::path::{Path, PathBuf};
use std::process::Command;
use tauguard_testkit::{skip, workspace_root};

/// Whether `program --version` runs.
fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=tauguard test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot start git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
}

const GUIDELINES: &str = "# Made-up guidelines\n\nAct like a test user.\n";

/// A repository with upstream's layout and `agent_py` as `llm_agent.py`; returns its commit.
fn upstream_like(root: &Path, agent_py: &str) -> String {
    git(root, &["init", "-q"]);
    write(root, "src/tau2/agent/llm_agent.py", agent_py);
    for d in ["airline", "retail", "telecom"] {
        write(
            root,
            &format!("data/tau2/domains/{d}/policy.md"),
            &format!("{d} test policy\n"),
        );
    }
    write(
        root,
        "data/tau2/user_simulator/simulation_guidelines.md",
        GUIDELINES,
    );
    write(root, "README.md", "not copied\n");
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "test layout"]);
    git(root, &["rev-parse", "HEAD"])
}

/// Runs the script from `repo` (as a file:// URL) at `commit` into `dest`; returns (exit code,
/// stderr).
fn fetch(repo: &Path, commit: &str, dest: &Path) -> (i32, String) {
    let out = Command::new("bash")
        .current_dir(workspace_root())
        .arg("scripts/fetch-tau2-data.sh")
        .arg(dest)
        .env("TAU2_REPO", format!("file://{}", repo.display()))
        .env("TAU2_COMMIT", commit)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot start bash: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A temporary directory holding an empty `upstream/`, when git and python3 (which the script
/// needs) are here; otherwise the test skips.
fn scratch() -> Option<(tempfile::TempDir, PathBuf)> {
    if !has("git") || !has("python3") {
        skip("fetch-tau2-data.sh needs git and python3");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("upstream");
    std::fs::create_dir(&repo).unwrap();
    Some((tmp, repo))
}

#[test]
fn fetch_script_extracts_the_agent_instruction_and_copies_the_data() {
    let Some((tmp, repo)) = scratch() else { return };
    let agent_py = "import os\n\nSYSTEM_PROMPT = \"<instructions>{x}</instructions>\"\n\n\
                    AGENT_INSTRUCTION = \"\"\"\n  Be a test agent.\nSecond line.\n  \"\"\".strip()\n\n\
                    class Agent:\n    instruction = \"not this one\"\n";
    let commit = upstream_like(&repo, agent_py);
    // A later commit changes the instruction: the script must take the one asked for.
    write(
        &repo,
        "src/tau2/agent/llm_agent.py",
        "AGENT_INSTRUCTION = \"later\"\n",
    );
    git(&repo, &["commit", "-q", "-a", "-m", "later"]);

    let dest = tmp.path().join("data");
    let (code, err) = fetch(&repo, &commit, &dest);
    assert_eq!(code, 0, "{err}");
    let read = |rel: &str| {
        std::fs::read_to_string(dest.join(rel)).unwrap_or_else(|e| panic!("`{rel}`: {e}"))
    };
    assert_eq!(
        read("agent/agent_instruction.md"),
        "Be a test agent.\nSecond line.\n"
    );
    assert_eq!(
        std::fs::read(dest.join("user_simulator/simulation_guidelines.md")).unwrap(),
        GUIDELINES.as_bytes()
    );
    for d in ["airline", "retail", "telecom"] {
        assert_eq!(
            read(&format!("{d}/policy.md")),
            format!("{d} test policy\n")
        );
    }
    assert!(!dest.join("README.md").exists());
    let fetched = read("FETCHED.md");
    assert_contains_all(&fetched, &[&commit, "agent/agent_instruction.md"]);
}

#[test]
fn fetch_script_fails_naming_llm_agent_py_without_the_instruction() {
    let Some((tmp, repo)) = scratch() else { return };
    let commit = upstream_like(
        &repo,
        "INSTRUCTIONS = \"\"\"Be a test agent.\"\"\"\n\ndef agent_instruction():\n    \
         AGENT_INSTRUCTION = \"only local\"\n    return AGENT_INSTRUCTION\n",
    );
    let dest = tmp.path().join("data");
    let (code, err) = fetch(&repo, &commit, &dest);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("llm_agent.py"), "{err}");
    assert!(
        !dest.exists(),
        "a failed fetch leaves the destination alone"
    );
}
