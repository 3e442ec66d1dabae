//! Arbitrary-precision integers for the `calculate` tool.
//!
//! Python integers never overflow, and Python converts them to floats (and divides them)
//! with a single correct rounding. The calculator needs exactly that much: `+ - * // **`,
//! comparison with zero, and correctly rounded `float(n)` and `n / m`. Magnitudes are
//! little-endian `u32` limbs without trailing zero limbs; zero has no limbs and no sign.

use std::cmp::Ordering;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BigInt {
    neg: bool,
    mag: Vec<u32>,
}

/// Why a division by a big integer produced no float.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DivError {
    ZeroDivision,
    Overflow,
}

impl BigInt {
    pub(crate) fn zero() -> BigInt {
        BigInt {
            neg: false,
            mag: Vec::new(),
        }
    }

    pub(crate) fn from_u64(v: u64) -> BigInt {
        BigInt::from_parts(false, vec![v as u32, (v >> 32) as u32])
    }

    fn from_parts(neg: bool, mut mag: Vec<u32>) -> BigInt {
        trim(&mut mag);
        let neg = neg && !mag.is_empty();
        BigInt { neg, mag }
    }

    /// Parses a string of ASCII decimal digits (the caller guarantees the alphabet).
    pub(crate) fn parse_decimal(digits: &str) -> BigInt {
        let mut mag: Vec<u32> = Vec::new();
        for chunk in digits.as_bytes().chunks(9) {
            let mut scale = 1u64;
            let mut value = 0u64;
            for &b in chunk {
                scale *= 10;
                value = value * 10 + u64::from(b - b'0');
            }
            mul_small_add(&mut mag, scale, value);
        }
        BigInt::from_parts(false, mag)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.neg
    }

    /// Number of bits of the magnitude (0 for zero).
    pub(crate) fn bits(&self) -> u64 {
        bit_len(&self.mag)
    }

    pub(crate) fn neg(&self) -> BigInt {
        BigInt::from_parts(!self.neg, self.mag.clone())
    }

    pub(crate) fn is_odd(&self) -> bool {
        self.mag.first().is_some_and(|l| l & 1 == 1)
    }

    pub(crate) fn add(&self, other: &BigInt) -> BigInt {
        if self.neg == other.neg {
            return BigInt::from_parts(self.neg, mag_add(&self.mag, &other.mag));
        }
        match mag_cmp(&self.mag, &other.mag) {
            Ordering::Equal => BigInt::zero(),
            Ordering::Greater => BigInt::from_parts(self.neg, mag_sub(&self.mag, &other.mag)),
            Ordering::Less => BigInt::from_parts(other.neg, mag_sub(&other.mag, &self.mag)),
        }
    }

    pub(crate) fn sub(&self, other: &BigInt) -> BigInt {
        self.add(&other.neg())
    }

    pub(crate) fn mul(&self, other: &BigInt) -> BigInt {
        BigInt::from_parts(self.neg != other.neg, mag_mul(&self.mag, &other.mag))
    }

    /// Python `//`: quotient rounded toward negative infinity; `None` for a zero divisor.
    pub(crate) fn floor_div(&self, other: &BigInt) -> Option<BigInt> {
        if other.is_zero() {
            return None;
        }
        let (q, r) = mag_divmod(&self.mag, &other.mag);
        let neg = self.neg != other.neg;
        let q = if neg && !r.is_empty() {
            mag_add(&q, &[1])
        } else {
            q
        };
        Some(BigInt::from_parts(neg, q))
    }

    /// `self ** exp` for `exp >= 0`; `None` when the result would exceed `max_bits`.
    pub(crate) fn pow(&self, exp: &BigInt, max_bits: u64) -> Option<BigInt> {
        debug_assert!(!exp.neg);
        if exp.is_zero() {
            return Some(BigInt::from_u64(1));
        }
        if self.is_zero() || self.mag == [1] {
            let neg = self.neg && exp.is_odd();
            return Some(BigInt::from_parts(neg, self.mag.clone()));
        }
        // |self| >= 2, so the result has at least `exp` bits.
        if exp.bits() > 32 || exp.to_u64()? > max_bits {
            return None;
        }
        let mut e = exp.to_u64()?;
        let mut base = self.clone();
        let mut acc = BigInt::from_u64(1);
        loop {
            if e & 1 == 1 {
                if acc.bits() + base.bits() > max_bits + 1 {
                    return None;
                }
                acc = acc.mul(&base);
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            if 2 * base.bits() > max_bits + 1 {
                return None;
            }
            base = base.mul(&base);
        }
        (acc.bits() <= max_bits).then_some(acc)
    }

    fn to_u64(&self) -> Option<u64> {
        match self.mag.len() {
            0 => Some(0),
            1 => Some(u64::from(self.mag[0])),
            2 => Some(u64::from(self.mag[0]) | (u64::from(self.mag[1]) << 32)),
            _ => None,
        }
    }

    /// The value as `i64`, if it fits (Python's index-sized integer).
    pub(crate) fn to_i64(&self) -> Option<i64> {
        let m = i64::try_from(self.to_u64()?).ok();
        match (m, self.neg) {
            (Some(m), false) => Some(m),
            (Some(m), true) => Some(-m),
            (None, true) if self.to_u64() == Some(1 << 63) => Some(i64::MIN),
            (None, _) => None,
        }
    }

    /// Python `float(n)`: correctly rounded, ties to even; `None` when too large.
    pub(crate) fn to_f64(&self) -> Option<f64> {
        let x = ratio_to_f64(&self.mag, &[1])?;
        Some(if self.neg { -x } else { x })
    }

    /// Python `n / m` on integers: the exact quotient, rounded once.
    pub(crate) fn true_div(&self, other: &BigInt) -> Result<f64, DivError> {
        if other.is_zero() {
            return Err(DivError::ZeroDivision);
        }
        let x = ratio_to_f64(&self.mag, &other.mag).ok_or(DivError::Overflow)?;
        Ok(if self.neg != other.neg { -x } else { x })
    }
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut chunks = Vec::new();
        let mut rest = self.mag.clone();
        while !rest.is_empty() {
            chunks.push(div_small(&mut rest, 1_000_000_000));
        }
        let mut out = String::new();
        if self.neg {
            out.push('-');
        }
        for (i, c) in chunks.iter().rev().enumerate() {
            if i == 0 {
                out.push_str(&c.to_string());
            } else {
                out.push_str(&format!("{c:09}"));
            }
        }
        f.write_str(&out)
    }
}

fn trim(mag: &mut Vec<u32>) {
    while mag.last() == Some(&0) {
        mag.pop();
    }
}

fn bit_len(mag: &[u32]) -> u64 {
    match mag.last() {
        None => 0,
        Some(top) => 32 * (mag.len() as u64 - 1) + u64::from(32 - top.leading_zeros()),
    }
}

fn bit(mag: &[u32], i: u64) -> bool {
    mag.get((i / 32) as usize)
        .is_some_and(|l| (l >> (i % 32)) & 1 == 1)
}

fn mag_cmp(a: &[u32], b: &[u32]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn mag_add(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, &x) in long.iter().enumerate() {
        let s = u64::from(x) + u64::from(short.get(i).copied().unwrap_or(0)) + carry;
        out.push(s as u32);
        carry = s >> 32;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    trim(&mut out);
    out
}

/// `a - b` for `a >= b`.
fn mag_sub(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut d = i64::from(x) - i64::from(b.get(i).copied().unwrap_or(0)) - borrow;
        borrow = 0;
        if d < 0 {
            d += 1 << 32;
            borrow = 1;
        }
        out.push(d as u32);
    }
    trim(&mut out);
    out
}

fn mag_mul(a: &[u32], b: &[u32]) -> Vec<u32> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = u64::from(x) * u64::from(y) + u64::from(out[i + j]) + carry;
            out[i + j] = t as u32;
            carry = t >> 32;
        }
        out[i + b.len()] = carry as u32;
    }
    trim(&mut out);
    out
}

fn mul_small_add(mag: &mut Vec<u32>, m: u64, add: u64) {
    let mut carry = add;
    for limb in mag.iter_mut() {
        let t = u64::from(*limb) * m + carry;
        *limb = t as u32;
        carry = t >> 32;
    }
    while carry > 0 {
        mag.push(carry as u32);
        carry >>= 32;
    }
}

/// Divides in place by a small divisor, returning the remainder.
fn div_small(mag: &mut Vec<u32>, d: u32) -> u32 {
    let mut rem = 0u64;
    for limb in mag.iter_mut().rev() {
        let cur = (rem << 32) | u64::from(*limb);
        *limb = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    trim(mag);
    rem as u32
}

fn shl(mag: &[u32], n: u64) -> Vec<u32> {
    if mag.is_empty() {
        return Vec::new();
    }
    let (limbs, bits) = ((n / 32) as usize, (n % 32) as u32);
    let mut out = vec![0u32; limbs];
    if bits == 0 {
        out.extend_from_slice(mag);
    } else {
        let mut carry = 0u32;
        for &x in mag {
            out.push((x << bits) | carry);
            carry = x >> (32 - bits);
        }
        out.push(carry);
    }
    trim(&mut out);
    out
}

/// Quotient and remainder of magnitudes (`b` non-empty), by binary long division.
fn mag_divmod(a: &[u32], b: &[u32]) -> (Vec<u32>, Vec<u32>) {
    if mag_cmp(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let mut q = a.to_vec();
        let r = div_small(&mut q, b[0]);
        let mut r = vec![r];
        trim(&mut r);
        return (q, r);
    }
    let n = bit_len(a);
    let mut q = vec![0u32; a.len()];
    let mut r: Vec<u32> = Vec::with_capacity(b.len() + 1);
    for i in (0..n).rev() {
        r = shl(&r, 1);
        if bit(a, i) {
            if r.is_empty() {
                r.push(1);
            } else {
                r[0] |= 1;
            }
        }
        if mag_cmp(&r, b) != Ordering::Less {
            r = mag_sub(&r, b);
            q[(i / 32) as usize] |= 1 << (i % 32);
        }
    }
    trim(&mut q);
    (q, r)
}

/// `m * 2^exp` for `m <= 2^53`, exact whenever the result is representable.
fn ldexp(m: u64, exp: i64) -> f64 {
    fn pow2(e: i64) -> f64 {
        f64::from_bits(((e + 1023) as u64) << 52)
    }
    let mut x = m as f64;
    let mut e = exp;
    while e > 1000 {
        x *= pow2(1000);
        e -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while e < -1000 {
        x *= pow2(-1000);
        e += 1000;
    }
    x * pow2(e)
}

/// `n / d` on magnitudes, rounded once to the nearest double (ties to even);
/// `None` when the rounded value exceeds the double range.
fn ratio_to_f64(n: &[u32], d: &[u32]) -> Option<f64> {
    if n.is_empty() {
        return Some(0.0);
    }
    // Scale so that the integer quotient has 55 or 56 bits: enough for a guard bit.
    let k = 55 - (bit_len(n) as i64 - bit_len(d) as i64);
    let (q, r) = if k >= 0 {
        mag_divmod(&shl(n, k as u64), d)
    } else {
        mag_divmod(n, &shl(d, (-k) as u64))
    };
    let sticky = !r.is_empty();
    let q = BigInt::from_parts(false, q)
        .to_u64()
        .expect("quotient below 2^57");
    let qb = i64::from(64 - q.leading_zeros());
    let msb_exp = qb - 1 - k;
    if msb_exp > 1023 {
        return None;
    }
    let mut drop = qb - 53;
    let lsb_exp = msb_exp - 52;
    if lsb_exp < -1074 {
        drop += -1074 - lsb_exp;
    }
    if drop > 63 {
        return Some(0.0);
    }
    let rem = q & ((1u64 << drop) - 1);
    let half = 1u64 << (drop - 1);
    let mut m = q >> drop;
    if rem > half || (rem == half && (sticky || m & 1 == 1)) {
        m += 1;
    }
    let x = ldexp(m, drop - k);
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> BigInt {
        match s.strip_prefix('-') {
            Some(d) => BigInt::parse_decimal(d).neg(),
            None => BigInt::parse_decimal(s),
        }
    }

    #[test]
    fn arithmetic_and_display() {
        let a = big("123456789012345678901234567890");
        let b = big("987654321");
        assert_eq!(a.to_string(), "123456789012345678901234567890");
        assert_eq!(
            a.mul(&b).to_string(),
            "121932631124828532112482853211126352690"
        );
        assert_eq!(a.sub(&a).to_string(), "0");
        assert_eq!(b.sub(&a).to_string(), "-123456789012345678900246913569");
        assert_eq!(big("7").floor_div(&big("-2")).unwrap().to_string(), "-4");
        assert_eq!(big("-7").floor_div(&big("2")).unwrap().to_string(), "-4");
        assert_eq!(big("-8").floor_div(&big("2")).unwrap().to_string(), "-4");
        assert_eq!(
            a.floor_div(&b).unwrap().to_string(),
            "124999998873437499901"
        );
        assert_eq!(big("3").floor_div(&BigInt::zero()), None);
        let p = big("9").pow(&big("81"), 1 << 16).unwrap();
        assert_eq!(
            p.to_string(),
            "196627050475552913618075908526912116283103450944214766927315415537966391196809"
        );
        assert_eq!(big("-2").pow(&big("3"), 64).unwrap().to_string(), "-8");
        assert!(big("2").pow(&big("100000"), 1 << 16).is_none());
        assert_eq!(
            big("-1")
                .pow(&big("100000000000000000000001"), 8)
                .unwrap()
                .to_string(),
            "-1"
        );
        assert_eq!(big("-9223372036854775808").to_i64(), Some(i64::MIN));
        assert_eq!(big("9223372036854775808").to_i64(), None);
    }

    #[test]
    fn conversions_round_like_python() {
        assert_eq!(big("9007199254740993").to_f64(), Some(9007199254740992.0));
        assert_eq!(big("9007199254740995").to_f64(), Some(9007199254740996.0));
        assert_eq!(
            big("123456789012345678901234567890").to_f64(),
            Some(1.2345678901234568e29)
        );
        assert_eq!(big("1").pow(&big("5"), 64).unwrap().to_f64(), Some(1.0));
        let huge = big("10").pow(&big("309"), 1 << 16).unwrap();
        assert_eq!(huge.to_f64(), None);
        assert_eq!(
            huge.true_div(&big("10").pow(&big("308"), 1 << 16).unwrap()),
            Ok(10.0)
        );
        assert_eq!(huge.true_div(&big("3")), Err(DivError::Overflow));
        assert_eq!(
            big("1").true_div(&BigInt::zero()),
            Err(DivError::ZeroDivision)
        );
        let q = big("10")
            .pow(&big("30"), 64 * 4)
            .unwrap()
            .true_div(&big("3"))
            .unwrap();
        assert_eq!(q, 3.333333333333333e29);
        let q = big("18014398509481985").true_div(&big("3")).unwrap();
        assert_eq!(q, 6004799503160662.0);
        let tiny = big("1")
            .true_div(&big("2").pow(&big("1074"), 1 << 16).unwrap())
            .unwrap();
        assert_eq!(tiny, 5e-324);
        let gone = big("1")
            .true_div(&big("2").pow(&big("2000"), 1 << 16).unwrap())
            .unwrap();
        assert_eq!(gone, 0.0);
        assert_eq!(big("1").true_div(&big("3")).unwrap(), 1.0 / 3.0);
        assert_eq!(big("-1").true_div(&big("3")).unwrap(), -1.0 / 3.0);
    }
}
