mod common;
use serde_json::Value;
use tauguard_core::Requestor;

/// Replaces fresh bill ids (`B` + 8 hex digits) by a placeholder: upstream draws them from uuid4.
fn norm(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let hex = |c: char| c.is_ascii_hexdigit() && !c.is_ascii_uppercase();
        if b[i] == 'B'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && i + 9 <= b.len()
            && b[i + 1..i + 9].iter().all(|c| hex(*c))
            && (i + 9 == b.len() || !b[i + 9].is_ascii_alphanumeric())
            && !b[i + 1..i + 9].iter().all(|c| c.is_ascii_digit())
        {
            out.push_str("B<new>");
            i += 9;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn diff_against_python() {
    let Ok(path) = std::env::var("TELECOM_FUZZ") else { return };
    let data = common::load("telecom").unwrap();
    let scenarios: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut bad = 0;
    let mut calls = 0;
    for (k, sc) in scenarios.iter().enumerate() {
        let task = data.tasks.iter().find(|t| t.id == sc["task"].as_str().unwrap()).unwrap();
        let mut env = tauguard_env::gold::initial_env(&data, task).unwrap();
        for r in sc["calls"].as_array().unwrap() {
            calls += 1;
            let side: Requestor = serde_json::from_value(r["requestor"].clone()).unwrap();
            let (content, error) = env.execute(side, r["name"].as_str().unwrap(), r["arguments"].as_object().unwrap());
            let want = r["content"].as_str().unwrap().replace("errors.pydantic.dev/2.13", "errors.pydantic.dev/2.12");
            let (c, w) = (norm(&content), norm(&want));
            if c != w || error != r["error"].as_bool().unwrap() {
                bad += 1;
                if bad < 15 {
                    eprintln!("MISMATCH #{k} {} {}\n  got  {c:?} {error}\n  want {w:?} {}", r["name"], r["arguments"], r["error"]);
                }
            }
        }
        let mut got_assert = Vec::new();
        for a in task.evaluation_criteria.as_ref().unwrap().env_assertions.iter().flatten() {
            let v = match env.call(a.env_type, &a.func_name, &a.arguments).and_then(|v| env.sync_tools().map(|()| v)) {
                Ok(tauguard_env::ToolValue::Json(Value::Bool(b))) => Value::Bool(b == a.assert_value),
                Ok(other) => Value::String(format!("{other:?}")),
                Err(e) => Value::String(e.content()),
            };
            got_assert.push(v);
        }
        if Value::Array(got_assert.clone()) != sc["assertions"] {
            bad += 1;
            eprintln!("ASSERT #{k} got {got_assert:?} want {}", sc["assertions"]);
        }
        let (gu, wu) = (norm(&env.user_db().unwrap().to_string()), norm(&sc["final_user_db"].to_string()));
        if gu != wu {
            bad += 1;
            let i = gu.bytes().zip(wu.bytes()).position(|(a, b)| a != b).unwrap_or(0);
            eprintln!("USER DB #{k}\n got ...{}\nwant ...{}", &gu[i.saturating_sub(150)..(i + 150).min(gu.len())], &wu[i.saturating_sub(150)..(i + 150).min(wu.len())]);
        }
        let (ga, wa) = (norm(&env.agent_db().to_string()), norm(&sc["final_db"].to_string()));
        if ga != wa {
            bad += 1;
            let i = ga.bytes().zip(wa.bytes()).position(|(a, b)| a != b).unwrap_or(0);
            eprintln!("AGENT DB #{k}\n got ...{}\nwant ...{}", &ga[i.saturating_sub(150)..(i + 150).min(ga.len())], &wa[i.saturating_sub(150)..(i + 150).min(wa.len())]);
        }
    }
    eprintln!("{} scenarios, {calls} calls, {bad} mismatches", scenarios.len());
    assert_eq!(bad, 0);
}
