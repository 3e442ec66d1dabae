//! Airline domain behaviour through the public environment interface: the spec's worked
//! hash vectors, upstream's quirks and error texts, gold-action replay over the whole base
//! split, agreement with the shipped `tools.json`, and a no-panic property over random
//! arguments.

use crate::common::{self, args};

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use tauguard_core::{Requestor, ToolKind};
use tauguard_env::airline::AirlineBase;
use tauguard_env::db_hash;
use tauguard_env::{DomainBase, Environment};
use tauguard_env::{initial_env, run_gold_actions};

/// The §3.18 database.
fn worked_db() -> Value {
    json!({
        "flights": {"HAT900": {
            "origin": "JFK", "destination": "ORD", "flight_number": "HAT900",
            "scheduled_departure_time_est": "07:00:00", "scheduled_arrival_time_est": "09:30:00",
            "dates": {"2024-05-20": {"status": "available",
                "available_seats": {"basic_economy": 5, "economy": 4, "business": 2},
                "prices": {"basic_economy": 60, "economy": 110, "business": 400}}}}},
        "users": {"zoe_q_1": {
            "user_id": "zoe_q_1", "name": {"first_name": "Zoë", "last_name": "Q"},
            "address": {"address1": "1 Main", "city": "Boston", "country": "USA", "state": "MA", "zip": "02101"},
            "email": "z@example.com", "dob": "1980-02-03",
            "payment_methods": {
                "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "amount": 128.36},
                "credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "visa", "last_four": "0001"}},
            "saved_passengers": [], "membership": "silver", "reservations": []}},
        "reservations": {}
    })
}

fn base(db: &Value) -> AirlineBase {
    AirlineBase::from_json(db).expect("fixture database validates")
}

/// Runs a tool the way the orchestrator does; returns (content, error flag).
fn run(env: &mut dyn Environment, name: &str, a: Value) -> (String, bool) {
    env.execute(Requestor::Assistant, name, &args(a))
}

fn ok_json(env: &mut dyn Environment, name: &str, a: Value) -> Value {
    let (content, error) = run(env, name, a);
    assert!(!error, "{name} failed: {content}");
    serde_json::from_str(&content).unwrap_or(Value::String(content))
}

fn err(env: &mut dyn Environment, name: &str, a: Value) -> String {
    let (content, error) = run(env, name, a);
    assert!(error, "{name} unexpectedly succeeded: {content}");
    content
}

fn booking() -> Value {
    json!({
        "user_id": "zoe_q_1", "origin": "JFK", "destination": "ORD", "flight_type": "one_way",
        "cabin": "economy", "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}],
        "passengers": [{"first_name": "Zoë", "last_name": "Q", "dob": "1980-02-03"}],
        "payment_methods": [{"payment_id": "gift_card_1", "amount": 100}, {"payment_id": "credit_card_2", "amount": 40}],
        "total_baggages": 1, "nonfree_baggages": 0, "insurance": "yes"
    })
}

/// After [`booking`]: one economy seat fewer on HAT900 and the gift card charged $100 (its
/// balance as Python's float subtraction leaves it).
fn assert_booked_seat_and_balance(db: &Value) {
    assert_eq!(
        db["flights"]["HAT900"]["dates"]["2024-05-20"]["available_seats"]["economy"],
        json!(3)
    );
    assert_eq!(
        db["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"]["amount"],
        json!(28.360000000000014)
    );
}

#[test]
fn worked_vector_hashes_and_booking() {
    let b = base(&worked_db());
    let mut env = b.fresh();
    assert_eq!(
        db_hash(&env.agent_db()),
        "d696e2fe50b057c892de2146fdd16e755a580cdd983afe43a249b0ade4ea9f57"
    );
    assert_eq!(
        env.agent_db()["users"]["zoe_q_1"]["address"]["address2"],
        Value::Null
    );

    let (content, error) = run(env.as_mut(), "book_reservation", booking());
    assert!(!error, "{content}");
    assert!(
        content
            .starts_with(r#"{"reservation_id": "HATHAT", "user_id": "zoe_q_1", "origin": "JFK""#),
        "{content}"
    );
    assert!(content.ends_with(r#""created_at": "2024-05-15T15:00:00", "total_baggages": 1, "nonfree_baggages": 0, "insurance": "yes", "status": null}"#));
    let db = env.agent_db();
    assert_booked_seat_and_balance(&db);
    assert_eq!(db["users"]["zoe_q_1"]["reservations"], json!(["HATHAT"]));
    assert_eq!(
        db_hash(&db),
        "02acd6971fb22ef40b9724d5bc7010d62f52e09157cef9b0e3cfe9f00cb56b1e"
    );

    let fresh = b.fresh();
    let changes = env.changes_since(fresh.as_ref());
    let keys: Vec<&String> = changes.agent.keys().collect();
    assert_eq!(
        keys,
        ["flights/HAT900", "users/zoe_q_1", "reservations/HATHAT"]
    );
    assert!(changes.user.is_none());
    assert!(!env.same_state(fresh.as_ref()));
    assert!(env.same_state(env.snapshot().as_ref()));
    assert!(fresh.same_state(b.fresh().as_ref()));
}

#[test]
fn repeated_cancellation_refunds_again() {
    let mut env = base(&worked_db()).fresh();
    ok_json(env.as_mut(), "book_reservation", booking());
    let first = ok_json(
        env.as_mut(),
        "cancel_reservation",
        json!({"reservation_id": "HATHAT"}),
    );
    assert_eq!(first["status"], "cancelled");
    let second = ok_json(
        env.as_mut(),
        "cancel_reservation",
        json!({"reservation_id": "HATHAT"}),
    );
    let amounts: Vec<i64> = second["payment_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(amounts, [100, 40, -100, -40, -100, -40, 100, 40]);
    // No seat release, no balance restoration.
    let db = env.agent_db();
    assert_booked_seat_and_balance(&db);
}

#[test]
fn certificates_are_refused_for_updates_even_at_zero_cost() {
    let mut env = base(&worked_db()).fresh();
    ok_json(env.as_mut(), "book_reservation", booking());
    let (msg, error) = run(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 150}),
    );
    assert!(!error);
    assert_eq!(
        msg,
        "Certificate certificate_3221322 added to user zoe_q_1 with amount 150."
    );
    let (msg, _) = run(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 20.0}),
    );
    assert_eq!(
        msg,
        "Certificate certificate_3221323 added to user zoe_q_1 with amount 20.0."
    );
    assert_eq!(
        env.agent_db()["users"]["zoe_q_1"]["payment_methods"]["certificate_3221322"],
        json!({"source": "certificate", "id": "certificate_3221322", "amount": 150.0})
    );
    let before = env.agent_db();
    let e = err(
        env.as_mut(),
        "update_reservation_baggages",
        json!({"reservation_id": "HATHAT", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "certificate_3221322"}),
    );
    assert_eq!(e, "Error: Certificate cannot be used to update reservation");
    assert_eq!(env.agent_db(), before, "a failed update changes nothing");
    let e = err(
        env.as_mut(),
        "update_reservation_baggages",
        json!({"reservation_id": "HATHAT", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "nope"}),
    );
    assert_eq!(e, "Error: Payment method not found");
    // Raw arguments are stored as given: a float stays a float.
    let r = ok_json(
        env.as_mut(),
        "update_reservation_baggages",
        json!({"reservation_id": "HATHAT", "total_baggages": 3, "nonfree_baggages": 2.0, "payment_id": "credit_card_2"}),
    );
    assert_eq!(r["nonfree_baggages"], json!(2.0));
    assert!(r["nonfree_baggages"].is_f64());
    assert_eq!(
        r["payment_history"].as_array().unwrap().last().unwrap(),
        &json!({"payment_id": "credit_card_2", "amount": 100})
    );
    ok_json(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 1}),
    );
    let e = err(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 1}),
    );
    assert_eq!(e, "Error: Too many certificates");
}

#[test]
fn booking_with_a_certificate_forfeits_it_and_cabin_changes_reprice() {
    let mut env = base(&worked_db()).fresh();
    run(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 500}),
    );
    let mut b = booking();
    b["insurance"] = json!("no");
    b["payment_methods"] = json!([{"payment_id": "certificate_3221322", "amount": 110}]);
    ok_json(env.as_mut(), "book_reservation", b.clone());
    assert!(
        env.agent_db()["users"]["zoe_q_1"]["payment_methods"]
            .get("certificate_3221322")
            .is_none()
    );

    // A certificate with a zero-cost charge in a second booking is still removed.
    run(
        env.as_mut(),
        "send_certificate",
        json!({"user_id": "zoe_q_1", "amount": 10}),
    );
    b["payment_methods"] = json!([{"payment_id": "credit_card_2", "amount": 110}, {"payment_id": "certificate_3221322", "amount": 0}]);
    let r = ok_json(env.as_mut(), "book_reservation", b);
    assert_eq!(r["reservation_id"], "HATHAU");
    assert_eq!(
        r["payment_history"][1],
        json!({"payment_id": "certificate_3221322", "amount": 0})
    );
    assert!(
        env.agent_db()["users"]["zoe_q_1"]["payment_methods"]
            .get("certificate_3221322")
            .is_none()
    );

    // Same flight, new cabin: re-priced at the business price, difference charged; seats
    // are not touched by updates.
    let r = ok_json(
        env.as_mut(),
        "update_reservation_flights",
        json!({"reservation_id": "HATHAT", "cabin": "business",
               "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "credit_card_2"}),
    );
    assert_eq!(r["cabin"], "business");
    assert_eq!(r["flights"][0]["price"], json!(400));
    assert_eq!(
        r["payment_history"].as_array().unwrap().last().unwrap(),
        &json!({"payment_id": "credit_card_2", "amount": 290})
    );
    let e = err(
        env.as_mut(),
        "update_reservation_flights",
        json!({"reservation_id": "HATHAU", "cabin": "business",
               "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "gift_card_1"}),
    );
    assert_eq!(e, "Error: Gift card balance is not enough");
    // Back to economy: refund of the difference to the gift card.
    let r = ok_json(
        env.as_mut(),
        "update_reservation_flights",
        json!({"reservation_id": "HATHAT", "cabin": "economy",
               "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "gift_card_1"}),
    );
    assert_eq!(
        r["payment_history"].as_array().unwrap().last().unwrap(),
        &json!({"payment_id": "gift_card_1", "amount": -290})
    );
    assert_eq!(
        env.agent_db()["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"]["amount"],
        json!(418.36)
    );
    assert_eq!(
        env.agent_db()["flights"]["HAT900"]["dates"]["2024-05-20"]["available_seats"]["economy"],
        json!(2)
    );
}

#[test]
fn booking_checks_in_upstream_order() {
    let mut env = base(&worked_db()).fresh();
    let mut b = booking();
    b["payment_methods"] = json!([{"payment_id": "credit_card_2", "amount": 100}]);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: Payment amount does not add up, total price is 140, but paid 100"
    );
    b["nonfree_baggages"] = json!(1.0);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: Payment amount does not add up, total price is 190.0, but paid 100"
    );
    b["nonfree_baggages"] = json!("1");
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: unsupported operand type(s) for +=: 'int' and 'str'"
    );
    b["payment_methods"] = json!([{"payment_id": "gift_card_1", "amount": 200}]);
    b["nonfree_baggages"] = json!(0);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: Not enough balance in payment method gift_card_1"
    );
    b["flights"] = json!([{"flight_number": "HAT901", "date": "2024-05-20"}]);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: Flight HAT901 not found"
    );
    b["flights"] = json!([{"flight_number": "HAT900", "date": "2024-05-21"}]);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: Flight HAT900 not found on date 2024-05-21"
    );
    b["flights"] = json!(["HAT900"]);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: 'str' object has no attribute 'flight_number'"
    );
    b["cabin"] = json!("first");
    b["insurance"] = json!(true);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: 2 validation errors for Reservation\ncabin\n  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='first', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/literal_error\ninsurance\n  Input should be 'yes' or 'no' [type=literal_error, input_value=True, input_type=bool]\n    For further information visit https://errors.pydantic.dev/2.12/v/literal_error"
    );
    b["user_id"] = json!("nobody");
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: User nobody not found"
    );
    b["passengers"] = json!([{"first_name": "A", "last_name": "B"}]);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b.clone()),
        "Error: 1 validation error for Passenger\ndob\n  Field required [type=missing, input_value={'first_name': 'A', 'last_name': 'B'}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.12/v/missing"
    );
    b["passengers"] = json!(7);
    assert_eq!(
        err(env.as_mut(), "book_reservation", b),
        "Error: 'int' object is not iterable"
    );
    assert!(
        env.same_state(base(&worked_db()).fresh().as_ref()),
        "failed bookings change nothing"
    );

    // Enough seats is checked per listed segment against the current count.
    let mut b = booking();
    b["cabin"] = json!("business");
    b["insurance"] = json!("no");
    b["passengers"] = json!([{"first_name": "A", "last_name": "B", "dob": "1"}, {"first_name": "C", "last_name": "D", "dob": "2"}]);
    b["flights"] = json!([{"flight_number": "HAT900", "date": "2024-05-20"}, {"flight_number": "HAT900", "date": "2024-05-20"}]);
    b["payment_methods"] = json!([{"payment_id": "credit_card_2", "amount": "1600"}]);
    let r = ok_json(env.as_mut(), "book_reservation", b.clone());
    assert_eq!(
        r["payment_history"],
        json!([{"payment_id": "credit_card_2", "amount": 1600}])
    );
    assert_eq!(
        env.agent_db()["flights"]["HAT900"]["dates"]["2024-05-20"]["available_seats"]["business"],
        json!(-2)
    );
    assert_eq!(
        err(env.as_mut(), "book_reservation", b),
        "Error: Not enough seats on flight HAT900"
    );
}

#[test]
fn dispatch_and_argument_errors() {
    let mut env = base(&worked_db()).fresh();
    assert_eq!(
        err(env.as_mut(), "think", json!({})),
        "Error: Tool 'think' not found."
    );
    assert_eq!(
        err(env.as_mut(), "get_user_details", json!({})),
        "Error: AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'"
    );
    assert_eq!(
        err(
            env.as_mut(),
            "get_user_details",
            json!({"user_id": "zoe_q_1", "foo": 1})
        ),
        "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'foo'"
    );
    assert_eq!(
        err(env.as_mut(), "list_all_airports", json!({"x": 1})),
        "Error: AirlineTools.list_all_airports() got an unexpected keyword argument 'x'"
    );
    assert_eq!(
        err(env.as_mut(), "get_user_details", json!({"user_id": 12})),
        "Error: User 12 not found"
    );
    assert_eq!(
        err(env.as_mut(), "get_user_details", json!({"user_id": ["a"]})),
        "Error: unhashable type: 'list'"
    );
    assert_eq!(
        err(
            env.as_mut(),
            "get_reservation_details",
            json!({"reservation_id": "ABC123"})
        ),
        "Error: Reservation ABC123 not found"
    );
    assert_eq!(
        err(
            env.as_mut(),
            "cancel_reservation",
            json!({"reservation_id": null})
        ),
        "Error: Reservation None not found"
    );
    assert_eq!(
        err(
            env.as_mut(),
            "get_flight_status",
            json!({"flight_number": "HAT1", "date": "x"})
        ),
        "Error: Flight HAT1 not found"
    );
    assert_eq!(
        err(
            env.as_mut(),
            "get_flight_status",
            json!({"flight_number": "HAT900", "date": "2024-05-01"})
        ),
        "Error: Flight HAT900 not found on date 2024-05-01"
    );
    assert_eq!(
        run(
            env.as_mut(),
            "get_flight_status",
            json!({"flight_number": "HAT900", "date": "2024-05-20"})
        ),
        ("available".into(), false)
    );
    assert_eq!(
        err(
            env.as_mut(),
            "send_certificate",
            json!({"user_id": "zoe_q_1", "amount": "lots"})
        ),
        "Error: 1 validation error for Certificate\namount\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='lots', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.12/v/float_parsing"
    );
    assert_eq!(
        run(
            env.as_mut(),
            "calculate",
            json!({"expression": "(2 + 3) * 4 / 3"})
        ),
        ("6.67".into(), false)
    );
    assert_eq!(
        err(env.as_mut(), "calculate", json!({"expression": "1/0"})),
        "Error: division by zero"
    );
    assert_eq!(
        run(
            env.as_mut(),
            "transfer_to_human_agents",
            json!({"summary": 1})
        ),
        ("Transfer successful".into(), false)
    );
    assert_eq!(
        env.dispatch(
            Requestor::User,
            "get_user_details",
            &args(json!({"user_id": "zoe_q_1"}))
        )
        .unwrap_err()
        .message,
        "User tools not available"
    );
    let airports = ok_json(env.as_mut(), "list_all_airports", json!({}));
    assert_eq!(airports[0], json!({"iata": "SFO", "city": "San Francisco"}));
    assert_eq!(airports.as_array().unwrap().len(), 20);
    assert!(env.same_state(base(&worked_db()).fresh().as_ref()));
}

/// `calculate` through the airline toolkit; expectations produced by CPython.
#[test]
fn calculate_matches_python() {
    let mut env = base(&worked_db()).fresh();
    let ok = [
        ("1 + 1", "2.0"),
        ("10/3", "3.33"),
        ("2**10", "1024.0"),
        ("100000000000000000*10", "1e+18"),
        ("-2**2", "-4.0"),
        ("2**-1", "0.5"),
        ("7//-2", "-4.0"),
        ("0*-1.0", "-0.0"),
        ("00.5", "0.5"),
        ("2.675 * 1", "2.67"),
        ("2**10000/2**9990", "1024.0"),
        ("128.36 - 100", "28.36"),
    ];
    for (expr, want) in ok {
        assert_eq!(
            run(env.as_mut(), "calculate", json!({"expression": expr})),
            (want.to_string(), false),
            "{expr}"
        );
    }
    let failing = [
        (
            json!("(1 +"),
            "Error: '(' was never closed (<string>, line 1)",
        ),
        (json!("1)"), "Error: unmatched ')' (<string>, line 1)"),
        (json!("1.0//0"), "Error: float floor division by zero"),
        (
            json!("0**-1"),
            "Error: 0.0 cannot be raised to a negative power",
        ),
        (
            json!("(-8)**(1/3)"),
            "Error: float() argument must be a string or a real number, not 'complex'",
        ),
        (
            json!("2**10000"),
            "Error: int too large to convert to float",
        ),
        (
            json!("()"),
            "Error: float() argument must be a string or a real number, not 'tuple'",
        ),
        (json!("(1)(2)"), "Error: 'int' object is not callable"),
        (json!("1e5"), "Error: Invalid characters in expression"),
        (json!(5), "Error: 'int' object is not iterable"),
        (
            json!(["1", "+"]),
            "Error: eval() arg 1 must be a string, bytes or code object",
        ),
    ];
    for (expr, want) in failing {
        assert_eq!(
            err(env.as_mut(), "calculate", json!({"expression": expr})),
            want,
            "{expr}"
        );
    }
}

#[test]
fn searches_follow_upstream_quirks() {
    let mut db = worked_db();
    let avail = |price: i64| {
        json!({"status": "available", "available_seats": {"basic_economy": 1, "economy": 1, "business": 1},
                                     "prices": {"basic_economy": price, "economy": price, "business": price}})
    };
    db["flights"]["HAT901"] = json!({"flight_number": "HAT901", "origin": "ORD", "destination": "SEA",
        "scheduled_departure_time_est": "10:00:00", "scheduled_arrival_time_est": "12:00:00",
        "dates": {"2024-05-20": avail(1), "2024-05-21": {"status": "cancelled"}}});
    db["flights"]["HAT902"] = json!({"flight_number": "HAT902", "origin": "ORD", "destination": "SEA",
        "scheduled_departure_time_est": "09:00:00", "scheduled_arrival_time_est": "11:00:00",
        "dates": {"2024-05-20": avail(2)}});
    db["flights"]["HAT903"] = json!({"flight_number": "HAT903", "origin": "JFK", "destination": "DEN",
        "scheduled_departure_time_est": "22:00:00", "scheduled_arrival_time_est": "01:00:00+1",
        "dates": {"2024-05-09": avail(3), "2024-05-05": avail(3)}});
    db["flights"]["HAT904"] = json!({"flight_number": "HAT904", "origin": "DEN", "destination": "SEA",
        "scheduled_departure_time_est": "02:00:00", "scheduled_arrival_time_est": "04:00:00",
        "dates": {"2024-05-10": avail(4), "2024-05-6": avail(4), "2024-05-06": avail(4)}});
    let mut env = base(&db).fresh();
    let direct = ok_json(
        env.as_mut(),
        "search_direct_flight",
        json!({"origin": "ORD", "destination": "SEA", "date": "2024-05-20"}),
    );
    assert_eq!(direct.as_array().unwrap().len(), 2);
    let keys: Vec<&String> = direct[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "flight_number",
            "origin",
            "destination",
            "status",
            "scheduled_departure_time_est",
            "scheduled_arrival_time_est",
            "date",
            "available_seats",
            "prices"
        ]
    );
    assert_eq!(direct[0]["date"], Value::Null);
    assert_eq!(
        ok_json(
            env.as_mut(),
            "search_direct_flight",
            json!({"origin": "ORD", "destination": "SEA", "date": "2024-05-21"})
        ),
        json!([])
    );
    // A null origin does not filter.
    let any = ok_json(
        env.as_mut(),
        "search_direct_flight",
        json!({"origin": null, "destination": null, "date": "2024-05-20"}),
    );
    assert_eq!(any.as_array().unwrap().len(), 3);

    // Connection departs at or after the first leg's arrival string (HAT902 at 09:00 does not).
    let one = ok_json(
        env.as_mut(),
        "search_onestop_flight",
        json!({"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
    );
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0][0]["flight_number"], "HAT900");
    assert_eq!(one[0][1]["flight_number"], "HAT901");
    assert_eq!(one[0][1]["date"], "2024-05-20");
    // "+1" arrivals move to the next day without zero padding: 05-09 → 05-10, 05-05 → 05-6,
    // and the string comparison "02:00:00" >= "01:00:00+1" holds.
    let next = ok_json(
        env.as_mut(),
        "search_onestop_flight",
        json!({"origin": "JFK", "destination": "SEA", "date": "2024-05-09"}),
    );
    assert_eq!(next[0][1]["date"], "2024-05-10");
    let unpadded = ok_json(
        env.as_mut(),
        "search_onestop_flight",
        json!({"origin": "JFK", "destination": "SEA", "date": "2024-05-05"}),
    );
    assert_eq!(unpadded[0][1]["date"], "2024-05-6");
    assert_eq!(
        err(
            env.as_mut(),
            "search_direct_flight",
            json!({"origin": "ORD", "destination": "SEA", "date": ["x"]})
        ),
        "Error: unhashable type: 'list'"
    );
}

#[test]
fn update_passengers_and_raw_assignments() {
    let mut env = base(&worked_db()).fresh();
    ok_json(env.as_mut(), "book_reservation", booking());
    assert_eq!(
        err(
            env.as_mut(),
            "update_reservation_passengers",
            json!({"reservation_id": "HATHAT", "passengers": []})
        ),
        "Error: Number of passengers does not match"
    );
    let r = ok_json(
        env.as_mut(),
        "update_reservation_passengers",
        json!({"reservation_id": "HATHAT", "passengers": [{"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01", "x": 1}]}),
    );
    assert_eq!(
        r["passengers"],
        json!([{"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01"}])
    );
    // Upstream stores a non-list argument of the right length as is.
    let r = ok_json(
        env.as_mut(),
        "update_reservation_passengers",
        json!({"reservation_id": "HATHAT", "passengers": "a"}),
    );
    assert_eq!(r["passengers"], json!("a"));
    // An empty flight list refunds everything and stores any cabin value.
    let r = ok_json(
        env.as_mut(),
        "update_reservation_flights",
        json!({"reservation_id": "HATHAT", "cabin": "first", "flights": [], "payment_id": "credit_card_2"}),
    );
    assert_eq!(r["cabin"], "first");
    assert_eq!(r["flights"], json!([]));
    assert_eq!(
        r["payment_history"].as_array().unwrap().last().unwrap(),
        &json!({"payment_id": "credit_card_2", "amount": -110})
    );
    assert_eq!(
        err(
            env.as_mut(),
            "update_reservation_flights",
            json!({"reservation_id": "HATHAT", "cabin": "first", "flights": [{"flight_number": "HAT900", "date": "2024-05-20"}], "payment_id": "credit_card_2"})
        ),
        "Error: 'first'"
    );
}

#[test]
fn database_validation_rules() {
    let mut db = worked_db();
    db["flights"]["HAT900"]["dates"]["2024-05-20"]["prices"]["economy"] = json!(110.0);
    db["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"]["amount"] = json!(500);
    let env = base(&db).fresh();
    let dump = env.agent_db();
    assert_eq!(
        dump["flights"]["HAT900"]["dates"]["2024-05-20"]["prices"]["economy"],
        json!(110)
    );
    assert!(dump["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"]["amount"].is_f64());
    let keys: Vec<&String> = dump["flights"]["HAT900"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys[0], "flight_number");

    db["flights"]["HAT900"]["dates"]["2024-05-20"]["prices"]["economy"] = json!(110.5);
    let e = AirlineBase::from_json(&db).unwrap_err();
    assert!(
        e.contains("flights.HAT900.dates.2024-05-20.prices.economy"),
        "{e}"
    );
    assert!(e.contains("got a number with a fractional part"), "{e}");

    let mut extra = worked_db();
    extra["airports"] = json!({});
    let e = AirlineBase::from_json(&extra).unwrap_err();
    assert!(
        e.contains("airports\n  Extra inputs are not permitted"),
        "{e}"
    );
    let mut nested = worked_db();
    nested["users"]["zoe_q_1"]["nickname"] = json!("z");
    assert!(
        AirlineBase::from_json(&nested).is_ok(),
        "nested unknown keys are dropped"
    );
}

#[test]
fn initialization_data_merges_and_revalidates() {
    let b = base(&worked_db());
    let mut env = b.fresh();
    env.merge_initialization_data(
        Some(&json!({"users": {"zoe_q_1": {"membership": "gold", "saved_passengers": [{"first_name": "A", "last_name": "B", "dob": "C"}]}}})),
        None,
    )
    .unwrap();
    let changes = env.changes_since(b.fresh().as_ref());
    assert_eq!(changes.agent.keys().collect::<Vec<_>>(), ["users/zoe_q_1"]);
    assert_eq!(changes.agent["users/zoe_q_1"]["membership"], "gold");
    assert!(
        env.merge_initialization_data(
            Some(&json!({"users": {"zoe_q_1": {"membership": "platinum"}}})),
            None
        )
        .is_err()
    );
    assert!(
        env.merge_initialization_data(None, Some(&json!({"x": 1})))
            .is_err()
    );
}

#[test]
fn base_split_gold_actions_all_succeed() {
    let Some(data) = common::load("airline") else {
        return;
    };
    let tasks = data.select_tasks(Some("base"), None, None).unwrap();
    assert_eq!(tasks.len(), 50);
    let mut count = 0;
    for task in tasks {
        let mut env = initial_env(&data, task).unwrap();
        for step in run_gold_actions(env.as_mut(), task) {
            count += 1;
            assert!(
                step.result.is_ok(),
                "task {} `{}`: {:?}",
                task.id,
                step.name,
                step.result
            );
        }
    }
    assert_eq!(count, 142, "gold actions in the base split");
}

#[test]
fn implementation_agrees_with_tools_json() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let text = std::fs::read_to_string(dir.domain_dir("airline").join("tools.json")).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let env = base(&worked_db()).fresh();
    let toolkit = env.toolkit(Requestor::Assistant);
    let listed = file["assistant_tools"].as_array().unwrap();
    assert_eq!(listed.len(), toolkit.len());
    for (entry, def) in listed.iter().zip(toolkit) {
        let spec = tauguard_core::tool::ToolSpec::from_openai(entry).unwrap();
        assert_eq!(spec.name, def.name, "registration order");
        let ours = def.spec();
        assert_eq!(
            ours.parameter_names(),
            spec.parameter_names(),
            "{}",
            def.name
        );
        let set = |v: Vec<String>| v.into_iter().collect::<BTreeSet<_>>();
        assert_eq!(
            set(ours.required_parameters()),
            set(spec.required_parameters()),
            "{}",
            def.name
        );
        let write = [
            "book_reservation",
            "cancel_reservation",
            "send_certificate",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
        ];
        assert_eq!(
            def.kind == ToolKind::Write,
            write.contains(&def.name),
            "{}",
            def.name
        );
        assert!(def.is_tool);
    }
    assert!(env.toolkit(Requestor::User).is_empty());
}

/// Parameter names of every airline tool plus junk, for the random-argument property.
const NAMES: &[&str] = &[
    "user_id",
    "origin",
    "destination",
    "flight_type",
    "cabin",
    "flights",
    "passengers",
    "payment_methods",
    "total_baggages",
    "nonfree_baggages",
    "insurance",
    "expression",
    "reservation_id",
    "date",
    "amount",
    "summary",
    "payment_id",
    "flight_number",
    "bogus",
];

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-3i64..400).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        prop_oneof![Just(0.5), Just(2.0), Just(-1.0), Just(1e20)].prop_map(Value::from),
        "[ -~]{0,6}".prop_map(Value::String),
        prop_oneof![
            Just("zoe_q_1"),
            Just("HATHAT"),
            Just("HAT900"),
            Just("2024-05-20"),
            Just("economy"),
            Just("gift_card_1"),
            Just("credit_card_2"),
            Just("1 + 2"),
            Just("yes"),
            Just("one_way"),
            Just("100")
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(NAMES), inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_arguments_never_panic(
        tool in 0usize..14,
        pairs in prop::collection::vec((prop::sample::select(NAMES), arb_json()), 0..8),
        prior_booking in any::<bool>(),
    ) {
        let b = base(&worked_db());
        let mut env = b.fresh();
        if prior_booking {
            run(env.as_mut(), "book_reservation", booking());
        }
        let def = env.toolkit(Requestor::Assistant)[tool];
        // Bias towards the tool's own parameters so calls get past argument binding.
        let mut a = Map::new();
        for p in def.params {
            a.insert(p.name.to_string(), Value::Null);
        }
        for (k, v) in pairs {
            a.insert(k.to_string(), v);
        }
        let before = env.snapshot();
        match env.dispatch(Requestor::Assistant, def.name, &a) {
            Ok(v) => { let _ = v.content(); }
            Err(e) => prop_assert!(!e.message.is_empty()),
        }
        if def.kind != ToolKind::Write {
            prop_assert!(env.same_state(before.as_ref()), "read tool `{}` changed the state", def.name);
        }
        let _ = db_hash(&env.agent_db());
    }
}

#[test]
fn fresh_environments_share_the_loaded_base() {
    let Some(data) = common::load("airline") else {
        return;
    };
    let a = data.fresh_env();
    let mut b = data.fresh_env();
    assert!(a.same_state(b.as_ref()));
    assert!(a.changes_since(b.as_ref()).agent.is_empty());
    run(
        b.as_mut(),
        "send_certificate",
        json!({"user_id": "raj_sanchez_7340", "amount": 100}),
    );
    let changes = b.changes_since(a.as_ref());
    assert_eq!(
        changes.agent.keys().collect::<Vec<_>>(),
        ["users/raj_sanchez_7340"]
    );
    assert!(!a.same_state(b.as_ref()));
    assert_eq!(data.base.domain(), "airline");
}

#[test]
fn load_reads_db_json_and_names_the_file_on_errors() {
    let dir = std::env::temp_dir().join(format!("tauguard-airline-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("db.json"), worked_db().to_string()).unwrap();
    let loaded = AirlineBase::load(&dir).unwrap();
    assert_eq!(
        db_hash(&loaded.fresh().agent_db()),
        "d696e2fe50b057c892de2146fdd16e755a580cdd983afe43a249b0ade4ea9f57"
    );
    let mut bad = worked_db();
    bad["reservations"] = json!([]);
    std::fs::write(dir.join("db.json"), bad.to_string()).unwrap();
    let e = AirlineBase::load(&dir).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(e.contains("db.json"), "{e}");
    assert!(
        e.contains("reservations\n  Input should be a valid dictionary"),
        "{e}"
    );
}
