//! Deterministic record ids: hex prefixes of the SHA-256 of seed strings that upstream
//! builds with Python formatting (`utils.py`). A seed that differs by one character (`100000`
//! for `100000.0`, `True` for `true`) gives another id, so every seed is spelled here exactly
//! as Python spells it.

use super::pyfmt::f2;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tauguard_core::pyjson;

/// `_deterministic_id(seed, length)`: the first `length` hex digits of SHA-256(seed).
pub(super) fn deterministic(seed: &str, length: usize) -> String {
    let digest = Sha256::digest(seed.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..length / 2 * 2].to_string()
}

/// `hashlib.sha256(seed).hexdigest()`, whole.
pub(super) fn sha256_hex(seed: &str) -> String {
    deterministic(seed, 64)
}

pub(super) fn transaction(
    user: &str,
    card_type: &str,
    merchant: &str,
    amount: f64,
    category: &str,
) -> String {
    let seed = format!(
        "transaction:{user}:{card_type}:{merchant}:{}:{category}",
        f2(amount)
    );
    format!("txn_{}", deterministic(&seed, 12))
}

pub(super) fn referral(referrer: &str, account_type: &str) -> String {
    deterministic(&format!("referral:{referrer}:{account_type}"), 16)
}

/// `f"credit_card:{card_type}:{customer_name}:{annual_income}:{rho_bank_subscription}"`:
/// the income is a float by then, the subscription flag whatever the caller sent.
pub(super) fn application(
    card_type: &str,
    name: &str,
    income: f64,
    subscription: &Value,
) -> String {
    let seed = format!(
        "credit_card:{card_type}:{name}:{}:{}",
        pyjson::float_repr(income),
        pyjson::py_str(subscription)
    );
    deterministic(&seed, 16)
}

/// `{user_id}_{time}` with spaces, colons and dashes of the time removed or replaced.
pub(super) fn verification(user: &str, time: &str) -> String {
    let suffix = time.replace(' ', "_").replace([':', '-'], "");
    format!("{user}_{suffix}")
}

pub(super) fn user_discoverable_tool(name: &str) -> String {
    deterministic(&format!("user_discoverable_tool:{name}"), 16)
}

/// `json.dumps(arguments, sort_keys=True)` in the seed.
pub(super) fn user_discoverable_tool_call(name: &str, args: &Value) -> String {
    let seed = format!(
        "user_discoverable_tool_call:{name}:{}",
        pyjson::dumps_sorted(args)
    );
    deterministic(&seed, 16)
}

pub(super) fn agent_discoverable_tool(name: &str) -> String {
    deterministic(&format!("agent_discoverable_tool:{name}"), 16)
}

pub(super) fn dispute(user: &str, transaction: &str) -> String {
    format!(
        "dsp_{}",
        deterministic(&format!("dispute:{user}:{transaction}"), 12)
    )
}

pub(super) fn referral_link(user: &str, card: &str) -> String {
    deterministic(&format!("referral_link:{user}:{card}"), 16)
}

pub(super) fn credit_card_order(account: &str, user: &str, reason: &str) -> String {
    let seed = format!("credit_card_order:{account}:{user}:{reason}");
    format!("ccord_{}", deterministic(&seed, 12))
}

pub(super) fn closure_reason(account: &str, user: &str) -> String {
    let seed = format!("closure_reason:{account}:{user}");
    format!("clsr_{}", deterministic(&seed, 12))
}

pub(super) fn account_flag(account: &str, flag: &str, expiration: &str) -> String {
    let seed = format!("account_flag:{account}:{flag}:{expiration}");
    format!("ccflag_{}", deterministic(&seed, 12))
}

pub(super) fn credit_limit_request(account: &str, user: &str, amount: f64) -> String {
    let seed = format!("cli_request:{account}:{user}:{}", f2(amount));
    format!("cli_{}", deterministic(&seed, 12))
}

pub(super) fn debit_card_order(account: &str, user: &str, delivery: &str) -> String {
    let seed = format!("debit_card_order:{account}:{user}:{delivery}");
    format!("dcord_{}", deterministic(&seed, 12))
}

pub(super) fn debit_card(account: &str, user: &str, issue_date: &str) -> String {
    let seed = format!("debit_card:{account}:{user}:{issue_date}");
    format!("dbc_{}", deterministic(&seed, 12))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seeds_are_spelled_as_python_spells_them() {
        // task_001's gold application (reference/banking_knowledge_gold_train.jsonl).
        assert_eq!(
            application("Gold Rewards Card", "Sarah Bosch", 100000.0, &json!(true)),
            "e26eca5e8c8b1b90"
        );
        assert_eq!(
            verification("123", "2025-11-14 03:40:00 EST"),
            "123_20251114_034000_EST"
        );
        assert_eq!(deterministic("x", 12).len(), 12);
    }
}
