//! The offline stand-ins are honest: with no faults no offline guard blocks the sim agent in
//! any domain, and call-NMR is labelled by the independent oracle
//! (`tasks/<domain>/nmr_oracle.toml`), not by the rules the offline guards judge with.

use crate::support::{parse, run_records, run_to};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tauguard_core::message::{Message, ParticipantMessage, ToolMessage};
use tauguard_core::record::{CallAttempt, GuardEvent, SimulationRecord, Verdict};
use tauguard_core::{Requestor, ToolCall};
use tauguard_env::registry::DOMAINS;
use tauguard_guards::{
    DomainChecklists, GuardName, KNOWN_GUARDS, Prerequisites, SimVerifier, Variant,
};
use tauguard_orchestrator::NmrOracle;
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::label_missing_prerequisites;

/// A grid of every guard configuration there is ([`KNOWN_GUARDS`], strict variants included)
/// on `domain`.
fn grid(data: &Path, domain: &str, trials: u32, faults: &str) -> RunConfig {
    let builder = tauguard_testkit::SimConfig::new("honest", domain, data)
        .trials(trials)
        .seed(300)
        .run_line("concurrency = 4")
        .faults(faults)
        .guards(KNOWN_GUARDS);
    parse("honest.toml", &builder)
}

fn run_grid(cfg: RunConfig) -> Vec<SimulationRecord> {
    let tmp = tempfile::tempdir().unwrap();
    let s = run_to(cfg, tmp.path()).unwrap();
    assert_eq!(s.infra_errors, 0);
    run_records(tmp.path())
}

/// Whether every requirement a blocking event found NOT MET is one its verifier could not see
/// (`info.unseen`).
fn unseen_only(e: &GuardEvent) -> bool {
    let unseen: Vec<&str> = e
        .info
        .as_ref()
        .and_then(|i| i.get("unseen"))
        .and_then(|u| u.as_array())
        .map(|u| u.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    !unseen.is_empty()
        && e.requirements
            .iter()
            .filter(|q| !q.met)
            .all(|q| unseen.contains(&q.name.as_str()))
}

/// Tasks whose NL assertion quotes a knowledge-base fact the sim agent cannot say: task_102's
/// "4-year company age limit" is in the banking knowledge base, not in the task's
/// `communicate_info`. Every grid cell of these tasks still has the baseline's reward (above).
const SIM_AGENT_NEVER_SAYS: &[(&str, &str)] = &[("banking_knowledge", "task_102")];

/// Fault-free means unblocked: every guard's false positives on the sim agent are zero in
/// every registered domain with guard artifacts (base split, 4 trials): a guard blocks only
/// what its inputs cannot show (then it blocks, as a verifier with those inputs would), ends
/// every other simulation with the baseline's reward, and none fails an NL assertion.
#[test]
fn no_offline_guard_blocks_the_fault_free_sim_agent() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let tasks_dir = tauguard_testkit::workspace_root().join("tasks");
    let mut domains = 0;
    for domain in DOMAINS.iter().map(|d| d.name()) {
        // A registered domain without guard artifacts (the toy domain) has no guard to run.
        if !tasks_dir.join(domain).is_dir() {
            continue;
        }
        domains += 1;
        let recs = run_grid(grid(&dir, domain, 4, ""));
        let tasks = recs
            .iter()
            .map(|r| &r.task_id)
            .collect::<BTreeSet<_>>()
            .len();
        assert_eq!(recs.len(), tasks * 4 * KNOWN_GUARDS.len(), "{domain}");
        let guards: BTreeSet<&str> = recs.iter().map(|r| r.guard.as_str()).collect();
        assert_eq!(guards.len(), KNOWN_GUARDS.len(), "{domain}: {guards:?}");
        // The floor blocks every mutating call by definition; a verifier blocks what its
        // inputs cannot show (a confirmation without the dialogue: `info.unseen`), as one
        // with those inputs would. Any other block is a false positive.
        let floor = |r: &SimulationRecord| GuardName::parse(&r.guard) == Ok(GuardName::BlockAll);
        let blind = |r: &SimulationRecord| {
            r.guard_events
                .iter()
                .any(|e| e.verdict == Verdict::Block && unseen_only(e))
        };
        let blocks: Vec<String> = recs
            .iter()
            .flat_map(|r| r.guard_events.iter().map(move |e| (r, e)))
            .filter(|(_, e)| e.verdict == Verdict::Block && !unseen_only(e))
            .filter(|(r, _)| !floor(r))
            .map(|(r, e)| {
                let not_met: Vec<&str> = e
                    .requirements
                    .iter()
                    .filter(|q| !q.met)
                    .map(|q| q.name.as_str())
                    .collect();
                format!("{} task {} {}: {not_met:?}", r.guard, r.task_id, e.tool)
            })
            .collect();
        assert!(
            blocks.is_empty(),
            "{domain}: {} blocks: {blocks:#?}",
            blocks.len()
        );
        assert!(recs.iter().all(|r| r.behaviour_events.is_empty()));
        // Every record's cell settings say where the domain's guard artifacts came from.
        for r in &recs {
            let origin = r.cell.get("artifacts.origin").and_then(|v| v.as_str());
            assert!(
                origin.is_some_and(|o| o.contains("workflow=hand-written")),
                "{domain}: {origin:?}"
            );
        }
        // Unblocked means the same outcome as no guard, task by task and trial by trial.
        let reward = |r: &SimulationRecord| r.reward.as_ref().map(|w| w.reward);
        let baseline: BTreeMap<(&str, u32), Option<f64>> = recs
            .iter()
            .filter(|r| r.guard == "baseline")
            .map(|r| ((r.task_id.as_str(), r.trial), reward(r)))
            .collect();
        let differ: Vec<String> = recs
            .iter()
            .filter(|r| !floor(r) && !blind(r))
            .filter(|r| baseline[&(r.task_id.as_str(), r.trial)] != reward(r))
            .map(|r| format!("{} task {} trial {}", r.guard, r.task_id, r.trial))
            .collect();
        assert!(differ.is_empty(), "{domain}: {differ:#?}");
        // No fault-free simulation fails an NL assertion: the sim judge reads what the agent
        // said, whatever the format of its amounts. The one exception is named: an assertion
        // on a knowledge-base fact the sim agent never retrieves or says (it speaks only a
        // task's `communicate_info`), which fails with no guard too.
        let nl_failed: Vec<String> = recs
            .iter()
            .filter(|r| !floor(r) && !blind(r))
            .filter(|r| !SIM_AGENT_NEVER_SAYS.contains(&(domain, r.task_id.as_str())))
            .filter_map(|r| r.reward.as_ref().map(|w| (r, w)))
            .filter(|(_, w)| {
                let nl = w.breakdown.get("NL_ASSERTION").and_then(|v| v.as_f64());
                nl.is_some_and(|x| x < 1.0)
            })
            .map(|(r, w)| {
                format!(
                    "{} task {}: {}",
                    r.guard, r.task_id, w.details["nl_assertions"]
                )
            })
            .collect();
        assert!(nl_failed.is_empty(), "{domain}: {nl_failed:#?}");
        // What a variant cannot see it does not pass: where the policy asks for confirmations
        // (airline), pg-raw-traj, without the dialogue, passes fewer simulations than pg-raw.
        let passed = |g: &str| {
            recs.iter()
                .filter(|r| r.guard == g && r.reward.as_ref().is_some_and(|w| w.reward >= 1.0))
                .count()
        };
        if domain == "airline" {
            assert!(
                passed("pg-raw-traj") < passed("pg-raw"),
                "pg-raw-traj {} / pg-raw {}",
                passed("pg-raw-traj"),
                passed("pg-raw")
            );
        }
    }
    assert!(domains >= 4, "{domains} domains with guard artifacts");
}

fn assistant_call(id: &str, name: &str, args: serde_json::Value) -> Message {
    Message::Assistant(ParticipantMessage {
        tool_calls: Some(vec![ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.as_object().unwrap().clone(),
            requestor: Requestor::Assistant,
        }]),
        ..Default::default()
    })
}

/// The agent's `get_reservation_details` call `id` for `reservation`, and its result.
fn reservation_lookup(id: &str, reservation: &str) -> [Message; 2] {
    [
        assistant_call(
            id,
            "get_reservation_details",
            json!({"reservation_id": reservation}),
        ),
        ok(id),
    ]
}

fn ok(id: &str) -> Message {
    Message::Tool(ToolMessage {
        id: id.into(),
        content: "{}".into(),
        requestor: Requestor::Assistant,
        error: false,
        turn_idx: None,
        timestamp: None,
        guard_blocked: false,
    })
}

fn attempt(id: &str, tool: &str) -> CallAttempt {
    serde_json::from_value(json!({
        "call_id": id, "tool": tool, "requestor": "assistant", "verdict": null,
        "executed": true
    }))
    .unwrap()
}

fn oracle(domain: &str) -> NmrOracle {
    NmrOracle::load_domain(&tauguard_testkit::workspace_root().join("tasks"), domain)
        .unwrap()
        .expect("the authored oracle")
}

/// What `domain`'s oracle labels the mutating call `m` (a `tool` call) of `messages` as
/// lacking; it must label the call.
fn lacking(tool: &str, messages: &[Message], domain: &str) -> Vec<String> {
    let mut attempts = vec![attempt("m", tool)];
    label_missing_prerequisites(&mut attempts, messages, &oracle(domain));
    attempts
        .remove(0)
        .missing_prerequisites
        .expect("the call is labelled")
}

#[test]
fn a_call_missing_a_required_read_is_labelled_lacking() {
    let cancel = || {
        assistant_call(
            "m",
            "cancel_reservation",
            json!({"reservation_id": "NO6JO3"}),
        )
    };
    // No reservation lookup before the cancellation.
    let mut messages = vec![
        assistant_call("r1", "get_user_details", json!({"user_id": "u1"})),
        ok("r1"),
        cancel(),
        ok("m"),
    ];
    assert_eq!(
        lacking("cancel_reservation", &messages, "airline"),
        ["read:get_reservation_details", "link:reservation_id"]
    );
    // The lookup for another reservation does not link; the right one does.
    messages.splice(2..2, reservation_lookup("r2", "ZZZZZZ"));
    assert_eq!(
        lacking("cancel_reservation", &messages, "airline"),
        ["link:reservation_id"]
    );
    messages.splice(4..4, reservation_lookup("r3", "NO6JO3"));
    assert!(lacking("cancel_reservation", &messages, "airline").is_empty());
    // Every domain's oracle parses and covers every tool of its prerequisites file.
    for d in ["airline", "retail", "telecom"] {
        let o = oracle(d);
        let p = Prerequisites::load_domain(&tauguard_testkit::workspace_root().join("tasks"), d)
            .unwrap();
        assert!(p.tools.keys().all(|t| o.tools.contains_key(t)), "{d}");
        assert!(o.tools.values().all(|t| !t.policy.is_empty()), "{d}");
    }
}

/// Not 0 % by construction: a call an offline verifier passes because its inputs state no
/// read rule is still labelled lacking by the oracle.
#[test]
fn a_read_skip_a_verifier_cannot_see_is_still_counted() {
    let prereqs =
        Prerequisites::load_domain(&tauguard_testkit::workspace_root().join("tasks"), "retail")
            .unwrap();
    // pg-checklist-only with no checklist: nothing states the prerequisites.
    let blind = SimVerifier::new(
        Variant::ChecklistOnly,
        false,
        prereqs,
        DomainChecklists::default(),
    );
    let messages = vec![
        assistant_call("i", "find_user_id_by_email", json!({"email": "a@b.c"})),
        ok("i"),
        assistant_call(
            "m",
            "cancel_pending_order",
            json!({"order_id": "#W1", "reason": "ordered by mistake"}),
        ),
        ok("m"),
    ];
    let Message::Assistant(p) = &messages[2] else {
        unreachable!()
    };
    let call = &p.tool_calls.as_ref().unwrap()[0];
    let d = blind.decide(call, blind.evaluate(&messages[..3], call, &|_| true));
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(
        lacking("cancel_pending_order", &messages, "retail"),
        ["read:get_order_details", "link:order_id"]
    );
}

/// The recovery behaviours run end to end on the fixture domain: every event is labelled in
/// `behaviour_events`, a rerun gives the same records, and a record without events carries no
/// such key.
#[test]
fn recovery_behaviours_are_labelled_and_deterministic() {
    let builder =
        tauguard_testkit::SimConfig::new("behaviours", "airline", &crate::support::fixture_dir())
            .trials(4)
            .seed(11)
            .faults(
                "skip_confirmation = 0.5\nskip_prerequisite = 0.5\nretry_unchanged = 0.5\n\
             abandon_after_block = 0.5",
            )
            .user(
                "provider = \"sim\"\nmodel = \"sim-user\"\n[models.user.behaviour]\n\
             decline = 0.25\nhesitate = 0.5\ncorrect = 0.5",
            )
            .guards(&["baseline", "pg-checklist"]);
    let cfg = || parse("behaviours.toml", &builder);
    // By guard first: the comparison sorts stably by (task, trial) after it.
    let by_guard = |mut r: Vec<SimulationRecord>| {
        r.sort_by(|x, y| x.guard.cmp(&y.guard));
        r
    };
    let (a, b) = (by_guard(run_grid(cfg())), by_guard(run_grid(cfg())));
    let kinds: std::collections::BTreeSet<&str> = a
        .iter()
        .flat_map(|r| r.behaviour_events.iter().map(|e| e.kind.as_str()))
        .collect();
    for kind in [
        "user_declined",
        "user_hesitated",
        "user_corrected",
        "retry_unchanged",
        "abandon_after_block",
    ] {
        assert!(kinds.contains(kind), "no `{kind}` event in {kinds:?}");
    }
    let (ta, tb) = (
        crate::run::without_timings(a.clone()),
        crate::run::without_timings(b),
    );
    for (x, y) in ta.iter().zip(&tb) {
        let keys: Vec<&String> = x
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| y.get(k.as_str()) != Some(v))
            .map(|(k, _)| k)
            .collect();
        assert!(
            keys.is_empty(),
            "a rerun differs in {keys:?}: {} / {}",
            x["task_id"],
            x["guard"]
        );
    }
    let quiet = a
        .iter()
        .find(|r| r.behaviour_events.is_empty())
        .expect("a record without events");
    assert!(
        serde_json::to_value(quiet)
            .unwrap()
            .get("behaviour_events")
            .is_none()
    );
}
