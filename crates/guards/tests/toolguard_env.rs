//! ToolGuard on live environments: concrete calls that PASS and BLOCK on the project's airline
//! fixture domain (always present), and every gold mutating call of the base split of each
//! τ²-bench domain checked on the gold-replay state just before it (skipped without the data
//! directory unless `CI` is set).

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use tauguard_core::{Requestor, Task, ToolCall, ToolKind};
use tauguard_env::{DataDir, DomainData, Environment, gold};
use tauguard_guards::toolguard::{RuleSet, ToolCatalog, ToolGuard};
use tauguard_guards::{Decision, Guard, GuardContext, Verdict};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `TAUGUARD_DATA_DIR` (relative paths from the workspace root), else `../shared/tau2`.
fn data_dir() -> Option<DataDir> {
    let candidate = match std::env::var_os("TAUGUARD_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                workspace_root().join(p)
            }
        }
        None => workspace_root().join("../shared/tau2"),
    };
    match DataDir::resolve(Some(&candidate)) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have the τ²-bench data: {e}"
            );
            eprintln!("skipping: no τ²-bench data directory ({e})");
            None
        }
    }
}

fn load(domain: &str) -> Option<DomainData> {
    let dir = data_dir()?;
    Some(DomainData::load(&dir, domain).unwrap_or_else(|e| panic!("loading {domain}: {e}")))
}

fn fixture() -> DomainData {
    let dir = DataDir::resolve(Some(&workspace_root().join("tasks/fixtures")))
        .expect("tasks/fixtures exists");
    DomainData::load(&dir, "airline").expect("fixture airline domain loads")
}

fn guard(domain: &str) -> ToolGuard {
    ToolGuard::load(&workspace_root().join("tasks"), domain).unwrap_or_else(|e| panic!("{e}"))
}

fn call(name: &str, args: Value) -> ToolCall {
    let Value::Object(arguments) = args else {
        panic!("arguments are an object")
    };
    ToolCall {
        id: format!("call_{name}"),
        name: name.into(),
        arguments,
        requestor: Requestor::Assistant,
    }
}

fn decide(g: &ToolGuard, env: &dyn Environment, c: &ToolCall) -> Decision {
    let ctx = GuardContext {
        domain: env.domain(),
        policy: "",
        task_id: "t",
        trial: 0,
        seed: 0,
        history: &[],
        env,
    };
    // Through the `Guard` trait, as the orchestrator calls it.
    let fut = g.on_mutating_call(&ctx, c);
    let d = block_on(fut).expect("rule guards do not fail");
    assert_eq!(d, g.evaluate(&ctx, c), "trait and direct evaluation agree");
    d
}

/// The rule guard's future is ready immediately; poll it once.
fn block_on<T>(fut: impl std::future::Future<Output = T>) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(fut)
}

fn violated(d: &Decision) -> Vec<&str> {
    d.requirements
        .iter()
        .filter(|r| !r.met)
        .map(|r| r.name.as_str())
        .collect()
}

fn assert_pass(d: &Decision) {
    assert_eq!(d.verdict, Verdict::Pass, "expected PASS: {d:#?}");
    assert!(d.remediation.is_none());
    assert!(d.requirements.iter().all(|r| r.met));
}

fn assert_block(d: &Decision, rules: &[&str]) {
    assert_eq!(d.verdict, Verdict::Block, "expected BLOCK: {d:#?}");
    assert_eq!(violated(d), rules, "{d:#?}");
    let remediation = d.remediation.as_deref().unwrap();
    assert!(!remediation.is_empty());
    let sentences = remediation.matches(['.', '!', '?']).count();
    assert!(
        (1..=3).contains(&sentences) || rules.len() > 3,
        "1-3 sentences: {remediation}"
    );
}

#[test]
fn builtin_catalogs_match_the_environments() {
    let fx = fixture();
    assert_eq!(
        ToolCatalog::from_env(fx.fresh_env().as_ref()),
        ToolCatalog::builtin("airline").unwrap()
    );
    for domain in ["airline", "retail", "telecom"] {
        let Some(data) = load(domain) else { return };
        assert_eq!(
            ToolCatalog::from_env(data.fresh_env().as_ref()),
            ToolCatalog::builtin(domain).unwrap(),
            "{domain}"
        );
        // And the rule sets load against the live inventory too.
        let catalog = ToolCatalog::from_env(data.fresh_env().as_ref());
        RuleSet::load_dir(
            &workspace_root().join("tasks").join(domain).join("rules"),
            &catalog,
        )
        .unwrap();
    }
}

// Fixture DB (tasks/fixtures/airline/db.json), now = 2024-05-15T15:00:00:
//   zoe_quinn_1001 silver, gift_card_1000001 + credit_card_1000002, reservations FXA001, FXA002
//   omar_diaz_2002 regular, credit_card_2000001 + certificate_2000002, reservation FXA003
//   FXA001 business JFK→ORD HAT900 2024-05-21, 1 passenger, created 2024-05-02, uninsured
//   FXA002 economy ORD→JFK HAT901 2024-05-24, 2 passengers, insured, 2 bags (0 non-free)
//   FXA003 basic economy JFK→ORD HAT900 2024-05-20, 1 passenger, created 2024-05-01, uninsured
//   HAT900 JFK→ORD (2024-05-10 landed, 05-15 delayed, 05-20/21 available), HAT901 ORD→JFK
//   (05-12 cancelled, 05-24 available), HAT902 ORD→SFO (05-20 available)

fn zoe_booking() -> Value {
    json!({"user_id": "zoe_quinn_1001", "origin": "JFK", "destination": "ORD", "flight_type": "one_way",
        "cabin": "economy", "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}],
        "passengers": [{"first_name": "Zoë", "last_name": "Quinn", "dob": "1980-02-03"}],
        "payment_methods": [{"payment_id": "gift_card_1000001", "amount": 100},
                            {"payment_id": "credit_card_1000002", "amount": 40}],
        "total_baggages": 1, "nonfree_baggages": 0, "insurance": "yes"})
}

#[test]
fn fixture_cancellations() {
    let data = fixture();
    let env = data.fresh_env();
    let g = guard("airline");

    // Business cabin: eligible whatever the age of the booking.
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "FXA001"})),
    );
    assert_pass(&d);
    assert_eq!(d.requirements.len(), 3);
    let info = d.info.as_ref().unwrap();
    assert_eq!(info["lookups"]["reservation"]["ok"], json!(true));
    assert_eq!(info["violated"], json!([]));

    // Old, basic economy, uninsured, no airline-cancelled flight: blocked.
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "FXA003"})),
    );
    assert_block(&d, &["cancellation_eligible"]);
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .contains("more than 24 hours ago")
    );

    // Insured economy: the reason is invisible, so insurance alone passes (under-blocking).
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "FXA002"})),
    );
    assert_pass(&d);

    // Unknown reservation: the lookup fails, binds null, and every rule fails closed.
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "NOPE00"})),
    );
    assert_block(
        &d,
        &[
            "reservation_not_cancelled",
            "no_segment_flown",
            "cancellation_eligible",
        ],
    );
    let info = d.info.as_ref().unwrap();
    assert_eq!(info["lookups"]["reservation"]["ok"], json!(false));
    assert!(
        info["lookups"]["reservation"]["errors"][0]
            .as_str()
            .unwrap()
            .contains("Reservation NOPE00 not found")
    );
    assert_eq!(info["lookups"]["statuses"]["skipped"], json!(true));
    assert_eq!(info["errors"].as_array().unwrap().len(), 3);
    assert!(
        info["errors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["on_error"] == "block")
    );
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .contains("Reservation NOPE00 not found"),
        "{d:#?}"
    );
}

#[test]
fn fixture_bookings() {
    let data = fixture();
    let env = data.fresh_env();
    let g = guard("airline");

    // The fixture's gold booking (task f5) passes every rule.
    let d = decide(&g, env.as_ref(), &call("book_reservation", zoe_booking()));
    assert_pass(&d);
    assert_eq!(d.requirements.len(), 11);

    // Six passengers.
    let mut six = zoe_booking();
    let p = json!({"first_name": "A", "last_name": "B", "dob": "1990-01-01"});
    six["passengers"] = json!([p, p, p, p, p, p]);
    six["payment_methods"] = json!([{"payment_id": "credit_card_1000002", "amount": 840}]);
    let d = decide(&g, env.as_ref(), &call("book_reservation", six));
    // Six economy passengers of a silver member get 12 free bags: 1 bag is free as well.
    assert_block(&d, &["passenger_count"]);
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .contains("at most five passengers")
    );

    // Two certificates (the same one listed twice), plus a method not in the profile.
    let mut certs = zoe_booking();
    certs["user_id"] = json!("omar_diaz_2002");
    certs["payment_methods"] = json!([{"payment_id": "certificate_2000002", "amount": 70},
                                      {"payment_id": "certificate_2000002", "amount": 70}]);
    certs["nonfree_baggages"] = json!(0);
    let d = decide(&g, env.as_ref(), &call("book_reservation", certs.clone()));
    // A regular member in economy has one free bag per passenger: one bag, none non-free.
    assert_block(&d, &["at_most_one_certificate"]);
    certs["payment_methods"] = json!([{"payment_id": "gift_card_1000001", "amount": 140}]);
    let d = decide(&g, env.as_ref(), &call("book_reservation", certs));
    assert_block(&d, &["payment_methods_in_profile"]);

    // Paying for a free bag, a flight that is not bookable, and a broken itinerary.
    let mut bad = zoe_booking();
    bad["nonfree_baggages"] = json!(1);
    bad["flights"] = json!([{"flight_number": "HAT900", "date": "2024-05-15"},
                           {"flight_number": "HAT902", "date": "2024-05-20"}]);
    let d = decide(&g, env.as_ref(), &call("book_reservation", bad));
    assert_block(
        &d,
        &[
            "flights_bookable",
            "itinerary_matches_trip",
            "nonfree_bags_match_allowance",
        ],
    );
}

#[test]
fn fixture_modifications() {
    let data = fixture();
    let env = data.fresh_env();
    let g = guard("airline");

    // The fixture's gold baggage update (task f2): 2 economy passengers of a silver member
    // have 4 free bags, so 5 bags mean 1 non-free.
    let bags = json!({"reservation_id": "FXA002", "total_baggages": 5, "nonfree_baggages": 1,
        "payment_id": "credit_card_1000002"});
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &call("update_reservation_baggages", bags),
    ));
    let fewer = json!({"reservation_id": "FXA002", "total_baggages": 1, "nonfree_baggages": 0,
        "payment_id": "credit_card_1000002"});
    assert_block(
        &decide(
            &g,
            env.as_ref(),
            &call("update_reservation_baggages", fewer),
        ),
        &["bags_not_removed"],
    );

    // Basic economy: a cabin change on the same flights passes, a flight change does not.
    let upgrade = json!({"reservation_id": "FXA003", "cabin": "economy",
        "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "credit_card_2000001"});
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &call("update_reservation_flights", upgrade),
    ));
    let change = json!({"reservation_id": "FXA003", "cabin": "basic_economy",
        "flights": [{"flight_number": "HAT900", "date": "2024-05-21"}], "payment_id": "credit_card_2000001"});
    assert_block(
        &decide(
            &g,
            env.as_ref(),
            &call("update_reservation_flights", change),
        ),
        &["basic_economy_flights_unchanged"],
    );
    // Economy: a date change on the same route passes; a new destination or a certificate
    // does not.
    let moved = json!({"reservation_id": "FXA001", "cabin": "business",
        "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "gift_card_1000001"});
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &call("update_reservation_flights", moved),
    ));
    let elsewhere = json!({"reservation_id": "FXA002", "cabin": "economy",
        "flights": [{"flight_number": "HAT902", "date": "2024-05-20"}], "payment_id": "gift_card_1000001"});
    assert_block(
        &decide(
            &g,
            env.as_ref(),
            &call("update_reservation_flights", elsewhere),
        ),
        &["destination_and_trip_type_unchanged"],
    );
    let by_certificate = json!({"reservation_id": "FXA003", "cabin": "economy",
        "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "certificate_2000002"});
    assert_block(
        &decide(
            &g,
            env.as_ref(),
            &call("update_reservation_flights", by_certificate),
        ),
        &["payment_is_gift_card_or_credit_card"],
    );

    // Passenger edits keep the count.
    let two = json!({"reservation_id": "FXA002", "passengers": [
        {"first_name": "Zoë", "last_name": "Quinn", "dob": "1980-02-03"},
        {"first_name": "Ada", "last_name": "Quinn", "dob": "2010-06-01"}]});
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &call("update_reservation_passengers", two),
    ));
    let one = json!({"reservation_id": "FXA002", "passengers": [
        {"first_name": "Zoë", "last_name": "Quinn", "dob": "1980-02-03"}]});
    assert_block(
        &decide(
            &g,
            env.as_ref(),
            &call("update_reservation_passengers", one),
        ),
        &["passenger_count_unchanged"],
    );

    // No reservation of zoe has a cancelled or delayed flight: no certificate amount fits.
    // omar is a regular member without insurance or business: not eligible at all.
    let cert = json!({"user_id": "zoe_quinn_1001", "amount": 200});
    assert_block(
        &decide(&g, env.as_ref(), &call("send_certificate", cert)),
        &["amount_matches_compensation"],
    );
    let cert = json!({"user_id": "omar_diaz_2002", "amount": 100});
    assert_block(
        &decide(&g, env.as_ref(), &call("send_certificate", cert)),
        &[
            "member_eligible_for_compensation",
            "amount_matches_compensation",
        ],
    );

    // A tool without a rule file (and a read-only one) passes with no requirements.
    let d = decide(
        &g,
        env.as_ref(),
        &call("get_user_details", json!({"user_id": "zoe_quinn_1001"})),
    );
    assert_pass(&d);
    assert!(d.requirements.is_empty());
    assert_eq!(g.name(), "toolguard");
}

#[test]
fn lookups_see_the_current_state_and_leave_it_untouched() {
    let data = fixture();
    let mut env = data.fresh_env();
    let g = guard("airline");
    let before = env.agent_db();
    let cancel = call("cancel_reservation", json!({"reservation_id": "FXA003"}));
    assert_eq!(decide(&g, env.as_ref(), &cancel).verdict, Verdict::Block);
    assert_eq!(
        env.agent_db(),
        before,
        "guard lookups never mutate the live state"
    );

    // Upgrading FXA003 to business (a cabin change is allowed in basic economy) makes its
    // cancellation eligible: the guard reads the state as it is now.
    let upgrade = json!({"reservation_id": "FXA003", "cabin": "business",
        "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "credit_card_2000001"});
    let Value::Object(args) = upgrade else {
        unreachable!()
    };
    env.dispatch(Requestor::Assistant, "update_reservation_flights", &args)
        .unwrap();
    assert_pass(&decide(&g, env.as_ref(), &cancel));
}

/// One gold mutating call ToolGuard would block.
#[derive(Debug)]
struct GoldBlock {
    task: String,
    tool: String,
    rules: Vec<String>,
}

/// Replays every base-split task's gold actions and checks each agent-side mutating call on
/// the state just before it. Telecom syncs after each action, as live runs do.
fn gold_blocks(data: &DomainData, g: &ToolGuard) -> (usize, Vec<GoldBlock>) {
    let tasks: Vec<&Task> = data.select_tasks(Some("base"), None, None).unwrap();
    let mut checked = 0;
    let mut blocks = Vec::new();
    for task in tasks {
        let mut env = gold::initial_env(data, task).unwrap_or_else(|e| panic!("{}: {e}", task.id));
        for action in task.gold_actions() {
            let write = env.tool_kind(action.requestor, &action.name) == Some(ToolKind::Write);
            if write && action.requestor == Requestor::Assistant {
                let c = ToolCall {
                    id: action.action_id.clone(),
                    name: action.name.clone(),
                    arguments: action.arguments.clone(),
                    requestor: Requestor::Assistant,
                };
                let d = decide(g, env.as_ref(), &c);
                checked += 1;
                let info = d.info.as_ref().unwrap();
                assert_eq!(
                    info["errors"],
                    json!([]),
                    "{} {}: no evaluation errors on gold calls: {d:#?}",
                    task.id,
                    c.name
                );
                if d.verdict == Verdict::Block {
                    blocks.push(GoldBlock {
                        task: task.id.clone(),
                        tool: c.name.clone(),
                        rules: violated(&d).into_iter().map(String::from).collect(),
                    });
                }
            }
            let _ = env.dispatch(action.requestor, &action.name, &action.arguments);
            if data.domain == "telecom" {
                let _ = env.sync_tools();
            }
        }
    }
    (checked, blocks)
}

fn show(blocks: &[GoldBlock]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| format!("{} {} {}", b.task, b.tool, b.rules.join("+")))
        .collect()
}

#[test]
fn airline_gold_mutating_calls() {
    let Some(data) = load("airline") else { return };
    let (checked, blocks) = gold_blocks(&data, &guard("airline"));
    eprintln!(
        "airline: {checked} gold mutating calls, {} blocked: {:#?}",
        blocks.len(),
        show(&blocks)
    );
    assert_eq!(checked, 49);
    // False positives (gold calls are policy-compliant by construction): see the report.
    assert_eq!(show(&blocks), Vec::<String>::new());
}

#[test]
fn retail_gold_mutating_calls() {
    let Some(data) = load("retail") else { return };
    let (checked, blocks) = gold_blocks(&data, &guard("retail"));
    eprintln!(
        "retail: {checked} gold mutating calls, {} blocked: {:#?}",
        blocks.len(),
        show(&blocks)
    );
    assert_eq!(show(&blocks), Vec::<String>::new());
}

#[test]
fn telecom_gold_mutating_calls() {
    let Some(data) = load("telecom") else { return };
    let (checked, blocks) = gold_blocks(&data, &guard("telecom"));
    eprintln!(
        "telecom: {checked} gold mutating calls, {} blocked: {:#?}",
        blocks.len(),
        show(&blocks)
    );
    assert_eq!(checked, 103);
    assert_eq!(show(&blocks), Vec::<String>::new());
}

#[test]
fn telecom_rules_on_concrete_calls() {
    let Some(data) = load("telecom") else { return };
    let env = data.fresh_env();
    let g = guard("telecom");
    let refuel = |gb: f64, line: &str| {
        call(
            "refuel_data",
            json!({"customer_id": "C1001", "line_id": line, "gb_amount": gb}),
        )
    };
    assert_pass(&decide(&g, env.as_ref(), &refuel(2.0, "L1002")));
    assert_block(
        &decide(&g, env.as_ref(), &refuel(3.0, "L1002")),
        &["refuel_amount_within_limit"],
    );
    assert_block(
        &decide(&g, env.as_ref(), &refuel(1.0, "L1004")),
        &["line_belongs_to_customer"],
    );
    let resume = call(
        "resume_line",
        json!({"customer_id": "C1001", "line_id": "L1002"}),
    );
    assert_block(&decide(&g, env.as_ref(), &resume), &["line_suspended"]);
    let mut args = Map::new();
    args.insert("customer_id".into(), json!("C1001"));
    args.insert("line_id".into(), json!("L1002"));
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &ToolCall {
            arguments: args,
            ..call("enable_roaming", json!({}))
        },
    ));
}
