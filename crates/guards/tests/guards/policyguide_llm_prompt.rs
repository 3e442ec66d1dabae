//! The LLM guide's prompt and accounting: the static prefix is byte-stable across calls and
//! shows the graph or, for the raw variant, only the policy and its authorization list; the
//! prefix-cache usage and prefix identity reach the event; a malformed reply gets one repair,
//! two take the fail mode; model failures take the fail mode unless fatal.

use crate::guide_support::*;
use serde_json::json;
use tauguard_core::Message;
use tauguard_guards::{FAIL_CLOSED_GUIDANCE, FailMode, GuardError, GuideKnowledge};

#[tokio::test]
async fn the_static_prefix_is_byte_stable_and_the_dynamic_part_moves() {
    let ok = reply(json!([]), "");
    let model = guide_model(&[&ok, &ok, &ok, &ok]);
    let g = guide(&model, FailMode::Closed);
    let sim = Sim::new(&g);
    sim.turn(&turn1()).await.unwrap();
    sim.turn(&turn2()).await.unwrap();
    sim.turn(&turn3()).await.unwrap();
    let b = bags_call("b1");
    sim.call(&with_call(turn3(), &b), &b).await;
    let seen = model.seen();
    assert_eq!(seen.len(), 4);
    let prefix = system_text(&seen[0]);
    for req in &seen {
        assert_eq!(system_text(req), prefix, "byte-identical system prefix");
        assert_eq!(req.messages.len(), 2);
        assert!(req.json_mode);
        assert_eq!(req.seed, Some(7));
    }
    let dynamic: Vec<&str> = seen.iter().map(user_text).collect();
    for (i, a) in dynamic.iter().enumerate() {
        for b in &dynamic[i + 1..] {
            assert_ne!(a, b, "each trigger has its own dynamic part");
        }
    }
    // A second guide of the same domain renders the same bytes.
    let other = llm_guide(
        GuideKnowledge::Graph(graph_flow()),
        &guide_model(&[]),
        FailMode::Closed,
    );
    assert_eq!(other.prefix(), prefix);

    // The graph variant shows the policy and the graph rendering; the raw variant the policy
    // and the enumerated authorizations, never the graph.
    let rendering = graph_flow().render();
    let rendering = rendering.trim();
    assert!(prefix.contains(rendering));
    // The template loader tidies whitespace (line ends, blank-line runs); the words stay.
    assert!(squash(prefix).contains(&squash(&airline().policy)));
    assert!(prefix.contains("`cancel_reservation/cancel_authorize` enables `cancel_reservation`"));
    let raw = llm_guide(
        GuideKnowledge::RawPolicy,
        &guide_model(&[]),
        FailMode::Closed,
    );
    assert!(squash(raw.prefix()).contains(&squash(&airline().policy)));
    assert!(!raw.prefix().contains("## Graph `"));
    assert!(!raw.prefix().contains("cancel_reservation/cancel_authorize"));
    for tool in catalog().mutating {
        assert!(
            raw.prefix()
                .contains(&format!("`raw/authorize_{tool}` enables `{tool}`")),
            "{tool}"
        );
    }
    assert_ne!(raw.prefix_hash(), other.prefix_hash());
}

#[tokio::test]
async fn prefix_cache_usage_and_the_prefix_identity_are_recorded() {
    let model = guide_model(&[&reply(json!([]), "")]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    assert_eq!(e.usage.calls, 1);
    assert_eq!(e.usage.usage.prompt_tokens, 5000);
    assert_eq!(e.usage.usage.cached_prompt_tokens, 4096);
    assert_eq!(e.usage.cost, Some(0.003));
    assert!((e.usage.latency_seconds - 0.25).abs() < 1e-9);
    let prefix = system_text(&model.seen()[0]).to_string();
    let i = info(&e);
    assert_eq!(
        i["prefix_hash"],
        json!(blake3::hash(prefix.as_bytes()).to_hex().to_string())
    );
    assert_eq!(i["prefix_bytes"], json!(prefix.len()));
    assert_eq!(i["knowledge"], json!("graph"));
    assert_eq!(i["verifier"], json!("mock/guide-1"));
}

#[tokio::test]
async fn a_malformed_reply_gets_exactly_one_repair() {
    let good = reply(
        json!([{"id": null, "intent": R1_INTENT, "node": "authenticate_user/read_profile"}]),
        "Read the profile.",
    );
    let model = guide_model(&["The agent should verify the user first.", &good]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    let repair = &seen[1].messages;
    assert_eq!(repair.len(), 4);
    assert_eq!(
        repair[2].content(),
        Some("The agent should verify the user first.")
    );
    assert!(matches!(repair[2], Message::Assistant(_)));
    let ask = repair[3].content().unwrap();
    assert!(
        ask.contains("could not be read: the reply contains no JSON object"),
        "{ask}"
    );
    assert_eq!(system_text(&seen[1]), system_text(&seen[0]));
    assert_eq!(card_view(&e)[0].1, "authenticate_user/read_profile");
    assert_eq!(e.guidance.as_deref(), Some("Read the profile."));
    assert_eq!(e.usage.calls, 2);
    assert_eq!(e.usage.usage.cached_prompt_tokens, 8192);
    let i = info(&e);
    assert_eq!(i["attempts"], json!(2));
    assert_eq!(i["repaired"], json!(true));
    assert!(i.get("fail_mode_used").is_none());
}

#[tokio::test]
async fn two_malformed_replies_take_the_fail_mode() {
    for mode in [FailMode::Closed, FailMode::Open] {
        let model = guide_model(&["no idea", r#"{"verdict": "PASS"}"#]);
        let g = guide(&model, mode);
        let e = Sim::new(&g).turn(&turn1()).await.unwrap();
        assert_eq!(model.seen().len(), 2, "one repair, no more");
        assert!(e.requests.is_empty(), "no updates");
        let want = match mode {
            FailMode::Closed => Some(FAIL_CLOSED_GUIDANCE),
            FailMode::Open => None,
        };
        assert_eq!(e.guidance.as_deref(), want);
        let i = info(&e);
        assert_eq!(i["fail_mode_used"], json!(true));
        assert_eq!(i["fail_mode"], json!(mode.as_str()));
        assert_eq!(
            i["parse_error"],
            json!("no valid JSON object with a `requests` list was found")
        );
        assert_eq!(e.usage.calls, 2);
    }
}

#[tokio::test]
async fn model_failures_take_the_fail_mode_unless_fatal() {
    let model = guide_model(&[DOWN]);
    let g = guide(&model, FailMode::Closed);
    let e = Sim::new(&g).turn(&turn1()).await.unwrap();
    assert_eq!(e.guidance.as_deref(), Some(FAIL_CLOSED_GUIDANCE));
    let i = info(&e);
    assert!(
        i["model_error"]
            .as_str()
            .unwrap()
            .contains("connection refused"),
        "{i:?}"
    );
    assert_eq!(i["attempts"], json!(1));

    let model = guide_model(&[FATAL]);
    let g = guide(&model, FailMode::Open);
    match Sim::new(&g).turn(&turn1()).await {
        Err(GuardError::Model(e)) => assert!(e.is_fatal()),
        other => panic!("a fatal model error ends the run, got {other:?}"),
    }
}
