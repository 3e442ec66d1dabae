//! Floors: what trivial agents score on the same domain and tasks as a report's records. An
//! agent that refuses everything passes every task whose gold is inaction; one that performs
//! the gold mutations with no procedure at all shows what outcome-only scoring cannot tell
//! apart from a careful agent. A guard table is only meaningful above these.
//!
//! Both agents are deterministic `sim` agents with the sim user, so one trial per task gives
//! their Pass^k for every k, in milliseconds per task.

use crate::assemble::assemble_record;
use crate::attempt::run_attempts;
use crate::config::RunConfig;
use crate::plan::RunPlan;
use crate::runner::{RunError, RunOptions};
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;

/// The floor agents, as sim agent model names.
pub const FLOOR_AGENTS: [&str; 2] = ["refuse-all", "gold-no-procedure"];

/// One floor agent's records over `task_ids` of `domain` (one trial each); with `task_set`
/// (a `[run] task_set` of the project, such as the attack tasks), over that set's tasks.
pub async fn floor_records(
    data_dir: &Path,
    project_dir: &Path,
    domain: &str,
    task_ids: &[String],
    agent: &str,
    task_set: Option<&Path>,
) -> Result<Vec<SimulationRecord>, RunError> {
    let ids: Vec<String> = task_ids.iter().map(|t| format!("\"{t}\"")).collect();
    let mut text = format!(
        "[run]\nname = \"floor-{agent}\"\ndomain = \"{domain}\"\nsplit = \"*\"\n\
         task_ids = [{}]\ntrials = 1\n",
        ids.join(", ")
    );
    if let Some(set) = task_set {
        let set = toml::Value::String(set.to_string_lossy().into_owned());
        text.push_str(&format!("task_set = {set}\n"));
    }
    text.push_str(&format!(
        "[models.agent]\nprovider = \"sim\"\nmodel = \"{agent}\"\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n"
    ));
    let cfg = RunConfig::parse(Path::new("(floor config)"), &text)?;
    let opts = RunOptions {
        data_dir: Some(data_dir.to_path_buf()),
        project_dir: Some(PathBuf::from(project_dir)),
        ..Default::default()
    };
    let plan = RunPlan::build(cfg, &opts)?;
    let mut out = Vec::with_capacity(plan.planned());
    for at in plan.simulations().collect::<Vec<_>>() {
        let attempts = run_attempts(&plan, at, tauguard_llm::CallTally::new(None)).await;
        out.push(assemble_record(&plan, at, attempts, String::new(), 0.0));
    }
    Ok(out)
}
