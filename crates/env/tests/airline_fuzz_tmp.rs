//! TEMPORARY differential driver (removed before hand-off).
use serde_json::{Value, json};
use tauguard_core::Requestor;
use tauguard_env::airline::AirlineBase;
use tauguard_env::environment::Environment;
use tauguard_env::hash::db_hash;

#[test]
fn run_fuzz_cases() {
    let Ok(cases) = std::env::var("AIRLINE_FUZZ_CASES") else { return };
    let db: Value = serde_json::from_str(&std::fs::read_to_string(std::env::var("AIRLINE_FUZZ_DB").unwrap()).unwrap()).unwrap();
    let base = AirlineBase::from_json(&db).unwrap();
    let mut out = String::new();
    for line in std::fs::read_to_string(&cases).unwrap().lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let mut env = base.env();
        let mut results = Vec::new();
        for call in case["calls"].as_array().unwrap() {
            let name = call["name"].as_str().unwrap();
            let args = call["arguments"].as_object().unwrap();
            let r = env.dispatch(Requestor::Assistant, name, args);
            results.push(match r {
                Ok(v) => json!({"ok": true, "output": v.content()}),
                Err(e) => json!({"ok": false, "error": e.qualified()}),
            });
        }
        out.push_str(&json!({"results": results, "hash": db_hash(&env.agent_db())}).to_string());
        out.push('\n');
    }
    std::fs::write(std::env::var("AIRLINE_FUZZ_OUT").unwrap(), out).unwrap();
}
