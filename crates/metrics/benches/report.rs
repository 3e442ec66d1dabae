//! Benchmark of `report` over 1,000,000 synthetic simulation records (target ≤ 2 s on the
//! project's 2-core machine): once on records in memory, once including parsing a temporary
//! `records.jsonl`. Run with `cargo bench -p tauguard-metrics`; `TAUGUARD_BENCH_RECORDS`
//! overrides the record count, `TAUGUARD_BENCH_PHASE=memory|jsonl` runs one part only.

use std::io::Write;
use std::time::Instant;
use tauguard_metrics::synthetic::Population;
use tauguard_metrics::{Format, ReportOptions, load_inputs, report};

const TARGET_SECONDS: f64 = 2.0;

/// CPU seconds (user + system) used by this process so far, from `/proc/self/stat` (Linux;
/// 0 elsewhere). Other jobs on a shared machine inflate wall time, not this.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let n: usize = std::env::var("TAUGUARD_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let t = Instant::now();
    let records = Population::new(n).generate();
    println!(
        "generated {} records in {:.2} s",
        records.len(),
        t.elapsed().as_secs_f64()
    );

    let phase = std::env::var("TAUGUARD_BENCH_PHASE").unwrap_or_default();
    let opts = ReportOptions::default();
    if phase != "jsonl" {
        in_memory(&records, &opts, n);
    }
    if phase != "memory" {
        through_jsonl(records, &opts);
    }
}

fn in_memory(records: &[tauguard_core::record::SimulationRecord], opts: &ReportOptions, n: usize) {
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    for _ in 0..5 {
        let (t, c) = (Instant::now(), cpu_seconds());
        let rep = report(records, opts);
        let md = rep.render(Format::Md);
        best = best.min(t.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(cpu_seconds() - c);
        assert!(!md.is_empty() && rep.groups.len() == 72);
    }
    println!(
        "report (in memory, best of 5): {best:.3} s wall ({best_cpu:.2} CPU-s on {} threads) for {n} records = {:.2}× the {TARGET_SECONDS} s target",
        rayon::current_num_threads(),
        best / TARGET_SECONDS
    );
}

fn through_jsonl(records: Vec<tauguard_core::record::SimulationRecord>, opts: &ReportOptions) {
    let path = std::env::temp_dir().join(format!("tauguard-bench-{}.jsonl", std::process::id()));
    {
        let file = std::fs::File::create(&path).expect("create temp file");
        let mut w = std::io::BufWriter::new(file);
        for r in &records {
            serde_json::to_writer(&mut w, r).expect("serialize record");
            w.write_all(b"\n").expect("write record");
        }
        w.flush().expect("flush");
    }
    drop(records);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let (t, c) = (Instant::now(), cpu_seconds());
    let loaded = load_inputs(&[&path]).expect("load records");
    let parse = t.elapsed().as_secs_f64();
    let parse_cpu = cpu_seconds() - c;
    let t2 = Instant::now();
    let rep = report(&loaded, opts);
    let _ = rep.render(Format::Json);
    let total = parse + t2.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c;
    let drop_start = Instant::now();
    drop(loaded);
    let drop_secs = drop_start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    println!(
        "load + report ({:.0} MB JSONL): parse {parse:.3} s ({parse_cpu:.2} CPU-s) + report {:.3} s = {total:.3} s wall ({cpu:.2} CPU-s) = {:.2}× the target (dropping records: {drop_secs:.3} s)",
        size as f64 / 1e6,
        total - parse,
        total / TARGET_SECONDS
    );
    let _ = std::io::stdout().flush();
}
