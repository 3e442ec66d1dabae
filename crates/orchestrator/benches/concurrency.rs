//! Harness overhead under concurrency (run with `cargo bench -p tauguard-orchestrator`):
//! N simulations in flight at once against a mock provider that answers every call after
//! 200 ms. The mock replays responses recorded beforehand from the sim agent and user, so the
//! CPU measured is the harness's own (loop, views, environment, evaluation), not a model's.
//! Reports process CPU time as a share of wall time, CPU per simulation, and the resident
//! memory per in-flight simulation, at 100 and 1,000 concurrent simulations.
//! Targets: CPU ≤ 5 % of wall time, ≤ 2 MB per simulation.
//!
//! Uses the project's fixture airline domain, so it runs without τ²-bench data.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauguard_core::{Requestor, Task, ToolKind};
use tauguard_env::{DataDir, DomainData};
use tauguard_llm::error::LlmError;
use tauguard_llm::model::{BoxFuture, ChatModel, ChatRequest, ChatResponse};
use tauguard_orchestrator::evaluate::{GoldCache, evaluate_with};
use tauguard_orchestrator::prompts::{agent_system_prompt, user_system_prompt};
use tauguard_orchestrator::simulation::{
    Sampling, SimulationError, SimulationSpec, run_simulation,
};
use tauguard_sim::agent::{SimAgent, SimAgentSpec};
use tauguard_sim::model::{SimAgentModel, SimUserModel};
use tauguard_sim::user::SimUser;

const LATENCY: Duration = Duration::from_millis(200);

/// Records the responses of the wrapped model.
struct Recording<M>(M, Mutex<Vec<ChatResponse>>);

impl<M: ChatModel> ChatModel for Recording<M> {
    fn id(&self) -> &str {
        "mock/recording"
    }
    fn complete<'a>(
        &'a self,
        req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let r = self.0.complete(req).await?;
            self.1.lock().unwrap().push(r.clone());
            Ok(r)
        })
    }
}

/// The provider stand-in: replays recorded responses in order, each after a fixed latency.
struct Replay {
    responses: Arc<Vec<ChatResponse>>,
    next: AtomicUsize,
}

impl ChatModel for Replay {
    fn id(&self) -> &str {
        "mock/replay"
    }
    fn complete<'a>(
        &'a self,
        _req: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            tokio::time::sleep(LATENCY).await;
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            Ok(self.responses[i.min(self.responses.len() - 1)].clone())
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

fn rss_kib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

struct Prompts {
    instruction: String,
    guidelines: String,
}

async fn simulate(
    data: &DomainData,
    task: &Task,
    prompts: &Prompts,
    agent: &dyn ChatModel,
    user: &dyn ChatModel,
    gold: &GoldCache,
) -> Result<f64, SimulationError> {
    let spec = SimulationSpec {
        data,
        task,
        trial: 0,
        seed: 0,
        agent,
        user,
        agent_sampling: Sampling::default(),
        user_sampling: Sampling::default(),
        agent_system_prompt: agent_system_prompt(&prompts.instruction, &data.policy),
        user_system_prompt: user_system_prompt(&prompts.guidelines, task),
        max_steps: 200,
        max_errors: 10,
        guard: None,
    };
    let o = run_simulation(&spec).await?;
    Ok(
        evaluate_with(data, task, &o.messages, &o.termination_reason, None, gold)
            .map_or(0.0, |r| r.reward),
    )
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = Arc::new(
        DomainData::load(
            &DataDir::resolve(Some(&root.join("tasks/fixtures"))).unwrap(),
            "airline",
        )
        .unwrap(),
    );
    let prompts = Arc::new(Prompts {
        instruction: std::fs::read_to_string(root.join("configs/prompts/agent_instruction.md"))
            .unwrap(),
        guidelines: std::fs::read_to_string(root.join("configs/prompts/user_guidelines.md"))
            .unwrap(),
    });
    let probe = data.fresh_env();
    let mutating: HashSet<String> = probe
        .toolkit(Requestor::Assistant)
        .iter()
        .filter(|t| t.kind == ToolKind::Write)
        .map(|t| t.name.to_string())
        .collect();
    // TAUGUARD_BENCH_RUNTIME=current runs everything on one thread (compare scheduling cost).
    let rt = match std::env::var("TAUGUARD_BENCH_RUNTIME").as_deref() {
        Ok("current") => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .unwrap();

    // Record each task's conversation once with the sim models (untimed).
    let mut scripts = Vec::new();
    for task in &data.tasks {
        let agent = Recording(
            SimAgentModel(SimAgent::new(SimAgentSpec {
                task: task.clone(),
                mutating: mutating.clone(),
                identity_reads: ["get_user_details".to_string()].into_iter().collect(),
                tempting: None,
                prerequisite_reads: Vec::new(),
                profile: Default::default(),
                trial: 0,
                seed: 0,
            })),
            Mutex::new(Vec::new()),
        );
        let user = Recording(
            SimUserModel(SimUser::new(task, Vec::new())),
            Mutex::new(Vec::new()),
        );
        let reward = rt
            .block_on(simulate(
                &data,
                task,
                &prompts,
                &agent,
                &user,
                &GoldCache::default(),
            ))
            .unwrap();
        assert_eq!(
            reward, 1.0,
            "fixture task {} must pass when recorded",
            task.id
        );
        scripts.push((
            Arc::new(agent.1.into_inner().unwrap()),
            Arc::new(user.1.into_inner().unwrap()),
        ));
    }
    let scripts = Arc::new(scripts);
    // One run shares its gold environments, as the runner does.
    let gold = Arc::new(GoldCache::default());

    for n in [100usize, 1000] {
        let rss_before = rss_kib();
        let (cpu0, t0) = (cpu_seconds(), Instant::now());
        let peak = rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for i in 0..n {
                let (data, prompts, scripts, gold) =
                    (data.clone(), prompts.clone(), scripts.clone(), gold.clone());
                set.spawn(async move {
                    let ti = i % data.tasks.len();
                    let agent = Replay {
                        responses: scripts[ti].0.clone(),
                        next: AtomicUsize::new(0),
                    };
                    let user = Replay {
                        responses: scripts[ti].1.clone(),
                        next: AtomicUsize::new(0),
                    };
                    simulate(&data, &data.tasks[ti], &prompts, &agent, &user, &gold).await
                });
            }
            let mut peak_kib = rss_kib();
            let mut done = 0;
            while let Some(r) = set.join_next().await {
                assert_eq!(r.unwrap().unwrap(), 1.0, "a replayed simulation must pass");
                done += 1;
                if done % 10 == 0 {
                    peak_kib = peak_kib.max(rss_kib());
                }
            }
            peak_kib
        });
        let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
        let per_sim_mb = (peak - rss_before).max(0.0) / 1024.0 / n as f64;
        println!(
            "{n:>5} concurrent: wall {wall:.2} s, harness CPU {cpu:.2} s = {:.2} % of wall (target ≤ 5 %), \
             {:.3} ms CPU per simulation, memory {per_sim_mb:.3} MB per in-flight simulation (target ≤ 2 MB)",
            100.0 * cpu / wall,
            1e3 * cpu / n as f64
        );
    }
}
