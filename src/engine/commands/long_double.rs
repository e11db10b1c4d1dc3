//! A software x87 80-bit extended float (64-bit significand, 15-bit exponent): what Redis's
//! `long double` is on x86-64. Parsing follows glibc `strtold` + Redis `string2ld`, addition is
//! exactly rounded (ties to even), formatting is `%.17Lf` with trailing zeros removed.

use std::cmp::Ordering;

/// Lowest exponent of the significand's last bit (subnormals: `mant × 2^-16445`).
const MIN_EXP: i64 = -16445;
/// Highest exponent of the significand's last bit (largest binade: `2^16383 .. 2^16384`).
const MAX_EXP: i64 = 16383 - 63;
/// Redis `MAX_LONG_DOUBLE_CHARS`: longer inputs are refused.
const MAX_CHARS: usize = 5 * 1024;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ld {
    /// `mant × 2^exp`; zero is `mant == 0` (signed).
    Finite {
        neg: bool,
        mant: u64,
        exp: i64,
    },
    Inf {
        neg: bool,
    },
    NaN,
}

impl Ld {
    pub const ZERO: Ld = Ld::Finite {
        neg: false,
        mant: 0,
        exp: 0,
    };
    pub fn is_finite(&self) -> bool {
        matches!(self, Ld::Finite { .. })
    }
}

/// A non-negative big integer, 32-bit limbs, least significant first, no high zero limbs.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn bits(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + (32 - top.leading_zeros() as u64),
        }
    }
    fn bit(&self, i: u64) -> bool {
        let limb = (i / 32) as usize;
        limb < self.0.len() && (self.0[limb] >> (i % 32)) & 1 == 1
    }
    /// Whether any bit below position `i` is set.
    fn any_below(&self, i: u64) -> bool {
        let full = ((i / 32) as usize).min(self.0.len());
        if self.0[..full].iter().any(|&l| l != 0) {
            return true;
        }
        let rem = i % 32;
        full < self.0.len() && rem > 0 && self.0[full] & ((1u32 << rem) - 1) != 0
    }
    fn mul_small_add(&mut self, m: u32, a: u32) {
        let mut carry = a as u64;
        for limb in self.0.iter_mut() {
            let v = *limb as u64 * m as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }
    fn mul_pow5(&mut self, mut k: u64) {
        const P13: u32 = 1_220_703_125; // 5^13
        while k >= 13 {
            self.mul_small_add(P13, 0);
            k -= 13;
        }
        self.mul_small_add(5u32.pow(k as u32), 0);
    }
    fn shl(&self, n: u64) -> Big {
        if self.is_zero() {
            return Big(Vec::new());
        }
        let (limbs, rem) = ((n / 32) as usize, (n % 32) as u32);
        let mut out = vec![0u32; limbs];
        if rem == 0 {
            out.extend_from_slice(&self.0);
        } else {
            let mut carry = 0u32;
            for &l in &self.0 {
                out.push((l << rem) | carry);
                carry = l >> (32 - rem);
            }
            out.push(carry);
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    fn shr(&self, n: u64) -> Big {
        let (limbs, rem) = ((n / 32) as usize, (n % 32) as u32);
        if limbs >= self.0.len() {
            return Big(Vec::new());
        }
        let src = &self.0[limbs..];
        let mut out = Vec::with_capacity(src.len());
        for k in 0..src.len() {
            let hi = if rem == 0 {
                0
            } else {
                src.get(k + 1).map_or(0, |&h| h << (32 - rem))
            };
            out.push((src[k] >> rem) | hi);
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    /// The low 64 bits of `self >> n`.
    fn shr_low_u64(&self, n: u64) -> u64 {
        let mut v = 0u64;
        for k in 0..64 {
            if self.bit(n + k) {
                v |= 1 << k;
            }
        }
        v
    }
    fn add(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u64;
        for k in 0..self.0.len().max(other.0.len()) {
            let v =
                *self.0.get(k).unwrap_or(&0) as u64 + *other.0.get(k).unwrap_or(&0) as u64 + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        out.push(carry as u32);
        let mut b = Big(out);
        b.trim();
        b
    }
    /// `self - other`, for `self >= other`.
    fn sub(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for k in 0..self.0.len() {
            let mut v = self.0[k] as i64 - *other.0.get(k).unwrap_or(&0) as i64 - borrow;
            borrow = if v < 0 { 1 } else { 0 };
            if v < 0 {
                v += 1 << 32;
            }
            out.push(v as u32);
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
    /// Quotient of `self / den` and whether a remainder is left (binary long division:
    /// used only where the quotient is small).
    fn div_rem_nonzero(&self, den: &Big) -> (Big, bool) {
        let mut rem = self.clone();
        let mut q = Big(Vec::new());
        if rem.cmp(den) != Ordering::Less {
            for i in (0..=rem.bits() - den.bits()).rev() {
                let d = den.shl(i);
                if rem.cmp(&d) != Ordering::Less {
                    rem = rem.sub(&d);
                    q = q.add(&Big::from_u64(1).shl(i));
                }
            }
        }
        let nonzero = !rem.is_zero();
        (q, nonzero)
    }
    /// Divide in place by `d`, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = (rem << 32) | *limb as u64;
            *limb = (v / d as u64) as u32;
            rem = v % d as u64;
        }
        self.trim();
        rem as u32
    }
    fn to_decimal(&self) -> String {
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_small(1_000_000_000));
        }
        let mut s = chunks
            .pop()
            .map_or_else(|| "0".to_string(), |c| c.to_string());
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

/// Round `n × 2^shift` (plus a positive amount below its last bit when `sticky`) to the
/// nearest long double, ties to even; overflow gives infinity, underflow zero.
fn round(neg: bool, n: &Big, shift: i64, sticky: bool) -> Ld {
    if n.is_zero() {
        return Ld::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    let top = n.bits() as i64 - 1 + shift;
    let mut exp = (top - 63).max(MIN_EXP);
    let drop = exp - shift;
    let mut mant;
    if drop <= 0 {
        // Exact: `n` has at most 64 - (-drop) bits here.
        mant = n.shr_low_u64(0) << (-drop);
    } else {
        let drop = drop as u64;
        mant = n.shr_low_u64(drop);
        let half = n.bit(drop - 1);
        let rest = sticky || n.any_below(drop - 1);
        if half && (rest || mant & 1 == 1) {
            let (m, carried) = mant.overflowing_add(1);
            mant = m;
            if carried {
                mant = 1 << 63;
                exp += 1;
            }
        }
    }
    if exp > MAX_EXP {
        Ld::Inf { neg }
    } else {
        Ld::Finite { neg, mant, exp }
    }
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Digits of `s` in `radix` from the start: (digits, count consumed).
fn take_digits(s: &[u8], radix: u32) -> (Vec<u32>, usize) {
    let n = s
        .iter()
        .take_while(|c| (**c as char).is_digit(radix))
        .count();
    (
        s[..n]
            .iter()
            .map(|c| (*c as char).to_digit(radix).unwrap_or(0))
            .collect(),
        n,
    )
}

/// Redis `string2ld`: the whole text must be a `strtold` number, not NaN, not overflowing,
/// not a non-zero value that underflows to zero, no leading space, under 5120 bytes.
pub fn parse(s: &[u8]) -> Option<Ld> {
    if s.is_empty() || s.len() >= MAX_CHARS || is_c_space(s[0]) {
        return None;
    }
    let (neg, body) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    if lower == b"inf" || lower == b"infinity" {
        return Some(Ld::Inf { neg });
    }
    let hex = lower.starts_with(b"0x");
    let (radix, mut rest) = if hex {
        (16, &lower[2..])
    } else {
        (10, &lower[..])
    };
    let (int_digits, n) = take_digits(rest, radix);
    rest = &rest[n..];
    let mut frac_digits = Vec::new();
    if let Some(after) = rest.strip_prefix(b".") {
        let (d, n) = take_digits(after, radix);
        frac_digits = d;
        rest = &after[n..];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    let mut exp10: i64 = 0;
    let marker: &[u8] = if hex { b"p" } else { b"e" };
    if let Some(after) = rest.strip_prefix(marker) {
        let (eneg, digits) = match after.first() {
            Some(b'-') => (true, &after[1..]),
            Some(b'+') => (false, &after[1..]),
            _ => (false, after),
        };
        let (d, n) = take_digits(digits, 10);
        if n == 0 || n != digits.len() {
            return None;
        }
        // Saturate: anything this large overflows or underflows anyway.
        let v = d
            .iter()
            .fold(0i64, |acc, &x| (acc * 10 + x as i64).min(1 << 40));
        exp10 = if eneg { -v } else { v };
    } else if !rest.is_empty() {
        return None;
    }

    // The significand as an integer and the power of the radix it is scaled by.
    let scale = exp10
        - if hex {
            4 * frac_digits.len() as i64
        } else {
            frac_digits.len() as i64
        };
    let digits: Vec<u32> = int_digits
        .into_iter()
        .chain(frac_digits)
        .skip_while(|&d| d == 0)
        .collect();
    if digits.is_empty() {
        return Some(Ld::Finite {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    let mut n = Big(Vec::new());
    for &d in &digits {
        n.mul_small_add(radix, d);
    }
    let value = if hex {
        let top = n.bits() as i64 - 1 + scale;
        if top > 16384 {
            return None;
        }
        if top < MIN_EXP - 2 {
            return None;
        }
        round(neg, &n, scale, false)
    } else {
        // 10^(len-1+scale) <= value < 10^(len+scale): skip hopeless magnitudes cheaply.
        let magnitude = digits.len() as i64 + scale;
        if magnitude - 1 > 4933 {
            return None;
        }
        if magnitude < -4952 {
            return None;
        }
        if scale >= 0 {
            // n × 10^k = n × 5^k × 2^k
            n.mul_pow5(scale as u64);
            round(neg, &n, scale, false)
        } else {
            // n / 10^k = (n × 2^t / 5^k) × 2^(-k-t), with t giving the quotient 66+ bits.
            let k = (-scale) as u64;
            let mut den = Big::from_u64(1);
            den.mul_pow5(k);
            let t = (den.bits() + 66).saturating_sub(n.bits());
            let (q, inexact) = n.shl(t).div_rem_nonzero(&den);
            round(neg, &q, -(k as i64) - t as i64, inexact)
        }
    };
    match value {
        Ld::Finite { mant: 0, .. } | Ld::Inf { .. } | Ld::NaN => None,
        v => Some(v),
    }
}

/// `a + b`, exactly rounded.
pub fn add(a: Ld, b: Ld) -> Ld {
    match (a, b) {
        (Ld::NaN, _) | (_, Ld::NaN) => Ld::NaN,
        (Ld::Inf { neg: x }, Ld::Inf { neg: y }) => {
            if x == y {
                a
            } else {
                Ld::NaN
            }
        }
        (Ld::Inf { .. }, _) => a,
        (_, Ld::Inf { .. }) => b,
        (
            Ld::Finite {
                neg: an,
                mant: am,
                exp: ae,
            },
            Ld::Finite {
                neg: bn,
                mant: bm,
                exp: be,
            },
        ) => {
            if am == 0 && bm == 0 {
                return Ld::Finite {
                    neg: an && bn,
                    mant: 0,
                    exp: 0,
                };
            }
            if am == 0 {
                return b;
            }
            if bm == 0 {
                return a;
            }
            let e = ae.min(be);
            let x = Big::from_u64(am).shl((ae - e) as u64);
            let y = Big::from_u64(bm).shl((be - e) as u64);
            if an == bn {
                return round(an, &x.add(&y), e, false);
            }
            match x.cmp(&y) {
                Ordering::Equal => Ld::ZERO,
                Ordering::Greater => round(an, &x.sub(&y), e, false),
                Ordering::Less => round(bn, &y.sub(&x), e, false),
            }
        }
    }
}

/// Redis `ld2string(..., LD_STR_HUMAN)`: `%.17Lf`, trailing zeros and dot removed, `-0` → `0`.
pub fn format_human(v: Ld) -> String {
    let (neg, mant, exp) = match v {
        Ld::Finite { neg, mant, exp } => (neg, mant, exp),
        Ld::Inf { neg } => return if neg { "-inf".into() } else { "inf".into() },
        Ld::NaN => return "nan".into(),
    };
    let n = Big::from_u64(mant);
    let mut text = if exp >= 0 {
        n.shl(exp as u64).to_decimal()
    } else {
        // round(mant × 10^17 / 2^k), ties to even, then split off 17 decimals.
        let k = (-exp) as u64;
        let mut x = n;
        x.mul_pow5(17);
        let x = x.shl(17);
        let mut r = x.shr(k);
        let half = x.bit(k - 1);
        let rest = k > 1 && x.any_below(k - 1);
        if half && (rest || r.bit(0)) {
            r = r.add(&Big::from_u64(1));
        }
        let frac = r.div_small(100_000_000) as u64; // low 8 decimals
        let frac_hi = r.div_small(1_000_000_000) as u64; // next 9 decimals
        let int_part = r.to_decimal();
        let s = format!("{int_part}.{frac_hi:09}{frac:08}");
        let s = s.trim_end_matches('0');
        s.strip_suffix('.').unwrap_or(s).to_string()
    };
    if neg {
        text.insert(0, '-');
    }
    if text == "-0" {
        text = "0".into();
    }
    text
}
