//! Round trips of the record's reward info: typed ACTION checks serialise in place and read
//! back equal, and checks of another shape stay plain JSON.

use super::{ActionCheck, RewardInfo};
use serde_json::json;
use std::sync::Arc;

#[test]
fn typed_action_checks_serialise_in_place_and_read_back_equal() {
    let r = RewardInfo {
        reward: 1.0,
        breakdown: json!({"DB": 1.0}).as_object().unwrap().clone(),
        details: json!({"db_check": {"db_match": true}, "action_checks": null, "reward": 1.0}),
        action_checks: vec![ActionCheck {
            action: Arc::new(json!({"name": "book", "arguments": {"a": 1}})),
            action_match: false,
            action_reward: 0.0,
            tool_type: Some(crate::ToolKind::Write),
        }],
    };
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(
        text,
        r#"{"reward":1.0,"breakdown":{"DB":1.0},"details":{"db_check":{"db_match":true},"action_checks":[{"action":{"name":"book","arguments":{"a":1}},"action_match":false,"action_reward":0.0,"tool_type":"write"}],"reward":1.0}}"#
    );
    assert_eq!(serde_json::from_str::<RewardInfo>(&text).unwrap(), r);
    assert_eq!(
        r.details_json()["action_checks"][0]["tool_type"],
        json!("write")
    );
}

#[test]
fn checks_of_another_shape_stay_plain_json() {
    let text = r#"{"reward":0.0,"breakdown":{},"details":{"action_checks":[{"action":{},"action_match":true,"action_reward":1,"tool_type":null}]}}"#;
    let r: RewardInfo = serde_json::from_str(text).unwrap();
    assert!(r.action_checks.is_empty());
    assert_eq!(serde_json::to_string(&r).unwrap(), text);
}
