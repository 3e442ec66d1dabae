//! Airline environment benchmark (run with `cargo bench -p tauguard-env`): base DB load, a
//! fresh environment from the snapshot, one read-only call, one full gold evaluation (fresh
//! environment + gold replay + hash-equivalent comparison with a second replay), and the
//! SHA-256 of the whole database for reference. Prints the median of repeated runs and the
//! ratio to the 4 ms target for a full gold evaluation.

use std::hint::black_box;
use std::time::{Duration, Instant};
use tauguard_core::Requestor;
use tauguard_env::db_hash;
use tauguard_env::{DataDir, DomainData};
use tauguard_env::{initial_env, run_gold_actions};

fn median<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    let dir = match DataDir::resolve(Some(&tauguard_testkit::tau2_candidate())) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("airline bench needs the τ²-bench data: {e}");
            return;
        }
    };
    let load = median(5, || {
        black_box(DomainData::load(&dir, "airline").unwrap());
    });
    let data = DomainData::load(&dir, "airline").unwrap();
    let fresh = median(201, || {
        black_box(data.fresh_env());
    });
    let env = data.fresh_env();
    let mut args = serde_json::Map::new();
    args.insert("reservation_id".into(), "4WQ150".into());
    let read = median(201, || {
        let mut e = env.snapshot();
        black_box(
            e.dispatch(Requestor::Assistant, "get_reservation_details", &args)
                .unwrap(),
        );
    });
    // The heaviest gold task: the one with the most gold actions.
    let task = data
        .tasks
        .iter()
        .max_by_key(|t| t.gold_actions().len())
        .unwrap();
    let gold_eval = median(101, || {
        let mut predicted = initial_env(&data, task).unwrap();
        run_gold_actions(predicted.as_mut(), task);
        let mut gold = initial_env(&data, task).unwrap();
        run_gold_actions(gold.as_mut(), task);
        black_box(predicted.same_state(gold.as_ref()));
    });
    let full_hash = median(11, || {
        black_box(db_hash(&env.agent_db()));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("airline base DB load            {:>9.3} ms", ms(load));
    println!("fresh environment from snapshot {:>9.3} ms", ms(fresh));
    println!("one read-only call              {:>9.3} ms", ms(read));
    println!(
        "full gold evaluation (task {:>2}, {} actions) {:>9.3} ms  = {:.3} x the 4 ms target",
        task.id,
        task.gold_actions().len(),
        ms(gold_eval),
        ms(gold_eval) / 4.0
    );
    println!(
        "SHA-256 of the whole DB (reference, not on the evaluation path) {:>9.3} ms",
        ms(full_hash)
    );
}
