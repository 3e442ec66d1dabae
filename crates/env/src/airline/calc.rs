//! The `calculate` tool: a Python-expression evaluator for the characters
//! `0123456789+-*/(). `.
//!
//! Upstream checks the characters and then hands the string to Python's `eval`, so the
//! result (and every error text the agent reads) is Python's. Within that character set the
//! reachable Python is small: integer and float literals, `+ - * / // **`, unary signs,
//! parentheses, the empty tuple `()`, the `...` literal and calls such as `(1)(2)`. This
//! module implements exactly that subset with Python's numeric tower (arbitrary-precision
//! integers, IEEE floats, and complex numbers from negative bases raised to fractional
//! powers) and then applies `str(round(float(value), 2))`.

use super::bigint::BigInt;
use crate::tooling::ToolError;
use serde_json::Value;
use tauguard_core::pyjson::{float_repr, round2};

const ALLOWED: &str = "0123456789+-*/(). ";
/// Python's tokenizer refuses deeper parenthesis nesting.
const MAX_PAREN_DEPTH: usize = 200;
/// Recursion bound of the parser (keeps the Rust stack safe on hostile input).
const MAX_DEPTH: usize = 1000;
/// Longest run of unary signs; CPython's compiler gives up at a similar length.
const MAX_SIGNS: usize = 2500;
/// CPython's default limit on decimal digits in an integer literal.
const MAX_INT_DIGITS: usize = 4300;

/// `calculate(expression)`.
pub fn calculate(expression: &Value) -> Result<String, ToolError> {
    let text = match expression {
        Value::String(s) => s,
        other => return non_string(other),
    };
    if !text.chars().all(|c| ALLOWED.contains(c)) {
        return Err(ToolError::value("Invalid characters in expression"));
    }
    let expr = parse(text)?;
    let value = eval(&expr)?;
    let x = match value {
        Val::Int(i) => i.to_f64().ok_or_else(|| overflow("int too large to convert to float"))?,
        Val::Float(f) => f,
        other => {
            return Err(ToolError::type_error(format!(
                "float() argument must be a string or a real number, not '{}'",
                other.type_name()
            )));
        }
    };
    Ok(float_repr(round2(x)))
}

/// Python's behaviour for an expression that is not a string: the character check iterates
/// it (`in <string>` needs string items), then `eval` refuses it.
fn non_string(v: &Value) -> Result<String, ToolError> {
    let items: Vec<Value> = match v {
        Value::Array(items) => items.clone(),
        Value::Object(map) => map.keys().map(|k| Value::String(k.clone())).collect(),
        other => {
            return Err(ToolError::type_error(format!(
                "'{}' object is not iterable",
                super::pyops::type_name(other)
            )));
        }
    };
    for item in &items {
        match item {
            Value::String(s) if ALLOWED.contains(s.as_str()) => {}
            Value::String(_) => return Err(ToolError::value("Invalid characters in expression")),
            other => {
                return Err(ToolError::type_error(format!(
                    "'in <string>' requires string as left operand, not {}",
                    super::pyops::type_name(other)
                )));
            }
        }
    }
    Err(ToolError::type_error("eval() arg 1 must be a string, bytes or code object"))
}

fn syntax(message: &str, line: u32) -> ToolError {
    ToolError { class: "SyntaxError", message: format!("{message} (<string>, line {line})") }
}

fn overflow(message: &str) -> ToolError {
    ToolError { class: "OverflowError", message: message.to_string() }
}

fn zero_div(message: &str) -> ToolError {
    ToolError { class: "ZeroDivisionError", message: message.to_string() }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(String),
    Float(String),
    Op(&'static str),
    LParen,
    RParen,
    Ellipsis,
    Dot,
}

/// Tokenizes the whole input first: tokenizer errors win over parse errors, as in CPython.
fn tokenize(text: &str) -> Result<(Vec<Tok>, usize), ToolError> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' => i += 1,
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i < b.len() && b[i] == b'.' {
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    toks.push(Tok::Float(text[start..i].to_string()));
                } else {
                    let digits = &text[start..i];
                    if digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|d| d != b'0') {
                        return Err(syntax(
                            "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers",
                            1,
                        ));
                    }
                    if digits.len() > MAX_INT_DIGITS {
                        return Err(syntax(
                            &format!(
                                "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion: value has {} digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.",
                                digits.len()
                            ),
                            1,
                        ));
                    }
                    toks.push(Tok::Int(digits.to_string()));
                }
            }
            b'.' => {
                if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    let start = i;
                    i += 1;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    toks.push(Tok::Float(text[start..i].to_string()));
                } else if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'.') {
                    toks.push(Tok::Ellipsis);
                    i += 3;
                } else {
                    toks.push(Tok::Dot);
                    i += 1;
                }
            }
            b'*' | b'/' => {
                let doubled = b.get(i + 1) == Some(&c);
                toks.push(Tok::Op(match (c, doubled) {
                    (b'*', true) => "**",
                    (b'*', false) => "*",
                    (_, true) => "//",
                    (_, false) => "/",
                }));
                i += if doubled { 2 } else { 1 };
            }
            b'+' => {
                toks.push(Tok::Op("+"));
                i += 1;
            }
            b'-' => {
                toks.push(Tok::Op("-"));
                i += 1;
            }
            b'(' => {
                depth += 1;
                if depth > MAX_PAREN_DEPTH {
                    return Err(syntax("too many nested parentheses", 1));
                }
                toks.push(Tok::LParen);
                i += 1;
            }
            b')' => {
                if depth == 0 {
                    return Err(syntax("unmatched ')'", 1));
                }
                depth -= 1;
                toks.push(Tok::RParen);
                i += 1;
            }
            _ => return Err(syntax("invalid syntax", 1)),
        }
    }
    Ok((toks, depth))
}

#[derive(Debug)]
enum Expr {
    Int(BigInt),
    Float(f64),
    EmptyTuple,
    Ellipsis,
    /// A run of unary signs: whether the count of `-` is odd, the sign applied first (the
    /// last one written) and the operand.
    Signs { negate: bool, innermost: &'static str, operand: Box<Expr> },
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Call(Box<Expr>, Option<Box<Expr>>),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// Parse failure without a message: the caller decides between "invalid syntax" and
/// "'(' was never closed", as CPython does.
struct Fail;

fn parse(text: &str) -> Result<Expr, ToolError> {
    let (toks, open) = tokenize(text)?;
    if toks.is_empty() {
        return Err(syntax("invalid syntax", 0));
    }
    let mut p = Parser { toks, pos: 0, depth: 0 };
    let result = p.expr().and_then(|e| if p.pos == p.toks.len() { Ok(e) } else { Err(Fail) });
    result.map_err(|Fail| {
        if p.depth > MAX_DEPTH {
            ToolError { class: "RecursionError", message: "maximum recursion depth exceeded during compilation".into() }
        } else if open > 0 {
            syntax("'(' was never closed", 1)
        } else {
            syntax("invalid syntax", 1)
        }
    })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat_op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        match self.peek() {
            Some(Tok::Op(o)) if ops.contains(o) => {
                let o = *o;
                self.pos += 1;
                Some(o)
            }
            _ => None,
        }
    }

    fn enter(&mut self) -> Result<(), Fail> {
        self.depth += 1;
        if self.depth > MAX_DEPTH { Err(Fail) } else { Ok(()) }
    }

    /// expr := term (('+'|'-') term)*
    fn expr(&mut self) -> Result<Expr, Fail> {
        self.enter()?;
        let mut left = self.term()?;
        while let Some(op) = self.eat_op(&["+", "-"]) {
            let right = self.term()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        self.depth -= 1;
        Ok(left)
    }

    /// term := factor (('*'|'/'|'//') factor)*
    fn term(&mut self) -> Result<Expr, Fail> {
        let mut left = self.factor()?;
        while let Some(op) = self.eat_op(&["*", "/", "//"]) {
            let right = self.factor()?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// factor := ('+'|'-') factor | power
    fn factor(&mut self) -> Result<Expr, Fail> {
        let mut count = 0usize;
        let mut negate = false;
        let mut innermost = "+";
        while let Some(op) = self.eat_op(&["+", "-"]) {
            count += 1;
            negate ^= op == "-";
            innermost = op;
            if count > MAX_SIGNS {
                self.depth = MAX_DEPTH + 1;
                return Err(Fail);
            }
        }
        let e = self.power()?;
        if count == 0 {
            return Ok(e);
        }
        Ok(Expr::Signs { negate, innermost, operand: Box::new(e) })
    }

    /// power := primary ['**' factor]
    fn power(&mut self) -> Result<Expr, Fail> {
        let base = self.primary()?;
        if self.eat_op(&["**"]).is_some() {
            self.enter()?;
            let exp = self.factor()?;
            self.depth -= 1;
            return Ok(Expr::Bin("**", Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    /// primary := atom ('(' [expr] ')')*
    fn primary(&mut self) -> Result<Expr, Fail> {
        let mut e = self.atom()?;
        while self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let arg = if self.peek() == Some(&Tok::RParen) { None } else { Some(Box::new(self.expr()?)) };
            if self.peek() != Some(&Tok::RParen) {
                return Err(Fail);
            }
            self.pos += 1;
            e = Expr::Call(Box::new(e), arg);
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr, Fail> {
        let tok = self.peek().cloned().ok_or(Fail)?;
        self.pos += 1;
        match tok {
            Tok::Int(d) => Ok(Expr::Int(BigInt::from_decimal(&d))),
            Tok::Float(s) => Ok(Expr::Float(s.parse().map_err(|_| Fail)?)),
            Tok::Ellipsis => Ok(Expr::Ellipsis),
            Tok::LParen => {
                if self.peek() == Some(&Tok::RParen) {
                    self.pos += 1;
                    return Ok(Expr::EmptyTuple);
                }
                let inner = self.expr()?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err(Fail);
                }
                self.pos += 1;
                Ok(inner)
            }
            Tok::Op(_) | Tok::RParen | Tok::Dot => Err(Fail),
        }
    }
}

/// A Python value reachable from the allowed characters.
#[derive(Debug, Clone)]
enum Val {
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Tuple,
    Ellipsis,
}

impl Val {
    fn type_name(&self) -> &'static str {
        match self {
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Complex(..) => "complex",
            Val::Tuple => "tuple",
            Val::Ellipsis => "ellipsis",
        }
    }
}

fn too_large(_: super::bigint::TooLarge) -> ToolError {
    overflow("int too large to convert to float")
}

fn int_to_float(i: &BigInt) -> Result<f64, ToolError> {
    i.to_f64().ok_or_else(|| overflow("int too large to convert to float"))
}

fn eval(e: &Expr) -> Result<Val, ToolError> {
    Ok(match e {
        Expr::Int(i) => Val::Int(i.clone()),
        Expr::Float(f) => Val::Float(*f),
        Expr::EmptyTuple => Val::Tuple,
        Expr::Ellipsis => Val::Ellipsis,
        Expr::Signs { negate, innermost, operand } => {
            let neg = *negate;
            match eval(operand)? {
                Val::Int(i) => Val::Int(if neg { i.negated() } else { i }),
                Val::Float(f) => Val::Float(if neg { -f } else { f }),
                Val::Complex(re, im) => {
                    if neg { Val::Complex(-re, -im) } else { Val::Complex(re, im) }
                }
                other => {
                    return Err(ToolError::type_error(format!(
                        "bad operand type for unary {innermost}: '{}'",
                        other.type_name()
                    )));
                }
            }
        }
        Expr::Call(callee, arg) => {
            let f = eval(callee)?;
            if let Some(a) = arg {
                eval(a)?;
            }
            return Err(ToolError::type_error(format!("'{}' object is not callable", f.type_name())));
        }
        Expr::Bin(op, l, r) => {
            let a = eval(l)?;
            let b = eval(r)?;
            binary(op, a, b)?
        }
    })
}

fn unsupported(op: &str, a: &Val, b: &Val) -> ToolError {
    let shown = if op == "**" { "** or pow()" } else { op };
    ToolError::type_error(format!(
        "unsupported operand type(s) for {shown}: '{}' and '{}'",
        a.type_name(),
        b.type_name()
    ))
}

fn binary(op: &str, a: Val, b: Val) -> Result<Val, ToolError> {
    use Val::*;
    match (&a, &b) {
        (Tuple | Ellipsis, _) | (_, Tuple | Ellipsis) => sequence_op(op, &a, &b),
        (Int(x), Int(y)) => int_op(op, x, y),
        (Complex(..), _) | (_, Complex(..)) => {
            if op == "//" {
                return Err(unsupported(op, &a, &b));
            }
            complex_op(op, to_complex(&a)?, to_complex(&b)?)
        }
        _ => {
            let x = to_float(&a)?;
            let y = to_float(&b)?;
            float_op(op, x, y)
        }
    }
}

fn sequence_op(op: &str, a: &Val, b: &Val) -> Result<Val, ToolError> {
    use Val::*;
    match (op, a, b) {
        ("+", Tuple, Tuple) => Ok(Tuple),
        ("+", Tuple, other) => Err(ToolError::type_error(format!(
            "can only concatenate tuple (not \"{}\") to tuple",
            other.type_name()
        ))),
        ("*", Tuple, Int(n)) | ("*", Int(n), Tuple) => {
            if n.to_i64().is_none() {
                return Err(overflow("cannot fit 'int' into an index-sized integer"));
            }
            Ok(Tuple)
        }
        ("*", Tuple, other) | ("*", other, Tuple) => Err(ToolError::type_error(format!(
            "can't multiply sequence by non-int of type '{}'",
            other.type_name()
        ))),
        _ => Err(unsupported(op, a, b)),
    }
}

fn to_float(v: &Val) -> Result<f64, ToolError> {
    match v {
        Val::Int(i) => int_to_float(i),
        Val::Float(f) => Ok(*f),
        _ => unreachable!("only numbers reach float arithmetic"),
    }
}

fn to_complex(v: &Val) -> Result<(f64, f64), ToolError> {
    match v {
        Val::Complex(re, im) => Ok((*re, *im)),
        other => Ok((to_float(other)?, 0.0)),
    }
}

fn int_op(op: &str, x: &BigInt, y: &BigInt) -> Result<Val, ToolError> {
    Ok(match op {
        "+" => Val::Int(x.plus(y).map_err(too_large)?),
        "-" => Val::Int(x.minus(y).map_err(too_large)?),
        "*" => Val::Int(x.times(y).map_err(too_large)?),
        "/" => Val::Float(x.true_div(y).map_err(|e| match e {
            None => zero_div("division by zero"),
            Some(()) => overflow("integer division result too large for a float"),
        })?),
        "//" => Val::Int(
            x.div_mod_floor(y).ok_or_else(|| zero_div("integer division or modulo by zero"))?.0,
        ),
        _ => {
            if y.is_negative() {
                return float_op("**", int_to_float(x)?, int_to_float(y)?);
            }
            Val::Int(x.pow(y).map_err(too_large)?)
        }
    })
}

fn float_op(op: &str, x: f64, y: f64) -> Result<Val, ToolError> {
    Ok(Val::Float(match op {
        "+" => x + y,
        "-" => x - y,
        "*" => x * y,
        "/" => {
            if y == 0.0 {
                return Err(zero_div("float division by zero"));
            }
            x / y
        }
        "//" => {
            if y == 0.0 {
                return Err(zero_div("float floor division by zero"));
            }
            float_floor_div(x, y)
        }
        _ => return float_pow(x, y),
    }))
}

/// CPython's `float_floor_div` (via `float_divmod`).
fn float_floor_div(vx: f64, wx: f64) -> f64 {
    let m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 && ((wx < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        floordiv
    } else {
        0.0f64.copysign(vx / wx)
    }
}

/// CPython's `float_pow`, including the switch to complex results for negative bases.
fn float_pow(iv: f64, iw: f64) -> Result<Val, ToolError> {
    if iw == 0.0 {
        return Ok(Val::Float(1.0));
    }
    if iv.is_nan() {
        return Ok(Val::Float(iv));
    }
    if iw.is_nan() {
        return Ok(Val::Float(if iv == 1.0 { 1.0 } else { iw }));
    }
    if iw.is_infinite() || iv.is_infinite() {
        return Ok(Val::Float(iv.powf(iw)));
    }
    let iw_is_odd_int = iw.fract() == 0.0 && (iw % 2.0).abs() == 1.0;
    if iv == 0.0 {
        if iw < 0.0 {
            return Err(zero_div("0.0 cannot be raised to a negative power"));
        }
        return Ok(Val::Float(if iw_is_odd_int { iv } else { 0.0 }));
    }
    let mut base = iv;
    let mut negate = false;
    if iv < 0.0 {
        if iw != iw.floor() {
            return complex_op("**", (iv, 0.0), (iw, 0.0));
        }
        base = -iv;
        negate = iw_is_odd_int;
    }
    if base == 1.0 {
        return Ok(Val::Float(if negate { -1.0 } else { 1.0 }));
    }
    let ix = base.powf(iw);
    if ix.is_infinite() {
        return Err(overflow("(34, 'Numerical result out of range')"));
    }
    Ok(Val::Float(if negate { -ix } else { ix }))
}

fn complex_op(op: &str, (ar, ai): (f64, f64), (br, bi): (f64, f64)) -> Result<Val, ToolError> {
    let (re, im) = match op {
        "+" => (ar + br, ai + bi),
        "-" => (ar - br, ai - bi),
        "*" => (ar * br - ai * bi, ar * bi + ai * br),
        "/" => {
            if br == 0.0 && bi == 0.0 {
                return Err(zero_div("complex division by zero"));
            }
            let d = br * br + bi * bi;
            ((ar * br + ai * bi) / d, (ai * br - ar * bi) / d)
        }
        _ => {
            if br == 0.0 && bi == 0.0 {
                (1.0, 0.0)
            } else if ar == 0.0 && ai == 0.0 {
                if bi != 0.0 || br < 0.0 {
                    return Err(zero_div("0.0 to a negative or complex power"));
                }
                (0.0, 0.0)
            } else {
                let vabs = ar.hypot(ai);
                let mut len = vabs.powf(br);
                let at = ai.atan2(ar);
                let mut phase = at * br;
                if bi != 0.0 {
                    len /= (at * bi).exp();
                    phase += bi * vabs.ln();
                }
                let out = (len * phase.cos(), len * phase.sin());
                if !out.0.is_finite() || !out.1.is_finite() {
                    return Err(overflow("complex exponentiation"));
                }
                out
            }
        }
    };
    Ok(Val::Complex(re, im))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calc(s: &str) -> Result<String, String> {
        calculate(&json!(s)).map_err(|e| e.qualified())
    }

    #[test]
    fn python_results() {
        let cases = [
            ("1 + 1", "2.0"),
            ("10/3", "3.33"),
            ("2**10", "1024.0"),
            ("100000000000000000*10", "1e+18"),
            ("-2**2", "-4.0"),
            ("2**3**2", "512.0"),
            ("2**-1", "0.5"),
            ("7//-2", "-4.0"),
            ("7.5//-2", "-4.0"),
            ("-0.0", "-0.0"),
            ("0*-1.0", "-0.0"),
            (".5 + 5.", "5.5"),
            ("000", "0.0"),
            ("00.5", "0.5"),
            ("(((1)))", "1.0"),
            ("2.675 * 1", "2.67"),
            ("2**10000/2**9990", "1024.0"),
            ("(-2.0)**3.0", "-8.0"),
            ("128.36 - 100", "28.36"),
        ];
        for (expr, want) in cases {
            assert_eq!(calc(expr), Ok(want.to_string()), "{expr}");
        }
    }

    #[test]
    fn python_errors() {
        let cases = [
            ("", "SyntaxError: invalid syntax (<string>, line 0)"),
            ("1 +", "SyntaxError: invalid syntax (<string>, line 1)"),
            ("(1 +", "SyntaxError: '(' was never closed (<string>, line 1)"),
            ("1)", "SyntaxError: unmatched ')' (<string>, line 1)"),
            ("1 05", "SyntaxError: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)"),
            ("1/0", "ZeroDivisionError: division by zero"),
            ("1.0/0", "ZeroDivisionError: float division by zero"),
            ("1//0", "ZeroDivisionError: integer division or modulo by zero"),
            ("1.0//0", "ZeroDivisionError: float floor division by zero"),
            ("0**-1", "ZeroDivisionError: 0.0 cannot be raised to a negative power"),
            ("(-8)**(1/3)", "TypeError: float() argument must be a string or a real number, not 'complex'"),
            ("(-1)**0.5/0", "ZeroDivisionError: complex division by zero"),
            ("(-1)**0.5//1", "TypeError: unsupported operand type(s) for //: 'complex' and 'int'"),
            ("10.0**400", "OverflowError: (34, 'Numerical result out of range')"),
            ("2**10000", "OverflowError: int too large to convert to float"),
            ("()", "TypeError: float() argument must be a string or a real number, not 'tuple'"),
            ("...", "TypeError: float() argument must be a string or a real number, not 'ellipsis'"),
            ("() + 1", "TypeError: can only concatenate tuple (not \"int\") to tuple"),
            ("1 + ()", "TypeError: unsupported operand type(s) for +: 'int' and 'tuple'"),
            ("()*2.0", "TypeError: can't multiply sequence by non-int of type 'float'"),
            ("-()", "TypeError: bad operand type for unary -: 'tuple'"),
            ("(1)(2)", "TypeError: 'int' object is not callable"),
            ("()(1/0)", "ZeroDivisionError: division by zero"),
            ("1e5", "ValueError: Invalid characters in expression"),
        ];
        for (expr, want) in cases {
            assert_eq!(calc(expr), Err(want.to_string()), "{expr}");
        }
    }

    #[test]
    fn non_string_expressions() {
        let err = |v: Value| calculate(&v).unwrap_err().qualified();
        assert_eq!(err(json!(5)), "TypeError: 'int' object is not iterable");
        assert_eq!(err(json!(["1", "+"])), "TypeError: eval() arg 1 must be a string, bytes or code object");
        assert_eq!(err(json!([1])), "TypeError: 'in <string>' requires string as left operand, not int");
        assert_eq!(err(json!(["x"])), "ValueError: Invalid characters in expression");
    }

    #[test]
    fn hostile_nesting_is_an_error_not_a_crash() {
        assert!(calc(&"(".repeat(500)).is_err());
        assert_eq!(calc(&format!("{}1", "-".repeat(2000))), Ok("1.0".into()));
        assert!(calc(&format!("{}1", "-".repeat(5000))).unwrap_err().starts_with("RecursionError"));
        assert!(calc(&format!("{}2", "2**-".repeat(3000))).is_err());
        assert!(calc(&format!("{}2", "2**".repeat(500))).unwrap_err().starts_with("OverflowError"));
        assert_eq!(calc("+-+()").unwrap_err(), "TypeError: bad operand type for unary +: 'tuple'");
    }
}
