//! `report` on a τ²-bench `results.json` equals upstream's own metrics for that file.
//!
//! The fixture `fixtures/tau2_results_small.json` and the expected numbers come from
//! `fixtures/make_results.py`, which writes the file in upstream's layout and computes pass^k
//! the way `tau2/metrics/agent_metrics.py` does. It covers an infrastructure error (excluded;
//! lowers max_k to 3), a null `reward_info` (a failure), a reward within 1e-6 of 1 (a success)
//! and 0.999 (a failure).

use std::path::{Path, PathBuf};
use tauguard_core::record::Slice;
use tauguard_metrics::{
    Format, LoadOptions, ReportOptions, load_inputs, load_summaries, report, summarise,
};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau2_results_small.json")
}

/// Printed by `make_results.py`.
const UPSTREAM_PASS_HAT: [f64; 3] = [0.7083333333333334, 0.5277777777777778, 0.4166666666666667];
const UPSTREAM_AVG_REWARD: f64 = 0.7726817954545454;

#[test]
fn pass_k_equals_upstream() {
    let records = load_inputs(&[fixture()]).unwrap();
    assert_eq!(records.len(), 24);
    let rep = report(&records, &ReportOptions::default());
    assert_eq!(rep.groups.len(), 1);
    let g = &rep.groups[0];
    assert_eq!(
        (g.domain.as_str(), g.agent_model.as_str(), g.guard.as_str()),
        ("airline", "gpt-5.4", "baseline")
    );
    assert_eq!(g.overall.n_tasks, 6);
    assert_eq!(g.overall.n_simulations, 23);
    assert_eq!(g.overall.infra_errors, 1);
    assert_eq!(
        g.overall.pass_k.0.len(),
        3,
        "max_k lowered to the smallest task count"
    );
    for (got, want) in g.overall.pass_k.0.iter().zip(UPSTREAM_PASS_HAT) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    assert!((g.avg_reward.unwrap() - UPSTREAM_AVG_REWARD).abs() < 1e-12);
    assert!(
        !rep.warnings.is_empty(),
        "unequal trial counts are reported"
    );
}

#[test]
fn slices_turns_and_calls_of_the_import() {
    let records = load_inputs(&[fixture()]).unwrap();
    let slice_of = |t: &str| records.iter().find(|r| r.task_id == t).unwrap().slice;
    assert_eq!(slice_of("0"), Slice::Pv);
    assert_eq!(slice_of("1"), Slice::Mut);
    assert_eq!(slice_of("2"), Slice::Pv);
    assert_eq!(slice_of("4"), Slice::Pv, "transfer is not a mutating call");
    let r = records
        .iter()
        .find(|r| r.task_id == "3" && r.trial == 0)
        .unwrap();
    assert_eq!((r.agent_turns, r.user_turns), (4, 2));
    assert_eq!(r.call_attempts.len(), 1);
    assert_eq!(r.call_attempts[0].tool, "book_reservation");
    assert!(r.call_attempts[0].executed && r.call_attempts[0].verdict.is_none());

    let rep = report(&records, &ReportOptions::default());
    let g = &rep.groups[0];
    // PV: tasks 0 (4/4), 2 (1/4), 4 (3/4); Mut: 1 (3/4), 3 (2/4), 5 (3/3).
    let pv = [
        (4.0 + 1.0 + 3.0) / 12.0,
        (1.0 + 0.0 + 0.5) / 3.0,
        (1.0 + 0.0 + 0.25) / 3.0,
    ];
    let mu = [
        (0.75 + 0.5 + 1.0) / 3.0,
        (0.5 + 1.0 / 6.0 + 1.0) / 3.0,
        (0.25 + 0.0 + 1.0) / 3.0,
    ];
    for (got, want) in g.pv.pass_k.0.iter().zip(pv) {
        assert!((got - want).abs() < 1e-12, "pv {got} vs {want}");
    }
    for (got, want) in g.mut_.pass_k.0.iter().zip(mu) {
        assert!((got - want).abs() < 1e-12, "mut {got} vs {want}");
    }
    assert_eq!((g.pv.n_tasks, g.mut_.n_tasks), (3, 3));
    // Mut sims have 4 assistant + 2 user messages; the infra error is excluded.
    assert_eq!(
        g.measures
            .value::<tauguard_metrics::TurnStats>("turns")
            .unwrap()
            .mut_simulations,
        11
    );
    assert_eq!(
        g.measures
            .value::<tauguard_metrics::TurnStats>("turns")
            .unwrap()
            .mean_turns,
        Some(6.0)
    );
    // Baseline: 11 executed attempts on Mut tasks, none on PV: runtime view all TN.
    let confusion = (g.measures)
        .value::<tauguard_metrics::ConfusionViews>("confusion")
        .unwrap();
    assert_eq!(confusion.runtime.tn, 11);
    assert_eq!(confusion.verdict.attempts(), 0);
    // No prerequisite information upstream: call-NMR unknown.
    let nmr = (g.measures)
        .value::<tauguard_metrics::CallNmrViews>("call_nmr")
        .unwrap();
    assert_eq!(nmr.all.unknown, 11);
    assert_eq!(nmr.all.rate(), None);
    assert!((g.cost_per_simulation["agent"].expect("priced") - 0.05).abs() < 1e-12);

    let json = rep.render(Format::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["pass_k"]["1"].as_f64(), Some(UPSTREAM_PASS_HAT[0]));
    assert_eq!(v[0]["infra_errors"], 1);
}

#[test]
fn infra_as_failure_option() {
    let records = load_inputs(&[fixture()]).unwrap();
    let opts = ReportOptions {
        infra: tauguard_metrics::InfraPolicy::AsFailure,
        ..ReportOptions::default()
    };
    let g = &report(&records, &opts).groups[0];
    assert_eq!(g.overall.n_simulations, 24);
    assert_eq!(g.overall.infra_errors, 1);
    // Task 5 becomes 3/4: pass^1 = (4.25 - 1 + 0.75) / 6.
    assert!((g.overall.pass_k.0[0] - 4.0 / 6.0).abs() < 1e-12);
    assert_eq!(g.overall.pass_k.0.len(), 4);
}

#[test]
fn tauguard_provenance_reads_back_per_simulation_then_per_file() {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    doc["info"]["tauguard"] = serde_json::json!({
        "run_id": "grid", "cell_id": "airline|sim-agent|toolguard", "guard": "toolguard",
        "config_hash": "c0", "cell_hash": "h1", "cell": {"guard": "toolguard", "seed": 300},
    });
    let sims = doc["simulations"].as_array_mut().unwrap();
    sims[0]["info"] =
        serde_json::json!({"tauguard": {"guard": "hybrid", "cell_hash": "h2", "slice": "mut"}});
    let dir = std::env::temp_dir().join(format!("tauguard-provenance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("results.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    let records = load_inputs(&[&p]).unwrap();
    let first = &records[0];
    assert_eq!(
        (first.guard.as_str(), first.cell_hash.as_str()),
        ("hybrid", "h2")
    );
    assert_eq!(
        first.slice,
        Slice::Mut,
        "the recorded slice wins over the derived one"
    );
    let rest = &records[1];
    assert_eq!(
        (
            rest.guard.as_str(),
            rest.run_id.as_str(),
            rest.cell_hash.as_str(),
            rest.config_hash.as_str()
        ),
        ("toolguard", "grid", "h1", "c0")
    );
    assert_eq!(rest.cell["seed"], 300);
    let rep = report(&records, &ReportOptions::default());
    let mut guards: Vec<&str> = rep.groups.iter().map(|g| g.guard.as_str()).collect();
    guards.sort_unstable();
    assert_eq!(guards, ["hybrid", "toolguard"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The import reads `simulations` one at a time, in the same pass when `timestamp`, `info`
/// and `tasks` come first (upstream's order) and in a second pass otherwise: both give the
/// same records, and the summaries `report` loads are those of the records.
#[test]
fn the_import_is_the_same_whatever_the_key_order() {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = doc.keys().map(String::as_str).collect();
    assert_eq!(
        keys[..4],
        ["timestamp", "info", "tasks", "simulations"],
        "upstream's order"
    );
    let in_order = load_inputs(&[fixture()]).unwrap();
    let dir = std::env::temp_dir().join(format!("tauguard-key-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("results.json");
    // The array first; then the timestamp last (one key every simulation reads comes late).
    for moved in [("simulations", 0), ("timestamp", keys.len() - 1)] {
        let mut order = keys.clone();
        order.retain(|k| *k != moved.0);
        order.insert(moved.1, moved.0);
        let reordered: serde_json::Map<String, serde_json::Value> = order
            .iter()
            .map(|k| (k.to_string(), doc[*k].clone()))
            .collect();
        std::fs::write(&p, serde_json::Value::Object(reordered).to_string()).unwrap();
        let records = load_inputs(&[&p]).unwrap();
        assert_eq!(records.len(), in_order.len(), "{order:?}");
        for (a, b) in records.iter().zip(&in_order) {
            let (mut a, b) = (a.clone(), b);
            a.run_id = b.run_id.clone();
            assert_eq!(
                &a, b,
                "{order:?}: the run id names the file, the rest is equal"
            );
        }
    }
    let sims = load_summaries(&[fixture()], &LoadOptions::default()).unwrap();
    assert_eq!(sims, summarise(&in_order));
    let _ = std::fs::remove_dir_all(&dir);
}
