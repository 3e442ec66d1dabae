//! The telecom domain through its public interfaces: every base task's initial state and gold
//! actions, env assertions on gold trajectories, upstream's error texts, agreement with the
//! published tool schemas, copy-on-write environments, and a property test feeding random
//! arguments to every toolkit method.
//!
//! Expected texts come from running the upstream Python toolkits on the same calls.

use crate::common::{self, args};

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::OnceLock;
use tauguard_core::{Requestor, Task};
use tauguard_env::{DomainData, Environment, ToolValue};
use tauguard_env::{gold_env, initial_env, run_gold_actions};

fn data() -> Option<&'static DomainData> {
    static DATA: OnceLock<Option<DomainData>> = OnceLock::new();
    DATA.get_or_init(|| common::load("telecom")).as_ref()
}

fn task<'a>(data: &'a DomainData, id: &str) -> &'a Task {
    data.tasks
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("task {id}"))
}

const AIRPLANE_ABROAD: &str =
    "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]";

/// An environment in [`AIRPLANE_ABROAD`]'s initial state (`None` without the data).
fn airplane_abroad() -> Option<Box<dyn Environment>> {
    let data = data()?;
    Some(initial_env(data, task(data, AIRPLANE_ABROAD)).expect("init"))
}

/// `(content, error)` of one call through the live path (dispatch, then sync).
fn run(env: &mut dyn Environment, side: Requestor, name: &str, a: Value) -> (String, bool) {
    env.execute(side, name, &args(a))
}

fn assertion_results(env: &mut dyn Environment, task: &Task) -> Vec<bool> {
    let criteria = task.evaluation_criteria.as_ref().expect("criteria");
    criteria
        .env_assertions
        .iter()
        .flatten()
        .map(|a| {
            let value = env
                .call(a.env_type, &a.func_name, &a.arguments)
                .unwrap_or_else(|e| {
                    panic!(
                        "task {}: {} failed: {}",
                        task.id,
                        a.func_name,
                        e.qualified()
                    )
                });
            env.sync_tools().expect("sync after assertion");
            match value {
                ToolValue::Json(Value::Bool(b)) => b == a.assert_value,
                other => panic!("task {}: {} returned {other:?}", task.id, a.func_name),
            }
        })
        .collect()
}

#[test]
fn every_base_task_initializes_and_replays_its_gold_actions() {
    let Some(data) = data() else { return };
    assert_eq!(data.tasks.len(), 114);
    for task in &data.tasks {
        let mut env = initial_env(data, task).unwrap_or_else(|e| panic!("task {}: {e}", task.id));
        for step in run_gold_actions(env.as_mut(), task) {
            if let Err(e) = &step.result {
                panic!(
                    "task {}: gold action {} failed: {}",
                    task.id,
                    step.name,
                    e.qualified()
                );
            }
        }
        env.sync_tools()
            .unwrap_or_else(|e| panic!("task {}: final sync: {}", task.id, e.qualified()));
    }
}

#[test]
fn gold_trajectories_satisfy_their_env_assertions() {
    let Some(data) = data() else { return };
    let mut unsynced_failures = BTreeSet::new();
    for task in &data.tasks {
        // As a live trajectory runs them: each call followed by sync_tools.
        let mut live = initial_env(data, task).expect("initial state");
        for a in task.gold_actions() {
            let (content, error) = live.execute(a.requestor, &a.name, &a.arguments);
            assert!(!error, "task {}: {} -> {content}", task.id, a.name);
        }
        live.sync_tools().expect("sync");
        let results = assertion_results(live.as_mut(), task);
        assert!(
            results.iter().all(|ok| *ok),
            "task {}: {results:?}",
            task.id
        );

        // The evaluator's gold environment: raw calls, no per-call sync.
        let mut gold = gold_env(data, task).expect("gold env");
        gold.sync_tools().expect("sync");
        if !assertion_results(gold.as_mut(), task).iter().all(|ok| *ok) {
            unsynced_failures.insert(task.id.clone());
        }
    }
    // Upstream behaves the same: without a sync after `send_payment_request`, the user's
    // `make_payment` finds no payment request, the overdue bill stays unpaid and the line's
    // service stays down. Exactly the tasks whose gold actions pay a bill are affected.
    let paying: BTreeSet<String> = data
        .tasks
        .iter()
        .filter(|t| t.gold_actions().iter().any(|a| a.name == "make_payment"))
        .map(|t| t.id.clone())
        .collect();
    assert_eq!(paying.len(), 6);
    assert_eq!(unsynced_failures, paying);
}

#[test]
fn toolkits_agree_with_published_tool_schemas() {
    let Some(data) = data() else { return };
    assert!(data.schemas_from_file);
    let path = data.dir.join("tools.json");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("tools.json")).expect("json");
    let env = data.fresh_env();
    for (side, key, count) in [
        (Requestor::Assistant, "assistant_tools", 13),
        (Requestor::User, "user_tools", 30),
    ] {
        let published = file[key].as_array().expect(key);
        let ours: Vec<_> = env.toolkit(side).iter().filter(|d| d.is_tool).collect();
        assert_eq!(ours.len(), count, "{key}");
        let names: Vec<&str> = ours.iter().map(|d| d.name).collect();
        let want: Vec<&str> = published
            .iter()
            .map(|t| t["function"]["name"].as_str().expect("name"))
            .collect();
        assert_eq!(names, want, "{key}: names in registration order");
        for (def, entry) in ours.iter().zip(published) {
            let function = &entry["function"];
            let spec = def.spec();
            let want_params: Vec<&str> = function["parameters"]["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(spec.parameter_names(), want_params, "{}", def.name);
            let want_required: BTreeSet<&str> = function["parameters"]["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let got_required: BTreeSet<String> = spec.required_parameters().into_iter().collect();
            assert_eq!(
                got_required
                    .iter()
                    .map(String::as_str)
                    .collect::<BTreeSet<_>>(),
                want_required,
                "{}",
                def.name
            );
            assert_eq!(
                spec.description,
                function["description"].as_str().expect("description"),
                "{}",
                def.name
            );
            assert_eq!(
                spec.parameters, function["parameters"],
                "{}: schema",
                def.name
            );
        }
    }
    // Helper methods are reachable by initial states and assertions but are not tools.
    for (side, helper) in [
        (Requestor::User, "set_user_info"),
        (Requestor::User, "assert_mobile_data_status"),
        (Requestor::Assistant, "set_data_usage"),
        (Requestor::Assistant, "assert_no_overdue_bill"),
    ] {
        let def = env
            .toolkit(side)
            .iter()
            .find(|d| d.name == helper)
            .expect(helper);
        assert!(!def.is_tool, "{helper}");
        assert_eq!(env.tool_kind(side, helper), None);
    }
}

#[test]
fn dispatch_and_binding_errors_use_upstream_texts() {
    let Some(mut env) = airplane_abroad() else {
        return;
    };
    let env = env.as_mut();
    let cases: &[(Requestor, &str, Value, &str)] = &[
        (
            Requestor::Assistant,
            "foo",
            json!({}),
            "Error: Tool 'foo' not found.",
        ),
        (
            Requestor::User,
            "set_user_info",
            json!({"name": "a", "phone_number": "b"}),
            "Error: Tool 'set_user_info' not found.",
        ),
        (
            Requestor::Assistant,
            "check_status_bar",
            json!({}),
            "Error: Tool 'check_status_bar' not found.",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_id",
            json!({}),
            "Error: TelecomTools.get_customer_by_id() missing 1 required positional argument: 'customer_id'",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_id",
            json!({"customer_id": "C1001", "foo": 1}),
            "Error: TelecomTools.get_customer_by_id() got an unexpected keyword argument 'foo'",
        ),
        (
            Requestor::Assistant,
            "suspend_line",
            json!({}),
            "Error: TelecomTools.suspend_line() missing 3 required positional arguments: 'customer_id', 'line_id', and 'reason'",
        ),
        (
            Requestor::User,
            "check_app_status",
            json!({}),
            "Error: TelecomUserTools.check_app_status() missing 1 required positional argument: 'app_name'",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_id",
            json!({"customer_id": "C9"}),
            "Error: Customer with ID C9 not found",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_id",
            json!({"customer_id": 12}),
            "Error: Customer with ID 12 not found",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_phone",
            json!({"phone_number": 1.5}),
            "Error: Customer with phone number 1.5 not found",
        ),
        (
            Requestor::Assistant,
            "get_customer_by_name",
            json!({"full_name": 5, "dob": "1985-06-15"}),
            "Error: 'int' object has no attribute 'lower'",
        ),
        (
            Requestor::Assistant,
            "get_details_by_id",
            json!({"id": 5}),
            "Error: 'int' object has no attribute 'startswith'",
        ),
        (
            Requestor::Assistant,
            "get_details_by_id",
            json!({"id": "X1"}),
            "Error: Unknown ID format or type: X1",
        ),
        (
            Requestor::Assistant,
            "get_details_by_id",
            json!({"id": "L9999"}),
            "Error: Line with ID L9999 not found",
        ),
        (
            Requestor::Assistant,
            "suspend_line",
            json!({"customer_id": "C1001", "line_id": "L1004", "reason": "x"}),
            "Error: Line L1004 not found for customer C1001",
        ),
        (
            Requestor::Assistant,
            "suspend_line",
            json!({"customer_id": "C1001", "line_id": "L1003", "reason": "x"}),
            "Error: Line must be active to suspend",
        ),
        (
            Requestor::Assistant,
            "resume_line",
            json!({"customer_id": "C1001", "line_id": "L1001"}),
            "Error: Line must be suspended to resume",
        ),
        (
            Requestor::Assistant,
            "get_bills_for_customer",
            json!({"customer_id": "C1001", "limit": 1.5}),
            "Error: slice indices must be integers or None or have an __index__ method",
        ),
        (
            Requestor::Assistant,
            "send_payment_request",
            json!({"customer_id": "C1001", "bill_id": "B1004"}),
            "Error: Bill B1004 not found for customer C1001",
        ),
        (
            Requestor::Assistant,
            "refuel_data",
            json!({"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"}),
            "Error: '<=' not supported between instances of 'str' and 'int'",
        ),
        (
            Requestor::Assistant,
            "refuel_data",
            json!({"customer_id": "C1001", "line_id": "L1002", "gb_amount": 0}),
            "Error: Refuel amount must be positive",
        ),
        (
            Requestor::User,
            "check_app_status",
            json!({"app_name": [1]}),
            "Error: unhashable type: 'list'",
        ),
        (
            Requestor::User,
            "check_app_status",
            json!({"app_name": {"a": 1}}),
            "Error: unhashable type: 'dict'",
        ),
        (
            Requestor::User,
            "grant_app_permission",
            json!({"app_name": "nope", "permission": 3}),
            "Error: 'int' object has no attribute 'lower'",
        ),
        (
            Requestor::User,
            "set_apn_settings",
            json!({"apn_settings": {"apn_name": "x"}}),
            "Error: 1 validation error for APNSettings\napn_name\n  Input should be 'internet' or 'broken' [type=enum, input_value='x', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/enum",
        ),
    ];
    for (side, name, a, want) in cases {
        let (content, error) = run(env, *side, name, a.clone());
        assert!(error, "{name} {a}: expected an error, got {content}");
        assert_eq!(&content, want, "{name} {a}");
    }
    // Helper methods are reachable through `call`; unknown attributes are AttributeErrors.
    let err = env.call(Requestor::User, "nope", &Map::new()).unwrap_err();
    assert_eq!(
        err.qualified(),
        "AttributeError: 'TelecomUserTools' object has no attribute 'nope'"
    );
    let err = env
        .call(Requestor::Assistant, "assert_no_overdue_bill", &Map::new())
        .unwrap_err();
    assert_eq!(
        err.qualified(),
        "TypeError: TelecomTools.assert_no_overdue_bill() missing 1 required positional argument: 'overdue_bill_id'"
    );
    let err = env
        .call(
            Requestor::User,
            "assert_service_status",
            &args(json!({"expected_status": "x"})),
        )
        .unwrap_err();
    assert_eq!(
        err.qualified(),
        "ValueError: 'x' is not a valid NetworkStatus"
    );
}

#[test]
fn outputs_match_upstream_byte_for_byte() {
    let Some(mut env) = airplane_abroad() else {
        return;
    };
    let env = env.as_mut();
    let u = Requestor::User;
    let a = Requestor::Assistant;
    let steps: &[(Requestor, &str, Value, &str)] = &[
        (
            u,
            "check_status_bar",
            json!({}),
            "Status Bar: \u{2708}\u{fe0f} Airplane Mode | \u{1f50b} 80%",
        ),
        (
            u,
            "run_speed_test",
            json!({}),
            "Speed test failed: No Connection.",
        ),
        (
            u,
            "toggle_airplane_mode",
            json!({}),
            "Airplane Mode is now OFF.\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f50b} 80%",
        ),
        (
            u,
            "toggle_roaming",
            json!({}),
            "Data Roaming is now ON.\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f50b} 80%",
        ),
        (
            u,
            "run_speed_test",
            json!({}),
            "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.",
        ),
        (
            u,
            "toggle_data_saver_mode",
            json!({}),
            "Data Saver Mode is now ON.\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f53d} Data Saver | \u{1f50b} 80%",
        ),
        (
            u,
            "run_speed_test",
            json!({}),
            "Speed Test Result: 55.00 Mbps (Good). Connection is good for most activities, including HD streaming.",
        ),
        (
            u,
            "connect_vpn",
            json!({}),
            "VPN connected successfully.\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f53d} Data Saver | \u{1f512} VPN Connected | \u{1f50b} 80%",
        ),
        (
            u,
            "check_vpn_status",
            json!({}),
            "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', 'server_performance': <PerformanceLevel.EXCELLENT: 'excellent'>}",
        ),
        (u, "connect_vpn", json!({}), "VPN already connected."),
        (
            u,
            "check_app_status",
            json!({"app_name": "messaging"}),
            "Status for App: messaging\n - Permissions Granted:\n   - sms\n   - storage\n   - phone",
        ),
        (
            u,
            "check_app_status",
            json!({"app_name": 7}),
            "App '7' not found on this phone.",
        ),
        (
            u,
            "grant_app_permission",
            json!({"app_name": "browser", "permission": "camera"}),
            "Error. Permission 'camera' not tracked for app 'browser', available permissions: ['sms', 'storage', 'phone', 'network']\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f53d} Data Saver | \u{1f512} VPN Connected | \u{1f50b} 80%",
        ),
        (
            u,
            "set_network_mode_preference",
            json!({"mode": "5g"}),
            "Failed to set network mode: '5g' is not a valid option. Please use one of: 4g_5g_preferred, 4g_only, 3g_only, 2g_only\nStatus Bar: \u{1f4f6}\u{2074} Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f53d} Data Saver | \u{1f512} VPN Connected | \u{1f50b} 80%",
        ),
        (
            u,
            "check_payment_request",
            json!({}),
            "No payment request has been made.",
        ),
        (
            u,
            "make_payment",
            json!({}),
            "You do not have a payment request.",
        ),
        (
            a,
            "get_data_usage",
            json!({"customer_id": "C1001", "line_id": "L1002"}),
            r#"{"line_id": "L1002", "data_used_gb": "8.7", "data_limit_gb": "15.0", "data_refueling_gb": "0.0", "cycle_end_date": "2025-02-28"}"#,
        ),
        (
            a,
            "enable_roaming",
            json!({"customer_id": "C1001", "line_id": "L1002"}),
            "Roaming was already enabled",
        ),
        (
            a,
            "refuel_data",
            json!({"customer_id": "C1001", "line_id": "L1001", "gb_amount": 0.333}),
            r#"{"message": "Successfully added 0.333 GB of data for line L1001 for $1.67", "new_data_refueling_gb": "0.333", "charge": "1.665"}"#,
        ),
        (
            a,
            "refuel_data",
            json!({"customer_id": "C1001", "line_id": "L1001", "gb_amount": true}),
            r#"{"message": "Successfully added True GB of data for line L1001 for $5.00", "new_data_refueling_gb": "1.333", "charge": "5.0"}"#,
        ),
        (
            a,
            "get_details_by_id",
            json!({"id": "D1002"}),
            r#"{"device_id": "D1002", "device_type": "phone", "model": "Smartphone Pro Max", "imei": "234567890123456", "is_esim_capable": true, "activated": true, "activation_date": "2025-02-15 11:45:00", "last_esim_transfer_date": "2025-01-20 09:30:00"}"#,
        ),
        (
            a,
            "get_details_by_id",
            json!({"id": "P1002"}),
            r#"{"plan_id": "P1002", "name": "Premium Plan", "data_limit_gb": 15.0, "price_per_month": 65.0, "data_refueling_price_per_gb": 2.0}"#,
        ),
        (
            a,
            "transfer_to_human_agents",
            json!({"summary": null}),
            "Transfer successful",
        ),
    ];
    for (side, name, a, want) in steps {
        let (content, error) = run(env, *side, name, a.clone());
        assert!(!error, "{name} {a}: {content}");
        assert_eq!(&content, want, "{name} {a}");
    }
    // Bills sort by issue date, newest first; `limit` slices like Python.
    let ids = |content: String| -> Vec<String> {
        let v: Value = serde_json::from_str(&content).expect("json");
        v.as_array()
            .expect("list")
            .iter()
            .map(|b| b["bill_id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut bills = |limit: Value| {
        ids(run(
            env,
            a,
            "get_bills_for_customer",
            json!({"customer_id": "C1001", "limit": limit}),
        )
        .0)
    };
    assert_eq!(bills(json!(12)), ["B1003", "B1002", "B1001"]);
    assert_eq!(bills(json!(-1)), ["B1003", "B1002"]);
    assert_eq!(bills(json!(null)), ["B1003", "B1002", "B1001"]);
    assert_eq!(bills(json!(true)), ["B1003"]);
    assert_eq!(bills(json!(-7)), Vec::<String>::new());
}

#[test]
fn unvalidated_assignments_persist_like_upstream() {
    let Some(mut env) = airplane_abroad() else {
        return;
    };
    let env = env.as_mut();
    let u = Requestor::User;
    // A non-string mode is stored as is; reading `.value` of it fails later.
    let (content, error) = run(env, u, "set_network_mode_preference", json!({"mode": 5}));
    assert_eq!(
        (content.as_str(), error),
        ("Error: 'int' object has no attribute 'value'", true)
    );
    assert_eq!(
        env.user_db().expect("user db")["device"]["network_mode_preference"],
        json!(5)
    );
    let (content, _) = run(env, u, "check_network_mode_preference", json!({}));
    assert_eq!(content, "Error: 'int' object has no attribute 'value'");
    // A non-object APN setting is stored, then every APN access fails.
    let (content, _) = run(env, u, "set_apn_settings", json!({"apn_settings": "x"}));
    assert_eq!(content, "Error: 'str' object has no attribute 'apn_name'");
    assert_eq!(
        env.user_db().expect("user db")["device"]["active_apn_settings"],
        json!("x")
    );
    for (name, want) in [
        (
            "reboot_device",
            "Error: 'str' object has no attribute 'reset_at_reboot'",
        ),
        (
            "reset_apn_settings",
            "Error: 'str' object has no attribute 'reset_at_reboot'",
        ),
        (
            "check_apn_settings",
            "Error: 'str' object has no attribute 'model_copy'",
        ),
        (
            "toggle_data",
            "Error: 'str' object has no attribute 'apn_name'",
        ),
    ] {
        assert_eq!(run(env, u, name, json!({})).0, want, "{name}");
    }
    // toggle_data flipped the switch before the network search failed, as in Python.
    assert_eq!(
        env.user_db().expect("user db")["device"]["data_enabled"],
        json!(false)
    );
    let (content, error) = run(
        env,
        u,
        "set_apn_settings",
        json!({"apn_settings": {"apn_name": "internet"}}),
    );
    assert!(!error, "{content}");
    assert!(
        content.starts_with("APN settings set to: internet\nStatus Bar: "),
        "{content}"
    );
}

#[test]
fn fresh_environments_share_the_base_and_snapshots_are_independent() {
    let Some(data) = data() else { return };
    let a = data.fresh_env();
    let b = data.fresh_env();
    assert!(a.same_state(b.as_ref()));
    let changes = a.changes_since(b.as_ref());
    assert!(changes.agent.is_empty() && changes.user.as_ref().is_some_and(Map::is_empty));
    assert_eq!(a.agent_db()["plans"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        a.agent_db()["customers"][0]["created_at"],
        "2025-01-15 10:30:00"
    );
    assert_eq!(
        a.user_db().expect("user db")["surroundings"]["line_active"],
        true
    );

    let mut c = a.snapshot();
    run(
        c.as_mut(),
        Requestor::Assistant,
        "suspend_line",
        json!({"customer_id": "C1001", "line_id": "L1002", "reason": "x"}),
    );
    run(c.as_mut(), Requestor::User, "toggle_wifi", json!({}));
    assert!(!c.same_state(a.as_ref()));
    assert!(a.same_state(b.as_ref()), "the source is untouched");
    let changes = c.changes_since(a.as_ref());
    assert_eq!(changes.agent.keys().collect::<Vec<_>>(), ["lines/"]);
    assert_eq!(changes.agent["lines/"][1]["status"], "Suspended");
    assert_eq!(
        changes.agent["lines/"][1]["suspension_start_date"],
        "2025-02-25"
    );
    let user = changes.user.expect("user changes");
    assert_eq!(user.get("device/wifi_enabled"), Some(&json!(true)));
    assert_eq!(user.len(), 1);
}

#[test]
fn initialization_data_merges_and_revalidates() {
    let Some(data) = data() else { return };
    let mut env = data.fresh_env();
    env.merge_initialization_data(
        Some(&json!({"plans": [{"plan_id": "P9", "name": "Tiny", "data_limit_gb": 1, "price_per_month": 2, "data_refueling_price_per_gb": 3}]})),
        Some(&json!({"device": {"airplane_mode": true, "active_apn_settings": {"mms_port": 8080}}, "surroundings": {"is_abroad": true}})),
    )
    .expect("valid data");
    let agent = env.agent_db();
    assert_eq!(
        agent["plans"],
        json!([{"plan_id": "P9", "name": "Tiny", "data_limit_gb": 1.0, "price_per_month": 2.0, "data_refueling_price_per_gb": 3.0}])
    );
    assert_eq!(
        agent["customers"][1]["created_at"], "2025-02-10 14:15:00",
        "dumped datetimes re-validate"
    );
    let user = env.user_db().expect("user db");
    assert_eq!(user["device"]["airplane_mode"], true);
    assert_eq!(user["device"]["active_apn_settings"]["mms_port"], 8080);
    assert_eq!(
        user["device"]["active_apn_settings"]["apn_name"], "internet",
        "siblings are kept"
    );
    assert_eq!(user["surroundings"]["is_abroad"], true);

    let mut env = data.fresh_env();
    assert!(
        env.merge_initialization_data(Some(&json!({"lines": [{"line_id": "L1"}]})), None)
            .is_err()
    );
    assert!(
        env.merge_initialization_data(None, Some(&json!({"device": {"unknown_field": 1}})))
            .is_err()
    );
    assert!(
        env.merge_initialization_data(Some(&json!({"extra_table": []})), None)
            .is_err()
    );
    assert!(
        env.same_state(data.fresh_env().as_ref()),
        "a failed merge leaves the state unchanged"
    );
}

#[test]
fn refuel_without_a_draft_bill_creates_a_deterministic_one() {
    let Some(data) = data() else { return };
    let call = json!({"customer_id": "C1002", "line_id": "L1004", "gb_amount": 2});
    let bill_of = |env: &dyn Environment| {
        env.agent_db()["bills"]
            .as_array()
            .and_then(|b| b.last().cloned())
            .expect("bill")
    };
    let mut first = data.fresh_env();
    let (content, error) = run(
        first.as_mut(),
        Requestor::Assistant,
        "refuel_data",
        call.clone(),
    );
    assert!(!error, "{content}");
    assert_eq!(
        content,
        r#"{"message": "Successfully added 2 GB of data for line L1004 for $0.20", "new_data_refueling_gb": "2.0", "charge": "0.2"}"#
    );
    let bill = bill_of(first.as_ref());
    let id = bill["bill_id"].as_str().expect("id").to_string();
    assert!(
        id.len() == 9 && id.starts_with('B') && id[1..].bytes().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(
        bill,
        json!({"bill_id": id, "customer_id": "C1002", "period_start": "2025-03-01", "period_end": "2025-03-31",
               "issue_date": "2025-03-01", "total_due": 0.2, "due_date": "2025-03-15",
               "line_items": [{"description": "Data refueling: 2 GB at $0.1/GB", "amount": 0.2, "date": "2025-02-25", "item_type": "Charge"}],
               "status": "Draft"})
    );
    assert_eq!(
        first.agent_db()["customers"][1]["bill_ids"],
        json!(["B1004", "B1005", id])
    );
    let mut second = data.fresh_env();
    run(second.as_mut(), Requestor::Assistant, "refuel_data", call);
    assert!(
        first.same_state(second.as_ref()),
        "same calls, same bill id"
    );
}

#[test]
fn broken_vpn_profile_is_reused_within_an_environment() {
    let Some(data) = data() else { return };
    let vpn_task = data
        .tasks
        .iter()
        .find(|t| {
            t.initial_state
                .as_ref()
                .and_then(|s| s.initialization_actions.as_ref())
                .is_some_and(|acts| acts.iter().any(|a| a.func_name == "break_vpn"))
        })
        .expect("a task breaks the VPN");
    let mut env = initial_env(data, vpn_task).expect("init");
    let details =
        |env: &dyn Environment| env.user_db().expect("user db")["device"]["vpn_details"].clone();
    assert_eq!(details(env.as_ref())["server_performance"], "poor");
    run(env.as_mut(), Requestor::User, "disconnect_vpn", json!({}));
    assert_eq!(details(env.as_ref()), Value::Null);
    // Upstream's `connect_vpn` installs the shared default profile `break_vpn` degraded.
    run(env.as_mut(), Requestor::User, "connect_vpn", json!({}));
    assert_eq!(details(env.as_ref())["server_performance"], "poor");
    let mut fresh = data.fresh_env();
    run(fresh.as_mut(), Requestor::User, "connect_vpn", json!({}));
    assert_eq!(details(fresh.as_ref())["server_performance"], "excellent");
}

#[test]
fn sync_reflects_the_backend_on_the_phone() {
    let Some(data) = data() else { return };
    let overdue = data
        .tasks
        .iter()
        .find(|t| t.gold_actions().iter().any(|a| a.name == "make_payment"))
        .expect("an overdue-bill task");
    let mut env = initial_env(data, overdue).expect("init");
    let surroundings =
        |env: &dyn Environment| env.user_db().expect("user db")["surroundings"].clone();
    assert_eq!(surroundings(env.as_ref())["line_active"], false);
    let (content, _) = run(
        env.as_mut(),
        Requestor::Assistant,
        "send_payment_request",
        json!({"customer_id": "C1001", "bill_id": "B1234321"}),
    );
    assert_eq!(
        content,
        "Payment request sent to the customer for bill B1234321"
    );
    assert_eq!(
        surroundings(env.as_ref())["payment_request"],
        json!({"bill_id": "B1234321", "amount_due": 65.0, "paid": false})
    );
    let (content, _) = run(
        env.as_mut(),
        Requestor::User,
        "check_payment_request",
        json!({}),
    );
    assert_eq!(
        content,
        "You have a payment request for bill B1234321 of 65.0 USD."
    );
    let (content, _) = run(env.as_mut(), Requestor::User, "make_payment", json!({}));
    assert_eq!(
        content,
        "Payment of 65.0 USD has been made for bill B1234321."
    );
    assert_eq!(
        surroundings(env.as_ref())["payment_request"],
        Value::Null,
        "sync settled the payment"
    );
    let bill = env.agent_db()["bills"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["bill_id"] == "B1234321").cloned());
    assert_eq!(bill.expect("bill")["status"], "Paid");
    run(
        env.as_mut(),
        Requestor::Assistant,
        "resume_line",
        json!({"customer_id": "C1001", "line_id": "L1002"}),
    );
    assert_eq!(surroundings(env.as_ref())["line_active"], true);
}

// ---- property test: random arguments never panic ------------------------------------------

const SAMPLE_STRINGS: &[&str] = &[
    "C1001",
    "C1002",
    "L1002",
    "L1004",
    "B1003",
    "B1234321",
    "D1001",
    "P1002",
    "555-123-2002",
    "messaging",
    "browser",
    "sms",
    "storage",
    "Storage",
    "4g_only",
    "4g_5g_preferred",
    "2g_only",
    "pin",
    "puk",
    "internet",
    "broken",
    "connected",
    "no_service",
    "excellent",
    "",
    " ",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        (-5i64..20).prop_map(|i| json!(i)),
        prop_oneof![
            Just(0.0f64),
            Just(-0.0),
            Just(0.5),
            Just(2.0),
            Just(1e300),
            Just(-1e-300),
            Just(1e19),
            -1e6f64..1e6
        ]
        .prop_map(|f| json!(f)),
        any::<u64>().prop_map(|u| json!(u)),
        prop::sample::select(SAMPLE_STRINGS).prop_map(|s| json!(s)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{0,12}", inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Every method of both toolkits, with its parameter names.
fn methods() -> Vec<(Requestor, &'static str, Vec<&'static str>)> {
    let mut out = Vec::new();
    let sides = [
        (Requestor::Assistant, tauguard_env::telecom::AGENT_TOOLKIT),
        (Requestor::User, tauguard_env::telecom::USER_TOOLKIT),
    ];
    for (side, toolkit) in sides {
        for def in toolkit {
            out.push((side, def.name, def.params.iter().map(|p| p.name).collect()));
        }
    }
    out
}

fn arguments_for(params: Vec<&'static str>) -> impl Strategy<Value = Map<String, Value>> {
    let mut keys: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    keys.extend(["junk", "apn_name", "mode", "id", "reset_at_reboot"].map(String::from));
    let all_params = params.clone();
    (
        prop::collection::vec((prop::sample::select(keys), json_value()), 0..4),
        prop::collection::vec(json_value(), all_params.len()),
        prop::collection::vec(any::<bool>(), all_params.len()),
    )
        .prop_map(move |(extra, values, keep)| {
            let mut m = Map::new();
            for ((name, value), keep) in all_params.iter().zip(values).zip(keep) {
                if keep {
                    m.insert(name.to_string(), value);
                }
            }
            m.extend(extra);
            m
        })
}

fn call_strategy()
-> impl Strategy<Value = (usize, Requestor, &'static str, Map<String, Value>, usize)> {
    let methods = methods();
    (0..methods.len(), 0usize..114, 0usize..3).prop_flat_map(move |(i, task, repeats)| {
        let (side, name, params) = methods[i].clone();
        (
            Just(task),
            Just(side),
            Just(name),
            arguments_for(params),
            Just(repeats),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_arguments_never_panic((task, side, name, arguments, repeats) in call_strategy()) {
        let Some(data) = data() else { return Ok(()) };
        let task = &data.tasks[task % data.tasks.len()];
        let mut env = initial_env(data, task).expect("initial state");
        for _ in 0..=repeats {
            // Through the raw method path (helpers included) ...
            let _ = env.call(side, name, &arguments).map(|v| v.content());
            let _ = env.sync_tools();
            // ... and through the live tool path.
            let (content, error) = env.execute(side, name, &arguments);
            prop_assert!(!error || content.starts_with("Error: "), "{}", content);
        }
        let _ = env.agent_db();
        let _ = env.user_db();
        let _ = env.changes_since(data.fresh_env().as_ref());
    }
}
