//! `--resume` refuses what `merge` refuses: a cell whose inputs changed since its records
//! were written — an edited prompt file the config names, or a project prompt — would split
//! the run into two cells and shrink the report's k range. The refusal names the cell, the
//! two cell hashes and the settings that differ.

use crate::support::{assert_contains_all, s, tauguard_ok, tauguard_status, written};
use tauguard_testkit::SimConfig;

#[test]
fn resume_refuses_a_changed_prompt_naming_what_changed() {
    let root = tauguard_testkit::workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    let own = written(tmp.path(), "instruction.md", "First wording.\n");
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for e in std::fs::read_dir(root.join("configs/prompts")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, prompts.join(p.file_name().unwrap())).unwrap();
        }
    }
    let cfg = SimConfig::new("resume-inputs", "airline", &root.join("tasks/fixtures"))
        .trials(2)
        .run_line(&format!("prompts_dir = \"{}\"", prompts.display()))
        .tail(&format!(
            "[prompts]\nagent_instruction = \"{}\"",
            own.display()
        ))
        .write(&tmp.path().join("c.toml"));
    let run = tmp.path().join("run");
    let args = ["run", s(&cfg), "--out", s(&run), "--resume"];
    tauguard_ok(&args);
    // Unchanged inputs resume (nothing left to run).
    tauguard_ok(&args);

    std::fs::write(&own, "Second wording.\n").unwrap();
    let (code, _, err) = tauguard_status(&args);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(
        &err,
        &[
            "cell `airline|sim-agent|baseline`",
            "cell hash",
            "→",
            "benchmark.agent_instruction",
        ],
    );
    std::fs::write(&own, "First wording.\n").unwrap();

    let edited = prompts.join("user_attacker.md");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, format!("{text}\nOne more line.\n")).unwrap();
    let (code, _, err) = tauguard_status(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("prompts ("), "{err}");
}
