//! Harness overhead under concurrency (run with `cargo bench -p tauguard-orchestrator`):
//! N simulations kept in flight against a mock provider that answers every call after
//! 200 ms. The mock replays responses recorded beforehand from the sim agent and user, so the
//! CPU measured is the harness's own (loop, views, environment, evaluation; the mock's cost of
//! handing over a response stands in for decoding one), not a model's. Record writing is not
//! part of it. Reports CPU time as a share of wall time, CPU per simulation, and the resident
//! memory per in-flight simulation, with 100 and 1,000 simulations in flight, in steady state
//! (after a warm-up). Targets: CPU ≤ 5 % of wall time (one core), ≤ 2 MB per simulation.
//!
//! It runs as `tauguard run` runs a network-bound config: the same runtime (one thread) and
//! the same allocator setting.
//!
//! Uses the project's fixture airline domain, so it runs without τ²-bench data; with
//! `TAUGUARD_DATA_DIR` set it replays τ²-bench airline's base tasks instead, whose longer
//! conversations and larger database are the realistic case.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tauguard_core::{Requestor, Task, ToolKind};
use tauguard_env::{DataDir, DomainData};
use tauguard_llm::LlmError;
use tauguard_llm::{BoxFuture, ChatModel, ChatRequest, ChatResponse};
use tauguard_orchestrator::{
    GoldCache, Sampling, SimulationError, SimulationSpec, Trajectory, Workload,
    agent_system_prompt, build_runtime, evaluate_final, run_simulation, user_system_prompt,
};
use tauguard_sim::agent::{SimAgent, SimAgentSpec};
use tauguard_sim::model::{SimAgentModel, SimUserModel};
use tauguard_sim::user::SimUser;

/// The allocator the `tauguard` binary uses, set as it sets it, so the bench measures what a
/// run costs.
#[global_allocator]
static ALLOCATOR: tauguard_alloc::Allocator = tauguard_alloc::Allocator;

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

/// CPU time of all this process's live threads, in seconds, at nanosecond resolution (the
/// first field of each `/proc/self/task/*/schedstat`). The runtime's threads live for the
/// whole bench, so no measured work is lost with an exited thread.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 / 1e9
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

/// System prompts built once, as the runner builds them: the agent's, and the user's per task.
struct Prompts {
    agent: Arc<str>,
    user: std::collections::HashMap<String, Arc<str>>,
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
        agent_system_prompt: prompts.agent.clone(),
        user_system_prompt: prompts.user[&task.id].clone(),
        max_steps: 200,
        max_errors: 10,
        guard: None,
        embedder: None,
    };
    let o = run_simulation(&spec).await?;
    let sim = Trajectory {
        data,
        task,
        messages: &o.messages,
        termination_reason: o.termination_reason,
        gold,
    };
    Ok(
        evaluate_final(sim, None, o.final_env.as_ref().map(|e| e.0.as_ref()))
            .map_or(0.0, |r| r.reward),
    )
}

#[allow(
    clippy::too_many_lines,
    reason = "a bench's setup and measurement read in one place"
)]
fn main() {
    tauguard_alloc::keep_freed_memory();
    // τ²-bench's airline when TAUGUARD_DATA_DIR names it (longer, realistic conversations),
    // else the project's small fixture domain.
    let real = std::env::var_os("TAUGUARD_DATA_DIR").is_some();
    let dir = if real {
        DataDir::resolve(Some(&tauguard_testkit::tau2_candidate())).unwrap()
    } else {
        DataDir::resolve(Some(&tauguard_testkit::fixtures_dir())).unwrap()
    };
    let mut data = DomainData::load(&dir, "airline").unwrap();
    if real {
        let base: Vec<_> = data
            .select_tasks(Some("base"), None, None)
            .unwrap()
            .into_iter()
            .cloned()
            .collect();
        data.tasks = base;
    }
    let data = Arc::new(data);
    let read = |f: &str| {
        std::fs::read_to_string(
            tauguard_testkit::workspace_root()
                .join("configs/prompts")
                .join(f),
        )
        .unwrap()
    };
    let guidelines = read("user_guidelines.md");
    let prompts = Arc::new(Prompts {
        agent: agent_system_prompt(&read("agent_instruction.md"), &data.policy).into(),
        user: data
            .tasks
            .iter()
            .map(|t| (t.id.clone(), user_system_prompt(&guidelines, t).into()))
            .collect(),
    });
    let probe = data.fresh_env();
    let mutating: HashSet<String> = probe
        .toolkit(Requestor::Assistant)
        .iter()
        .filter(|t| t.kind == ToolKind::Write)
        .map(|t| t.name.to_string())
        .collect();
    // The runtime `tauguard run` uses for models behind a network; TAUGUARD_BENCH_RUNTIME=multi
    // runs on every core instead, as a run of `sim` models does (compares scheduling cost).
    let rt = build_runtime(match std::env::var("TAUGUARD_BENCH_RUNTIME").as_deref() {
        Ok("multi") => Workload::Compute,
        _ => Workload::Network,
    })
    .unwrap();

    // Record each task's conversation once with the sim models (untimed).
    let (mut scripts, mut calls) = (Vec::new(), 0usize);
    for (ti, task) in data.tasks.iter().enumerate() {
        let agent = Recording(
            SimAgentModel(SimAgent::new(SimAgentSpec {
                task: task.clone(),
                mutating: mutating.clone(),
                identity_reads: ["get_user_details".to_string()].into_iter().collect(),
                tempting: None,
                prerequisite_reads: Vec::new(),
                lookups: Default::default(),
                device_workflow: Default::default(),
                profile: Default::default(),
                trial: 0,
                seed: 0,
                behaviour: Default::default(),
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
        // Replayed simulations must pass, so a task the plain sim agent fails is left out.
        if reward < 1.0 {
            assert!(real, "fixture task {} must pass when recorded", task.id);
            continue;
        }
        let (agent_calls, user_calls) =
            (agent.1.into_inner().unwrap(), user.1.into_inner().unwrap());
        calls += agent_calls.len() + user_calls.len();
        scripts.push((ti, Arc::new(agent_calls), Arc::new(user_calls)));
    }
    println!(
        "{} {} tasks replayed, {:.1} model calls per simulation",
        scripts.len(),
        if real {
            "τ²-bench airline base"
        } else {
            "fixture airline"
        },
        calls as f64 / scripts.len() as f64
    );
    let scripts = Arc::new(scripts);
    // One run shares its gold environments, as the runner does.
    let gold = Arc::new(GoldCache::default());

    // Steady state: N lanes each run simulations back to back, so N are always in flight.
    // CPU and memory are read over a fixed window after a warm-up in which the lanes, started
    // together, drift apart and the heap grows to its working size (a one-off cost of a run);
    // the simulations still running at the window's end finish unmeasured.
    let secs = |var: &str, default: f64| {
        Duration::from_secs_f64(
            std::env::var(var)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default),
        )
    };
    let (warmup, window) = (
        secs("TAUGUARD_BENCH_WARMUP", 3.0),
        secs("TAUGUARD_BENCH_SECONDS", 8.0),
    );
    // Memory is read against the footprint before any simulation ran: the allocator keeps
    // what earlier measurements freed, so a per-phase baseline would under-count.
    let rss_baseline = rss_kib();
    // Each count is measured twice: the mock provider alone (the same calls, sleeps and
    // response hand-overs, no simulation), then full simulations; the difference is what the
    // harness itself adds.
    for n in [100usize, 1000] {
        let mut provider_share = 0.0;
        for provider_only in [true, false] {
            let completed = Arc::new(AtomicUsize::new(0));
            let (wall, cpu, peak) = rt.block_on(async {
                let measured_from = tokio::time::Instant::now() + warmup;
                let deadline = measured_from + window;
                let mut set = tokio::task::JoinSet::new();
                for lane in 0..n {
                    let (data, prompts, scripts, gold, completed) = (
                        data.clone(),
                        prompts.clone(),
                        scripts.clone(),
                        gold.clone(),
                        completed.clone(),
                    );
                    set.spawn(async move {
                        let mut k = lane;
                        let probe = ChatRequest::new("", Vec::new());
                        while tokio::time::Instant::now() < deadline {
                            let (ti, agent_script, user_script) = &scripts[k % scripts.len()];
                            let agent = Replay {
                                responses: agent_script.clone(),
                                next: AtomicUsize::new(0),
                            };
                            let user = Replay {
                                responses: user_script.clone(),
                                next: AtomicUsize::new(0),
                            };
                            if provider_only {
                                for _ in 0..agent_script.len() {
                                    drop(agent.complete(&probe).await);
                                }
                                for _ in 0..user_script.len() {
                                    drop(user.complete(&probe).await);
                                }
                            } else {
                                let task = &data.tasks[*ti];
                                let reward = simulate(&data, task, &prompts, &agent, &user, &gold)
                                    .await
                                    .unwrap();
                                assert_eq!(reward, 1.0, "a replayed simulation must pass");
                            }
                            let now = tokio::time::Instant::now();
                            if (measured_from..=deadline).contains(&now) {
                                completed.fetch_add(1, Ordering::Relaxed);
                            }
                            k += n;
                        }
                    });
                }
                tokio::time::sleep_until(measured_from).await;
                let (cpu0, t0) = (cpu_seconds(), Instant::now());
                let mut peak_kib = rss_kib();
                while tokio::time::Instant::now() + Duration::from_millis(500) < deadline {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    peak_kib = peak_kib.max(rss_kib());
                }
                tokio::time::sleep_until(deadline).await;
                let measured = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0, peak_kib);
                while let Some(r) = set.join_next().await {
                    r.unwrap();
                }
                measured
            });
            let done = completed.load(Ordering::Relaxed);
            let share = 100.0 * cpu / wall;
            // The target is read against one core (CPU seconds per wall second); the share of
            // the whole machine is printed beside it for context.
            let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
            if provider_only {
                provider_share = share;
                println!("{n:>5} in flight, mock provider alone: {share:.2} % of wall on one core");
                continue;
            }
            let per_sim_mb = (peak - rss_baseline).max(0.0) / 1024.0 / n as f64;
            println!(
                "{n:>5} in flight: {done} simulations in {wall:.2} s, CPU {cpu:.3} s = {share:.2} % \
                 of wall on one core (target ≤ 5 %; {:.2} % of all {cores} cores; the harness \
                 beyond the mock provider {:.2} %), {:.3} ms CPU per simulation, memory \
                 {per_sim_mb:.3} MB per in-flight simulation (target ≤ 2 MB)",
                share / cores as f64,
                share - provider_share,
                1e3 * cpu / done.max(1) as f64
            );
        }
    }
}
