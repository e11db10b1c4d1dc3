//! The digits Redis 7.2+ and Valkey write for a double (`fpconv_dtoa`, Florian Loitsch's Grisu2):
//! `redis.call` arguments and double replies. Grisu2 is not always shortest: for some doubles it
//! gives 17 digits where fewer read back the same (`260.27115857159953`, not `260.2711585715995`),
//! so the servers' text is reproduced step by step, not from a shortest round-trip formatter.

use std::sync::OnceLock;

/// A number `frac × 2^exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fp {
    frac: u64,
    exp: i32,
}

const HIDDEN_BIT: u64 = 1 << 52;
const EXP_BIAS: i32 = 1023 + 52;
/// The cached powers: 10^FIRST_POWER, then every POWER_STEP-th power, POWERS of them.
const POWERS: usize = 87;
const FIRST_POWER: i32 = -348;
const POWER_STEP: i32 = 8;
/// The binary exponent window a cached power must bring the upper boundary into.
const EXP_MIN: i32 = -60;
const EXP_MAX: i32 = -32;

/// The shortest-by-Grisu2 digits of a positive finite `d` and the decimal exponent of the last
/// one: `d ≈ digits × 10^k`.
pub fn digits(d: f64) -> (Vec<u8>, i32) {
    let w = fp_of(d);
    let (lower, upper) = boundaries(w);
    let w = normalized(w);
    let (cached, k) = cached_power(upper.exp);
    let w = multiply(w, cached);
    let mut upper = multiply(upper, cached);
    let mut lower = multiply(lower, cached);
    lower.frac += 1;
    upper.frac -= 1;
    generate_digits(w, upper, lower, -k)
}

fn fp_of(d: f64) -> Fp {
    let bits = d.to_bits();
    let frac = bits & (HIDDEN_BIT - 1);
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased != 0 {
        Fp {
            frac: frac + HIDDEN_BIT,
            exp: biased - EXP_BIAS,
        }
    } else {
        Fp {
            frac,
            exp: 1 - EXP_BIAS,
        }
    }
}

/// `w` shifted so its top bit is bit 63.
fn normalized(mut w: Fp) -> Fp {
    while w.frac & HIDDEN_BIT == 0 {
        w.frac <<= 1;
        w.exp -= 1;
    }
    Fp {
        frac: w.frac << 11,
        exp: w.exp - 11,
    }
}

/// The midpoints to the neighbouring doubles, both on the upper one's (normalized) exponent.
fn boundaries(w: Fp) -> (Fp, Fp) {
    let mut upper = Fp {
        frac: (w.frac << 1) + 1,
        exp: w.exp - 1,
    };
    while upper.frac & (HIDDEN_BIT << 1) == 0 {
        upper.frac <<= 1;
        upper.exp -= 1;
    }
    upper.frac <<= 10;
    upper.exp -= 10;
    // Below a power of two the lower neighbour is half as far.
    let lower_shift = if w.frac == HIDDEN_BIT { 2 } else { 1 };
    let lower_exp = w.exp - lower_shift;
    let lower = Fp {
        frac: ((w.frac << lower_shift) - 1) << (lower_exp - upper.exp),
        exp: upper.exp,
    };
    (lower, upper)
}

/// The upper 64 bits of the product, rounded on bit 31 of the lower half as fpconv does.
fn multiply(a: Fp, b: Fp) -> Fp {
    const LO: u64 = 0xffff_ffff;
    let ah_bl = (a.frac >> 32) * (b.frac & LO);
    let al_bh = (a.frac & LO) * (b.frac >> 32);
    let al_bl = (a.frac & LO) * (b.frac & LO);
    let ah_bh = (a.frac >> 32) * (b.frac >> 32);
    let mid = (ah_bl & LO) + (al_bh & LO) + (al_bl >> 32) + (1 << 31);
    Fp {
        frac: ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (mid >> 32),
        exp: a.exp + b.exp + 64,
    }
}

/// The cached power of ten that brings binary exponent `exp` into the window, and its decimal
/// exponent; the search starts where fpconv's estimate does (it decides between two fitting powers).
fn cached_power(exp: i32) -> (Fp, i32) {
    let powers = cached_powers();
    let approx = (-(exp + POWERS as i32) as f64 * 0.301_029_995_663_981_14) as i32;
    let mut index = ((approx - FIRST_POWER) / POWER_STEP) as usize;
    loop {
        let current = exp + powers[index].exp + 64;
        if current < EXP_MIN {
            index += 1;
        } else if current > EXP_MAX {
            index -= 1;
        } else {
            return (powers[index], FIRST_POWER + index as i32 * POWER_STEP);
        }
    }
}

/// 10^k for k = -348, -340, ... 340: the 64-bit significand rounded to nearest, computed once
/// with exact integer arithmetic.
fn cached_powers() -> &'static [Fp; POWERS] {
    static POWERS_OF_TEN: OnceLock<[Fp; POWERS]> = OnceLock::new();
    POWERS_OF_TEN
        .get_or_init(|| std::array::from_fn(|i| power_of_ten(FIRST_POWER + i as i32 * POWER_STEP)))
}

/// 10^k as a normalized 64-bit significand (rounded to nearest) and binary exponent.
fn power_of_ten(k: i32) -> Fp {
    // A big unsigned integer, least significant 32-bit limb first.
    let mut n: Vec<u32> = vec![1];
    let mut exp = 0i32;
    if k >= 0 {
        for _ in 0..k {
            mul_small(&mut n, 10);
        }
    } else {
        // floor(2^shift / 10^-k), with shift large enough to keep well over 64 bits.
        let shift = (-k) * 4 + 128;
        n = vec![0; shift as usize / 32];
        n.push(1 << (shift % 32));
        for _ in 0..-k {
            div_small(&mut n, 10);
        }
        exp = -shift;
    }
    let bits = bit_length(&n);
    let drop = bits as i32 - 64;
    let (top, rest_half) = top_64_bits(&n, drop);
    let mut frac = top;
    exp += drop;
    if rest_half {
        frac = frac.wrapping_add(1);
        if frac == 0 {
            frac = 1 << 63;
            exp += 1;
        }
    }
    Fp { frac, exp }
}

fn mul_small(n: &mut Vec<u32>, m: u32) {
    let mut carry = 0u64;
    for limb in n.iter_mut() {
        let v = *limb as u64 * m as u64 + carry;
        *limb = v as u32;
        carry = v >> 32;
    }
    if carry > 0 {
        n.push(carry as u32);
    }
}

fn div_small(n: &mut Vec<u32>, d: u32) {
    let mut rem = 0u64;
    for limb in n.iter_mut().rev() {
        let v = (rem << 32) | *limb as u64;
        *limb = (v / d as u64) as u32;
        rem = v % d as u64;
    }
    while n.len() > 1 && n.last() == Some(&0) {
        n.pop();
    }
}

fn bit_length(n: &[u32]) -> u32 {
    let top = n.len() - 1;
    top as u32 * 32 + (32 - n[top].leading_zeros())
}

fn bit(n: &[u32], i: i32) -> bool {
    i >= 0 && (n[(i / 32) as usize] >> (i % 32)) & 1 == 1
}

/// The 64 bits below the top one's position after dropping `drop` low bits, and whether the
/// dropped part is at least half of the last kept bit.
fn top_64_bits(n: &[u32], drop: i32) -> (u64, bool) {
    let mut top = 0u64;
    for i in (drop..drop + 64).rev() {
        top = (top << 1) | bit(n, i) as u64;
    }
    (top, bit(n, drop - 1))
}

/// fpconv's digit generation: the digits of the scaled upper boundary until the rest fits the
/// interval, then the last digit moved towards `w` while that stays inside.
fn generate_digits(w: Fp, upper: Fp, lower: Fp, mut k: i32) -> (Vec<u8>, i32) {
    const TENS: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 19;
        while i > 0 {
            t[i - 1] = t[i] * 10;
            i -= 1;
        }
        t
    };
    let wfrac = upper.frac.wrapping_sub(w.frac);
    let mut delta = upper.frac.wrapping_sub(lower.frac);
    let shift = (-upper.exp) as u32;
    let one = 1u64 << shift;
    let mut part1 = upper.frac >> shift;
    let mut part2 = upper.frac & (one - 1);
    let mut digits = Vec::with_capacity(18);
    let mut kappa = 10;
    // The integral part, 10^9 down to 10^0.
    for &div in &TENS[10..] {
        let digit = part1 / div;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part1 -= digit * div;
        kappa -= 1;
        let rest = (part1 << shift).wrapping_add(part2);
        if rest <= delta {
            k += kappa;
            round_digit(&mut digits, delta, rest, div << shift, wfrac);
            return (digits, k);
        }
    }
    // The fraction, a digit at a time.
    let mut unit = 18;
    loop {
        part2 = part2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        kappa -= 1;
        let digit = part2 >> shift;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part2 &= one - 1;
        if part2 < delta {
            k += kappa;
            round_digit(
                &mut digits,
                delta,
                part2,
                one,
                wfrac.wrapping_mul(TENS[unit]),
            );
            return (digits, k);
        }
        unit -= 1;
    }
}

fn round_digit(digits: &mut [u8], delta: u64, mut rest: u64, kappa: u64, frac: u64) {
    let Some(last) = digits.last_mut() else {
        return;
    };
    while rest < frac
        && delta.wrapping_sub(rest) >= kappa
        && (rest.wrapping_add(kappa) < frac
            || frac.wrapping_sub(rest) > rest.wrapping_add(kappa).wrapping_sub(frac))
    {
        *last -= 1;
        rest = rest.wrapping_add(kappa);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(d: f64) -> String {
        let (digits, k) = digits(d);
        format!("{}e{k}", String::from_utf8(digits).unwrap())
    }

    #[test]
    fn powers_of_ten_that_are_exact_have_their_own_significand() {
        // 10^4 = 10000 × 2^0 = 11258999068426240000 × 2^-50; 10^20 = 12500000000000000000 × 2^3.
        assert_eq!(
            power_of_ten(4),
            Fp {
                frac: 10_000u64 << 50,
                exp: -50
            }
        );
        assert_eq!(
            power_of_ten(20),
            Fp {
                frac: 12_500_000_000_000_000_000,
                exp: 3
            }
        );
        // 10^-348 rounds up in its last bit (0xFA8FD5A0081C0288 is Grisu's published constant).
        assert_eq!(
            power_of_ten(-348),
            Fp {
                frac: 0xFA8F_D5A0_081C_0288,
                exp: -1220
            }
        );
    }

    /// Any finite double, subnormals and the extremes included: digits that read back as it, at
    /// most 17 of them (sometimes 17 where 15 would do, as on the servers), and no overflow on the
    /// way (debug builds check).
    #[test]
    fn every_double_reads_back() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        for i in 0..300_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every 4th one a subnormal, every 4th a power of two (the uneven boundaries).
            let bits = match i % 4 {
                0 => x >> 12,
                1 => x & 0x7FF0_0000_0000_0000,
                _ => x & !(1 << 63),
            };
            let d = f64::from_bits(bits);
            if !d.is_finite() || d == 0.0 {
                continue;
            }
            let (digits, k) = digits(d);
            let text = format!("{}e{k}", std::str::from_utf8(&digits).unwrap());
            assert_eq!(text.parse::<f64>().unwrap(), d, "{bits:#x}: {text}");
            assert!(digits.len() <= 17, "{bits:#x}: {text}");
            checked += 1;
        }
        assert!(checked > 250_000);
    }

    #[test]
    fn digits_are_grisu2s_not_always_the_shortest() {
        assert_eq!(text(0.1), "1e-1");
        assert_eq!(text(1.5e-7), "15e-8");
        assert_eq!(text(123456789012345678.0), "12345678901234568e1");
        assert_eq!(text(5e-324), "5e-324");
        assert_eq!(text(f64::MAX), "17976931348623157e292");
        // What Redis 7.2 replied for this score; the shortest text is 260.2711585715995.
        assert_eq!(text(260.271_158_571_599_5), "26027115857159953e-14");
        // 17 digits where 15 read back the same, as Redis 7.2.4 wrote them; one is subnormal.
        assert_eq!(text(3.160_738_526_785_15e-122), "31607385267851497e-138");
        assert_eq!(text(1.629_710_739_204_17e-308), "16297107392041698e-324");
    }
}
