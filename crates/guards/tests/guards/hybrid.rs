//! The hybrid guard: the constraint layer first, the verifier only for calls that pass it.

use crate::support::{StubEnv, airline_rules, bare_context, rule_dir};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tauguard_core::record::{RequirementResult, RoleUsage};
use tauguard_core::{Requestor, ToolCall};
use tauguard_env::{DataDir, DomainData};
use tauguard_guards::{Decision, Guard, GuardContext, Hybrid, Ruling, ToolGuard, Verdict};

/// A verifier stand-in that counts its calls and answers a fixed verdict.
struct CountingVerifier {
    calls: AtomicUsize,
    verdict: Verdict,
}

impl CountingVerifier {
    fn new(verdict: Verdict) -> Arc<CountingVerifier> {
        Arc::new(CountingVerifier {
            calls: AtomicUsize::new(0),
            verdict,
        })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Guard for CountingVerifier {
    fn name(&self) -> &str {
        "stub-verifier"
    }
    fn on_mutating_call<'a>(
        &'a self,
        _ctx: &'a GuardContext<'a>,
        _call: &'a ToolCall,
    ) -> Ruling<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let met = self.verdict == Verdict::Pass;
        let req = vec![RequirementResult {
            name: "user_confirmation".into(),
            met,
            reason: "stub".into(),
        }];
        let mut d = if met {
            Decision::pass(req)
        } else {
            Decision::block(req, "Ask the user to confirm first.")
        };
        d.usage = RoleUsage {
            calls: 1,
            cost: Some(0.01),
            latency_seconds: 0.5,
            ..RoleUsage::default()
        };
        d.info = Some(json!({"stub": true}));
        d.into_ruling()
    }
}

fn booking(passengers: usize) -> ToolCall {
    let p = json!({"first_name": "A", "last_name": "B", "dob": "1990-01-01"});
    let Value::Object(arguments) = json!({"user_id": "u", "passengers": vec![p; passengers]})
    else {
        unreachable!()
    };
    ToolCall {
        id: format!("c{passengers}"),
        name: "book_reservation".into(),
        arguments,
        requestor: Requestor::Assistant,
    }
}

/// A one-rule ToolGuard (passenger cap), loaded from a rule directory.
fn passenger_cap() -> (tempfile::TempDir, ToolGuard) {
    let dir = rule_dir(
        "book_reservation.yaml",
        "tool: book_reservation\nrules:\n  - name: passenger_count\n    check: \"size(args.passengers) <= 5\"\n    message: At most five passengers.\n",
    );
    let rules = airline_rules(dir.path());
    (dir, ToolGuard::new(rules))
}

#[tokio::test]
async fn constraint_blocks_skip_the_verifier_and_passes_reach_it() {
    let (_dir, rules) = passenger_cap();
    let verifier = CountingVerifier::new(Verdict::Pass);
    let hybrid = Hybrid::new(Arc::new(rules), verifier.clone());
    assert_eq!(hybrid.name(), "hybrid");
    let env = StubEnv;
    let ctx = bare_context(&env);

    // Six passengers: the rule layer blocks; the verifier is never asked.
    let d = hybrid.on_mutating_call(&ctx, &booking(6)).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(d.remediation.as_deref(), Some("At most five passengers."));
    assert_eq!(d.requirements.len(), 1);
    assert!(!d.requirements[0].met);
    assert_eq!(d.usage, RoleUsage::default());
    let info = d.info.as_ref().unwrap();
    assert_eq!(info["verifier_called"], json!(false));
    assert_eq!(info["constraint_guard"], json!("toolguard"));
    assert_eq!(info["constraint"]["violated"], json!(["passenger_count"]));
    assert_eq!(verifier.calls(), 0);
    assert_eq!(hybrid.verifier_calls_saved(), 1);

    // Two passengers: the rule layer passes; the verifier decides; requirements merge.
    let d = hybrid.on_mutating_call(&ctx, &booking(2)).await.unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    let names: Vec<&str> = d.requirements.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["passenger_count", "user_confirmation"]);
    assert!(d.requirements.iter().all(|r| r.met));
    assert_eq!(d.usage.calls, 1);
    assert_eq!(d.usage.cost, Some(0.01));
    let info = d.info.as_ref().unwrap();
    assert_eq!(info["verifier_called"], json!(true));
    assert_eq!(info["verifier_guard"], json!("stub-verifier"));
    assert_eq!(info["verifier"], json!({"stub": true}));
    assert_eq!(verifier.calls(), 1);

    // Three more calls, two of them blocked by the rules.
    for n in [7, 3, 9] {
        hybrid.on_mutating_call(&ctx, &booking(n)).await.unwrap();
    }
    assert_eq!(verifier.calls(), 2);
    assert_eq!(hybrid.verifier_calls_saved(), 3);
    assert_eq!(hybrid.decisions(), 5);
}

#[tokio::test]
async fn a_verifier_block_is_the_hybrid_verdict() {
    let (_dir, rules) = passenger_cap();
    let verifier = CountingVerifier::new(Verdict::Block);
    let hybrid = Hybrid::new(Arc::new(rules), verifier.clone()).with_name("hybrid-pg-checklist");
    assert_eq!(hybrid.name(), "hybrid-pg-checklist");
    let env = StubEnv;
    let ctx = bare_context(&env);
    let d = hybrid.on_mutating_call(&ctx, &booking(1)).await.unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(
        d.remediation.as_deref(),
        Some("Ask the user to confirm first.")
    );
    assert_eq!(
        d.requirements
            .iter()
            .map(|r| (r.name.as_str(), r.met))
            .collect::<Vec<_>>(),
        [("passenger_count", true), ("user_confirmation", false)]
    );
    assert_eq!(d.info.as_ref().unwrap()["verifier_called"], json!(true));
    assert_eq!(hybrid.verifier_calls_saved(), 0);
    assert_eq!(verifier.calls(), 1);
}

#[tokio::test]
async fn hybrid_over_the_authored_airline_rules_on_the_fixture() {
    let root = tauguard_testkit::workspace_root();
    let dir = DataDir::resolve(Some(&root.join("tasks/fixtures"))).unwrap();
    let data = DomainData::load(&dir, "airline").unwrap();
    let env = data.fresh_env();
    let ctx = bare_context(env.as_ref());
    let rules = ToolGuard::load(&PathBuf::from(&root).join("tasks"), "airline").unwrap();
    let verifier = CountingVerifier::new(Verdict::Pass);
    let hybrid = Hybrid::new(Arc::new(rules), verifier.clone());
    let cancel = |id: &str| {
        let Value::Object(arguments) = json!({"reservation_id": id}) else {
            unreachable!()
        };
        ToolCall {
            id: id.into(),
            name: "cancel_reservation".into(),
            arguments,
            requestor: Requestor::Assistant,
        }
    };
    // FXA003 is ineligible (old basic economy, uninsured): blocked without a verifier call.
    let d = hybrid
        .on_mutating_call(&ctx, &cancel("FXA003"))
        .await
        .unwrap();
    assert_eq!(d.verdict, Verdict::Block);
    assert_eq!(verifier.calls(), 0);
    // FXA001 (business) passes the rules and goes to the verifier.
    let d = hybrid
        .on_mutating_call(&ctx, &cancel("FXA001"))
        .await
        .unwrap();
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(d.requirements.len(), 4);
    assert_eq!(verifier.calls(), 1);
    assert_eq!(hybrid.verifier_calls_saved(), 1);
}
