//! A small arbitrary-precision integer for `calculate`.
//!
//! Upstream evaluates the expression with Python's `eval`, whose integers never overflow:
//! `10**20 / 3` is exact integer arithmetic followed by a correctly rounded division. This
//! module gives the evaluator the same results for integers up to [`MAX_BITS`] bits, beyond
//! which Python's final `float()` would fail anyway.

use std::cmp::Ordering;

/// Largest magnitude (in bits) the evaluator keeps. Python has no such limit, but any
/// integer above 1024 bits makes the final `float()` fail, so only intermediate values that
/// later cancel out could tell the difference.
pub const MAX_BITS: u64 = 16_384;

/// Sign and little-endian base-2³² magnitude without trailing zero limbs; zero is
/// non-negative with an empty magnitude.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

/// An integer result too large for this module ([`MAX_BITS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

impl BigInt {
    pub fn zero() -> Self {
        BigInt { neg: false, mag: Vec::new() }
    }

    pub fn from_u64(v: u64) -> Self {
        trimmed(false, vec![v as u32, (v >> 32) as u32])
    }

    /// Parses a string of ASCII decimal digits (no sign).
    pub fn from_decimal(digits: &str) -> Self {
        let mut mag: Vec<u32> = Vec::new();
        for chunk in digits.as_bytes().chunks(9) {
            let mut scale = 1u64;
            let mut value = 0u64;
            for b in chunk {
                scale *= 10;
                value = value * 10 + u64::from(b - b'0');
            }
            let mut carry = value;
            for limb in mag.iter_mut() {
                let t = u64::from(*limb) * scale + carry;
                *limb = t as u32;
                carry = t >> 32;
            }
            if carry > 0 {
                mag.push(carry as u32);
            }
        }
        trimmed(false, mag)
    }

    pub fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub fn is_negative(&self) -> bool {
        self.neg
    }

    pub fn is_odd(&self) -> bool {
        self.mag.first().is_some_and(|l| l & 1 == 1)
    }

    /// Number of significant bits of the magnitude.
    pub fn bits(&self) -> u64 {
        match self.mag.last() {
            None => 0,
            Some(top) => (self.mag.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        if self.mag.len() > 2 {
            return None;
        }
        let m = self.mag.iter().rev().fold(0u64, |acc, l| (acc << 32) | u64::from(*l));
        if self.neg {
            if m <= i64::MAX as u64 + 1 { Some((m as i64).wrapping_neg()) } else { None }
        } else {
            i64::try_from(m).ok()
        }
    }

    pub fn negated(&self) -> Self {
        trimmed(!self.neg, self.mag.clone())
    }

    pub fn plus(&self, other: &Self) -> Result<Self, TooLarge> {
        let out = if self.neg == other.neg {
            trimmed(self.neg, add_mag(&self.mag, &other.mag))
        } else {
            match cmp_mag(&self.mag, &other.mag) {
                Ordering::Less => trimmed(other.neg, sub_mag(&other.mag, &self.mag)),
                _ => trimmed(self.neg, sub_mag(&self.mag, &other.mag)),
            }
        };
        checked(out)
    }

    pub fn minus(&self, other: &Self) -> Result<Self, TooLarge> {
        self.plus(&other.negated())
    }

    pub fn times(&self, other: &Self) -> Result<Self, TooLarge> {
        if self.bits() + other.bits() > MAX_BITS + 1 {
            return Err(TooLarge);
        }
        checked(trimmed(self.neg != other.neg, mul_mag(&self.mag, &other.mag)))
    }

    /// Python's floor division and modulo; `None` when dividing by zero.
    pub fn div_mod_floor(&self, other: &Self) -> Option<(Self, Self)> {
        if other.is_zero() {
            return None;
        }
        let (q, r) = div_mag(&self.mag, &other.mag);
        let mut q = trimmed(self.neg != other.neg, q);
        let mut r = trimmed(self.neg, r);
        if !r.is_zero() && r.neg != other.neg {
            q = q.minus(&BigInt::from_u64(1)).ok()?;
            r = r.plus(other).ok()?;
        }
        Some((q, r))
    }

    /// `self ** exp` for a non-negative exponent.
    pub fn pow(&self, exp: &BigInt) -> Result<Self, TooLarge> {
        if exp.is_zero() {
            return Ok(BigInt::from_u64(1));
        }
        if self.is_zero() {
            return Ok(BigInt::zero());
        }
        if self.mag == [1] {
            return Ok(if self.neg && exp.is_odd() { self.clone() } else { BigInt::from_u64(1) });
        }
        let e = exp.to_i64().ok_or(TooLarge)? as u64;
        if (self.bits() - 1).saturating_mul(e) > MAX_BITS {
            return Err(TooLarge);
        }
        let mut result = BigInt::from_u64(1);
        let mut base = self.clone();
        let mut e = e;
        while e > 0 {
            if e & 1 == 1 {
                result = result.times(&base)?;
            }
            e >>= 1;
            if e > 0 {
                base = base.times(&base)?;
            }
        }
        Ok(result)
    }

    /// Python's `float(int)`: correctly rounded (ties to even); `None` on overflow.
    pub fn to_f64(&self) -> Option<f64> {
        let bits = self.bits();
        let value = if bits <= 64 {
            self.top_u64(0) as f64
        } else {
            let shift = bits - 64;
            let mut top = self.top_u64(shift);
            if self.any_bit_below(shift) {
                top |= 1;
            }
            ldexp(top as f64, shift as i64)
        };
        if value.is_infinite() {
            return None;
        }
        Some(if self.neg { -value } else { value })
    }

    /// Python's `int / int`: the correctly rounded quotient. `Err(None)` for division by
    /// zero, `Err(Some(()))` when the result overflows a float.
    pub fn true_div(&self, other: &Self) -> Result<f64, Option<()>> {
        if other.is_zero() {
            return Err(None);
        }
        if self.is_zero() {
            return Ok(if self.neg != other.neg { -0.0 } else { 0.0 });
        }
        let neg = self.neg != other.neg;
        if self.bits() <= 53 && other.bits() <= 53 {
            let q = self.top_u64(0) as f64 / other.top_u64(0) as f64;
            return Ok(if neg { -q } else { q });
        }
        // Scale so that the integer quotient carries at least 55 significant bits, then let
        // the sticky remainder bit steer the final rounding.
        let exp = self.bits() as i64 - other.bits() as i64 - 55;
        let (n, d) = if exp < 0 {
            (shl_mag(&self.mag, (-exp) as u64), other.mag.clone())
        } else {
            (self.mag.clone(), shl_mag(&other.mag, exp as u64))
        };
        let (q, r) = div_mag(&n, &d);
        let q = trimmed(false, q);
        let mut top = q.top_u64(0);
        if !r.iter().all(|l| *l == 0) {
            top |= 1;
        }
        let value = ldexp(top as f64, exp);
        if value.is_infinite() {
            return Err(Some(()));
        }
        Ok(if neg { -value } else { value })
    }

    /// The 64 bits of the magnitude starting at bit `shift`.
    fn top_u64(&self, shift: u64) -> u64 {
        let mut out = 0u64;
        for i in 0..64 {
            let bit = shift + i;
            let limb = (bit / 32) as usize;
            if limb < self.mag.len() && (self.mag[limb] >> (bit % 32)) & 1 == 1 {
                out |= 1 << i;
            }
        }
        out
    }

    fn any_bit_below(&self, shift: u64) -> bool {
        let full = (shift / 32) as usize;
        if self.mag[..full.min(self.mag.len())].iter().any(|l| *l != 0) {
            return true;
        }
        let rem = shift % 32;
        rem > 0 && full < self.mag.len() && self.mag[full] & ((1u32 << rem) - 1) != 0
    }
}

/// `x * 2**exp` without intermediate overflow or underflow of the scale factor.
fn ldexp(mut x: f64, mut exp: i64) -> f64 {
    while exp > 1000 {
        x *= 2f64.powi(1000);
        exp -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while exp < -1000 {
        x *= 2f64.powi(-1000);
        exp += 1000;
    }
    x * 2f64.powi(exp as i32)
}

fn trimmed(neg: bool, mut mag: Vec<u32>) -> BigInt {
    while mag.last() == Some(&0) {
        mag.pop();
    }
    let neg = neg && !mag.is_empty();
    BigInt { neg, mag }
}

fn checked(v: BigInt) -> Result<BigInt, TooLarge> {
    if v.bits() > MAX_BITS { Err(TooLarge) } else { Ok(v) }
}

fn cmp_mag(a: &[u32], b: &[u32]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn add_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, l) in long.iter().enumerate() {
        let t = u64::from(*l) + u64::from(short.get(i).copied().unwrap_or(0)) + carry;
        out.push(t as u32);
        carry = t >> 32;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    out
}

/// `a - b` for `a >= b`.
fn sub_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, l) in a.iter().enumerate() {
        let mut t = i64::from(*l) - i64::from(b.get(i).copied().unwrap_or(0)) - borrow;
        borrow = 0;
        if t < 0 {
            t += 1 << 32;
            borrow = 1;
        }
        out.push(t as u32);
    }
    out
}

fn mul_mag(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, y) in b.iter().enumerate() {
            let t = u64::from(*x) * u64::from(*y) + u64::from(out[i + j]) + carry;
            out[i + j] = t as u32;
            carry = t >> 32;
        }
        let mut k = i + b.len();
        while carry > 0 {
            let t = u64::from(out[k]) + carry;
            out[k] = t as u32;
            carry = t >> 32;
            k += 1;
        }
    }
    out
}

fn shl_mag(a: &[u32], shift: u64) -> Vec<u32> {
    let limbs = (shift / 32) as usize;
    let bits = (shift % 32) as u32;
    let mut out = vec![0u32; limbs];
    let mut carry = 0u32;
    for l in a {
        if bits == 0 {
            out.push(*l);
        } else {
            out.push((l << bits) | carry);
            carry = l >> (32 - bits);
        }
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// Magnitude division: (quotient, remainder), by binary long division. Sizes are bounded
/// by [`MAX_BITS`], so the quadratic cost stays small.
fn div_mag(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    if cmp_mag(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let d = u64::from(b[0]);
        let mut q = vec![0u32; a.len()];
        let mut rem = 0u64;
        for i in (0..a.len()).rev() {
            let cur = (rem << 32) | u64::from(a[i]);
            q[i] = (cur / d) as u32;
            rem = cur % d;
        }
        return (q, vec![rem as u32]);
    }
    let total_bits = trimmed(false, a.to_vec()).bits();
    let mut q = vec![0u32; a.len()];
    let mut r: Vec<u32> = Vec::new();
    for bit in (0..total_bits).rev() {
        r = shl_mag(&r, 1);
        let limb = (bit / 32) as usize;
        if (a[limb] >> (bit % 32)) & 1 == 1 {
            if r.is_empty() {
                r.push(1);
            } else {
                r[0] |= 1;
            }
        }
        while r.last() == Some(&0) {
            r.pop();
        }
        if cmp_mag(&r, b) != Ordering::Less {
            r = sub_mag(&r, b);
            while r.last() == Some(&0) {
                r.pop();
            }
            q[limb] |= 1 << (bit % 32);
        }
    }
    (q, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> BigInt {
        match s.strip_prefix('-') {
            Some(d) => BigInt::from_decimal(d).negated(),
            None => BigInt::from_decimal(s),
        }
    }

    #[test]
    fn arithmetic_matches_python() {
        let a = big("123456789012345678901234567890");
        let b = big("987654321");
        let (q, r) = a.div_mod_floor(&b).unwrap();
        assert_eq!(q, big("124999998873437499901"));
        assert_eq!(r, big("574845669"));
        let (q, r) = big("-7").div_mod_floor(&big("2")).unwrap();
        assert_eq!((q, r), (big("-4"), big("1")));
        let (q, r) = big("7").div_mod_floor(&big("-2")).unwrap();
        assert_eq!((q, r), (big("-4"), big("-1")));
        assert_eq!(big("2").pow(&big("100")).unwrap(), big("1267650600228229401496703205376"));
        assert_eq!(a.times(&b).unwrap().div_mod_floor(&b).unwrap().0, a);
        assert_eq!(big("5").minus(&big("8")).unwrap(), big("-3"));
        assert_eq!(big("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(big("9223372036854775808").to_i64(), None);
    }

    #[test]
    fn float_conversions_are_correctly_rounded() {
        assert_eq!(big("9007199254740993").to_f64(), Some(9007199254740992.0));
        assert_eq!(big("9007199254740995").to_f64(), Some(9007199254740996.0));
        assert_eq!(big("1").true_div(&big("3")), Ok(1.0 / 3.0));
        let huge = big("2").pow(&big("10000")).unwrap();
        assert_eq!(huge.to_f64(), None);
        let q = huge.true_div(&big("2").pow(&big("9990")).unwrap());
        assert_eq!(q, Ok(1024.0));
        assert_eq!(big("100000000000000000001").true_div(&big("3")), Ok(3.333333333333333e19));
        assert_eq!(big("1").true_div(&big("0")), Err(None));
    }
}
