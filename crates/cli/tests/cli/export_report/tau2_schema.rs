//! Upstream's results format (tau2-semantics.md §9, §7.6, §6.1, §1.2) as the fields each
//! object must hold and their JSON types (`|` = alternatives). Written from the document, not
//! from the exporter.

use serde_json::Value;

const RESULTS: &[(&str, &str)] = &[
    ("timestamp", "iso"),
    ("info", "obj"),
    ("tasks", "arr"),
    ("simulations", "arr"),
];
const INFO: &[(&str, &str)] = &[
    ("git_commit", "str"),
    ("num_trials", "int"),
    ("max_steps", "int"),
    ("max_errors", "int"),
    ("user_info", "obj"),
    ("agent_info", "obj"),
    ("environment_info", "obj"),
    ("seed", "int|null"),
];
const USER_INFO: &[(&str, &str)] = &[
    ("implementation", "str"),
    ("llm", "str|null"),
    ("llm_args", "obj|null"),
    ("global_simulation_guidelines", "str|null"),
];
const AGENT_INFO: &[(&str, &str)] = &[
    ("implementation", "str"),
    ("llm", "str|null"),
    ("llm_args", "obj|null"),
];
const ENVIRONMENT_INFO: &[(&str, &str)] = &[
    ("domain_name", "str"),
    ("policy", "str"),
    ("tool_defs", "null|arr|obj"),
];
const TASK: &[(&str, &str)] = &[
    ("id", "str"),
    ("description", "obj|null"),
    ("user_scenario", "obj"),
    ("ticket", "str|null"),
    ("initial_state", "obj|null"),
    ("evaluation_criteria", "obj|null"),
    ("issues", "arr|null"),
    ("required_documents", "arr|null"),
    ("user_tools", "arr|null"),
];
const SIMULATION: &[(&str, &str)] = &[
    ("id", "str"),
    ("task_id", "str"),
    ("timestamp", "iso"),
    ("start_time", "iso"),
    ("end_time", "iso"),
    ("duration", "num"),
    ("termination_reason", "str"),
    ("agent_cost", "num|null"),
    ("user_cost", "num|null"),
    ("agent_usage", "null|obj"),
    ("reward_info", "obj|null"),
    ("messages", "arr"),
    ("ticks", "null|arr"),
    ("trial", "int"),
    ("seed", "int"),
    ("mode", "str"),
    ("speech_environment", "null|obj"),
    ("review", "null|obj"),
    ("user_only_review", "null|obj"),
    ("info", "obj|null"),
    ("auth_classification", "null|obj"),
    ("hallucination_retries_used", "int"),
    ("hallucination_check", "null|obj"),
    ("provider_session_id", "null|str"),
    ("policy", "str|null"),
    ("effect_timeline", "null|arr|obj"),
];
const REWARD_INFO: &[(&str, &str)] = &[
    ("reward", "num"),
    ("db_check", "obj|null"),
    ("env_assertions", "arr|null"),
    ("action_checks", "arr|null"),
    ("nl_assertions", "arr|null"),
    ("communicate_checks", "arr|null"),
    ("reward_basis", "arr|null"),
    ("reward_breakdown", "obj|null"),
    ("info", "obj|null"),
];
const PARTICIPANT: &[(&str, &str)] = &[
    ("role", "str"),
    ("content", "str|null"),
    ("tool_calls", "arr|null"),
    ("turn_idx", "int"),
    ("timestamp", "iso"),
    ("cost", "num|null"),
    ("usage", "obj|null"),
    ("raw_data", "obj|null"),
];
const TOOL_MESSAGE: &[(&str, &str)] = &[
    ("id", "str"),
    ("role", "str"),
    ("content", "str|null"),
    ("requestor", "str"),
    ("error", "bool"),
    ("turn_idx", "int"),
    ("timestamp", "iso"),
];
const TOOL_CALL: &[(&str, &str)] = &[
    ("id", "str"),
    ("name", "str"),
    ("arguments", "obj"),
    ("requestor", "str"),
];
const TERMINATIONS: &[&str] = &[
    "user_stop",
    "agent_stop",
    "max_steps",
    "timeout",
    "too_many_errors",
    "agent_error",
    "user_error",
    "infrastructure_error",
];

fn is_iso(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 19
        && b.iter().take(19).enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

fn has_type(v: &Value, ty: &str) -> bool {
    ty.split('|').any(|t| match t {
        "str" => v.is_string(),
        "iso" => v.as_str().is_some_and(is_iso),
        "int" => v.is_u64() || v.is_i64(),
        "num" => v.is_number(),
        "bool" => v.is_boolean(),
        "obj" => v.is_object(),
        "arr" => v.is_array(),
        "null" => v.is_null(),
        other => panic!("schema type `{other}`"),
    })
}

fn fields(v: &Value, at: &str, schema: &[(&str, &str)], errs: &mut Vec<String>) {
    let Some(o) = v.as_object() else {
        errs.push(format!("{at}: not an object"));
        return;
    };
    for (k, ty) in schema {
        match o.get(*k) {
            None => errs.push(format!("{at}.{k}: missing")),
            Some(x) if !has_type(x, ty) => errs.push(format!("{at}.{k}: {x} is not {ty}")),
            Some(_) => {}
        }
    }
}

/// Every violation of the schema in `doc`, as `path: problem`.
pub(super) fn violations(doc: &Value) -> Vec<String> {
    let mut e = Vec::new();
    fields(doc, "$", RESULTS, &mut e);
    let info = &doc["info"];
    fields(info, "$.info", INFO, &mut e);
    fields(&info["user_info"], "$.info.user_info", USER_INFO, &mut e);
    fields(&info["agent_info"], "$.info.agent_info", AGENT_INFO, &mut e);
    fields(
        &info["environment_info"],
        "$.info.environment_info",
        ENVIRONMENT_INFO,
        &mut e,
    );
    for (i, t) in doc["tasks"].as_array().into_iter().flatten().enumerate() {
        fields(t, &format!("$.tasks[{i}]"), TASK, &mut e);
    }
    for (i, s) in doc["simulations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("$.simulations[{i}]");
        fields(s, &at, SIMULATION, &mut e);
        if !s["termination_reason"]
            .as_str()
            .is_some_and(|r| TERMINATIONS.contains(&r))
        {
            e.push(format!(
                "{at}.termination_reason: {}",
                s["termination_reason"]
            ));
        }
        if s["end_time"].as_str() < s["start_time"].as_str() {
            e.push(format!("{at}: end_time before start_time"));
        }
        let last = s["messages"].as_array().and_then(|m| m.last());
        if let Some(t) = last.and_then(|m| m["timestamp"].as_str())
            && s["end_time"].as_str().is_some_and(|end| end < t)
        {
            e.push(format!("{at}: end_time before its last message ({t})"));
        }
        if !s["reward_info"].is_null() {
            fields(
                &s["reward_info"],
                &format!("{at}.reward_info"),
                REWARD_INFO,
                &mut e,
            );
        }
        for (j, m) in s["messages"].as_array().into_iter().flatten().enumerate() {
            let mat = format!("{at}.messages[{j}]");
            match m["role"].as_str() {
                Some("assistant" | "user") => {
                    fields(m, &mat, PARTICIPANT, &mut e);
                    for (c, call) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
                        fields(call, &format!("{mat}.tool_calls[{c}]"), TOOL_CALL, &mut e);
                    }
                }
                Some("tool") => fields(m, &mat, TOOL_MESSAGE, &mut e),
                other => e.push(format!("{mat}.role: {other:?}")),
            }
            if m["turn_idx"] != j {
                e.push(format!("{mat}.turn_idx: {} (expected {j})", m["turn_idx"]));
            }
        }
    }
    e
}
