//! Number parsing and formatting with Redis's exact rules (`string2ll`, `strtod` checks,
//! long-double formatting of INCRBYFLOAT), and the parsers later servers use instead
//! (fast_float for scores, `string2ull` for cursors; which one a command uses is profile data).

use crate::engine::profile::{CursorSyntax, FloatSyntax};

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
    hex_float(hex).map(|(v, _)| v)
}

/// `parse_hex_float` and whether the value was rounded (glibc's ERANGE for a subnormal result).
fn hex_float(hex: &str) -> Option<(f64, bool)> {
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
        return Some((0.0, false));
    }
    // Normalized: value = mant × 2^exp2 with the top bit of `mant` at bit 63.
    let lz = mant.leading_zeros();
    mant <<= lz;
    exp2 -= lz as i64;
    let e = exp2 + 63; // the binary exponent of the leading bit
    if e > 1023 {
        return Some((f64::INFINITY, true));
    }
    // Bits kept: 53 for a normal double, fewer for a subnormal one.
    let kept = if e >= -1022 { 53 } else { e + 1075 };
    if kept < 0 {
        return Some((0.0, true));
    }
    let drop = (64 - kept) as u32;
    let m = mant as u128;
    let mut q = (m >> drop) as u64;
    let rem = m & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    let inexact = rem != 0 || sticky;
    if rem > half || (rem == half && (sticky || q & 1 == 1)) {
        q += 1;
    }
    if kept < 53 {
        // Subnormal: the bits are the significand itself (a carry to 2^52 is the smallest normal).
        return Some((f64::from_bits(q), inexact));
    }
    let (q, e) = if q == 1 << 53 {
        (q >> 1, e + 1)
    } else {
        (q, e)
    };
    if e > 1023 {
        return Some((f64::INFINITY, true));
    }
    Some((
        f64::from_bits(((e + 1023) as u64) << 52 | (q & ((1 << 52) - 1))),
        inexact,
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

/// Why a C float parser flagged what it read (its `errno`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatError {
    /// Nothing was read (`EINVAL`; the value is 0).
    Invalid,
    /// The value overflowed to ±inf or underflowed to ±0 (`ERANGE`, or fast_float's range error).
    OutOfRange,
    /// glibc's `ERANGE` for a subnormal result that was rounded (the value stands). A decimal
    /// text is taken as rounded: only its full expansion (hundreds of digits) is exact.
    InexactSubnormal,
}

/// What a C float parser read from the start of a text: the value, how many bytes it used
/// (`endptr - nptr`) and the error it reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatPrefix {
    pub value: f64,
    pub len: usize,
    pub error: Option<FloatError>,
}

/// Read the longest number at the start of `text` as `syntax`'s parser does (for
/// `FastFloatThenStrtod`, the fast_float step). `text` is what the parser sees: callers on a
/// C string cut it at the first NUL.
pub fn float_prefix(syntax: FloatSyntax, text: &[u8]) -> FloatPrefix {
    let (len, has_digits) = match syntax {
        FloatSyntax::Strtod => strtod_prefix_len(text),
        FloatSyntax::FastFloat {
            minus_then_plus_infnan,
        } => fast_float_prefix_len(text, minus_then_plus_infnan),
        FloatSyntax::FastFloatThenStrtod => fast_float_prefix_len(text, true),
    };
    if len == 0 {
        return FloatPrefix {
            value: 0.0,
            len: 0,
            error: Some(FloatError::Invalid),
        };
    }
    let body = std::str::from_utf8(&text[..len]).expect("a number's bytes are ASCII");
    let body = body.trim_start_matches(C_SPACE);
    let negative = body.starts_with('-');
    // One sign, or `-+` before inf/nan (Redis 8.0's fast_float).
    let unsigned = body.trim_start_matches('-').trim_start_matches('+');
    let word = unsigned.as_bytes()[0] | 0x20;
    let magnitude = match word {
        b'i' => f64::INFINITY,
        b'n' => f64::NAN,
        _ => strtod(unsigned).expect("the prefix is a number"),
    };
    let value = if negative { -magnitude } else { magnitude };
    let error = if (value.is_infinite() && word != b'i') || (value == 0.0 && has_digits) {
        Some(FloatError::OutOfRange)
    } else if syntax == FloatSyntax::Strtod
        && value != 0.0
        && value.abs() < f64::MIN_POSITIVE
        && unsigned
            .get(2..)
            .filter(|_| unsigned.as_bytes()[1] | 0x20 == b'x')
            .is_none_or(|hex| hex_float(hex).is_some_and(|(_, inexact)| inexact))
    {
        Some(FloatError::InexactSubnormal)
    } else {
        None
    };
    FloatPrefix { value, len, error }
}

/// C's `isspace` in the "C" locale.
const C_SPACE: [char; 6] = [' ', '\t', '\n', '\x0b', '\x0c', '\r'];

/// `string2d` (getDoubleFromObject: ZADD and ZINCRBY scores, weights): the whole text is one
/// number, no leading space, no NaN, nothing out of range.
pub fn string2d(syntax: FloatSyntax, arg: &[u8]) -> Option<f64> {
    if arg.first().is_none_or(|c| C_SPACE.contains(&(*c as char))) {
        return None;
    }
    let c_string = until_nul(arg);
    let read = float_prefix(syntax, c_string);
    let read = match syntax {
        // Redis 8.0: `strtod` again when fast_float stopped early; fast_float's errno stays.
        FloatSyntax::FastFloatThenStrtod if read.len != arg.len() => {
            let again = float_prefix(FloatSyntax::Strtod, c_string);
            FloatPrefix {
                error: again.error.or(read.error),
                ..again
            }
        }
        _ => read,
    };
    let refused = matches!(
        read.error,
        Some(FloatError::Invalid | FloatError::OutOfRange)
    );
    (read.len == arg.len() && !refused && !read.value.is_nan()).then_some(read.value)
}

/// One bound of `zslParseRange` (after its `(`): the C string must be read to its end; the
/// empty text is 0, NaN is refused, a value out of range is kept (±inf, ±0).
pub fn range_bound(syntax: FloatSyntax, text: &[u8]) -> Option<f64> {
    let c_string = until_nul(text);
    let read = float_prefix(syntax, c_string);
    (read.len == c_string.len() && !read.value.is_nan()).then_some(read.value)
}

fn until_nul(s: &[u8]) -> &[u8] {
    s.iter().position(|&b| b == 0).map_or(s, |n| &s[..n])
}

/// Length of glibc `strtod`'s number at the start of `t` (0: none), and whether its mantissa
/// has a non-zero digit (an underflow to 0 is then a range error).
fn strtod_prefix_len(t: &[u8]) -> (usize, bool) {
    let mut i = t
        .iter()
        .take_while(|c| C_SPACE.contains(&(**c as char)))
        .count();
    if matches!(t.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    if let Some(n) = infnan_len(&t[i..]) {
        return (i + n, false);
    }
    let rest = &t[i..];
    if rest.len() > 1 && rest[0] == b'0' && rest[1] | 0x20 == b'x' {
        let (n, nonzero) = mantissa_len(&rest[2..], u8::is_ascii_hexdigit);
        if n > 0 {
            let e = exponent_len(&rest[2 + n..], b'p');
            return (i + 2 + n + e, nonzero);
        }
        return (i + 1, false); // "0x" without hex digits is the number 0
    }
    let (n, nonzero) = mantissa_len(rest, u8::is_ascii_digit);
    if n == 0 {
        return (0, false);
    }
    (i + n + exponent_len(&rest[n..], b'e'), nonzero)
}

/// Length of fast_float's number at the start of `t` (general format, a leading `+` allowed),
/// and whether its mantissa has a non-zero digit.
fn fast_float_prefix_len(t: &[u8], minus_then_plus_infnan: bool) -> (usize, bool) {
    let mut i = 0;
    if matches!(t.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let (n, nonzero) = mantissa_len(&t[i..], u8::is_ascii_digit);
    if n > 0 {
        return (i + n + exponent_len(&t[i + n..], b'e'), nonzero);
    }
    // Not a decimal: `parse_infnan`, which Redis 8.0's build lets skip a `+` after a `-`.
    let mut j = usize::from(t.first() == Some(&b'-'));
    if t.get(j) == Some(&b'+') && (j == 0 || minus_then_plus_infnan) {
        j += 1;
    }
    match infnan_len(&t[j..]) {
        Some(n) => (j + n, false),
        None => (0, false),
    }
}

/// `inf`, `infinity` or `nan` with an optional `(chars)` (letters, digits, `_`), any case.
fn infnan_len(t: &[u8]) -> Option<usize> {
    let starts = |word: &[u8]| t.len() >= word.len() && t[..word.len()].eq_ignore_ascii_case(word);
    if starts(b"infinity") {
        return Some(8);
    }
    if starts(b"inf") {
        return Some(3);
    }
    if !starts(b"nan") {
        return None;
    }
    if t.get(3) == Some(&b'(') {
        let inside = t[4..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if t.get(4 + inside) == Some(&b')') {
            return Some(5 + inside);
        }
    }
    Some(3)
}

/// Digits, an optional point and more digits (at least one digit in all): their length (0 if
/// no digit) and whether one of them is not zero.
fn mantissa_len(t: &[u8], digit: fn(&u8) -> bool) -> (usize, bool) {
    let int = t.iter().take_while(|c| digit(c)).count();
    let mut n = int;
    let mut frac = 0;
    if t.get(n) == Some(&b'.') {
        frac = t[n + 1..].iter().take_while(|c| digit(c)).count();
        n += 1 + frac;
    }
    if int + frac == 0 {
        return (0, false);
    }
    let nonzero = t[..n].iter().any(|c| digit(c) && *c != b'0');
    (n, nonzero)
}

/// `e`/`p`, an optional sign and digits: their length, or 0 when no digit follows.
fn exponent_len(t: &[u8], letter: u8) -> usize {
    if t.first().map(|c| c | 0x20) != Some(letter) {
        return 0;
    }
    let sign = usize::from(matches!(t.get(1), Some(b'+' | b'-')));
    let digits = t[1 + sign..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        0
    } else {
        1 + sign + digits
    }
}

/// A SCAN-family cursor (`parseScanCursorOrReply`) as `syntax` reads it.
pub fn scan_cursor(syntax: CursorSyntax, arg: &[u8]) -> Option<u64> {
    let c = until_nul(arg);
    match syntax {
        CursorSyntax::Strtoul if c.is_empty() => Some(0), // strtoul("") stops at the end: 0
        CursorSyntax::Strtoul if c[0].is_ascii_whitespace() => None,
        CursorSyntax::Strtoul => strtoull(c),
        CursorSyntax::String2ull => match parse_i64(c) {
            Some(v) => u64::try_from(v).ok(), // a negative integer is out of range
            None if c.is_empty() => None,
            None => strtoull(c),
        },
    }
}

/// `strtoull` base 10 that must read all of `c`: leading space, a sign (`-n` wraps), no overflow.
fn strtoull(c: &[u8]) -> Option<u64> {
    let start = c
        .iter()
        .take_while(|b| C_SPACE.contains(&(**b as char)))
        .count();
    let c = &c[start..];
    let (neg, digits) = match c.first() {
        Some(b'-') => (true, &c[1..]),
        Some(b'+') => (false, &c[1..]),
        _ => (false, c),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
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

    const REDIS_8: FloatSyntax = FloatSyntax::FastFloat {
        minus_then_plus_infnan: true,
    };
    const VALKEY_9: FloatSyntax = FloatSyntax::FastFloat {
        minus_then_plus_infnan: false,
    };

    /// How far each parser reads (what `endptr` says), checked on the servers through ZCOUNT.
    #[test]
    fn float_prefixes_per_parser() {
        let len = |syntax, text: &str| float_prefix(syntax, text.as_bytes()).len;
        use FloatSyntax::Strtod;
        for (text, strtod, fast) in [
            (" 1", 2, 0),
            ("0x10", 4, 1),
            ("0x", 1, 1),
            ("0x1p", 3, 1),
            ("1e+", 1, 1),
            ("1.", 2, 2),
            (".5e", 2, 2),
            ("+.5", 3, 3),
            ("+-1", 0, 0),
            ("infinityx", 8, 8),
            ("nan(a_1)", 8, 8),
            ("nan(a", 3, 3),
            ("", 0, 0),
            (".", 0, 0),
        ] {
            assert_eq!(len(Strtod, text), strtod, "strtod {text:?}");
            assert_eq!(len(VALKEY_9, text), fast, "fast_float {text:?}");
        }
        assert_eq!(len(REDIS_8, "-+inf"), 5);
        assert_eq!(len(VALKEY_9, "-+inf"), 0);
        assert_eq!(len(REDIS_8, "+-inf"), 0);
        let big = float_prefix(VALKEY_9, b"1e500");
        assert_eq!(
            (big.value, big.error),
            (f64::INFINITY, Some(FloatError::OutOfRange))
        );
        let tiny = float_prefix(Strtod, b"1e-310");
        assert_eq!(tiny.error, Some(FloatError::InexactSubnormal));
        assert_eq!(float_prefix(Strtod, b"0x1p-1074").error, None);
        assert_eq!(float_prefix(VALKEY_9, b"1e-310").error, None);
    }

    /// ZADD's `string2d` per server (each expectation checked on 7.0.15, 8.0.2 and Valkey 9.1.2).
    #[test]
    fn string2d_per_server() {
        use FloatSyntax::{FastFloatThenStrtod, Strtod};
        for (text, v70, v80, v91) in [
            ("0x10", Some(16.0), Some(16.0), None),
            ("-+inf", None, Some(f64::NEG_INFINITY), None),
            ("1e500", None, None, None),
            ("1e-500", None, None, None),
            ("0x1p99999", None, None, None),
            (" 1", None, None, None),
            ("1\0", None, None, None),
            ("+.5", Some(0.5), Some(0.5), Some(0.5)),
            ("1e-310", Some(1e-310), Some(1e-310), Some(1e-310)),
            ("", None, None, None),
        ] {
            let t = text.as_bytes();
            assert_eq!(string2d(Strtod, t), v70, "7.0 {text:?}");
            assert_eq!(string2d(FastFloatThenStrtod, t), v80, "8.0 {text:?}");
            assert_eq!(string2d(VALKEY_9, t), v91, "9.1 {text:?}");
        }
    }

    #[test]
    fn range_bounds_per_server() {
        use FloatSyntax::Strtod;
        assert_eq!(range_bound(Strtod, b""), Some(0.0));
        assert_eq!(range_bound(VALKEY_9, b""), Some(0.0));
        assert_eq!(range_bound(Strtod, b" 1"), Some(1.0));
        assert_eq!(range_bound(VALKEY_9, b" 1"), None);
        assert_eq!(range_bound(Strtod, b"0x10"), Some(16.0));
        assert_eq!(range_bound(REDIS_8, b"0x10"), None);
        assert_eq!(range_bound(REDIS_8, b"1e500"), Some(f64::INFINITY));
        assert_eq!(range_bound(REDIS_8, b"-+inf"), Some(f64::NEG_INFINITY));
        assert_eq!(range_bound(VALKEY_9, b"1\0x"), Some(1.0));
        assert_eq!(range_bound(VALKEY_9, b"nan"), None);
    }

    #[test]
    fn scan_cursors_per_server() {
        use CursorSyntax::{String2ull, Strtoul};
        for (text, v70, v74) in [
            ("0\0x", Some(0), Some(0)),
            ("", Some(0), None),
            ("\0", Some(0), None),
            (" 1", None, Some(1)),
            ("-1", Some(u64::MAX), None),
            ("-01", Some(u64::MAX), Some(u64::MAX)),
            ("-0", Some(0), Some(0)),
            ("+5", Some(5), Some(5)),
            ("-9223372036854775808", Some(1 << 63), None),
            ("18446744073709551616", None, None),
            ("1 ", None, None),
        ] {
            assert_eq!(scan_cursor(Strtoul, text.as_bytes()), v70, "7.0 {text:?}");
            assert_eq!(
                scan_cursor(String2ull, text.as_bytes()),
                v74,
                "7.4 {text:?}"
            );
        }
    }
}
