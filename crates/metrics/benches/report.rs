//! Benchmarks of `report` (targets on the project's 2-core machine):
//!
//! - `full`: 1,000,000 full records (realistic trajectories, GBs of JSON lines) in a temporary
//!   run directory: `report` from the records, streamed (peak RSS ≤ 1 GB), then from the
//!   columnar sidecar written for them (≤ 2 s). Each measurement runs in a fresh child
//!   process, so its peak RSS (`VmHWM`) is its own.
//! - `trials`: one cell with 20,000 trials per task (≤ 2 s).
//! - `memory`: 1,000,000 slim records already in memory (summarised, then reported).
//!
//! Run with `cargo bench -p tauguard-metrics`. `TAUGUARD_BENCH_PHASE=full|trials|memory` runs
//! one part; `TAUGUARD_BENCH_RECORDS` (records of `full` and `memory`),
//! `TAUGUARD_BENCH_TEXT_BYTES` (message text per full record, default 2,000) and
//! `TAUGUARD_BENCH_TRIAL_TASKS` (tasks of `trials`, default 50) resize them.
//! `TAUGUARD_BENCH_KEEP=1` keeps the run directory of `full` (to profile a child on it:
//! `TAUGUARD_BENCH_CHILD=sidecar TAUGUARD_BENCH_DIR=<dir> perf record <bench binary>`).

use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tauguard_core::SplitMix64;
use tauguard_metrics::{
    Format, LoadOptions, ReportOptions, load_summaries, report, report_summaries, summarise,
    write_sidecar,
};
use tauguard_testkit::synthetic::{Population, add_trajectory};

#[global_allocator]
static ALLOCATOR: tauguard_alloc::Allocator = tauguard_alloc::Allocator;

const TARGET_SECONDS: f64 = 2.0;
const TARGET_RSS_MB: f64 = 1000.0;

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU seconds (user + system) used by this process so far, from `/proc/self/stat` (Linux;
/// 0 elsewhere). Other jobs on a shared machine inflate wall time, not this.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Peak resident set size of this process in MB (`VmHWM`; 0 where unavailable).
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    tauguard_alloc::keep_freed_memory();
    if let Ok(child) = std::env::var("TAUGUARD_BENCH_CHILD") {
        let dir = PathBuf::from(std::env::var("TAUGUARD_BENCH_DIR").expect("bench dir"));
        measure_child(&child, &dir);
        return;
    }
    let phase = std::env::var("TAUGUARD_BENCH_PHASE").unwrap_or_default();
    let n = env_num("TAUGUARD_BENCH_RECORDS", 1_000_000);
    if phase.is_empty() || phase == "full" {
        full_records(n, env_num("TAUGUARD_BENCH_TEXT_BYTES", 2_000));
    }
    if phase.is_empty() || phase == "trials" {
        many_trials(env_num("TAUGUARD_BENCH_TRIAL_TASKS", 50), 20_000);
    }
    if phase.is_empty() || phase == "memory" {
        in_memory(n);
    }
}

/// Writes `n` full records into `dir/records.jsonl`; returns its size in bytes.
fn write_full_records(dir: &Path, n: usize, text_bytes: usize) -> u64 {
    let path = dir.join("records.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).expect("create records"));
    let pop = Population::new(n);
    let mut rng = SplitMix64::new(7);
    let mut it = pop.iter();
    loop {
        let mut chunk: Vec<_> = it.by_ref().take(8192).collect();
        if chunk.is_empty() {
            break;
        }
        for r in &mut chunk {
            add_trajectory(r, &mut rng, text_bytes);
        }
        let lines: Vec<Vec<u8>> = chunk
            .par_iter()
            .map(|r| {
                let mut v = serde_json::to_vec(r).expect("serialize record");
                v.push(b'\n');
                v
            })
            .collect();
        for l in lines {
            w.write_all(&l).expect("write record");
        }
    }
    w.flush().expect("flush records");
    std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)
}

fn run_child(kind: &str, dir: &Path) -> String {
    let out = std::process::Command::new(std::env::current_exe().expect("bench binary"))
        .env("TAUGUARD_BENCH_CHILD", kind)
        .env("TAUGUARD_BENCH_DIR", dir)
        .output()
        .expect("run bench child");
    assert!(
        out.status.success(),
        "{kind} child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// In a child process: load the run directory (records, or the fresh sidecar), report and
/// render; prints the figures and writes the JSON report for comparison.
fn measure_child(kind: &str, dir: &Path) {
    let has_sidecar = tauguard_metrics::fresh_manifest(&dir.join("records.jsonl"));
    assert_eq!(has_sidecar.is_some(), kind == "sidecar", "sidecar state");
    let (t, c) = (Instant::now(), cpu_seconds());
    let sims = load_summaries(&[dir], &LoadOptions::default()).expect("load");
    let load = t.elapsed().as_secs_f64();
    let rep = report_summaries(&sims, &ReportOptions::default());
    let md = rep.render(Format::Md);
    let json = rep.render(Format::Json);
    let total = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c;
    assert!(!md.is_empty() && rep.groups.len() == 72);
    std::fs::write(dir.join(format!("report-{kind}.json")), json).expect("write json");
    println!(
        "{} simulations: load {load:.3} s + report {:.3} s = {total:.3} s wall ({cpu:.2} CPU-s), peak RSS {:.0} MB",
        sims.len(),
        total - load,
        peak_rss_mb()
    );
}

fn full_records(n: usize, text_bytes: usize) {
    let dir = std::env::temp_dir().join(format!("tauguard-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let t = Instant::now();
    let size = write_full_records(&dir, n, text_bytes);
    println!(
        "full: wrote {n} records ({:.0} MB of JSON lines, {:.0} bytes each) in {:.1} s",
        size as f64 / 1e6,
        size as f64 / n as f64,
        t.elapsed().as_secs_f64()
    );
    let from_records = run_child("records", &dir);
    let peak = from_records
        .rsplit_once("peak RSS ")
        .and_then(|(_, r)| r.trim_end_matches(" MB").parse::<f64>().ok())
        .unwrap_or(0.0);
    println!(
        "full: report from records (streamed): {from_records} = {:.2}× the {TARGET_RSS_MB} MB RSS target",
        peak / TARGET_RSS_MB
    );
    let t = Instant::now();
    let files = write_sidecar(&dir.join("records.jsonl")).expect("write sidecar");
    let sidecar_mb: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "full: sidecar written in {:.1} s ({:.0} MB)",
        t.elapsed().as_secs_f64(),
        sidecar_mb as f64 / 1e6
    );
    let from_sidecar = run_child("sidecar", &dir);
    let secs = from_sidecar
        .split(" = ")
        .nth(1)
        .and_then(|r| r.split(" s wall").next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    println!(
        "full: report from the sidecar: {from_sidecar} = {:.2}× the {TARGET_SECONDS} s target",
        secs / TARGET_SECONDS
    );
    let a = std::fs::read_to_string(dir.join("report-records.json")).expect("records report");
    let b = std::fs::read_to_string(dir.join("report-sidecar.json")).expect("sidecar report");
    assert_eq!(a, b, "the sidecar's report differs from the records'");
    println!("full: the two reports are identical");
    if std::env::var_os("TAUGUARD_BENCH_KEEP").is_some() {
        println!("full: kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn many_trials(tasks: usize, trials: u32) {
    let pop = Population {
        records: tasks * trials as usize,
        domains: vec!["airline"],
        agents: vec!["gpt-5.4"],
        guards: vec!["pg-checklist"],
        trials,
        seed: 11,
    };
    let mut sims = Vec::with_capacity(pop.records);
    let mut it = pop.iter();
    loop {
        let chunk: Vec<_> = it.by_ref().take(65_536).collect();
        if chunk.is_empty() {
            break;
        }
        sims.extend(summarise(&chunk));
    }
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let rep = report_summaries(&sims, &ReportOptions::default());
        let md = rep.render(Format::Md);
        best = best.min(t.elapsed().as_secs_f64());
        assert!(!md.is_empty() && rep.groups.len() == 1);
        // Infrastructure errors (1 in 500) are excluded: a task keeps nearly all its trials.
        let most = rep.groups[0].overall.max_trials_per_task;
        assert!(most <= trials && most > trials - trials / 100, "{most}");
    }
    println!(
        "trials: one cell, {tasks} tasks × {trials} trials ({} simulations): report {best:.3} s (best of 3) = {:.2}× the {TARGET_SECONDS} s target",
        sims.len(),
        best / TARGET_SECONDS
    );
}

fn in_memory(n: usize) {
    let records = Population::new(n).generate();
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    for _ in 0..3 {
        let (t, c) = (Instant::now(), cpu_seconds());
        let rep = report(&records, &ReportOptions::default());
        let md = rep.render(Format::Md);
        best = best.min(t.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(cpu_seconds() - c);
        assert!(!md.is_empty() && rep.groups.len() == 72);
    }
    println!(
        "memory: report of {n} slim records in memory (summarised, best of 3): {best:.3} s wall ({best_cpu:.2} CPU-s on {} threads) = {:.2}× the {TARGET_SECONDS} s target",
        rayon::current_num_threads(),
        best / TARGET_SECONDS
    );
}
