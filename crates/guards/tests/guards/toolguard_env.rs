//! ToolGuard on live environments: concrete calls that PASS and BLOCK on the project's airline
//! fixture domain (always present), and every gold mutating call of the base split of each
//! τ²-bench domain checked on the gold-replay state just before it (skipped without the data
//! directory unless `CI` is set).

use crate::support::{airline_rules, bare_context, rule_dir};
use serde_json::{Map, Value, json};
use tauguard_core::{Requestor, Task, ToolCall, ToolKind};
use tauguard_env::{DataDir, DomainData, Environment, initial_env};
use tauguard_guards::{Decision, Guard, RuleSet, ToolCatalog, ToolGuard, Verdict};

use tauguard_testkit::workspace_root;

fn data_dir() -> Option<DataDir> {
    let dir = tauguard_testkit::tau2_dir()?;
    Some(DataDir::resolve(Some(&dir)).unwrap_or_else(|e| panic!("{e}")))
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
    let ctx = bare_context(env);
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

    // Insured economy, old: the insurance clause needs a covered reason, which only the
    // dialogue carries; the rule accepts insurance alone rather than block compliant
    // cancellations (its under-blocking).
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
fn flown_segments_block_cancellation_and_changes() {
    let data = fixture();
    let mut env = data.fresh_env();
    // FXA001 (business) gets an outbound segment flown on 2024-05-10 (HAT900 landed).
    let patch = json!({"reservations": {"FXA001": {"flights": [
        {"flight_number": "HAT900", "origin": "JFK", "destination": "ORD", "date": "2024-05-10", "price": 400},
        {"flight_number": "HAT901", "origin": "ORD", "destination": "JFK", "date": "2024-05-24", "price": 400}],
        "flight_type": "round_trip"}}});
    env.merge_initialization_data(Some(&patch), None).unwrap();
    let g = guard("airline");
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "FXA001"})),
    );
    assert_block(&d, &["no_segment_flown"]);
    assert!(
        d.remediation
            .as_deref()
            .unwrap()
            .contains("transfer the user to a human agent")
    );
    // Changing the return flight or the cabin is blocked too.
    let kept = json!({"flight_number": "HAT900", "date": "2024-05-10"});
    let change = json!({"reservation_id": "FXA001", "cabin": "business",
        "flights": [kept, {"flight_number": "HAT901", "date": "2024-05-12"}], "payment_id": "gift_card_1000001"});
    let d = decide(
        &g,
        env.as_ref(),
        &call("update_reservation_flights", change),
    );
    // HAT901 on 2024-05-12 was cancelled: not bookable either.
    assert_block(
        &d,
        &["no_flight_change_after_flown", "new_segments_bookable"],
    );
    let cabin = json!({"reservation_id": "FXA001", "cabin": "economy",
        "flights": [kept, {"flight_number": "HAT901", "date": "2024-05-24"}], "payment_id": "gift_card_1000001"});
    assert_block(
        &decide(&g, env.as_ref(), &call("update_reservation_flights", cabin)),
        &["no_cabin_change_after_flown"],
    );
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

#[test]
fn record_lookups_follow_the_live_state_across_environments() {
    // A rule reading the reservation through a `record` lookup (the agent database).
    let dir = rule_dir(
        "update_reservation_passengers.yaml",
        "tool: update_reservation_passengers\nlookups:\n  res:\n    record: reservations\n    key: \"args.reservation_id\"\n  all:\n    record: reservations\nrules:\n  - name: active\n    check: \"res.status != 'cancelled' && all[args.reservation_id].status == res.status\"\n    message: Cancelled.\n",
    );
    let rules = airline_rules(dir.path());
    let g = ToolGuard::new(rules);
    let edit = |id: &str| {
        call(
            "update_reservation_passengers",
            json!({"reservation_id": id, "passengers": [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}]}),
        )
    };
    let data = fixture();
    let mut env = data.fresh_env();
    assert_pass(&decide(&g, env.as_ref(), &edit("FXA003")));
    let Value::Object(args) = json!({"reservation_id": "FXA003"}) else {
        unreachable!()
    };
    env.dispatch(Requestor::Assistant, "cancel_reservation", &args)
        .unwrap();
    assert_block(&decide(&g, env.as_ref(), &edit("FXA003")), &["active"]);
    // A fresh environment again (the cached reference is not the live state).
    assert_pass(&decide(&g, data.fresh_env().as_ref(), &edit("FXA003")));
    let d = decide(&g, env.as_ref(), &edit("NOPE00"));
    assert_block(&d, &["active"]);
    assert!(
        d.info.as_ref().unwrap()["lookups"]["res"]["errors"][0]
            .as_str()
            .unwrap()
            .contains("no `reservations` record")
    );
    // Another database of the same domain.
    if let Some(real) = load("airline") {
        let real_env = real.fresh_env();
        let id = real_env.agent_db()["reservations"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        let d = decide(&g, real_env.as_ref(), &edit(&id));
        assert_eq!(
            d.info.as_ref().unwrap()["lookups"]["res"]["ok"],
            json!(true),
            "{d:#?}"
        );
        assert_block(&decide(&g, real_env.as_ref(), &edit("FXA003")), &["active"]);
        assert_block(&decide(&g, env.as_ref(), &edit("FXA003")), &["active"]);
    }
}

/// One gold mutating call ToolGuard would block.
#[derive(Debug)]
struct GoldBlock {
    task: String,
    tool: String,
    rules: Vec<String>,
    /// The tool's own error when the call runs anyway (`None`: it succeeds).
    tool_error: Option<String>,
}

/// Replays every base-split task's gold actions and checks each agent-side mutating call on
/// the state just before it. Telecom syncs after each action, as live runs do.
fn gold_blocks(data: &DomainData, g: &ToolGuard) -> (usize, Vec<GoldBlock>) {
    let tasks: Vec<&Task> = data.select_tasks(Some("base"), None, None).unwrap();
    let mut checked = 0;
    let mut blocks = Vec::new();
    for task in tasks {
        let mut env = initial_env(data, task).unwrap_or_else(|e| panic!("{}: {e}", task.id));
        for action in task.gold_actions() {
            let write = env.tool_kind(action.requestor, &action.name) == Some(ToolKind::Write);
            let decision = (write && action.requestor == Requestor::Assistant).then(|| {
                let c = ToolCall {
                    id: action.action_id.clone(),
                    name: action.name.clone(),
                    arguments: action.arguments.clone(),
                    requestor: Requestor::Assistant,
                };
                let d = decide(g, env.as_ref(), &c);
                let info = d.info.as_ref().unwrap();
                let errors = &info["errors"];
                assert_eq!(
                    errors,
                    &json!([]),
                    "{} {}: no evaluation errors: {d:#?}",
                    task.id,
                    c.name
                );
                d
            });
            let result = env.dispatch(action.requestor, &action.name, &action.arguments);
            if data.domain == "telecom" {
                let _ = env.sync_tools();
            }
            if let Some(d) = decision {
                checked += 1;
                if d.verdict == Verdict::Block {
                    blocks.push(GoldBlock {
                        task: task.id.clone(),
                        tool: action.name.clone(),
                        rules: violated(&d).into_iter().map(String::from).collect(),
                        tool_error: result.err().map(|e| e.content()),
                    });
                }
            }
        }
    }
    (checked, blocks)
}

fn show(blocks: &[GoldBlock]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| {
            let outcome = match &b.tool_error {
                Some(e) => format!(" (the tool rejects it too: {e})"),
                None => String::new(),
            };
            format!("{} {} {}{outcome}", b.task, b.tool, b.rules.join("+"))
        })
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
    // Gold calls are policy-compliant, so any block would be a false positive. The four the
    // strict reading of the cancellation rule used to block (tasks 7, 19, 29, 39: old,
    // non-business, insured reservations cancelled for a covered reason the user gives in the
    // dialogue) pass since the rule accepts insurance alone
    // (tasks/airline/rules/cancel_reservation.yaml says why).
    assert!(blocks.is_empty(), "{:#?}", show(&blocks));
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
    assert_eq!(checked, 176);
    // No blocks. The two gold calls τ²-bench keeps as deliberately failing attempts (64: an
    // exchange tried on a pending order; 105: a gift card holding 17.00 for a 21.10 price
    // difference) are answered by the tool itself, so the exchange rules leave those checks to
    // it (tasks/retail/rules/exchange_delivered_order_items.yaml says why).
    assert!(blocks.is_empty(), "{:#?}", show(&blocks));
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

#[test]
fn retail_rules_on_concrete_calls() {
    let Some(data) = load("retail") else { return };
    let env = data.fresh_env();
    let g = guard("retail");
    let db = env.agent_db();
    let orders = db["orders"].as_object().unwrap();
    let with_status = |status: &str| {
        orders
            .values()
            .find(|o| o["status"] == status && o["items"].as_array().unwrap().len() >= 2)
            .unwrap()
    };
    let pending = with_status("pending");
    let delivered = with_status("delivered");
    let id = |o: &Value| o["order_id"].as_str().unwrap().to_string();

    let cancel = |o: &Value, reason: &str| {
        call(
            "cancel_pending_order",
            json!({"order_id": id(o), "reason": reason}),
        )
    };
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &cancel(pending, "no longer needed"),
    ));
    assert_block(
        &decide(&g, env.as_ref(), &cancel(pending, "too expensive")),
        &["reason_allowed"],
    );
    assert_block(
        &decide(&g, env.as_ref(), &cancel(delivered, "ordered by mistake")),
        &["order_pending"],
    );

    // Returns go to the original method (or a gift card of the user).
    let item = delivered["items"][0]["item_id"].clone();
    let original = delivered["payment_history"][0]["payment_method_id"].clone();
    let ret = |items: Value, pm: Value| {
        call(
            "return_delivered_order_items",
            json!({"order_id": id(delivered), "item_ids": items, "payment_method_id": pm}),
        )
    };
    assert_pass(&decide(
        &g,
        env.as_ref(),
        &ret(json!([item]), original.clone()),
    ));
    assert_block(
        &decide(&g, env.as_ref(), &ret(json!([item, item, item]), original)),
        &["items_in_order"],
    );

    // An item may only become another available variant of the same product.
    let old = &pending["items"][0];
    let product = old["product_id"].as_str().unwrap();
    let products = db["products"].as_object().unwrap();
    let same = products[product]["variants"]
        .as_object()
        .unwrap()
        .values()
        .find(|v| v["available"] == json!(true) && v["item_id"] != old["item_id"])
        .map(|v| v["item_id"].clone());
    let other = products
        .values()
        .find(|p| p["product_id"] != product)
        .unwrap()["variants"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()["item_id"]
        .clone();
    let pm = pending["payment_history"][0]["payment_method_id"].clone();
    let modify = |new: Value| {
        call(
            "modify_pending_order_items",
            json!({"order_id": id(pending), "item_ids": [old["item_id"]], "new_item_ids": [new], "payment_method_id": pm}),
        )
    };
    let d = decide(&g, env.as_ref(), &modify(other));
    assert!(
        violated(&d).contains(&"new_items_same_product_available"),
        "{d:#?}"
    );
    if let Some(same) = same {
        let d = decide(&g, env.as_ref(), &modify(same));
        // A gift card may lack the balance for a price increase; nothing else may fail.
        assert!(
            violated(&d)
                .iter()
                .all(|r| *r == "gift_card_covers_difference"),
            "{d:#?}"
        );
    }
}

#[test]
fn evaluation_errors_fail_closed_by_default_and_open_on_request() {
    let dir = rule_dir(
        "cancel_reservation.yaml",
        "tool: cancel_reservation
lookups:
  reservation:
    tool: get_reservation_details
    args: {reservation_id: \"args.reservation_id\"}
rules:
  - name: closed
    check: \"reservation.cabin == 'business'\"
    message: Business only.
  - name: open
    check: \"reservation.insurance == 'yes'\"
    message: Insured only.
    on_error: pass
",
    );
    let rules = airline_rules(dir.path());
    let g = ToolGuard::new(rules);
    let data = fixture();
    let env = data.fresh_env();
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "NOPE00"})),
    );
    assert_block(&d, &["closed"]);
    let open = d.requirements.iter().find(|r| r.name == "open").unwrap();
    assert!(open.met);
    assert!(
        open.reason
            .starts_with("could not be evaluated (fail-open)"),
        "{open:?}"
    );
    let errors = &d.info.as_ref().unwrap()["errors"];
    assert_eq!(errors[0]["rule"], "closed");
    assert_eq!(errors[0]["on_error"], "block");
    assert_eq!(errors[1]["rule"], "open");
    assert_eq!(errors[1]["on_error"], "pass");
    // The remediation names the unverifiable rule and the failed lookup.
    let remediation = d.remediation.as_deref().unwrap();
    assert!(
        remediation.contains("Could not verify `closed`"),
        "{remediation}"
    );
    assert!(
        remediation.contains("Reservation NOPE00 not found"),
        "{remediation}"
    );
    // On an existing reservation both rules evaluate normally.
    let d = decide(
        &g,
        env.as_ref(),
        &call("cancel_reservation", json!({"reservation_id": "FXA001"})),
    );
    assert_block(&d, &["open"]);
    assert_eq!(d.remediation.as_deref(), Some("Insured only."));
}
