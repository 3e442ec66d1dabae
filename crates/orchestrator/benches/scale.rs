//! Runs at grid scale (run with `cargo bench -p tauguard-orchestrator --bench scale`), through
//! `runner::run` as `tauguard run` calls it, on the project's fixture airline domain (5 tasks)
//! with offline models, so it needs neither keys nor τ²-bench data:
//!
//! - **Durability cost.** A 20,000-simulation run written to a directory on disk (under
//!   `target/`) and to tmpfs (`/dev/shm`): records are flushed to the OS one by one and
//!   fsynced in groups, so the disk run should take at most 1.5× the tmpfs run. Prints both
//!   wall times and the ratio.
//! - **Memory bounded by concurrency.** A 200,000-simulation grid (ten seeds × 4,000 trials ×
//!   5 tasks): simulations start as slots free up, so the peak resident memory stays within
//!   150 MB however many are planned. Prints the peak (VmHWM).
//!
//! The grid runs first, in a fresh process state, so its peak is not an earlier run's.
//! `TAUGUARD_BENCH_SCALE=small` divides both sizes by ten for a quick look.

use std::path::{Path, PathBuf};
use std::time::Instant;
use tauguard_orchestrator::{RunConfig, RunOptions, Workload, build_runtime, run};
use tauguard_testkit::SimConfig;

#[global_allocator]
static ALLOCATOR: tauguard_alloc::Allocator = tauguard_alloc::Allocator;

fn config(name: &str, trials: u32, seeds: &[u64]) -> RunConfig {
    let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
    let text = SimConfig::new(name, "airline", &tauguard_testkit::fixtures_dir())
        .trials(trials)
        .run_line("split = \"base\"\nconcurrency = 64")
        .faults("skip_identity = 0.1\nskip_confirmation = 0.1")
        .guards(&["baseline"])
        .grid_line(&format!("seeds = [{}]", seeds.join(", ")))
        .toml();
    RunConfig::parse(Path::new("bench.toml"), &text).expect("bench config")
}

fn run_into(cfg: RunConfig, out: &Path) -> (usize, f64) {
    let _ = std::fs::remove_dir_all(out);
    let rt = build_runtime(Workload::Compute).expect("runtime");
    let opts = RunOptions {
        out_dir: Some(out.to_path_buf()),
        project_dir: Some(tauguard_testkit::workspace_root()),
        ..RunOptions::default()
    };
    let start = Instant::now();
    let summary = rt.block_on(run(cfg, opts)).expect("bench run");
    let secs = start.elapsed().as_secs_f64();
    // Counted streaming: reading the file whole would itself cost its size in memory (a
    // 200,000-simulation run writes about a gigabyte), and the peak is read after this.
    let lines = std::fs::File::open(out.join("records.jsonl"))
        .map(|f| std::io::BufRead::lines(std::io::BufReader::new(f)).count())
        .unwrap_or(0);
    let _ = summary;
    (lines, secs)
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    tauguard_alloc::keep_freed_memory();
    let small = std::env::var("TAUGUARD_BENCH_SCALE").as_deref() == Ok("small");
    let div = if small { 10 } else { 1 };
    let disk_root: PathBuf = tauguard_testkit::workspace_root().join("target/bench-scale");
    std::fs::create_dir_all(&disk_root).expect("bench directory on disk");

    // 200,000 simulations: 10 seeds × 4,000 trials × 5 tasks.
    let seeds: Vec<u64> = (1..=10).collect();
    let grid = disk_root.join("grid");
    let (n, secs) = run_into(config("bench-grid", 4000 / div, &seeds), &grid);
    let peak = peak_rss_mb();
    println!(
        "grid: {n} simulations in {secs:.1} s; peak RSS {peak:.0} MB (target ≤ 150 MB): {}",
        if peak <= 150.0 { "ok" } else { "OVER" }
    );
    let _ = std::fs::remove_dir_all(&grid);

    // 20,000 simulations on disk and on tmpfs.
    let cfg = || config("bench-durability", 4000 / div, &[300]);
    let (n_disk, disk) = run_into(cfg(), &disk_root.join("durability"));
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        println!("durability: {n_disk} simulations on disk in {disk:.2} s; no /dev/shm to compare");
        return;
    }
    let tmp = shm.join("tauguard-bench-durability");
    let (n_tmp, tmpfs) = run_into(cfg(), &tmp);
    let ratio = disk / tmpfs;
    println!(
        "durability: {n_disk} simulations on disk {disk:.2} s, {n_tmp} on tmpfs {tmpfs:.2} s, \
         ratio {ratio:.2} (target ≤ 1.5): {}",
        if ratio <= 1.5 { "ok" } else { "OVER" }
    );
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(disk_root.join("durability"));
}
