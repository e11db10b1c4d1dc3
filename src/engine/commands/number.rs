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

fn parse_hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exp) = match hex.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (hex, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
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
}
