//! The toy domain (env feature `toy-domain`) goes through the whole pipeline — run with sim
//! models, then report — without any code outside its folder and its registry line knowing
//! it; and the metrics crate's own domain table agrees with the registry for every τ²-bench
//! domain, since metrics may not import env and keeps a copy.

use crate::support::run_in_process;
use std::collections::BTreeMap;
use std::path::Path;
use tauguard_env::registry::{self, DOMAINS, mutating_tools};
use tauguard_metrics::{DomainTable, ReportOptions, load_inputs, report};
use tauguard_orchestrator::RunConfig;
use tauguard_testkit::SimConfig;

fn toy_config(trials: u32) -> RunConfig {
    let text = SimConfig::new("toy", "toy", &tauguard_testkit::fixtures_dir())
        .trials(trials)
        .seed(300)
        .run_line("concurrency = 2")
        .toml();
    RunConfig::parse(Path::new("toy.toml"), &text).unwrap()
}

#[test]
fn toy_domain_runs_and_reports() {
    assert!(
        registry::get("toy").is_some(),
        "the toy-domain feature is not on"
    );
    let tmp = tempfile::tempdir().unwrap();
    let trials = 2;
    let summary = run_in_process(toy_config(trials), tmp.path());
    assert_eq!(
        (summary.planned, summary.completed, summary.infra_errors),
        (8, 8, 0)
    );

    let records = load_inputs(&[tmp.path()]).unwrap();
    assert_eq!(records.len(), 8);
    let mut slices = BTreeMap::new();
    for r in &records {
        assert_eq!(r.domain, "toy");
        assert!(!r.is_infra_error(), "task {}: {:?}", r.task_id, r.error);
        assert_eq!(
            r.termination_reason.as_str(),
            "user_stop",
            "task {}",
            r.task_id
        );
        let reward = r.reward.as_ref().unwrap_or_else(|| panic!("{}", r.task_id));
        assert_eq!(reward.reward, 1.0, "task {} trial {}", r.task_id, r.trial);
        assert!(r.injected_faults.is_empty());
        slices.insert(r.task_id.clone(), r.slice.as_str().to_string());
    }
    // Slices come from the registry's mutating tools: the refusal (y3) and the transfer (y4)
    // have no mutating gold call.
    assert_eq!(
        slices.into_iter().collect::<Vec<_>>(),
        [
            ("y1".to_string(), "mut".to_string()),
            ("y2".into(), "mut".into()),
            ("y3".into(), "pv".into()),
            ("y4".into(), "pv".into()),
        ]
    );
    // The borrow really happened: the mutating call is in the trajectory.
    let y1 = records.iter().find(|r| r.task_id == "y1").unwrap();
    assert!(
        y1.call_attempts
            .iter()
            .any(|c| c.tool == "borrow_book" && c.executed),
        "{:?}",
        y1.call_attempts
    );

    let rep = report(&records, &ReportOptions::default());
    assert_eq!(rep.groups.len(), 1);
    let g = &rep.groups[0];
    assert_eq!(
        (g.domain.as_str(), g.agent_model.as_str()),
        ("toy", "sim-agent")
    );
    assert_eq!((g.overall.n_tasks, g.overall.n_simulations), (4, 8));
    assert_eq!((g.pv.n_tasks, g.mut_.n_tasks), (2, 2));
    assert_eq!(g.overall.pass_k.0, vec![1.0; trials as usize]);
    assert_eq!(g.avg_reward, Some(1.0));
}

#[test]
fn metrics_domain_table_matches_the_registry() {
    let table = DomainTable::builtin();
    let mut registered = Vec::new();
    for d in DOMAINS.iter().filter(|d| d.name() != "toy") {
        let info = table
            .get(d.name())
            .unwrap_or_else(|| panic!("domains.json lacks `{}`", d.name()));
        let mutating: Vec<String> = mutating_tools(*d).map(str::to_string).collect();
        assert_eq!(info.mutating, mutating, "mutating tools of {}", d.name());
        assert_eq!(
            info.ordered_trace,
            d.ordered_gold_trace(),
            "ordered trace of {}",
            d.name()
        );
        registered.push(d.name());
    }
    assert_eq!(table.names().collect::<Vec<_>>(), registered);
    assert!(table.get("toy").is_none(), "the toy domain is test-only");
}
