//! The offline sim verifier decides from its inputs alone: removing an input never lets it
//! check more or find more met; the variants differ exactly where their inputs do; a policy
//! text that does not state a requirement leaves it unchecked; no decision code names a configuration; the
//! guards never read the call-NMR oracle; and with the authored airline checklists strict
//! mode wants every data item, advisory mode the hard requirements only.

use crate::policyguard_sim::{
    YES, compliant, judge, pending, prerequisites, req, sim, stated, unconfirmed,
};
use crate::support;
use proptest::prelude::*;
use serde_json::json;
use std::collections::BTreeSet;
use support::{call, calls, info, root, user};
use tauguard_core::{Message, ToolCall};
use tauguard_guards::{
    DomainChecklists, Input, Inputs, KNOWN_GUARDS, SimVerifier, ToolCatalog, Variant, Verdict,
    load_domain_checklists,
};

fn airline_checklists() -> DomainChecklists {
    let tools = ToolCatalog::from_toolkit("airline", support::AIRLINE_TOOLS);
    load_domain_checklists(&root().join("tasks/airline/checklist"), &tools)
        .expect("authored airline checklists load")
}

/// The verifier with exactly `inputs`, the authored checklists and a policy stating the
/// prerequisites.
fn with_inputs(inputs: Inputs) -> SimVerifier {
    stated("airline", Variant::Checklist, false, airline_checklists()).with_inputs(inputs)
}

fn mutating(n: &str) -> bool {
    prerequisites("airline").tools.contains_key(n)
}

/// The names of the requirements checked.
fn checked(g: &SimVerifier, h: &[Message], c: &ToolCall) -> BTreeSet<String> {
    g.evaluate(h, c, &mutating)
        .requirements
        .into_iter()
        .map(|r| r.result.name)
        .collect()
}

/// Real histories: compliant, without the identity read, without the yes, without any
/// tool result; each ending in the pending call of one airline tool.
fn histories() -> Vec<(Vec<Message>, ToolCall)> {
    let mut out = Vec::new();
    for tool in prerequisites("airline").tools.keys() {
        let c = tauguard_core::ToolCall {
            name: tool.clone(),
            ..pending()
        };
        let base = {
            let mut h = compliant();
            *h.last_mut().unwrap() = calls(&c);
            h
        };
        let drop = |keep: &dyn Fn(&Message) -> bool| -> Vec<Message> {
            base.iter().filter(|m| keep(m)).cloned().collect()
        };
        out.push((base.clone(), c.clone()));
        out.push((drop(&|m| m.content() != Some(YES)), c.clone()));
        out.push((drop(&|m| !matches!(m, Message::Tool(_))), c.clone()));
        out.push((
            drop(&|m| !matches!(m.tool_calls().first(), Some(x) if x.name == "get_user_details")),
            c,
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn removing_an_input_never_checks_more(mask in 0u8..32, which in 0usize..24, drop in 0usize..5) {
        let cases = histories();
        let (h, c) = &cases[which % cases.len()];
        let all: Vec<Input> = Input::ALL.iter().copied().filter(|i| mask & (1 << (*i as u8)) != 0).collect();
        let inputs = Inputs::of(&all);
        let removed = Input::ALL[drop];
        let more = checked(&with_inputs(inputs), h, c);
        let fewer = checked(&with_inputs(inputs.without(removed)), h, c);
        prop_assert!(fewer.is_subset(&more), "without {:?}: {:?} is not within {:?}", removed, fewer, more);
        // Nor find more met: what an input would have shown is, without it, not shown.
        let met = |g: &SimVerifier| -> BTreeSet<String> {
            g.evaluate(h, c, &mutating).requirements.into_iter().filter(|r| r.result.met).map(|r| r.result.name).collect()
        };
        let (met_more, met_fewer) = (met(&with_inputs(inputs)), met(&with_inputs(inputs.without(removed))));
        prop_assert!(met_fewer.is_subset(&met_more), "without {:?}: met {:?} is not within {:?}", removed, met_fewer, met_more);
    }
}

#[test]
fn the_variants_differ_where_their_inputs_differ() {
    let of = |v: Variant| {
        let g = stated("airline", v, false, airline_checklists());
        checked(&g, &compliant(), &pending())
    };
    let names = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
    let prereqs = [
        "identity_verified",
        "read_get_reservation_details",
        "argument_link_reservation_id",
        "user_confirmation",
    ];
    let checklist_items = ["user_details_retrieved", "reservation_details_retrieved"];
    assert_eq!(of(Variant::Raw), names(&prereqs));
    // Without the dialogue the confirmation is still judged — NOT MET, as unseen.
    assert_eq!(of(Variant::RawTraj), names(&prereqs));
    let both: Vec<&str> = prereqs.iter().chain(&checklist_items).copied().collect();
    assert_eq!(of(Variant::Checklist), names(&both));
    assert_eq!(of(Variant::ChecklistOnly), names(&both));

    // The policy text decides what the raw variant checks: a policy that states none of the
    // prerequisite passages leaves pg-raw nothing to check, while pg-checklist-only, which is
    // not given the policy, is unaffected.
    let fixture =
        "Be polite, and transfer the user to a human agent when the request is out of scope.";
    let raw = SimVerifier::new(
        Variant::Raw,
        false,
        prerequisites("airline"),
        airline_checklists(),
    )
    .with_policy(fixture);
    assert!(checked(&raw, &compliant(), &pending()).is_empty());
    let only = SimVerifier::new(
        Variant::ChecklistOnly,
        false,
        prerequisites("airline"),
        airline_checklists(),
    )
    .with_policy(fixture);
    assert_eq!(checked(&only, &compliant(), &pending()), names(&both));
}

#[test]
fn the_real_policies_state_every_prerequisite_passage() {
    let Some(dir) = tauguard_testkit::tau2_dir() else {
        return;
    };
    for domain in ["airline", "retail", "telecom"] {
        let data = tauguard_env::DomainData::load(
            &tauguard_env::DataDir::resolve(Some(&dir)).unwrap(),
            domain,
        )
        .unwrap();
        let p = prerequisites(domain);
        for tool in p.tools.keys() {
            let g = SimVerifier::new(Variant::Raw, false, p.clone(), DomainChecklists::default())
                .with_policy(&data.policy);
            let c = tauguard_core::ToolCall {
                name: tool.clone(),
                ..pending()
            };
            let e = g.evaluate(&[user("hi"), calls(&c)], &c, &|_| true);
            assert!(
                e.unchecked
                    .iter()
                    .all(|u| !u.ends_with("stated by no input given")),
                "{domain}/{tool}: {:?}",
                e.unchecked
            );
        }
    }
}

/// Source lines of a file outside comments and `#[cfg(test)]` modules.
fn code_lines(text: &str) -> Vec<&str> {
    let end = text.find("#[cfg(test)]").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect()
}

#[test]
fn no_decision_code_names_a_configuration() {
    let dir = root().join("crates/guards/src/policyguard/sim");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        seen += 1;
        let mut lines = code_lines(&text);
        if file == "inputs.rs" {
            // The one mapping function is the only place variants become inputs.
            let start = text
                .find("pub fn of_variant")
                .expect("the mapping function");
            let body = &text[start..start + text[start..].find("\n    }\n").unwrap()];
            lines.retain(|l| !body.contains(l));
        }
        for l in lines {
            assert!(!l.contains("Variant::"), "{file}: `{l}` names a variant");
            for name in KNOWN_GUARDS {
                assert!(
                    !l.contains(&format!("\"{name}")),
                    "{file}: `{l}` names the configuration {name}"
                );
            }
            for pred in ["uses_policy", "uses_checklist", "sees_dialogue"] {
                assert!(
                    !l.contains(pred),
                    "{file}: `{l}` reads the variant ({pred})"
                );
            }
        }
    }
    assert!(
        seen >= 4,
        "the sim verifier's modules are under {}",
        dir.display()
    );
}

#[test]
fn the_guards_never_read_the_call_nmr_ground_truth() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("crates/guards"), &mut files);
    assert!(files.len() > 20);
    // Spelled in two halves so this file does not name it either.
    let name = format!("{}{}", "nmr_", "oracle");
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        assert!(!text.contains(&name), "{} names the oracle", f.display());
    }
}

#[tokio::test]
async fn a_checklist_only_verifier_blocks_from_the_checklist() {
    // pg-checklist-only is not given the policy; its checklist states the same prerequisites,
    // so a missing confirmation still blocks, judged through the checklist's item.
    let g = sim(Variant::ChecklistOnly, false);
    let h: Vec<Message> = unconfirmed();
    // No checklist given: nothing states the prerequisites, so nothing is checked.
    let d = judge(&g, &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(info(&d)["checked"], json!(0));
    let g = SimVerifier::new(
        Variant::ChecklistOnly,
        false,
        prerequisites("airline"),
        airline_checklists(),
    );
    let d = judge(&g, &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block);
    assert!(!req(&d, "user_confirmation").met);
}

#[test]
fn every_domain_prerequisites_file_parses() {
    for d in ["airline", "retail", "telecom"] {
        let p = prerequisites(d);
        assert_eq!(p.domain, d);
        assert!(!p.tools.is_empty());
    }
    assert!(
        !prerequisites("retail").tools["modify_pending_order_items"]
            .required_any_reads
            .is_empty()
    );
}

#[tokio::test]
async fn deterministic_and_remediation_is_short() {
    let h: Vec<Message> = compliant()
        .into_iter()
        .filter(|m| !matches!(m, Message::Tool(_)))
        .collect();
    let g = sim(Variant::Checklist, false);
    let a = judge(&g, &h, &pending()).await;
    let b = judge(&g, &h, &pending()).await;
    assert_eq!(a, b);
    assert_eq!(a.verdict, Verdict::Block);
    let m = a.remediation.unwrap();
    let sentences = m.split(". ").count();
    assert!((1..=3).contains(&sentences), "{m}");
}

#[tokio::test]
async fn tools_without_prerequisites_pass() {
    let c = call("p1", "some_new_tool", json!({}));
    let h = vec![user("hi"), calls(&c)];
    let d = judge(&sim(Variant::Raw, false), &h, &c).await;
    assert_eq!(d.verdict, Verdict::Pass);
    assert_eq!(info(&d)["no_prerequisites"], json!(true));
}

#[tokio::test]
async fn authored_airline_checklists_work_with_the_sim_verifier() {
    let advisory = stated("airline", Variant::Checklist, false, airline_checklists());
    let strict = stated("airline", Variant::Checklist, true, airline_checklists());

    // Compliant: both pass (a flight-status read that applies only to some cancellations is
    // a procedural item, not a read every cancellation needs).
    let d = judge(&advisory, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
    let d = judge(&strict, &compliant(), &pending()).await;
    assert_eq!(d.verdict, Verdict::Pass, "{:?}", d.requirements);
    // Strict also wants every data item of the checklist: without the profile read its
    // `user_details_retrieved` is NOT MET and blocks.
    let mut h = compliant();
    h.drain(3..5);
    let d = judge(&strict, &h, &pending()).await;
    assert_eq!(d.verdict, Verdict::Block, "{:?}", d.requirements);
    assert!(!req(&d, "user_details_retrieved").met);

    // Missing confirmation blocks in both.
    let h: Vec<Message> = unconfirmed();
    assert_eq!(
        judge(&advisory, &h, &pending()).await.verdict,
        Verdict::Block
    );
}
