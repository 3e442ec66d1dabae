//! The offline guide advances from the saved positions of its request state, as PolicyGuide's
//! traverse does ("from each request's saved node"): a request granted at one generation
//! keeps its authorization at the next even where the whole history, read afresh, would no
//! longer grant it, and an authorization whose call has run is used up.

use crate::guide_support::{Sim, airline, cancel_call, turn3};
use crate::support::{agent, calls, root, tool_msg, user};
use std::sync::Arc;
use tauguard_guards::{Guard, GuardInputs, GuardName, GuardOptions, build_guard};

fn offline_guide() -> Arc<dyn Guard> {
    build_guard(
        GuardName::PolicyGuide { raw: false },
        GuardOptions::default(),
        &GuardInputs {
            tasks_dir: root().join("tasks"),
            prompts_dir: root().join("configs/prompts"),
            data: airline(),
            verifier: tauguard_llm::RoleModel::Sim,
            artifacts: None,
        },
    )
    .unwrap()
    .expect("a guide")
}

#[tokio::test]
async fn a_granted_request_keeps_its_authorization_until_its_call_has_run() {
    let guide = offline_guide();
    let sim = Sim::new(guide.as_ref());
    let cancel = "cancel_reservation".to_string();
    // Identified, reservation read, summary, yes: the cancellation is authorized.
    let e = sim.turn(&turn3()).await.unwrap();
    assert!(e.enabled_tools.contains(&cancel), "{e:#?}");
    // The agent summarises again and the user has not answered yes to that summary.
    let mut h = turn3();
    h.push(agent(
        "To be sure: NO6JO3 is cancelled and refunded in 5 to 7 business days. Confirm? (yes/no)",
    ));
    h.push(user("Hmm, let me think about it for a moment."));
    // From its saved position the request stays granted ...
    let e = sim.turn(&h).await.unwrap();
    assert!(e.enabled_tools.contains(&cancel), "{e:#?}");
    // ... where a guide reading the same history with no state would not grant it.
    let fresh = Sim::new(guide.as_ref());
    let e = fresh.turn(&h).await.unwrap();
    assert!(!e.enabled_tools.contains(&cancel), "{e:#?}");
    // Once the cancellation ran, the authorization is used: another cancellation walks the
    // procedure again (and the last summary has no yes after it).
    h.push(calls(&cancel_call()));
    h.push(tool_msg("c9", r#"{"status": "cancelled"}"#, false, false));
    h.push(agent(
        "NO6JO3 is cancelled. Confirm a second cancellation? (yes/no)",
    ));
    h.push(user("Also cancel my other reservation, please."));
    let e = sim.turn(&h).await.unwrap();
    assert!(!e.enabled_tools.contains(&cancel), "{e:#?}");
}
