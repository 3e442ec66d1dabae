//! Evaluation with Python's numeric tower: `int` (unbounded), `float`, `complex` (a negative
//! base to a fractional power), plus the two non-numbers the alphabet can spell, `()` and
//! `...`, with CPython's operator dispatch and exception texts.

use super::bigint::{BigInt, DivError};
use super::parser::{Arg, BinOp, Expr, Node, UnOp};
use crate::tooling::ToolError;
use tauguard_core::pyjson::float_repr;

/// Integers beyond this many bits are refused (CPython would keep computing); such a value
/// could only end in "int too large to convert to float" anyway.
const MAX_INT_BITS: u64 = 1 << 16;
/// CPython's default `sys.get_int_max_str_digits()`.
const MAX_STR_DIGITS: usize = 4300;

#[derive(Debug, Clone)]
pub(super) enum Val {
    Int(BigInt),
    Float(f64),
    Complex(f64, f64),
    Tuple,
    Ellipsis,
}

type R = Result<Val, ToolError>;

pub(super) fn error(class: &'static str, message: impl Into<String>) -> ToolError {
    ToolError {
        class,
        message: message.into(),
    }
}

fn type_error(message: impl Into<String>) -> ToolError {
    error("TypeError", message)
}

fn int_too_large() -> ToolError {
    error("OverflowError", "int too large to convert to float")
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

    fn is_number(&self) -> bool {
        matches!(self, Val::Int(_) | Val::Float(_) | Val::Complex(..))
    }

    /// Python `str(value)`.
    fn py_str(&self) -> Result<String, ToolError> {
        Ok(match self {
            Val::Int(i) => {
                let s = i.to_string();
                if s.trim_start_matches('-').len() > MAX_STR_DIGITS {
                    return Err(error(
                        "ValueError",
                        "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit",
                    ));
                }
                s
            }
            Val::Float(x) => float_repr(*x),
            Val::Complex(re, im) => complex_repr(*re, *im),
            Val::Tuple => "()".into(),
            Val::Ellipsis => "Ellipsis".into(),
        })
    }

    /// Python `float(value)`.
    pub(super) fn to_float(&self) -> Result<f64, ToolError> {
        match self {
            Val::Int(i) => i.to_f64().ok_or_else(int_too_large),
            Val::Float(x) => Ok(*x),
            other => Err(type_error(format!(
                "float() argument must be a string or a real number, not '{}'",
                other.type_name()
            ))),
        }
    }

    fn to_complex(&self) -> Result<(f64, f64), ToolError> {
        match self {
            Val::Complex(re, im) => Ok((*re, *im)),
            other => Ok((other.to_float()?, 0.0)),
        }
    }
}

/// `repr(complex)`: shortest float reprs without a forced `.0`.
fn complex_repr(re: f64, im: f64) -> String {
    fn short(x: f64) -> String {
        let s = float_repr(x);
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    }
    if re == 0.0 && re.is_sign_positive() {
        return format!("{}j", short(im));
    }
    let im_s = short(im);
    let sign = if im_s.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im_s}j)", short(re))
}

pub(super) fn eval(e: &Expr) -> R {
    match &e.node {
        Node::Int(i) => Ok(Val::Int(i.clone())),
        Node::Float(x) => Ok(Val::Float(*x)),
        Node::Ellipsis => Ok(Val::Ellipsis),
        Node::EmptyTuple => Ok(Val::Tuple),
        Node::Unary(op, x) => unary(*op, eval(x)?),
        Node::Binary(op, l, r) => {
            let a = eval(l)?;
            let b = eval(r)?;
            binary(*op, a, b)
        }
        Node::Call(f, arg) => {
            let func = eval(f)?;
            match &**arg {
                Arg::None => {}
                Arg::Plain(x) => {
                    eval(x)?;
                }
                Arg::Star(x) => {
                    let v = eval(x)?;
                    if !matches!(v, Val::Tuple) {
                        return Err(type_error(format!(
                            "{} argument after * must be an iterable, not {}",
                            func.py_str()?,
                            v.type_name()
                        )));
                    }
                }
                Arg::DoubleStar(x) => {
                    let v = eval(x)?;
                    return Err(type_error(format!(
                        "{} argument after ** must be a mapping, not {}",
                        func.py_str()?,
                        v.type_name()
                    )));
                }
            }
            Err(type_error(format!(
                "'{}' object is not callable",
                func.type_name()
            )))
        }
    }
}

fn unary(op: UnOp, v: Val) -> R {
    let sym = if op == UnOp::Neg { '-' } else { '+' };
    match (op, v) {
        (UnOp::Pos, v @ (Val::Int(_) | Val::Float(_) | Val::Complex(..))) => Ok(v),
        (UnOp::Neg, Val::Int(i)) => Ok(Val::Int(i.neg())),
        (UnOp::Neg, Val::Float(x)) => Ok(Val::Float(-x)),
        (UnOp::Neg, Val::Complex(re, im)) => Ok(Val::Complex(-re, -im)),
        (_, v) => Err(type_error(format!(
            "bad operand type for unary {sym}: '{}'",
            v.type_name()
        ))),
    }
}

fn symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Pow => "** or pow()",
    }
}

fn binary(op: BinOp, a: Val, b: Val) -> R {
    let unsupported = |a: &Val, b: &Val| {
        type_error(format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            symbol(op),
            a.type_name(),
            b.type_name()
        ))
    };
    if a.is_number() && b.is_number() {
        if op == BinOp::FloorDiv && (matches!(a, Val::Complex(..)) || matches!(b, Val::Complex(..)))
        {
            return Err(unsupported(&a, &b));
        }
        return match (&a, &b) {
            (Val::Int(x), Val::Int(y)) => int_op(op, x, y),
            (Val::Complex(..), _) | (_, Val::Complex(..)) => {
                complex_op(op, a.to_complex()?, b.to_complex()?)
            }
            _ => float_op(op, a.to_float()?, b.to_float()?),
        };
    }
    match (op, &a, &b) {
        (BinOp::Add, Val::Tuple, Val::Tuple) => Ok(Val::Tuple),
        (BinOp::Add, Val::Tuple, other) => Err(type_error(format!(
            "can only concatenate tuple (not \"{}\") to tuple",
            other.type_name()
        ))),
        (BinOp::Mul, Val::Tuple, Val::Int(n)) | (BinOp::Mul, Val::Int(n), Val::Tuple) => {
            match n.to_i64() {
                Some(_) => Ok(Val::Tuple),
                None => Err(error(
                    "OverflowError",
                    "cannot fit 'int' into an index-sized integer",
                )),
            }
        }
        (BinOp::Mul, Val::Tuple, other) | (BinOp::Mul, other, Val::Tuple) => {
            Err(type_error(format!(
                "can't multiply sequence by non-int of type '{}'",
                other.type_name()
            )))
        }
        _ => Err(unsupported(&a, &b)),
    }
}

fn checked(i: BigInt) -> R {
    if i.bits() > MAX_INT_BITS {
        Err(int_too_large())
    } else {
        Ok(Val::Int(i))
    }
}

fn int_op(op: BinOp, x: &BigInt, y: &BigInt) -> R {
    match op {
        BinOp::Add => checked(x.add(y)),
        BinOp::Sub => checked(x.sub(y)),
        BinOp::Mul => checked(x.mul(y)),
        BinOp::Div => match x.true_div(y) {
            Ok(q) => Ok(Val::Float(q)),
            Err(DivError::ZeroDivision) => Err(error("ZeroDivisionError", "division by zero")),
            Err(DivError::Overflow) => Err(error(
                "OverflowError",
                "integer division result too large for a float",
            )),
        },
        BinOp::FloorDiv => x
            .floor_div(y)
            .map(Val::Int)
            .ok_or_else(|| error("ZeroDivisionError", "integer division or modulo by zero")),
        BinOp::Pow if y.is_negative() => {
            let base = x.to_f64().ok_or_else(int_too_large)?;
            let exp = y.to_f64().ok_or_else(int_too_large)?;
            float_pow(base, exp)
        }
        BinOp::Pow => x
            .pow(y, MAX_INT_BITS)
            .map(Val::Int)
            .ok_or_else(int_too_large),
    }
}

fn float_op(op: BinOp, x: f64, y: f64) -> R {
    match op {
        BinOp::Add => Ok(Val::Float(x + y)),
        BinOp::Sub => Ok(Val::Float(x - y)),
        BinOp::Mul => Ok(Val::Float(x * y)),
        BinOp::Div if y == 0.0 => Err(error("ZeroDivisionError", "float division by zero")),
        BinOp::Div => Ok(Val::Float(x / y)),
        BinOp::FloorDiv if y == 0.0 => {
            Err(error("ZeroDivisionError", "float floor division by zero"))
        }
        BinOp::FloorDiv => Ok(Val::Float(float_floor_div(x, y))),
        BinOp::Pow => float_pow(x, y),
    }
}

/// CPython's `_float_div_mod`, quotient part.
fn float_floor_div(vx: f64, wx: f64) -> f64 {
    let m = vx % wx;
    let mut div = (vx - m) / wx;
    if m != 0.0 && (wx < 0.0) != (m < 0.0) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0f64.copysign(vx / wx);
    }
    let floor = div.floor();
    if div - floor > 0.5 {
        floor + 1.0
    } else {
        floor
    }
}

fn is_odd_integer(x: f64) -> bool {
    (x.abs() % 2.0) == 1.0
}

/// CPython's `float_pow`, including the hand-off to complex for a negative base.
fn float_pow(iv: f64, iw: f64) -> R {
    if iw == 0.0 {
        return Ok(Val::Float(1.0));
    }
    if iv.is_nan() {
        return Ok(Val::Float(iv));
    }
    if iw.is_nan() {
        return Ok(Val::Float(if iv == 1.0 { 1.0 } else { iw }));
    }
    if iw.is_infinite() {
        let a = iv.abs();
        let r = if a == 1.0 {
            1.0
        } else if (iw > 0.0) == (a > 1.0) {
            iw.abs()
        } else {
            0.0
        };
        return Ok(Val::Float(r));
    }
    if iv.is_infinite() {
        let odd = is_odd_integer(iw);
        let r = match (iw > 0.0, odd) {
            (true, true) => iv,
            (true, false) => iv.abs(),
            (false, true) => 0.0f64.copysign(iv),
            (false, false) => 0.0,
        };
        return Ok(Val::Float(r));
    }
    if iv == 0.0 {
        if iw < 0.0 {
            return Err(error(
                "ZeroDivisionError",
                "0.0 cannot be raised to a negative power",
            ));
        }
        return Ok(Val::Float(if is_odd_integer(iw) { iv } else { 0.0 }));
    }
    let mut base = iv;
    let mut negate = false;
    if iv < 0.0 {
        if iw != iw.floor() {
            return complex_pow((iv, 0.0), (iw, 0.0));
        }
        base = -iv;
        negate = is_odd_integer(iw);
    }
    if base == 1.0 {
        return Ok(Val::Float(if negate { -1.0 } else { 1.0 }));
    }
    let ix = base.powf(iw);
    if ix.is_infinite() {
        return Err(error(
            "OverflowError",
            "(34, 'Numerical result out of range')",
        ));
    }
    Ok(Val::Float(if negate { -ix } else { ix }))
}

type C = (f64, f64);

fn c_prod(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// CPython's `_Py_c_quot`; `None` for a zero divisor.
fn c_quot(a: C, b: C) -> Option<C> {
    let (abs_r, abs_i) = (b.0.abs(), b.1.abs());
    if abs_r >= abs_i {
        if abs_r == 0.0 {
            return None;
        }
        let ratio = b.1 / b.0;
        let denom = b.0 + b.1 * ratio;
        Some(((a.0 + a.1 * ratio) / denom, (a.1 - a.0 * ratio) / denom))
    } else if abs_i >= abs_r {
        let ratio = b.0 / b.1;
        let denom = b.0 * ratio + b.1;
        Some(((a.0 * ratio + a.1) / denom, (a.1 * ratio - a.0) / denom))
    } else {
        Some((f64::NAN, f64::NAN))
    }
}

fn c_powu(x: C, n: i64) -> C {
    let (mut r, mut p, mut mask) = ((1.0, 0.0), x, 1i64);
    while mask > 0 && n >= mask {
        if n & mask != 0 {
            r = c_prod(r, p);
        }
        mask <<= 1;
        p = c_prod(p, p);
    }
    r
}

/// CPython's `complex_pow` (the `**` of complex numbers).
fn complex_pow(a: C, b: C) -> R {
    let result = if b.1 == 0.0 && b.0 == b.0.floor() && b.0.abs() <= 100.0 {
        let n = b.0 as i64;
        if n > 0 {
            Some(c_powu(a, n))
        } else {
            c_quot((1.0, 0.0), c_powu(a, -n))
        }
    } else if b == (0.0, 0.0) {
        Some((1.0, 0.0))
    } else if a == (0.0, 0.0) {
        if b.1 != 0.0 || b.0 < 0.0 {
            None
        } else {
            Some((0.0, 0.0))
        }
    } else {
        let vabs = a.0.hypot(a.1);
        let mut len = vabs.powf(b.0);
        let at = a.1.atan2(a.0);
        let mut phase = at * b.0;
        if b.1 != 0.0 {
            len /= (at * b.1).exp();
            phase += b.1 * vabs.ln();
        }
        Some((len * phase.cos(), len * phase.sin()))
    };
    let Some((re, im)) = result else {
        return Err(error(
            "ZeroDivisionError",
            "0.0 to a negative or complex power",
        ));
    };
    if re.is_infinite() || im.is_infinite() {
        return Err(error("OverflowError", "complex exponentiation"));
    }
    Ok(Val::Complex(re, im))
}

fn complex_op(op: BinOp, a: C, b: C) -> R {
    match op {
        BinOp::Add => Ok(Val::Complex(a.0 + b.0, a.1 + b.1)),
        BinOp::Sub => Ok(Val::Complex(a.0 - b.0, a.1 - b.1)),
        BinOp::Mul => {
            let (re, im) = c_prod(a, b);
            Ok(Val::Complex(re, im))
        }
        BinOp::Div => match c_quot(a, b) {
            Some((re, im)) => Ok(Val::Complex(re, im)),
            None => Err(error("ZeroDivisionError", "complex division by zero")),
        },
        BinOp::Pow => complex_pow(a, b),
        // Refused before conversion (see `binary`); kept total for safety.
        BinOp::FloorDiv => Err(type_error(
            "unsupported operand type(s) for //: 'complex' and 'complex'",
        )),
    }
}
