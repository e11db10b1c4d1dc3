//! Bitmap commands on strings (`src/bitops.c` of Redis 7.0.15): SETBIT GETBIT BITCOUNT BITPOS
//! BITOP BITFIELD BITFIELD_RO. Bit 0 is the most significant bit of the first byte; a string
//! reads as zero bits past its end.

use super::{errors, flatten, int_arg, lower, until_nul, Command, Ctx};
use crate::engine::keyspace::Value;
use crate::engine::number;
use crate::engine::profile::Profile;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("setbit", setbit),
    Command::new("getbit", getbit),
    Command::new("bitcount", bitcount),
    Command::new("bitpos", bitpos),
    Command::new("bitop", bitop),
    Command::new("bitfield", bitfield),
    Command::new("bitfield_ro", bitfield_ro),
];

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const BAD_BIT: &str = "ERR bit is not an integer or out of range";
const BITPOS_BAD_BIT: &str = "ERR The bit argument must be 1 or 0.";
const BITOP_NOT_ONE_KEY: &str = "ERR BITOP NOT must be called with a single source key.";
const BAD_BITFIELD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
const BAD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";

/// Redis's default `proto-max-bulk-len` (512MB): a bit offset must address a byte below it.
const PROTO_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;

/// `getBitOffsetFromArgument`: a non-negative bit offset below 512MB*8; with `bits` (BITFIELD),
/// `#N` means the N-th field of that width.
fn bit_offset(arg: &[u8], bits: Option<u32>) -> Result<u64, Reply> {
    let hash = bits.filter(|_| arg.first() == Some(&b'#'));
    let digits = if hash.is_some() { &arg[1..] } else { arg };
    let mut offset = number::parse_i64(digits).ok_or_else(|| Reply::err(BAD_OFFSET))?;
    if let Some(bits) = hash {
        // C multiplies without an overflow check: a wrapped product is then refused below or not.
        offset = offset.wrapping_mul(bits as i64);
    }
    if offset < 0 || (offset >> 3) >= PROTO_MAX_BULK_LEN {
        return Err(Reply::err(BAD_OFFSET));
    }
    Ok(offset as u64)
}

/// The string at `key` for reading: `Ok(None)` when missing, WRONGTYPE for another type.
fn read_string<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Result<Option<&'a [u8]>, Reply> {
    match ctx.value(key) {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s)),
        Some(_) => Err(Reply::err(errors::WRONGTYPE)),
    }
}

/// `lookupStringForBitCommand`: the string at `key`, created or zero-padded so that bit `maxbit`
/// exists (the key keeps its TTL). The flag says whether it was created or grew.
fn string_for_bits<'a>(
    ctx: &'a mut Ctx,
    key: &[u8],
    maxbit: u64,
) -> Result<(&'a mut Vec<u8>, bool), Reply> {
    let needed = (maxbit >> 3) + 1;
    let current = match ctx.value(key) {
        None => None,
        Some(Value::Str(s)) => Some(s.len() as u64),
        Some(_) => return Err(Reply::err(errors::WRONGTYPE)),
    };
    let grown = needed.saturating_sub(current.unwrap_or(0));
    if grown > 0 {
        ctx.reserve(grown)?;
    }
    if current.is_none() {
        ctx.db().set(key.to_vec(), Value::Str(Vec::new()));
    }
    let Some(entry) = ctx.entry(key) else {
        unreachable!("the string was found or created above")
    };
    // A raw sds (sds.rs): created of exactly `needed` bytes, or unshared and grown.
    match current {
        None => entry.raw = Some(super::sds::exact(needed as usize)),
        Some(len) => super::sds::unshare_and_grow(entry, len as usize, needed.max(len) as usize),
    }
    let Value::Str(s) = &mut entry.value else {
        unreachable!("the string was found or created above")
    };
    if (s.len() as u64) < needed {
        s.resize(needed as usize, 0);
    }
    Ok((s, current.is_none() || grown > 0))
}

fn bit_at(s: &[u8], offset: u64) -> bool {
    let byte = (offset >> 3) as usize;
    byte < s.len() && s[byte] & (1 << (7 - (offset & 7))) != 0
}

fn setbit(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let offset = bit_offset(&args[2], None)?;
        let on = number::parse_i64(&args[3]).ok_or_else(|| Reply::err(BAD_BIT))?;
        if on & !1 != 0 {
            return Err(Reply::err(BAD_BIT));
        }
        let (s, _) = string_for_bits(ctx, &args[1], offset)?;
        let old = bit_at(s, offset);
        let byte = (offset >> 3) as usize;
        let mask = 1u8 << (7 - (offset & 7));
        if on == 1 {
            s[byte] |= mask;
        } else {
            s[byte] &= !mask;
        }
        Ok(Reply::Int(old as i64))
    })())
}

fn getbit(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let offset = bit_offset(&args[2], None)?;
        let s = read_string(ctx, &args[1])?.unwrap_or_default();
        Ok(Reply::Int(bit_at(s, offset) as i64))
    })())
}

/// A byte range resolved from BITCOUNT/BITPOS arguments: bytes `start..=end` of the string,
/// with the bits outside a BIT range masked off at both edges (Redis's "negative masks").
struct ByteRange {
    start: i64,
    end: i64,
    first_mask: u8,
    last_mask: u8,
}

/// Redis's range arithmetic shared by BITCOUNT and BITPOS: negative indexes from the end,
/// clamped to the string; in BIT units the edges become masks of the edge bytes.
fn resolve_range(len: i64, mut start: i64, mut end: i64, is_bit: bool) -> ByteRange {
    let total = if is_bit { len << 3 } else { len };
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    if is_bit && start <= end {
        first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
        last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    ByteRange {
        start,
        end,
        first_mask,
        last_mask,
    }
}

/// `BIT` or `BYTE` (any case, read up to a NUL); anything else is a syntax error.
fn unit_is_bit(arg: &[u8]) -> Result<bool, Reply> {
    match lower(arg).as_str() {
        "bit" => Ok(true),
        "byte" => Ok(false),
        _ => Err(Reply::err(errors::SYNTAX)),
    }
}

fn bitcount(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        // Redis 7.0 looks the key up before it parses the range: a missing key is 0 whatever
        // follows. Later servers parse first (start, end, unit).
        // Valkey 8.1 and later take `BITCOUNT key start` (to the end of the string).
        let end_optional = ctx.profile.bitcount_end_optional;
        // Valkey reads BIT|BYTE before the end: `BITCOUNT k 5 x y` is a syntax error there.
        let unit_before_end = ctx.profile.bitcount_unit_before_end;
        if ctx.profile.bit_range_before_lookup {
            match args.len() {
                2 => {}
                3..=5 if args.len() > 3 || end_optional => {
                    int_arg(&args[2])?;
                    let unit = args.get(4);
                    if let (true, Some(unit)) = (unit_before_end, unit) {
                        unit_is_bit(unit)?;
                    }
                    if let Some(end) = args.get(3) {
                        int_arg(end)?;
                    }
                    if let (false, Some(unit)) = (unit_before_end, unit) {
                        unit_is_bit(unit)?;
                    }
                }
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
        }
        let Some(s) = read_string(ctx, &args[1])? else {
            return Ok(Reply::Int(0));
        };
        let range = match args.len() {
            2 => resolve_range(s.len() as i64, 0, -1, false),
            3..=5 if args.len() > 3 || end_optional => {
                let start = int_arg(&args[2])?;
                let end = args.get(3).map_or(Ok(-1), |end| int_arg(end))?;
                if start < 0 && end < 0 && start > end {
                    return Ok(Reply::Int(0));
                }
                let is_bit = match args.get(4) {
                    Some(unit) => unit_is_bit(unit)?,
                    None => false,
                };
                resolve_range(s.len() as i64, start, end, is_bit)
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        };
        if range.start > range.end {
            return Ok(Reply::Int(0));
        }
        let (start, end) = (range.start as usize, range.end as usize);
        let mut count: i64 = s[start..=end].iter().map(|b| b.count_ones() as i64).sum();
        count -= (s[start] & range.first_mask).count_ones() as i64;
        count -= (s[end] & range.last_mask).count_ones() as i64;
        Ok(Reply::Int(count))
    })())
}

/// `redisBitpos`: the position of the first `bit` in `bytes`, reading zero bits past their end
/// up to a whole machine word; -1 when looking for a 1 and there is none.
fn first_bit(bytes: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0u8 } else { 0xff };
    match bytes.iter().position(|&b| b != skip) {
        Some(i) => {
            let b = bytes[i];
            let within = if bit {
                b.leading_zeros()
            } else {
                b.leading_ones()
            };
            (i as i64) * 8 + within as i64
        }
        // All ones while looking for a zero: the first bit after them (the padding).
        None if !bit => bytes.len() as i64 * 8,
        None => -1,
    }
}

fn bitpos(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let bit = int_arg(&args[2])?;
        if bit != 0 && bit != 1 {
            return Err(Reply::err(BITPOS_BAD_BIT));
        }
        let bit = bit == 1;
        // As BITCOUNT: later servers parse the range (start, unit, end) before the lookup.
        if ctx.profile.bit_range_before_lookup {
            match args.len() {
                3 => {}
                4..=6 => {
                    int_arg(&args[3])?;
                    if let Some(unit) = args.get(5) {
                        unit_is_bit(unit)?;
                    }
                    if let Some(end) = args.get(4) {
                        int_arg(end)?;
                    }
                }
                _ => return Err(Reply::err(errors::SYNTAX)),
            }
        }
        let Some(s) = read_string(ctx, &args[1])? else {
            return Ok(Reply::Int(if bit { -1 } else { 0 }));
        };
        let len = s.len() as i64;
        let mut end_given = false;
        let range = match args.len() {
            3 => resolve_range(len, 0, -1, false),
            4..=6 => {
                let start = int_arg(&args[3])?;
                let is_bit = match args.get(5) {
                    Some(unit) => unit_is_bit(unit)?,
                    None => false,
                };
                let end = match args.get(4) {
                    Some(end) => {
                        end_given = true;
                        int_arg(end)?
                    }
                    None => len - 1,
                };
                resolve_range(len, start, end, is_bit)
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        };
        if range.start > range.end {
            return Ok(Reply::Int(-1));
        }
        // The bytes of the range with the bits outside it forced to the value not looked for.
        let (start, end) = (range.start as usize, range.end as usize);
        let mut bytes = s[start..=end].to_vec();
        let hide = |b: &mut u8, mask: u8| {
            if bit {
                *b &= !mask
            } else {
                *b |= mask
            }
        };
        hide(&mut bytes[0], range.first_mask);
        let last = bytes.len() - 1;
        hide(&mut bytes[last], range.last_mask);
        let pos = first_bit(&bytes, bit);
        // With an explicit end, a zero found only past the range is not in it.
        if end_given && !bit && pos == bytes.len() as i64 * 8 {
            return Ok(Reply::Int(-1));
        }
        Ok(Reply::Int(if pos == -1 {
            -1
        } else {
            pos + (start as i64) * 8
        }))
    })())
}

#[derive(Clone, Copy, PartialEq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

fn bitop(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let op = match lower(&args[1]).as_str() {
            "and" => BitOp::And,
            "or" => BitOp::Or,
            "xor" => BitOp::Xor,
            "not" => BitOp::Not,
            _ => return Err(Reply::err(errors::SYNTAX)),
        };
        if op == BitOp::Not && args.len() != 4 {
            return Err(Reply::err(BITOP_NOT_ONE_KEY));
        }
        // Missing keys are empty strings; the first non-string source is the error.
        let mut sources: Vec<Vec<u8>> = Vec::with_capacity(args.len() - 3);
        for key in &args[3..] {
            sources.push(
                read_string(ctx, key)?
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default(),
            );
        }
        let maxlen = sources.iter().map(Vec::len).max().unwrap_or(0);
        let dest = args[2].clone();
        if maxlen == 0 {
            let now = ctx.now_ms;
            ctx.db().remove(&dest, now);
            return Ok(Reply::Int(0));
        }
        ctx.reserve(maxlen as u64)?;
        let byte = |src: &Vec<u8>, j: usize| src.get(j).copied().unwrap_or(0);
        let result: Vec<u8> = (0..maxlen)
            .map(|j| {
                let first = byte(&sources[0], j);
                let rest = sources[1..].iter().map(|src| byte(src, j));
                match op {
                    BitOp::And => rest.fold(first, |a, b| a & b),
                    BitOp::Or => rest.fold(first, |a, b| a | b),
                    BitOp::Xor => rest.fold(first, |a, b| a ^ b),
                    BitOp::Not => !first,
                }
            })
            .collect();
        // `setKey`: a new value without a TTL, whatever the destination held.
        ctx.db().set(dest.clone(), Value::Str(result));
        super::sds::created_raw(ctx, &dest, maxlen); // a raw object
        Ok(Reply::Int(maxlen as i64))
    })())
}

// ---- BITFIELD ----

#[derive(Clone, Copy, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

struct Field {
    op: FieldOp,
    offset: u64,
    bits: u32,
    signed: bool,
    overflow: Overflow,
}

/// `getBitfieldTypeFromArgument`: `i1`..`i64` or `u1`..`u63` (the width read up to a NUL,
/// or over the whole argument where the profile says so).
fn field_type(profile: &Profile, arg: &[u8]) -> Result<(bool, u32), Reply> {
    let arg = if profile.bitfield_type_whole_arg {
        arg
    } else {
        until_nul(arg)
    };
    let bad = || Reply::err(BAD_BITFIELD_TYPE);
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(bad()),
    };
    let bits = number::parse_i64(&arg[1..]).ok_or_else(bad)?;
    if bits < 1 || bits > if signed { 64 } else { 63 } {
        return Err(bad());
    }
    Ok((signed, bits as u32))
}

/// The unsigned value of `bits` bits at bit `offset`, zero past the end of `s`.
fn get_unsigned(s: &[u8], offset: u64, bits: u32) -> u64 {
    (0..bits as u64).fold(0u64, |v, j| (v << 1) | bit_at(s, offset + j) as u64)
}

fn get_signed(s: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(s, offset, bits);
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

/// Store the low `bits` bits of `value` at bit `offset` (the string is long enough).
fn set_bits(s: &mut [u8], offset: u64, bits: u32, value: u64) {
    for j in 0..bits as u64 {
        let on = value & (1u64 << (bits as u64 - 1 - j)) != 0;
        let at = offset + j;
        let (byte, mask) = ((at >> 3) as usize, 1u8 << (7 - (at & 7)));
        if on {
            s[byte] |= mask;
        } else {
            s[byte] &= !mask;
        }
    }
}

/// `checkUnsignedBitfieldOverflow`: `Some(result)` to store (wrapped or saturated), `None` when
/// the value fits; with FAIL an overflow is `Some(None)`.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<Option<u64>> {
    let max = (1u64 << bits) - 1;
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = (value as i64).wrapping_neg();
    let limit = |saturated: u64| match overflow {
        Overflow::Wrap => Some(value.wrapping_add(incr as u64) & !(u64::MAX << bits)),
        Overflow::Sat => Some(saturated),
        Overflow::Fail => None,
    };
    if value > max || (incr > 0 && incr > max_incr) {
        Some(limit(max))
    } else if incr < 0 && incr < min_incr {
        Some(limit(0))
    } else {
        None
    }
}

/// `checkSignedBitfieldOverflow`, same shape as `unsigned_overflow`.
fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<Option<i64>> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let limit = |saturated: i64| match overflow {
        Overflow::Wrap => {
            let mut c = (value as u64).wrapping_add(incr as u64);
            if bits < 64 {
                let mask = u64::MAX << bits;
                if c & (1u64 << (bits - 1)) != 0 {
                    c |= mask;
                } else {
                    c &= !mask;
                }
            }
            Some(c as i64)
        }
        Overflow::Sat => Some(saturated),
        Overflow::Fail => None,
    };
    if value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)
    {
        Some(limit(max))
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        Some(limit(min))
    } else {
        None
    }
}

/// Parse BITFIELD's operations in order; the first bad one is the error.
fn parse_fields(profile: &Profile, args: &[Vec<u8>]) -> Result<Vec<Field>, Reply> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let remaining = args.len() - j - 1;
        let op = match lower(&args[j]).as_str() {
            "get" if remaining >= 2 => FieldOp::Get,
            "set" if remaining >= 3 => FieldOp::Set(0),
            "incrby" if remaining >= 3 => FieldOp::IncrBy(0),
            "overflow" if remaining >= 1 => {
                overflow = match lower(&args[j + 1]).as_str() {
                    "wrap" => Overflow::Wrap,
                    "sat" => Overflow::Sat,
                    "fail" => Overflow::Fail,
                    _ => return Err(Reply::err(BAD_OVERFLOW)),
                };
                j += 2;
                continue;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        };
        let (signed, bits) = field_type(profile, &args[j + 1])?;
        let offset = bit_offset(&args[j + 2], Some(bits))?;
        let op = match op {
            FieldOp::Get => FieldOp::Get,
            FieldOp::Set(_) => FieldOp::Set(int_arg(&args[j + 3])?),
            FieldOp::IncrBy(_) => FieldOp::IncrBy(int_arg(&args[j + 3])?),
        };
        fields.push(Field {
            op,
            offset,
            bits,
            signed,
            overflow,
        });
        j += if op == FieldOp::Get { 3 } else { 4 };
    }
    Ok(fields)
}

/// Apply one SET or INCRBY to `s`: the reply (old value for SET, new for INCRBY, nil when FAIL
/// refused the overflow).
fn write_field(s: &mut [u8], f: &Field) -> Reply {
    let (value, incr, returns_new) = match f.op {
        FieldOp::Set(v) => (v, 0, false),
        FieldOp::IncrBy(by) => (0, by, true),
        FieldOp::Get => unreachable!("GET does not write"),
    };
    if f.signed {
        let old = get_signed(s, f.offset, f.bits);
        let (base, incr) = if returns_new { (old, incr) } else { (value, 0) };
        let new = match signed_overflow(base, incr, f.bits, f.overflow) {
            Some(Some(limited)) => limited,
            Some(None) => return Reply::Nil,
            None => base.wrapping_add(incr),
        };
        set_bits(s, f.offset, f.bits, new as u64);
        Reply::Int(if returns_new { new } else { old })
    } else {
        let old = get_unsigned(s, f.offset, f.bits);
        let (base, incr) = if returns_new {
            (old, incr)
        } else {
            (value as u64, 0)
        };
        let new = match unsigned_overflow(base, incr, f.bits, f.overflow) {
            Some(Some(limited)) => limited,
            Some(None) => return Reply::Nil,
            None => base.wrapping_add(incr as u64),
        };
        set_bits(s, f.offset, f.bits, new);
        Reply::Int(if returns_new { new as i64 } else { old as i64 })
    }
}

fn read_field(s: &[u8], f: &Field) -> Reply {
    Reply::Int(if f.signed {
        get_signed(s, f.offset, f.bits)
    } else {
        get_unsigned(s, f.offset, f.bits) as i64
    })
}

fn bitfield_generic(ctx: &mut Ctx, args: &[Vec<u8>], read_only_command: bool) -> Reply {
    flatten((|| {
        let fields = parse_fields(ctx.profile, args)?;
        let highest_write = fields
            .iter()
            .filter(|f| f.op != FieldOp::Get)
            .map(|f| f.offset + f.bits as u64 - 1)
            .max();
        let Some(highest_write) = highest_write else {
            let s = read_string(ctx, &args[1])?.unwrap_or_default();
            return Ok(Reply::Array(
                fields.iter().map(|f| read_field(s, f)).collect(),
            ));
        };
        if read_only_command {
            return Err(Reply::err(BITFIELD_RO_GET_ONLY));
        }
        let (s, _) = string_for_bits(ctx, &args[1], highest_write)?;
        Ok(Reply::Array(
            fields
                .iter()
                .map(|f| match f.op {
                    FieldOp::Get => read_field(s, f),
                    _ => write_field(s, f),
                })
                .collect(),
        ))
    })())
}

fn bitfield(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    bitfield_generic(ctx, args, false)
}

fn bitfield_ro(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    bitfield_generic(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bit_reads_padding_as_zeros() {
        assert_eq!(first_bit(&[0xff, 0xff], false), 16);
        assert_eq!(first_bit(&[0x00, 0x00], true), -1);
        assert_eq!(first_bit(&[0x00, 0x10], true), 11);
        assert_eq!(first_bit(&[0xff, 0xf7], false), 12);
    }

    #[test]
    fn signed_fields_round_trip() {
        let mut s = vec![0u8; 9];
        set_bits(&mut s, 3, 64, (-5i64) as u64);
        assert_eq!(get_signed(&s, 3, 64), -5);
        set_bits(&mut s, 7, 5, 23);
        assert_eq!(get_unsigned(&s, 7, 5), 23);
        assert_eq!(get_signed(&s, 7, 5), 23 - 32);
    }

    #[test]
    fn overflow_modes() {
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Wrap), Some(Some(4)));
        assert_eq!(
            unsigned_overflow(250, 10, 8, Overflow::Sat),
            Some(Some(255))
        );
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Sat), Some(Some(0)));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Fail), Some(None));
        assert_eq!(
            signed_overflow(120, 10, 8, Overflow::Wrap),
            Some(Some(-126))
        );
        assert_eq!(
            signed_overflow(-120, -10, 8, Overflow::Sat),
            Some(Some(-128))
        );
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(Some(i64::MIN))
        );
        assert_eq!(signed_overflow(1, 1, 64, Overflow::Fail), None);
    }
}
