//! ToolGuard on the banking_knowledge environment: every gold mutating call of the 97 tasks
//! passes on the gold-replay state just before it, and the domain's rules block what they
//! state — an email change for a user with no verification on record, a verification logged
//! with a made-up time or with fewer than two of the values the policy names.

use crate::support::bare_context;
use serde_json::{Value, json};
use tauguard_core::{Requestor, ToolCall, ToolKind};
use tauguard_env::{DataDir, DomainData, Environment, initial_env};
use tauguard_guards::{Decision, ToolGuard, Verdict};
use tauguard_testkit::workspace_root;

fn load() -> Option<DomainData> {
    let dir = tauguard_testkit::tau2_dir()?;
    let dir = DataDir::resolve(Some(&dir)).unwrap_or_else(|e| panic!("{e}"));
    Some(DomainData::load(&dir, "banking_knowledge").unwrap_or_else(|e| panic!("{e}")))
}

fn decide(g: &ToolGuard, env: &dyn Environment, name: &str, args: &Value) -> Decision {
    let call = ToolCall {
        id: format!("call_{name}"),
        name: name.into(),
        arguments: args.as_object().unwrap().clone(),
        requestor: Requestor::Assistant,
    };
    let ctx = bare_context(env);
    g.evaluate(&ctx, &call)
}

fn violated(d: &Decision) -> Vec<&str> {
    let mut v: Vec<&str> = d
        .requirements
        .iter()
        .filter(|r| !r.met)
        .map(|r| r.name.as_str())
        .collect();
    v.sort();
    v
}

#[test]
fn banking_gold_mutating_calls_pass_and_the_rules_block_what_they_state() {
    let Some(data) = load() else { return };
    let g = ToolGuard::load(&workspace_root().join("tasks"), "banking_knowledge").unwrap();
    let mut checked = 0;
    let mut blocks = Vec::new();
    for task in &data.tasks {
        let mut env = initial_env(&data, task).unwrap();
        for a in task.gold_actions() {
            let write = env.tool_kind(a.requestor, &a.name) == Some(ToolKind::Write);
            if write && a.requestor == Requestor::Assistant {
                let args = Value::Object(a.arguments.clone());
                let d = decide(&g, env.as_ref(), &a.name, &args);
                // A tool with no rule file has no evaluation to report errors of.
                let errors = d.info.as_ref().and_then(|i| i.get("errors"));
                assert!(
                    errors.is_none_or(|e| *e == json!([])),
                    "{}: {d:#?}",
                    task.id
                );
                checked += 1;
                if d.verdict == Verdict::Block {
                    blocks.push(format!("{} {}: {:?}", task.id, a.name, violated(&d)));
                }
            }
            let _ = env.dispatch(a.requestor, &a.name, &a.arguments);
        }
    }
    assert!(checked > 800, "{checked} gold mutating calls");
    assert!(blocks.is_empty(), "{blocks:#?}");

    // Mia Smith (user 123) has no verification on record: her email change waits for one.
    let task = &data.tasks[0];
    let mut env = initial_env(&data, task).unwrap();
    let change = json!({"user_id": "123", "new_email": "mia.smith@example.com"});
    let d = decide(&g, env.as_ref(), "change_user_email", &change);
    assert_eq!(violated(&d), ["verification_logged"], "{d:#?}");
    let verification = json!({
        "name": "Mia Smith", "user_id": "123",
        "address": "", "email": "mia.smith8574@gmail.com", "phone_number": "512-555-0147",
        "date_of_birth": "", "time_verified": "2025-11-14 03:40:00 EST"
    });
    assert_eq!(
        decide(&g, env.as_ref(), "log_verification", &verification).verdict,
        Verdict::Pass
    );
    let mut one_value = verification.clone();
    one_value["phone_number"] = json!("");
    let mut made_up_time = verification.clone();
    made_up_time["time_verified"] = json!("2024-01-01 09:00:00 EST");
    for (args, rule) in [
        (&one_value, "two_verification_values"),
        (&made_up_time, "time_from_the_clock"),
    ] {
        let d = decide(&g, env.as_ref(), "log_verification", args);
        assert_eq!(violated(&d), [rule], "{d:#?}");
    }
    let args = verification.as_object().unwrap().clone();
    env.dispatch(Requestor::Assistant, "log_verification", &args)
        .unwrap();
    let d = decide(&g, env.as_ref(), "change_user_email", &change);
    assert_eq!(d.verdict, Verdict::Pass, "{d:#?}");
}
