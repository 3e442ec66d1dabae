//! Unit tests of the evaluation's errors.

use super::*;

#[test]
fn an_assertion_that_raised_keeps_the_tool_error_as_its_cause() {
    let e = EvalError::Assertion {
        func: "assert_data_refueling_amount".into(),
        cause: tauguard_env::ToolError::key(&json!("line_1")),
    };
    let cause = std::error::Error::source(&e).expect("the tool error is the source");
    assert_eq!(cause.to_string(), "'line_1'");
    assert_eq!(
        tauguard_core::chain_text(&e),
        "env assertion `assert_data_refueling_amount`: KeyError: 'line_1'"
    );
    let not_bool = EvalError::NotBool {
        func: "assert_x".into(),
        value: "Json(Number(3))".into(),
    };
    assert!(std::error::Error::source(&not_bool).is_none());
    assert_eq!(
        not_bool.to_string(),
        "env assertion `assert_x`: returned Json(Number(3)) instead of bool"
    );
}
