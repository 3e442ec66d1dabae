//! Benchmark of `report` over 1,000,000 synthetic simulation records (target ≤ 2 s on the
//! project's 2-core machine): once on records in memory, once including parsing a temporary
//! `records.jsonl`. Run with `cargo bench -p tauguard-metrics`; `TAUGUARD_BENCH_RECORDS`
//! overrides the record count.

use std::io::Write;
use std::time::Instant;
use tauguard_metrics::synthetic::Population;
use tauguard_metrics::{Format, ReportOptions, load_inputs, report};

const TARGET_SECONDS: f64 = 2.0;

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

    // In memory.
    let opts = ReportOptions::default();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let rep = report(&records, &opts);
        let md = rep.render(Format::Md);
        let secs = t.elapsed().as_secs_f64();
        best = best.min(secs);
        assert!(!md.is_empty() && rep.groups.len() == 72);
    }
    println!(
        "report (in memory): {best:.3} s for {n} records = {:.2}× the {TARGET_SECONDS} s target",
        best / TARGET_SECONDS
    );

    // Through a JSONL file.
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
    let t = Instant::now();
    let loaded = load_inputs(&[&path]).expect("load records");
    let parse = t.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let rep = report(&loaded, &opts);
    let _ = rep.render(Format::Json);
    let total = parse + t2.elapsed().as_secs_f64();
    let drop_start = Instant::now();
    drop(loaded);
    let drop_secs = drop_start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    println!(
        "load + report ({:.0} MB JSONL): parse {parse:.3} s + report {:.3} s = {total:.3} s = {:.2}× the target (dropping records: {drop_secs:.3} s)",
        size as f64 / 1e6,
        total - parse,
        total / TARGET_SECONDS
    );
}
