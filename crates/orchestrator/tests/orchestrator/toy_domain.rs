//! The orchestrator's invariants hold for a domain it has never heard of: on the toy domain
//! (env feature `toy-domain`) with faults on, a live simulation's reward equals the reward of
//! replaying its stored trajectory, and injected faults cost rewards.

use crate::support::{fixture_dir, parse, run_records, run_to};
use tauguard_env::{DataDir, DomainData};
use tauguard_orchestrator::evaluate;
use tauguard_testkit::SimConfig;

#[test]
fn faulty_toy_runs_replay_to_their_rewards() {
    let fixtures = fixture_dir();
    let builder = SimConfig::new("toy", "toy", &fixtures)
        .trials(6)
        .seed(7)
        .run_line("concurrency = 2")
        .faults("corrupt_argument = 0.5\ncomply_forbidden = 0.5");
    let tmp = tempfile::tempdir().unwrap();
    let summary = run_to(parse("toy.toml", &builder), tmp.path()).unwrap();
    assert_eq!((summary.completed, summary.infra_errors), (24, 0));
    let recs = run_records(tmp.path());
    let data = DomainData::load(&DataDir::resolve(Some(&fixtures)).unwrap(), "toy").unwrap();
    let mut failed = 0;
    for r in &recs {
        let live = r.reward.as_ref().map(|x| x.reward);
        let task = data.tasks.iter().find(|t| t.id == r.task_id).unwrap();
        let again = evaluate(&data, task, &r.messages, r.termination_reason, None).unwrap();
        assert_eq!(
            Some(again.reward),
            live,
            "task {} trial {}",
            r.task_id,
            r.trial
        );
        if live != Some(1.0) {
            failed += 1;
            assert!(
                !r.injected_faults.is_empty(),
                "task {} trial {} failed without a fault",
                r.task_id,
                r.trial
            );
        }
    }
    assert!(failed > 0, "no fault cost a reward in 24 simulations");
}
