//! Number parsing and formatting with Redis's exact rules (`string2ll`, `strtod` checks,
//! long-double formatting of INCRBYFLOAT).

/// Redis `string2ll`: optional `-`, no `+`, no spaces, no leading zeros, fits in i64.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    if bytes == b"0" {
        return Some(0);
    }
    let (neg, digits) = match bytes[0] {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((d - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// Redis `getDoubleFromObject`/`string2d`: `strtod` over the whole string, no leading space,
/// NaN refused; accepts `inf`, `-inf`, `1e5`, hex floats.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(bytes).ok()?;
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let v = strtod(s)?;
    if v.is_nan() {
        return None;
    }
    // strtod's ERANGE: an overflow to infinity or an underflow to zero is refused ("inf" itself is fine).
    let lower = s.to_ascii_lowercase();
    let mantissa = lower.split(['e', 'p']).next().unwrap_or_default();
    if v.is_infinite() && !lower.trim_start_matches(['+', '-']).starts_with("inf") {
        return None;
    }
    if v == 0.0
        && mantissa
            .trim_start_matches("0x")
            .bytes()
            .any(|c| (b'1'..=b'9').contains(&c) || (b'a'..=b'f').contains(&c))
    {
        return None;
    }
    Some(v)
}

/// A `strtod` that must consume the whole input.
pub fn strtod(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let (sign, body) = match lower.as_bytes().first() {
        Some(b'-') => (-1.0, &lower[1..]),
        Some(b'+') => (1.0, &lower[1..]),
        _ => (1.0, &lower[..]),
    };
    match body {
        "inf" | "infinity" => return Some(sign * f64::INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if let Some(hex) = body.strip_prefix("0x") {
        return parse_hex_float(hex).map(|v| sign * v);
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'-' | b'+'))
    {
        return None;
    }
    if body.starts_with(['e', '+', '-']) || body == "." {
        return None;
    }
    body.parse::<f64>().ok().map(|v| sign * v)
}

/// The hex digits after `0x` (`1.8p3`) rounded to the nearest double, ties to even, as glibc's
/// `strtod` does: the first 64 bits are kept exactly, later non-zero digits only break ties.
fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exp) = match hex.split_once('p') {
        Some((m, e)) => (m, parse_exponent(e)?),
        None => (hex, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut mant: u64 = 0;
    let mut exp2: i64 = exp;
    let mut sticky = false;
    for (c, fractional) in int
        .chars()
        .map(|c| (c, false))
        .chain(frac.chars().map(|c| (c, true)))
    {
        let d = c.to_digit(16)? as u64;
        if mant >> 60 == 0 {
            mant = mant << 4 | d;
            exp2 -= 4 * fractional as i64;
        } else {
            sticky |= d != 0;
            exp2 += 4 * !fractional as i64;
        }
    }
    if mant == 0 {
        return Some(0.0);
    }
    // Normalized: value = mant × 2^exp2 with the top bit of `mant` at bit 63.
    let lz = mant.leading_zeros();
    mant <<= lz;
    exp2 -= lz as i64;
    let e = exp2 + 63; // the binary exponent of the leading bit
    if e > 1023 {
        return Some(f64::INFINITY);
    }
    // Bits kept: 53 for a normal double, fewer for a subnormal one.
    let kept = if e >= -1022 { 53 } else { e + 1075 };
    if kept < 0 {
        return Some(0.0);
    }
    let drop = (64 - kept) as u32;
    let m = mant as u128;
    let mut q = (m >> drop) as u64;
    let rem = m & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    if rem > half || (rem == half && (sticky || q & 1 == 1)) {
        q += 1;
    }
    if kept < 53 {
        // Subnormal: the bits are the significand itself (a carry to 2^52 is the smallest normal).
        return Some(f64::from_bits(q));
    }
    let (q, e) = if q == 1 << 53 {
        (q >> 1, e + 1)
    } else {
        (q, e)
    };
    if e > 1023 {
        return Some(f64::INFINITY);
    }
    Some(f64::from_bits(
        ((e + 1023) as u64) << 52 | (q & ((1 << 52) - 1)),
    ))
}

/// A `p` exponent: optional sign and decimal digits, saturated far beyond any double's range.
fn parse_exponent(text: &str) -> Option<i64> {
    let (neg, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v = digits
        .bytes()
        .fold(0i64, |v, c| (v * 10 + (c - b'0') as i64).min(1 << 40));
    Some(if neg { -v } else { v })
}

/// The integer text of `v` (Redis `ll2string`).
pub fn int_bytes(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn string2ll_rules() {
        assert_eq!(parse_i64(b"12"), Some(12));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [&b"+1"[..], b" 1", b"01", b"-0", b"1.0", b"", b"-"] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }
    #[test]
    fn strtod_rules() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"0x10"), Some(16.0));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"abc"), None);
        assert_eq!(parse_f64(b"1e500"), None);
        assert_eq!(parse_f64(b"1e-500"), None);
        assert_eq!(parse_f64(b"0e-500"), Some(0.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
    }
    #[test]
    fn hex_floats_round_to_nearest_even() {
        assert_eq!(parse_f64(b"0x1.8p1"), Some(3.0));
        assert_eq!(parse_f64(b"-0x.8"), Some(-0.5));
        // Halfway between 1 and the next double: ties to even, any later bit rounds up.
        assert_eq!(parse_f64(b"0x1.00000000000008p0"), Some(1.0));
        assert_eq!(
            parse_f64(b"0x1.00000000000018p0"),
            Some(1.0 + 2.0 * f64::EPSILON)
        );
        assert_eq!(
            parse_f64(b"0x1.00000000000008000000001p0"),
            Some(1.0 + f64::EPSILON)
        );
        assert_eq!(parse_f64(b"0x1.fffffffffffff8p0"), Some(2.0));
        assert_eq!(parse_f64(b"0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_f64(b"0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(parse_f64(b"0x1p1024"), None);
        assert_eq!(parse_f64(b"0x1p-1080"), None);
        assert_eq!(parse_f64(b"0x1p+99999999999999999999"), None);
        assert_eq!(parse_f64(b"0x0p99999999999"), Some(0.0));
        assert_eq!(strtod("0x1p-1075"), Some(0.0));
        assert_eq!(strtod("0x1.0000001p-1075"), Some(f64::from_bits(1)));
        assert_eq!(strtod("0x1p"), None);
    }
}
