//! Harness overhead under concurrency (run with `cargo bench -p tauguard-orchestrator`):
//! N simulations in flight at once against a mock provider that answers every call after
//! 200 ms (the scripted sim agent and user, delayed). Reports the harness's CPU time as a
//! share of wall time and the resident memory per in-flight simulation, at 100 and 1,000
//! concurrent simulations. Targets: CPU ≤ 5 % of wall time, ≤ 2 MB per simulation.
//!
//! Uses the project's fixture airline domain, so it runs without τ²-bench data.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tauguard_core::{Requestor, ToolKind};
use tauguard_env::{DataDir, DomainData};
use tauguard_llm::error::LlmError;
use tauguard_llm::model::{BoxFuture, ChatModel, ChatRequest, ChatResponse};
use tauguard_orchestrator::prompts::{agent_system_prompt, user_system_prompt};
use tauguard_orchestrator::simulation::{Sampling, SimulationSpec, run_simulation};
use tauguard_sim::agent::{SimAgent, SimAgentSpec};
use tauguard_sim::model::{SimAgentModel, SimUserModel};
use tauguard_sim::user::SimUser;

const LATENCY: Duration = Duration::from_millis(200);

/// A provider stand-in: the wrapped model's answer, after a fixed latency.
struct Delayed<M>(M);

impl<M: ChatModel> ChatModel for Delayed<M> {
    fn id(&self) -> &str {
        "mock/delayed"
    }
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            tokio::time::sleep(LATENCY).await;
            self.0.complete(req).await
        })
    }
}

fn cpu_seconds() -> f64 {
    // utime + stime of this process, in clock ticks (fields 14 and 15 of /proc/self/stat).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_kib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = Arc::new(
        DomainData::load(&DataDir::resolve(Some(&root.join("tasks/fixtures"))).unwrap(), "airline").unwrap(),
    );
    let guidelines = std::fs::read_to_string(root.join("configs/prompts/user_guidelines.md")).unwrap();
    let instruction = std::fs::read_to_string(root.join("configs/prompts/agent_instruction.md")).unwrap();
    let probe = data.fresh_env();
    let mutating: HashSet<String> = probe
        .toolkit(Requestor::Assistant)
        .iter()
        .filter(|t| t.kind == ToolKind::Write)
        .map(|t| t.name.to_string())
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    for n in [100usize, 1000] {
        let rss_before = rss_kib("VmRSS:");
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let peak = rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for i in 0..n {
                let task = data.tasks[i % data.tasks.len()].clone();
                let agent = Delayed(SimAgentModel(SimAgent::new(SimAgentSpec {
                    task: task.clone(),
                    mutating: mutating.clone(),
                    identity_reads: ["get_user_details".to_string()].into_iter().collect(),
                    tempting: None,
                    prerequisite_reads: Vec::new(),
                    profile: Default::default(),
                    trial: 0,
                    seed: i as u64,
                })));
                let user = Delayed(SimUserModel(SimUser::new(&task, Vec::new())));
                // Each simulation owns its models and prompts; the domain data is shared.
                let (data, guidelines, instruction) = (data.clone(), guidelines.clone(), instruction.clone());
                set.spawn(async move {
                    let spec = SimulationSpec {
                        data: &data,
                        task: &task,
                        trial: 0,
                        seed: i as u64,
                        agent: &agent,
                        user: &user,
                        agent_sampling: Sampling::default(),
                        user_sampling: Sampling::default(),
                        agent_system_prompt: agent_system_prompt(&instruction, &data.policy),
                        user_system_prompt: user_system_prompt(&guidelines, &task),
                        max_steps: 200,
                        max_errors: 10,
                        guard: None,
                    };
                    run_simulation(&spec).await.map(|o| o.messages.len())
                });
            }
            let mut peak_kib = rss_kib("VmRSS:");
            let mut done = 0;
            while let Some(r) = set.join_next().await {
                r.unwrap().unwrap();
                done += 1;
                if done % 10 == 0 {
                    peak_kib = peak_kib.max(rss_kib("VmRSS:"));
                }
            }
            peak_kib
        });
        let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
        let per_sim_mb = (peak - rss_before).max(0.0) / 1024.0 / n as f64;
        println!(
            "{n:>5} concurrent: wall {wall:.2} s, harness CPU {cpu:.2} s = {:.2} % of wall (target ≤ 5 %), \
             memory {per_sim_mb:.3} MB per in-flight simulation (target ≤ 2 MB)",
            100.0 * cpu / wall
        );
    }
}
