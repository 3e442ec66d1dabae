//! Retail domain behaviour through the public environment interface.
//!
//! Most tests run on a small hand-made database written to a temporary directory (always
//! available), chosen to exercise upstream's quirks with exactly known numbers; the tests
//! marked "real data" use the τ²-bench retail data and skip when it is absent (except in CI).

use crate::common::{self, args};

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;
use tauguard_core::Requestor;
use tauguard_env::ToolError;
use tauguard_env::db_hash;
use tauguard_env::replay_gold;
use tauguard_env::retail::RetailBase;
use tauguard_env::{DomainBase, Environment, ToolValue};

const A: Requestor = Requestor::Assistant;

fn address(zip: &str) -> Value {
    json!({"address1": "1 Main St", "address2": "", "city": "Boston", "country": "USA", "state": "MA", "zip": zip})
}

fn item(product: &str, name: &str, id: &str, price: f64, options: Value) -> Value {
    json!({"name": name, "product_id": product, "item_id": id, "price": price, "options": options})
}

fn order(id: &str, status: &str, items: Vec<Value>, payments: Value) -> Value {
    json!({"order_id": id, "user_id": "zoe_q_1", "address": address("02101"), "items": items,
           "status": status, "fulfillments": [], "payment_history": payments})
}

const SHIRT: &str = "1000000001";
const MUG: &str = "1000000002";
const RED: &str = "2000000001";
const BLUE: &str = "2000000002";
const GREEN: &str = "2000000003";
const WHITE: &str = "2000000004";
const SMALL: &str = "3000000001";
const LARGE: &str = "3000000002";
const W1: &str = "#W0000001";
const W2: &str = "#W0000002";
const W3: &str = "#W0000003";

/// Prices chosen so that differences are not exact in binary: 10.3 - 10.1 + 5.4 - 5.1 is
/// 0.5000000000000018 in Python, 9.9 - 10.1 is -0.1999999999999993.
fn fixture_db() -> Value {
    let red = || item(SHIRT, "Shirt", RED, 10.1, json!({"color": "red"}));
    let small = || item(MUG, "Mug", SMALL, 5.1, json!({"size": "small"}));
    json!({
        "products": {
            SHIRT: {"name": "Shirt", "product_id": SHIRT, "variants": {
                RED: {"item_id": RED, "options": {"color": "red"}, "available": true, "price": 10.1},
                BLUE: {"item_id": BLUE, "options": {"color": "blue"}, "available": true, "price": 10.3},
                GREEN: {"item_id": GREEN, "options": {"color": "green"}, "available": false, "price": 99.99},
                WHITE: {"item_id": WHITE, "options": {"color": "white"}, "available": true, "price": 9.9}}},
            MUG: {"name": "Mug", "product_id": MUG, "variants": {
                SMALL: {"item_id": SMALL, "options": {"size": "small"}, "available": true, "price": 5.1},
                LARGE: {"item_id": LARGE, "options": {"size": "large"}, "available": true, "price": 5.4}}}
        },
        "users": {
            "zoe_q_1": {"user_id": "zoe_q_1", "name": {"first_name": "Zoë", "last_name": "Quinn"},
                "address": address("02101"), "email": "Zoe.Q@example.com",
                "payment_methods": {
                    "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 128.36},
                    "credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "visa", "last_four": "0001"},
                    "paypal_3": {"source": "paypal", "id": "paypal_3"}},
                "orders": [W1, W2, W3]}
        },
        "orders": {
            W1: order(W1, "pending", vec![red(), small()],
                json!([{"transaction_type": "payment", "amount": 15.2, "payment_method_id": "gift_card_1"}])),
            W2: order(W2, "delivered", vec![red(), red(), small()],
                json!([{"transaction_type": "payment", "amount": 25.3, "payment_method_id": "credit_card_2"}])),
            W3: order(W3, "pending", vec![small()],
                json!([{"transaction_type": "payment", "amount": 5, "payment_method_id": "paypal_3"}]))
        }
    })
}

fn fixture_base() -> &'static RetailBase {
    static BASE: OnceLock<RetailBase> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir: PathBuf =
            std::env::temp_dir().join(format!("tauguard-retail-fixture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("db.json"), fixture_db().to_string()).unwrap();
        let base = RetailBase::load(&dir).expect("fixture database loads");
        let _ = std::fs::remove_dir_all(&dir);
        base
    })
}

fn fresh() -> Box<dyn Environment> {
    fixture_base().fresh()
}

fn call(env: &mut dyn Environment, name: &str, a: Value) -> Result<ToolValue, ToolError> {
    env.dispatch(A, name, &args(a))
}

/// A successful model-returning call, as its JSON.
fn ok_json(env: &mut dyn Environment, name: &str, a: Value) -> Value {
    match call(env, name, a) {
        Ok(v @ (ToolValue::Json(_) | ToolValue::Dumped(_))) => v.into_json(),
        other => panic!("{name}: expected a JSON result, got {other:?}"),
    }
}

fn err(env: &mut dyn Environment, name: &str, a: Value) -> String {
    match call(env, name, a) {
        Err(e) => e.qualified(),
        Ok(v) => panic!("{name}: expected an error, got {}", v.content()),
    }
}

fn db_order(env: &dyn Environment, id: &str) -> Value {
    env.agent_db()["orders"][id].clone()
}

fn balance(env: &dyn Environment) -> Value {
    env.agent_db()["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"]["balance"].clone()
}

#[test]
fn dump_has_upstream_shape() {
    let env = fresh();
    let db = env.agent_db();
    let o = &db["orders"][W3];
    let keys: Vec<&str> = o.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "order_id",
            "user_id",
            "address",
            "items",
            "status",
            "fulfillments",
            "payment_history",
            "cancel_reason",
            "exchange_items",
            "exchange_new_items",
            "exchange_payment_method_id",
            "exchange_price_difference",
            "return_items",
            "return_payment_method_id"
        ]
    );
    assert!(o["return_items"].is_null());
    // An integral amount in the file is a float in the model.
    assert_eq!(
        tauguard_core::pyjson::dumps(&o["payment_history"][0]["amount"]),
        "5.0"
    );
    let gift = &db["users"]["zoe_q_1"]["payment_methods"]["gift_card_1"];
    assert_eq!(
        tauguard_core::pyjson::dumps(gift),
        r#"{"source": "gift_card", "id": "gift_card_1", "balance": 128.36}"#
    );
}

#[test]
fn toolkit_order_and_kinds_follow_upstream() {
    use tauguard_core::ToolKind::{Generic, Read, Write};
    let env = fresh();
    let got: Vec<(&str, tauguard_core::ToolKind)> =
        env.toolkit(A).iter().map(|d| (d.name, d.kind)).collect();
    let want = [
        ("calculate", Generic),
        ("cancel_pending_order", Write),
        ("exchange_delivered_order_items", Write),
        ("find_user_id_by_name_zip", Read),
        ("find_user_id_by_email", Read),
        ("get_order_details", Read),
        ("get_product_details", Read),
        ("get_item_details", Read),
        ("get_user_details", Read),
        ("list_all_product_types", Read),
        ("modify_pending_order_address", Write),
        ("modify_pending_order_items", Write),
        ("modify_pending_order_payment", Write),
        ("modify_user_address", Write),
        ("return_delivered_order_items", Write),
        ("transfer_to_human_agents", Generic),
    ];
    assert_eq!(got, want);
    assert!(
        env.toolkit(A)
            .iter()
            .all(|d| d.is_tool && d.params.iter().all(|p| p.required))
    );
    assert!(env.toolkit(Requestor::User).is_empty());
    assert_eq!(env.domain(), "retail");
}

#[test]
fn reads_and_lookups() {
    let mut env = fresh();
    let env = env.as_mut();
    let text = |r: Result<ToolValue, ToolError>| match r {
        Ok(ToolValue::Text(t)) => t,
        other => panic!("expected text, got {other:?}"),
    };
    assert_eq!(
        text(call(
            env,
            "find_user_id_by_email",
            json!({"email": "zoe.q@EXAMPLE.com"})
        )),
        "zoe_q_1"
    );
    let by_name = json!({"first_name": "ZOË", "last_name": "quinn", "zip": "02101"});
    assert_eq!(
        text(call(env, "find_user_id_by_name_zip", by_name)),
        "zoe_q_1"
    );
    let wrong_zip = json!({"first_name": "Zoë", "last_name": "Quinn", "zip": "2101"});
    assert_eq!(
        err(env, "find_user_id_by_name_zip", wrong_zip),
        "ValueError: User not found"
    );
    assert_eq!(
        err(
            env,
            "find_user_id_by_email",
            json!({"email": "nobody@example.com"})
        ),
        "ValueError: User not found"
    );
    assert_eq!(
        text(call(env, "list_all_product_types", json!({}))),
        r#"{"Mug": "1000000002", "Shirt": "1000000001"}"#
    );
    let variant = call(env, "get_item_details", json!({"item_id": BLUE})).unwrap();
    assert_eq!(
        variant.content(),
        r#"{"item_id": "2000000002", "options": {"color": "blue"}, "available": true, "price": 10.3}"#
    );
    assert_eq!(
        ok_json(env, "get_product_details", json!({"product_id": MUG}))["name"],
        "Mug"
    );
    assert_eq!(
        ok_json(env, "get_user_details", json!({"user_id": "zoe_q_1"}))["orders"],
        json!([W1, W2, W3])
    );
    assert_eq!(
        ok_json(env, "get_order_details", json!({"order_id": W2}))["status"],
        "delivered"
    );
    assert_eq!(
        err(env, "get_item_details", json!({"item_id": MUG})),
        "ValueError: Item not found"
    );
    assert_eq!(
        err(env, "get_product_details", json!({"product_id": RED})),
        "ValueError: Product not found"
    );
    assert_eq!(
        err(env, "get_order_details", json!({"order_id": "W0000001"})),
        "ValueError: Order not found"
    );
    assert_eq!(
        err(env, "get_user_details", json!({"user_id": "zoe"})),
        "ValueError: User not found"
    );
    assert_eq!(
        text(call(
            env,
            "calculate",
            json!({"expression": "128.36 - 100"})
        )),
        "28.36"
    );
    assert_eq!(
        err(env, "calculate", json!({"expression": "2 ^ 3"})),
        "ValueError: Invalid characters in expression"
    );
    assert_eq!(
        text(call(
            env,
            "transfer_to_human_agents",
            json!({"summary": "help"})
        )),
        "Transfer successful"
    );
}

#[test]
fn cancel_refunds_gift_cards_with_rounding() {
    let mut env = fresh();
    let env = env.as_mut();
    assert_eq!(
        err(
            env,
            "cancel_pending_order",
            json!({"order_id": W1, "reason": "changed my mind"})
        ),
        "ValueError: Invalid reason"
    );
    assert_eq!(
        err(
            env,
            "cancel_pending_order",
            json!({"order_id": W1, "reason": ["no longer needed"]})
        ),
        "TypeError: unhashable type: 'list'"
    );
    let out = ok_json(
        env,
        "cancel_pending_order",
        json!({"order_id": W1, "reason": "ordered by mistake"}),
    );
    assert_eq!(out["status"], "cancelled");
    assert_eq!(out["cancel_reason"], "ordered by mistake");
    assert_eq!(
        out["payment_history"],
        json!([{"transaction_type": "payment", "amount": 15.2, "payment_method_id": "gift_card_1"},
               {"transaction_type": "refund", "amount": 15.2, "payment_method_id": "gift_card_1"}])
    );
    assert_eq!(out, db_order(env, W1), "the result is the stored order");
    assert_eq!(balance(env), json!(143.56)); // round(128.36 + 15.2, 2)
    assert_eq!(
        err(
            env,
            "cancel_pending_order",
            json!({"order_id": W1, "reason": "ordered by mistake"})
        ),
        "ValueError: Non-pending order cannot be cancelled"
    );
    // Non-gift-card refunds leave balances alone.
    let out = ok_json(
        env,
        "cancel_pending_order",
        json!({"order_id": W3, "reason": "no longer needed"}),
    );
    assert_eq!(out["payment_history"][1]["payment_method_id"], "paypal_3");
    assert_eq!(balance(env), json!(143.56));
}

#[test]
fn modify_items_takes_the_last_variant_and_does_not_round_the_difference() {
    let mut env = fresh();
    let env = env.as_mut();
    let a = json!({"order_id": W1, "item_ids": [RED, SMALL], "new_item_ids": [BLUE, LARGE], "payment_method_id": "gift_card_1"});
    let out = ok_json(env, "modify_pending_order_items", a.clone());
    assert_eq!(out["status"], "pending (item modified)");
    assert_eq!(
        out["payment_history"][1],
        json!({"transaction_type": "payment", "amount": 0.5000000000000018, "payment_method_id": "gift_card_1"})
    );
    assert_eq!(balance(env), json!(127.86));
    // Upstream quirk: every modified item gets the price and options of the last new variant.
    assert_eq!(
        out["items"][0],
        item(SHIRT, "Shirt", BLUE, 5.4, json!({"size": "large"}))
    );
    assert_eq!(
        out["items"][1],
        item(MUG, "Mug", LARGE, 5.4, json!({"size": "large"}))
    );
    assert_eq!(
        err(env, "modify_pending_order_items", a),
        "ValueError: Non-pending order cannot be modified"
    );
}

#[test]
fn modify_items_refund_and_checks() {
    let mut env = fresh();
    let env = env.as_mut();
    let m = |items: Value, new: Value, pm: &str| json!({"order_id": W1, "item_ids": items, "new_item_ids": new, "payment_method_id": pm});
    let cases = [
        (
            m(json!([RED, RED]), json!([BLUE, BLUE]), "gift_card_1"),
            format!("ValueError: {RED} not found"),
        ),
        (
            m(json!([7]), json!([BLUE]), "gift_card_1"),
            "ValueError: 7 not found".into(),
        ),
        (
            m(json!([RED]), json!([BLUE, LARGE]), "gift_card_1"),
            "ValueError: The number of items to be exchanged should match".into(),
        ),
        (
            m(json!([RED]), json!([RED]), "gift_card_1"),
            "ValueError: The new item id should be different from the old item id".into(),
        ),
        (
            m(json!([RED]), json!([GREEN]), "gift_card_1"),
            format!("ValueError: New item {GREEN} not found or available"),
        ),
        (
            m(json!([RED]), json!([LARGE]), "gift_card_1"),
            "ValueError: Variant not found".into(),
        ),
        (
            m(json!([RED]), json!([[BLUE]]), "gift_card_1"),
            "TypeError: unhashable type: 'list'".into(),
        ),
        (
            m(json!([RED]), json!([BLUE]), "gift_card_9"),
            "ValueError: Payment method not found".into(),
        ),
        (
            m(json!(5), json!([BLUE]), "gift_card_1"),
            "TypeError: 'int' object is not iterable".into(),
        ),
        (
            m(json!([RED]), json!(5), "gift_card_1"),
            "TypeError: object of type 'int' has no len()".into(),
        ),
    ];
    for (a, want) in cases {
        assert_eq!(
            err(env, "modify_pending_order_items", a.clone()),
            want,
            "{a}"
        );
    }
    assert!(
        env.same_state(fresh().as_ref()),
        "failed calls change nothing"
    );
    // A cheaper variant: the refund carries the unrounded difference, the card is rounded.
    let out = ok_json(
        env,
        "modify_pending_order_items",
        m(json!([RED]), json!([WHITE]), "gift_card_1"),
    );
    assert_eq!(
        out["payment_history"][1],
        json!({"transaction_type": "refund", "amount": 0.1999999999999993, "payment_method_id": "gift_card_1"})
    );
    assert_eq!(balance(env), json!(128.56));
    assert_eq!(
        out["items"][0],
        item(SHIRT, "Shirt", WHITE, 9.9, json!({"color": "white"}))
    );
}

#[test]
fn gift_card_balance_must_cover_a_positive_difference() {
    let mut env = fresh();
    let low = json!({"users": {"zoe_q_1": {"payment_methods": {"gift_card_1": {"balance": 0.1}}}}});
    env.merge_initialization_data(Some(&low), None).unwrap();
    let env = env.as_mut();
    let a = json!({"order_id": W1, "item_ids": [RED], "new_item_ids": [BLUE], "payment_method_id": "gift_card_1"});
    assert_eq!(
        err(env, "modify_pending_order_items", a),
        "ValueError: Insufficient gift card balance to pay for the new item"
    );
    let a = json!({"order_id": W3, "payment_method_id": "gift_card_1"});
    assert_eq!(
        err(env, "modify_pending_order_payment", a),
        "ValueError: Insufficient gift card balance to pay for the order"
    );
    let a = json!({"order_id": W2, "item_ids": [RED], "new_item_ids": [BLUE], "payment_method_id": "gift_card_1"});
    assert_eq!(
        err(env, "exchange_delivered_order_items", a),
        "ValueError: Insufficient gift card balance to pay for the price difference"
    );
}

#[test]
fn exchange_records_a_rounded_difference_without_payments() {
    let mut env = fresh();
    let env = env.as_mut();
    let x = |items: Value, new: Value| json!({"order_id": W2, "item_ids": items, "new_item_ids": new, "payment_method_id": "credit_card_2"});
    let cases = [
        (
            x(json!([RED, RED, RED]), json!([BLUE, BLUE, BLUE])),
            format!("ValueError: Number of {RED} not found."),
        ),
        (
            x(json!([RED]), json!([])),
            "ValueError: The number of items to be exchanged should match.".into(),
        ),
        (
            x(json!([RED]), json!([GREEN])),
            format!("ValueError: New item {GREEN} not found or available"),
        ),
        (
            x(json!([SMALL]), json!([BLUE])),
            "ValueError: Variant not found".into(),
        ),
    ];
    for (a, want) in cases {
        assert_eq!(
            err(env, "exchange_delivered_order_items", a.clone()),
            want,
            "{a}"
        );
    }
    assert_eq!(
        err(
            env,
            "exchange_delivered_order_items",
            json!({"order_id": W1, "item_ids": [], "new_item_ids": [], "payment_method_id": "gift_card_1"})
        ),
        "ValueError: Non-delivered order cannot be exchanged"
    );
    let before = env.agent_db();
    let out = ok_json(
        env,
        "exchange_delivered_order_items",
        x(json!([SMALL, RED, RED]), json!([LARGE, BLUE, BLUE])),
    );
    assert_eq!(out["status"], "exchange requested");
    assert_eq!(out["exchange_items"], json!([RED, RED, SMALL]));
    assert_eq!(out["exchange_new_items"], json!([BLUE, BLUE, LARGE]));
    assert_eq!(out["exchange_payment_method_id"], "credit_card_2");
    assert_eq!(out["exchange_price_difference"], json!(0.7)); // round(0.7000000000000028, 2)
    assert_eq!(
        out["payment_history"], before["orders"][W2]["payment_history"],
        "no payment entries"
    );
    assert_eq!(
        env.agent_db()["users"],
        before["users"],
        "no balance changes"
    );
}

#[test]
fn exchange_of_nothing_stores_an_integer_zero() {
    let mut env = fresh();
    let env = env.as_mut();
    let a = json!({"order_id": W2, "item_ids": [], "new_item_ids": [], "payment_method_id": "gift_card_1"});
    let content = call(env, "exchange_delivered_order_items", a)
        .unwrap()
        .content();
    assert!(
        content.contains(r#""exchange_price_difference": 0, "#),
        "{content}"
    );
    assert!(db_order(env, W2)["exchange_price_difference"].is_i64());
    let mut same = fresh();
    let a = json!({"order_id": W2, "item_ids": [RED], "new_item_ids": [RED], "payment_method_id": "gift_card_1"});
    let out = ok_json(same.as_mut(), "exchange_delivered_order_items", a);
    assert!(
        out["exchange_price_difference"].is_f64(),
        "a same-item exchange is allowed and costs 0.0"
    );
    assert!(!env.same_state(same.as_ref()));
}

#[test]
fn returns_go_to_the_original_method_or_a_gift_card() {
    let mut env = fresh();
    let env = env.as_mut();
    let r = |items: Value, pm: &str| json!({"order_id": W2, "item_ids": items, "payment_method_id": pm});
    assert_eq!(
        err(
            env,
            "return_delivered_order_items",
            r(json!([RED]), "paypal_3")
        ),
        "ValueError: Payment method should be the original payment method"
    );
    assert_eq!(
        err(
            env,
            "return_delivered_order_items",
            r(json!([SMALL, SMALL]), "credit_card_2")
        ),
        "ValueError: Some item not found"
    );
    assert_eq!(
        err(
            env,
            "return_delivered_order_items",
            json!({"order_id": W1, "item_ids": [RED], "payment_method_id": "gift_card_1"})
        ),
        "ValueError: Non-delivered order cannot be returned"
    );
    let mut gift = fresh();
    let out = ok_json(
        gift.as_mut(),
        "return_delivered_order_items",
        r(json!([SMALL, RED]), "gift_card_1"),
    );
    assert_eq!(out["return_payment_method_id"], "gift_card_1");
    let out = ok_json(
        env,
        "return_delivered_order_items",
        r(json!([SMALL, RED]), "credit_card_2"),
    );
    assert_eq!(out["status"], "return requested");
    assert_eq!(out["return_items"], json!([RED, SMALL]));
    assert_eq!(
        out["payment_history"].as_array().unwrap().len(),
        1,
        "no refund entries"
    );
}

#[test]
fn payment_moves_between_methods() {
    let mut env = fresh();
    let env = env.as_mut();
    let p = |order: &str, pm: &str| json!({"order_id": order, "payment_method_id": pm});
    assert_eq!(
        err(env, "modify_pending_order_payment", p(W3, "paypal_3")),
        "ValueError: The new payment method should be different from the current one"
    );
    assert_eq!(
        err(env, "modify_pending_order_payment", p(W3, "paypal_9")),
        "ValueError: Payment method not found"
    );
    assert_eq!(
        err(env, "modify_pending_order_payment", p(W2, "gift_card_1")),
        "ValueError: Non-pending order cannot be modified"
    );
    let out = ok_json(env, "modify_pending_order_payment", p(W3, "gift_card_1"));
    assert_eq!(
        out["payment_history"],
        json!([{"transaction_type": "payment", "amount": 5.0, "payment_method_id": "paypal_3"},
               {"transaction_type": "payment", "amount": 5.0, "payment_method_id": "gift_card_1"},
               {"transaction_type": "refund", "amount": 5.0, "payment_method_id": "paypal_3"}])
    );
    assert_eq!(balance(env), json!(123.36));
    assert_eq!(
        err(env, "modify_pending_order_payment", p(W3, "credit_card_2")),
        "ValueError: There should be exactly one payment for a pending order"
    );
    // Back from a gift card: the old card is credited.
    let mut env = fresh();
    ok_json(
        env.as_mut(),
        "modify_pending_order_payment",
        p(W1, "credit_card_2"),
    );
    assert_eq!(balance(env.as_ref()), json!(143.56));
}

#[test]
fn address_changes() {
    let mut env = fresh();
    let env = env.as_mut();
    let new = |key: &str, id: &str, zip: Value| json!({key: id, "address1": "9 Elm St", "address2": "Apt 2", "city": "Austin", "state": "TX", "country": "USA", "zip": zip});
    let out = ok_json(
        env,
        "modify_pending_order_address",
        new("order_id", W1, json!("73301")),
    );
    assert_eq!(
        out["address"],
        json!({"address1": "9 Elm St", "address2": "Apt 2", "city": "Austin", "country": "USA", "state": "TX", "zip": "73301"})
    );
    assert_eq!(
        err(
            env,
            "modify_pending_order_address",
            new("order_id", W2, json!("73301"))
        ),
        "ValueError: Non-pending order cannot be modified"
    );
    assert_eq!(
        err(
            env,
            "modify_pending_order_address",
            new("order_id", W1, json!(73301))
        ),
        "ValidationError: 1 validation error for UserAddress\nzip\n  Input should be a valid string [type=string_type, input_value=73301, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.12/v/string_type"
    );
    let out = ok_json(
        env,
        "modify_user_address",
        new("user_id", "zoe_q_1", json!("73301")),
    );
    assert_eq!(out["address"]["city"], "Austin");
    assert_eq!(out["user_id"], "zoe_q_1");
    assert_eq!(
        err(
            env,
            "modify_user_address",
            new("user_id", "nobody", json!("1"))
        ),
        "ValueError: User not found"
    );
}

#[test]
fn argument_errors_are_python_errors() {
    let mut env = fresh();
    let env = env.as_mut();
    assert_eq!(
        err(env, "book_flight", json!({})),
        "ValueError: Tool 'book_flight' not found."
    );
    assert_eq!(
        env.execute(A, "book_flight", &Map::new()),
        ("Error: Tool 'book_flight' not found.".to_string(), true)
    );
    assert_eq!(
        err(env, "get_order_details", json!({})),
        "TypeError: RetailTools.get_order_details() missing 1 required positional argument: 'order_id'"
    );
    assert_eq!(
        err(
            env,
            "get_order_details",
            json!({"order_id": W1, "verbose": true})
        ),
        "TypeError: RetailTools.get_order_details() got an unexpected keyword argument 'verbose'"
    );
    assert_eq!(
        err(env, "return_delivered_order_items", json!({"order_id": W2})),
        "TypeError: RetailTools.return_delivered_order_items() missing 2 required positional arguments: 'item_ids' and 'payment_method_id'"
    );
    assert_eq!(
        err(env, "get_order_details", json!({"order_id": 1})),
        "ValueError: Order not found"
    );
    assert_eq!(
        err(env, "get_order_details", json!({"order_id": {"id": W1}})),
        "TypeError: unhashable type: 'dict'"
    );
    assert_eq!(
        err(env, "find_user_id_by_email", json!({"email": null})),
        "AttributeError: 'NoneType' object has no attribute 'lower'"
    );
    assert_eq!(
        err(env, "calculate", json!({"expression": 12})),
        "TypeError: 'int' object is not iterable"
    );
    assert_eq!(
        env.dispatch(
            Requestor::User,
            "get_order_details",
            &args(json!({"order_id": W1}))
        )
        .unwrap_err()
        .qualified(),
        "ValueError: User tools not available"
    );
    assert_eq!(
        env.call(A, "_get_order", &Map::new())
            .unwrap_err()
            .qualified(),
        "AttributeError: 'RetailTools' object has no attribute '_get_order'"
    );
    assert!(env.same_state(fresh().as_ref()));
}

#[test]
fn environment_seams() {
    let base = fresh();
    let mut env = base.snapshot();
    assert!(env.same_state(base.as_ref()));
    assert!(env.changes_since(base.as_ref()).agent.is_empty());
    ok_json(
        env.as_mut(),
        "cancel_pending_order",
        json!({"order_id": W1, "reason": "no longer needed"}),
    );
    let changes = env.changes_since(base.as_ref());
    let keys: Vec<&str> = changes.agent.keys().map(String::as_str).collect();
    assert_eq!(keys, ["users/zoe_q_1", "orders/#W0000001"]);
    assert_eq!(
        changes.agent["orders/#W0000001"],
        db_order(env.as_ref(), W1)
    );
    assert!(changes.user.is_none());
    assert!(!env.same_state(base.as_ref()));
    assert_eq!(
        base.agent_db()["orders"][W1]["status"],
        "pending",
        "the source is untouched"
    );
    assert_ne!(db_hash(&env.agent_db()), db_hash(&base.agent_db()));

    // Initialization data: merged into the dump, re-validated, shared records stay shared.
    let mut merged = fresh();
    let patch = json!({"orders": {W3: {"status": "processed"}},
                       "users": {"ann_b_2": {"user_id": "ann_b_2", "name": {"first_name": "Ann", "last_name": "B"},
                                 "address": address("10001"), "email": "ann@example.com", "payment_methods": {}, "orders": []}}});
    merged
        .merge_initialization_data(Some(&patch), None)
        .unwrap();
    let changes = merged.changes_since(base.as_ref());
    let keys: Vec<&str> = changes.agent.keys().map(String::as_str).collect();
    assert_eq!(keys, ["users/ann_b_2", "orders/#W0000003"]);
    assert_eq!(
        merged.agent_db()["users"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["zoe_q_1", "ann_b_2"],
        "new records are appended"
    );
    let mut bad = fresh();
    let err = bad
        .merge_initialization_data(Some(&json!({"orders": {W3: {"status": "lost"}}})), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("orders.#W0000003.status"), "{err}");
    assert!(
        bad.merge_initialization_data(Some(&json!({"flights": {}})), None)
            .is_err()
    );
    assert!(
        bad.merge_initialization_data(None, Some(&json!({"device": {}})))
            .is_err()
    );
    assert!(
        bad.same_state(base.as_ref()),
        "failed merges change nothing"
    );
    let mut noop = fresh();
    noop.merge_initialization_data(Some(&json!({"orders": {W3: {"status": "pending"}}})), None)
        .unwrap();
    assert!(noop.same_state(base.as_ref()));
}

const ID_POOL: &[&str] = &[
    W1,
    W2,
    W3,
    "#W9999999",
    SHIRT,
    MUG,
    RED,
    BLUE,
    GREEN,
    WHITE,
    SMALL,
    LARGE,
    "zoe_q_1",
    "gift_card_1",
    "credit_card_2",
    "paypal_3",
    "no longer needed",
    "ordered by mistake",
    "Zoe.Q@example.com",
    "Zoë",
    "Quinn",
    "02101",
    "1 + 2",
    "(1",
    "",
    "pending",
];
const JUNK_KEYS: &[&str] = &["foo", "order", "item_id", "user_id", "self", ""];

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop::sample::select(ID_POOL).prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(ID_POOL), inner), 0..3).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// A value a caller might plausibly pass for `param` (mostly real ids of the fixture), so
/// that random calls get past the first checks and reach the mutations.
fn plausible(param: &str, pick: usize, picks: &[usize]) -> Value {
    let pool: &[&str] = match param {
        "order_id" => &[W1, W2, W3, "#W9999999"],
        "reason" => &["no longer needed", "ordered by mistake", "whatever"],
        "item_ids" => &[RED, SMALL, RED, "7"],
        "new_item_ids" | "item_id" => &[BLUE, WHITE, LARGE, GREEN, SMALL],
        "payment_method_id" => &["gift_card_1", "credit_card_2", "paypal_3", "gift_card_9"],
        "user_id" => &["zoe_q_1", "nobody"],
        "product_id" => &[SHIRT, MUG, RED],
        "email" => &["zoe.q@example.com", "x@example.com"],
        "first_name" => &["zoë", "Ann"],
        "last_name" => &["QUINN", "B"],
        "zip" => &["02101", "1"],
        "expression" => &["1 + 2", "(1", "10/3", "2 ** -1", "1/0"],
        _ => &["Main St", "", "Boston"],
    };
    if param.ends_with("_ids") {
        Value::Array(
            picks
                .iter()
                .map(|i| Value::from(pool[(i ^ pick) % pool.len()]))
                .collect(),
        )
    } else {
        Value::from(pool[pick % pool.len()])
    }
}

/// One argument slot: absent, plausible or arbitrary.
type Slot = (bool, bool, usize, Value);

fn arb_slot() -> impl Strategy<Value = Slot> {
    (
        prop::bool::weighted(0.95),
        prop::bool::weighted(0.8),
        any::<usize>(),
        arb_json(),
    )
}

/// A tool index, its argument slots, the picks shared by its list arguments (so that
/// plausible `item_ids` and `new_item_ids` have equal lengths) and maybe a junk argument.
type Call = (usize, Vec<Slot>, Vec<usize>, Option<(&'static str, Value)>);

fn arb_call() -> impl Strategy<Value = Call> {
    (
        0usize..16,
        prop::collection::vec(arb_slot(), 7),
        prop::collection::vec(any::<usize>(), 0..3),
        prop::option::weighted(0.1, (prop::sample::select(JUNK_KEYS), arb_json())),
    )
}

const PYTHON_ERRORS: &[&str] = &[
    "ValueError",
    "TypeError",
    "AttributeError",
    "IndexError",
    "ValidationError",
    // From `calculate`.
    "SyntaxError",
    "ZeroDivisionError",
    "OverflowError",
    "RecursionError",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, failure_persistence: None, ..ProptestConfig::default() })]

    /// Sequences of calls with random argument objects (real parameter names and junk ones,
    /// values of every JSON type) on a fresh environment: each call returns a value or a
    /// Python-shaped error, never panics, and the database stays dumpable.
    #[test]
    fn random_arguments_never_panic(calls in prop::collection::vec(arb_call(), 1..4)) {
        let mut env = fresh();
        for (tool, slots, picks, junk) in calls {
            let def = env.toolkit(A)[tool];
            let mut a = Map::new();
            for (p, (present, realistic, pick, arbitrary)) in def.params.iter().zip(slots) {
                if present {
                    let v = if realistic { plausible(p.name, pick, &picks) } else { arbitrary };
                    a.insert(p.name.to_string(), v);
                }
            }
            if let Some((k, v)) = junk {
                a.insert(k.to_string(), v);
            }
            let before = env.snapshot();
            match env.dispatch(A, def.name, &a) {
                Ok(v) => prop_assert!(!v.content().is_empty()),
                Err(e) => prop_assert!(PYTHON_ERRORS.contains(&e.class), "{}", e.qualified()),
            }
            if def.kind != tauguard_core::ToolKind::Write {
                prop_assert!(env.same_state(before.as_ref()), "{} changed the state", def.name);
            }
            let _ = db_hash(&env.agent_db());
        }
    }
}

// ---- real data ----

#[test]
fn base_database_hash_matches_upstream() {
    let Some(data) = common::load("retail") else {
        return;
    };
    let env = data.fresh_env();
    // sha256 of json.dumps(RetailDB.load(db.json).model_dump(), sort_keys=True), computed with Python.
    assert_eq!(
        db_hash(&env.agent_db()),
        "b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c"
    );
    let db = env.agent_db();
    assert_eq!(db["products"].as_object().unwrap().len(), 50);
    assert_eq!(db["users"].as_object().unwrap().len(), 500);
    assert_eq!(db["orders"].as_object().unwrap().len(), 1000);
}

/// Gold steps of the base split that fail upstream too: ids and addresses that do not
/// exist (the user gave a wrong email or zip), a pending order treated as delivered, and
/// a gift card that cannot cover an exchange.
const EXPECTED_GOLD_FAILURES: &[(&str, usize, &str)] = &[
    ("2", 1, "ValueError: Product not found"),
    ("3", 1, "ValueError: Product not found"),
    ("4", 1, "ValueError: Product not found"),
    ("35", 0, "ValueError: User not found"),
    ("37", 0, "ValueError: User not found"),
    ("38", 0, "ValueError: User not found"),
    ("39", 0, "ValueError: User not found"),
    ("46", 1, "ValueError: Order not found"),
    ("46", 2, "ValueError: Order not found"),
    ("47", 1, "ValueError: Order not found"),
    ("47", 2, "ValueError: Order not found"),
    ("54", 0, "ValueError: User not found"),
    ("55", 0, "ValueError: User not found"),
    (
        "64",
        6,
        "ValueError: Non-delivered order cannot be exchanged",
    ),
    ("67", 0, "ValueError: User not found"),
    ("67", 1, "ValueError: User not found"),
    ("68", 0, "ValueError: User not found"),
    (
        "105",
        0,
        "ValueError: Insufficient gift card balance to pay for the price difference",
    ),
];

#[test]
fn every_gold_action_of_the_base_split_replays() {
    let Some(data) = common::load("retail") else {
        return;
    };
    let tasks = data.select_tasks(Some("base"), None, None).unwrap();
    assert_eq!(tasks.len(), 114);
    let mut failures = Vec::new();
    let mut writes = 0;
    for task in tasks {
        let replay = replay_gold(&data, task).unwrap_or_else(|e| panic!("task {}: {e}", task.id));
        for (i, step) in replay.steps.iter().enumerate() {
            match &step.result {
                Err(e) => failures.push((task.id.clone(), i, e.qualified())),
                Ok(content)
                    if data.fresh_env().tool_kind(A, &step.name)
                        == Some(tauguard_core::ToolKind::Write) =>
                {
                    writes += 1;
                    let v: Value =
                        serde_json::from_str(content).expect("write tools return a model dump");
                    assert!(v.is_object(), "task {} step {i}", task.id);
                }
                Ok(_) => {}
            }
        }
        let again = replay_gold(&data, task).unwrap();
        assert!(
            again.env.same_state(replay.env.as_ref()),
            "task {}: replay is deterministic",
            task.id
        );
    }
    let want: Vec<(String, usize, String)> = EXPECTED_GOLD_FAILURES
        .iter()
        .map(|(t, i, e)| (t.to_string(), *i, e.to_string()))
        .collect();
    assert_eq!(failures, want);
    assert!(writes > 100, "{writes} successful writes");
}

#[test]
fn tools_json_agrees_with_the_implementation() {
    let Some(data) = common::load("retail") else {
        return;
    };
    assert!(data.schemas_from_file);
    assert!(data.tool_schemas.user.is_empty());
    let env = data.fresh_env();
    assert!(env.toolkit(Requestor::User).is_empty());
    let defs: Vec<_> = env.toolkit(A).iter().filter(|d| d.is_tool).collect();
    let file = common::assistant_schema_names(&data);
    let ours: Vec<&str> = defs.iter().map(|d| d.name).collect();
    assert_eq!(file, ours, "same tools in the same order");
    for (spec, def) in data.tool_schemas.assistant.iter().zip(&defs) {
        let names: Vec<&str> = def.params.iter().map(|p| p.name).collect();
        assert_eq!(spec.parameter_names(), names, "{}", def.name);
        let mut required = spec.required_parameters();
        required.sort();
        let mut ours: Vec<String> = def
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| p.name.to_string())
            .collect();
        ours.sort();
        assert_eq!(required, ours, "{}", def.name);
        let builtin = def.spec();
        assert_eq!(
            builtin.parameter_names(),
            spec.parameter_names(),
            "{}",
            def.name
        );
        for (name, schema) in spec.parameters["properties"].as_object().unwrap() {
            assert_eq!(
                builtin.parameters["properties"][name]["type"], schema["type"],
                "{}.{name}",
                def.name
            );
            assert_eq!(
                builtin.parameters["properties"][name]["title"], schema["title"],
                "{}.{name}",
                def.name
            );
        }
    }
}
