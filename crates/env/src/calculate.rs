//! The `calculate` tool shared by airline and retail (§3.17): upstream checks the alphabet
//! `0123456789+-*/(). `, `eval`s the text as Python and returns `str(round(float(v), 2))`.
//!
//! Reproducing `eval` on that alphabet means Python's arithmetic (unbounded integers, true
//! and floor division, right-associative `**` binding tighter than unary minus, complex
//! results of fractional powers of negatives, even `()` and `...`), its exception texts, and
//! its syntax-error messages. [`calculate`] takes the text; [`calculate_arg`] takes the raw
//! JSON argument, for the Python behaviour of non-string `expression` values.
//!
//! Known approximations: integers are capped at 2^65536 (CPython keeps computing; we raise
//! the `OverflowError` their conversion to float would raise), and nesting deeper than about
//! a thousand levels raises `RecursionError` where CPython's own limits differ slightly.

mod bigint;
mod lexer;
mod parser;
mod value;

use crate::tooling::{ToolDef, ToolError, param, tool};
use serde_json::Value;
use tauguard_core::ToolKind;
use tauguard_core::pyjson::{float_repr, round2};

/// The tool's declaration, the same in airline's and retail's toolkits.
pub(crate) const CALCULATE: ToolDef = tool(
    "calculate",
    ToolKind::Generic,
    "Calculate the result of a mathematical expression.",
    &[param(
        "expression",
        r#"{"type": "string"}"#,
        "The mathematical expression to calculate, such as '2 + 2'. The expression can contain numbers, operators (+, -, *, /), parentheses, and spaces.",
    )],
);

const ALPHABET: &str = "0123456789+-*/(). ";
/// Inputs up to this length nest too shallowly to threaten a default thread stack.
const INLINE_LEN: usize = 256;
const LONG_INPUT_STACK: usize = 256 << 20;

/// `str(round(float(eval(expression)), 2))` with upstream's alphabet check.
pub(crate) fn calculate(expression: &str) -> Result<String, ToolError> {
    if !expression.chars().all(|c| ALPHABET.contains(c)) {
        return Err(ToolError::value("Invalid characters in expression"));
    }
    if expression.len() <= INLINE_LEN {
        return evaluate(expression);
    }
    // Parsing and evaluation recurse once per nesting level; long inputs get a stack that
    // fits the nesting limits.
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("calculate".into())
            .stack_size(LONG_INPUT_STACK)
            .spawn_scoped(scope, || evaluate(expression))
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => Err(value::error("MemoryError", "")),
        }
    })
}

fn evaluate(expression: &str) -> Result<String, ToolError> {
    let tokens = lexer::tokenize(expression).map_err(|msg| syntax_error(msg, 1))?;
    let line = if matches!(tokens[0].tok, lexer::Tok::EndMarker) {
        0
    } else {
        1
    };
    let tree = parser::parse(&tokens).map_err(|abort| match abort {
        None => syntax_error("invalid syntax", line),
        Some(parser::Abort::Syntax(msg)) => syntax_error(msg, line),
        Some(parser::Abort::NeverClosed) => syntax_error("'(' was never closed", line),
        Some(parser::Abort::TooDeep) => value::error(
            "RecursionError",
            "maximum recursion depth exceeded during compilation",
        ),
    })?;
    let v = value::eval(&tree)?.to_float()?;
    Ok(float_repr(round2(v)))
}

/// The tool on a raw JSON argument: a string is calculated; other values fail the way the
/// upstream check `all(char in ALPHABET for char in expression)` and `eval` fail on them.
pub(crate) fn calculate_arg(expression: &Value) -> Result<String, ToolError> {
    let items: Vec<&Value> = match expression {
        Value::String(s) => return calculate(s),
        Value::Array(items) => items.iter().collect(),
        Value::Object(map) => {
            let keys: Vec<Value> = map.keys().map(|k| Value::String(k.clone())).collect();
            return check_items(&keys.iter().collect::<Vec<_>>());
        }
        other => {
            return Err(ToolError::type_error(format!(
                "'{}' object is not iterable",
                tauguard_core::pyjson::type_name(other)
            )));
        }
    };
    check_items(&items)
}

fn check_items(items: &[&Value]) -> Result<String, ToolError> {
    for item in items {
        match item {
            Value::String(s) if ALPHABET.contains(s.as_str()) => {}
            Value::String(_) => return Err(ToolError::value("Invalid characters in expression")),
            other => {
                return Err(ToolError::type_error(format!(
                    "'in <string>' requires string as left operand, not {}",
                    tauguard_core::pyjson::type_name(other)
                )));
            }
        }
    }
    Err(ToolError::type_error(
        "eval() arg 1 must be a string, bytes or code object",
    ))
}

fn syntax_error(msg: &str, line: u32) -> ToolError {
    value::error("SyntaxError", format!("{msg} (<string>, line {line})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(expr: &str) -> String {
        calculate(expr).unwrap_or_else(|e| panic!("{expr}: {}", e.qualified()))
    }

    fn err(expr: &str) -> String {
        calculate(expr)
            .map(|v| panic!("{expr}: unexpected {v}"))
            .unwrap_err()
            .qualified()
    }

    /// Expected values produced by CPython (`str(round(float(eval(e)), 2))`).
    #[test]
    fn arithmetic_matches_python() {
        let cases = [
            ("1 + 1", "2.0"),
            ("10/3", "3.33"),
            ("2**10", "1024.0"),
            ("100000000000000000*10", "1e+18"),
            ("-2**2", "-4.0"),
            ("2**-1**2", "0.5"),
            ("2 ** 3 ** 2", "512.0"),
            ("-2 ** -2", "-0.25"),
            ("2**-2000", "0.0"),
            ("1++1", "2.0"),
            ("1**-2", "1.0"),
            ("00", "0.0"),
            ("00.5", "0.5"),
            (".5 + 5.", "5.5"),
            ("0.1+0.2", "0.3"),
            ("2.675", "2.67"),
            ("1.005*1000", "1005.0"),
            ("-0.0", "-0.0"),
            ("-0", "0.0"),
            ("0.0*-1", "-0.0"),
            ("0/-5", "-0.0"),
            ("7//-2", "-4.0"),
            ("-7.5//2", "-4.0"),
            ("1.5//0.1", "14.0"),
            ("-0.0//1", "-0.0"),
            ("10**16", "1e+16"),
            ("123456789012345678901234567890", "1.2345678901234568e+29"),
            ("2**53+1", "9007199254740992.0"),
            ("(2**54+1)/3", "6004799503160662.0"),
            ("10**30/3", "3.333333333333333e+29"),
            ("10**400/10**399", "10.0"),
            ("9**9**2", "1.9662705047555292e+77"),
            ("10.0**308*10", "inf"),
            ("10.0**308*10 - 10.0**308*10", "nan"),
            ("8 ** (1/3)", "2.0"),
            ("(-8)**(2)", "64.0"),
            ("  (1)", "1.0"),
            ("((((1))))", "1.0"),
            ("0**0", "1.0"),
            ("128.36 - 100", "28.36"),
        ];
        for (expr, want) in cases {
            assert_eq!(ok(expr), want, "{expr}");
        }
    }

    #[test]
    fn exceptions_match_python() {
        let cases = [
            ("1/0", "ZeroDivisionError: division by zero"),
            (
                "1//0",
                "ZeroDivisionError: integer division or modulo by zero",
            ),
            ("1.0/0", "ZeroDivisionError: float division by zero"),
            ("1.0//0", "ZeroDivisionError: float floor division by zero"),
            (
                "0**-1",
                "ZeroDivisionError: 0.0 cannot be raised to a negative power",
            ),
            (
                "10.0**400",
                "OverflowError: (34, 'Numerical result out of range')",
            ),
            (
                "2**10000",
                "OverflowError: int too large to convert to float",
            ),
            (
                "10**400/3",
                "OverflowError: integer division result too large for a float",
            ),
            (
                "()",
                "TypeError: float() argument must be a string or a real number, not 'tuple'",
            ),
            (
                "()*2",
                "TypeError: float() argument must be a string or a real number, not 'tuple'",
            ),
            ("-()", "TypeError: bad operand type for unary -: 'tuple'"),
            (
                "(-8)**(1/3)",
                "TypeError: float() argument must be a string or a real number, not 'complex'",
            ),
            ("(1)(2)", "TypeError: 'int' object is not callable"),
            (
                "...",
                "TypeError: float() argument must be a string or a real number, not 'ellipsis'",
            ),
            (
                "... + 1",
                "TypeError: unsupported operand type(s) for +: 'ellipsis' and 'int'",
            ),
            (
                "()+1",
                "TypeError: can only concatenate tuple (not \"int\") to tuple",
            ),
            (
                "1+()",
                "TypeError: unsupported operand type(s) for +: 'int' and 'tuple'",
            ),
            (
                "()*2.0",
                "TypeError: can't multiply sequence by non-int of type 'float'",
            ),
            (
                "()**2",
                "TypeError: unsupported operand type(s) for ** or pow(): 'tuple' and 'int'",
            ),
            (
                "()*10**100",
                "OverflowError: cannot fit 'int' into an index-sized integer",
            ),
            (
                "(1)(*2)",
                "TypeError: 1 argument after * must be an iterable, not int",
            ),
            (
                "(1)(**())",
                "TypeError: 1 argument after ** must be a mapping, not tuple",
            ),
            ("(1)(*())", "TypeError: 'int' object is not callable"),
            (
                "(-8)**0.5 // 1",
                "TypeError: unsupported operand type(s) for //: 'complex' and 'int'",
            ),
            (
                "1/((-1)**0.5-(-1)**0.5)",
                "ZeroDivisionError: complex division by zero",
            ),
            (
                "((-1)**0.5-(-1)**0.5)**-1",
                "ZeroDivisionError: 0.0 to a negative or complex power",
            ),
            (
                "((-1)**0.5)(*1)",
                "TypeError: (6.123233995736766e-17+1j) argument after * must be an iterable, not int",
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(err(expr), want, "{expr}");
        }
    }

    #[test]
    fn syntax_errors_match_python() {
        let zeros = "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers";
        let cases = [
            ("", "invalid syntax (<string>, line 0)".to_string()),
            ("   ", "invalid syntax (<string>, line 0)".to_string()),
            ("1+", "invalid syntax (<string>, line 1)".to_string()),
            ("(", "'(' was never closed (<string>, line 1)".to_string()),
            (")", "unmatched ')' (<string>, line 1)".to_string()),
            ("05", format!("{zeros} (<string>, line 1)")),
            ("1 2 05", format!("{zeros} (<string>, line 1)")),
            ("(1 2) 05", format!("{zeros} (<string>, line 1)")),
            (") 05", "unmatched ')' (<string>, line 1)".to_string()),
            ("1 2", "invalid syntax (<string>, line 1)".to_string()),
            (
                "(1 2)",
                "invalid syntax. Perhaps you forgot a comma? (<string>, line 1)".to_string(),
            ),
            (
                "(1 2",
                "'(' was never closed (<string>, line 1)".to_string(),
            ),
            (
                "((1 2)",
                "invalid syntax. Perhaps you forgot a comma? (<string>, line 1)".to_string(),
            ),
            (
                "(1 2) (",
                "invalid syntax. Perhaps you forgot a comma? (<string>, line 1)".to_string(),
            ),
            (
                "1 2 (",
                "'(' was never closed (<string>, line 1)".to_string(),
            ),
            (
                "(1 + ) (2 3)",
                "invalid syntax (<string>, line 1)".to_string(),
            ),
            ("1 + * (", "invalid syntax (<string>, line 1)".to_string()),
            (
                "(2 3 +",
                "'(' was never closed (<string>, line 1)".to_string(),
            ),
            (
                "(*1)",
                "cannot use starred expression here (<string>, line 1)".to_string(),
            ),
            (
                "(**1)",
                "cannot use double starred expression here (<string>, line 1)".to_string(),
            ),
            (
                "(*1 2)",
                "invalid syntax. Perhaps you forgot a comma? (<string>, line 1)".to_string(),
            ),
            ("5..", "invalid syntax (<string>, line 1)".to_string()),
            ("1 .5", "invalid syntax (<string>, line 1)".to_string()),
            (
                &"(".repeat(201),
                "too many nested parentheses (<string>, line 1)".to_string(),
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(err(expr), format!("SyntaxError: {want}"), "{expr:?}");
        }
        assert_eq!(
            ok(&format!("{}1{}", "(".repeat(200), ")".repeat(200))),
            "1.0"
        );
    }

    #[test]
    fn alphabet_and_argument_types() {
        assert_eq!(err("2 + x"), "ValueError: Invalid characters in expression");
        assert_eq!(err("2e5"), "ValueError: Invalid characters in expression");
        assert_eq!(calculate_arg(&json!("3*3")).unwrap(), "9.0");
        let cases = [
            (json!(5), "TypeError: 'int' object is not iterable"),
            (json!(null), "TypeError: 'NoneType' object is not iterable"),
            (
                json!(["1", "+"]),
                "TypeError: eval() arg 1 must be a string, bytes or code object",
            ),
            (
                json!(["1", 2]),
                "TypeError: 'in <string>' requires string as left operand, not int",
            ),
            (
                json!(["1x"]),
                "ValueError: Invalid characters in expression",
            ),
            (
                json!({"12": 1}),
                "TypeError: eval() arg 1 must be a string, bytes or code object",
            ),
        ];
        for (arg, want) in cases {
            assert_eq!(calculate_arg(&arg).unwrap_err().qualified(), want, "{arg}");
        }
    }

    #[test]
    fn deep_inputs_fail_cleanly() {
        let deep_unary = format!("{}1", "-".repeat(7000));
        assert_eq!(err(&deep_unary).split(':').next(), Some("RecursionError"));
        let long_sum = format!("1{}", "+1".repeat(100_000));
        assert_eq!(err(&long_sum).split(':').next(), Some("RecursionError"));
        assert_eq!(ok(&format!("1{}", "+1".repeat(1000))), "1001.0");
        let deep_power = format!("2{}", "**1".repeat(990));
        assert_eq!(ok(&deep_power), "2.0");
        let nested_error = format!("{}1 2{}", "(".repeat(200), ")".repeat(200));
        assert!(err(&nested_error).contains("forgot a comma"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(expr in "[0-9+*/(). -]{0,40}") {
            let _ = calculate(&expr);
        }
    }
}
