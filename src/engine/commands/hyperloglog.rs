//! HyperLogLog (`src/hyperloglog.c` of Redis 7.0.15): PFADD PFCOUNT PFMERGE on strings holding
//! Redis's exact representation, so GET of the key gives the same bytes as Redis: a 16-byte header
//! (`HYLL`, encoding, 3 unused bytes, the cached cardinality, little-endian, its top bit set when
//! stale), then 16384 6-bit registers, sparse (ZERO/XZERO/VAL opcodes) until an opcode would make
//! the string longer than `hll-sparse-max-bytes` (3000) or a register exceeds 32, then dense.

use super::{errors, flatten, sds, Command, Ctx};
use crate::engine::keyspace::{RawSds, Value};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("pfadd", pfadd),
    Command::new("pfcount", pfcount),
    Command::new("pfmerge", pfmerge),
    Command::new("pfdebug", pfdebug),
];

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPTED: &str = "INVALIDOBJ Corrupted HLL object detected";

const P: u32 = 14;
const Q: u32 = 64 - P;
const REGISTERS: usize = 1 << P;
const HEADER: usize = 16;
const DENSE_SIZE: usize = HEADER + (REGISTERS * 6).div_ceil(8);
const ENCODING_DENSE: u8 = 0;
const ENCODING_SPARSE: u8 = 1;
/// Redis's default `hll-sparse-max-bytes`.
const SPARSE_MAX_BYTES: usize = 3000;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// MurmurHash2, 64-bit (`MurmurHash64A`), reading 8-byte blocks little-endian as Redis does.
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// `hllPatLen`: the register an element hashes to and the length of its `000..1` run.
fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

fn dense_get(registers: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let b0 = registers[byte] as u16;
    let b1 = registers.get(byte + 1).copied().unwrap_or(0) as u16;
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

fn dense_set(registers: &mut [u8], i: usize, value: u8) {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let v = value as u16;
    registers[byte] &= !((63u16 << fb) as u8);
    registers[byte] |= (v << fb) as u8;
    if let Some(next) = registers.get_mut(byte + 1) {
        *next &= !((63u16 >> (8 - fb)) as u8);
        *next |= (v >> (8 - fb)) as u8;
    }
}

/// One sparse opcode: a run of `len` registers holding `value` (0 for ZERO and XZERO), and its
/// size in bytes.
fn sparse_op(s: &[u8], at: usize) -> (usize, u8, usize) {
    let b = s[at];
    if b & 0xc0 == 0 {
        ((b & 0x3f) as usize + 1, 0, 1)
    } else if b & 0xc0 == 0x40 {
        let low = s.get(at + 1).copied().unwrap_or(0) as usize;
        (((((b & 0x3f) as usize) << 8) | low) + 1, 0, 2)
    } else {
        ((b & 3) as usize + 1, ((b >> 2) & 0x1f) + 1, 1)
    }
}

fn val_op(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}

fn push_zeros(out: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        let l = len - 1;
        out.push(0x40 | (l >> 8) as u8);
        out.push((l & 0xff) as u8);
    } else {
        out.push(len as u8 - 1);
    }
}

/// The registers of a sparse or dense HLL, or `None` when the sparse runs do not cover exactly
/// 16384 registers.
fn registers_of(s: &[u8]) -> Option<Vec<u8>> {
    if s[4] == ENCODING_DENSE {
        return Some((0..REGISTERS).map(|i| dense_get(&s[HEADER..], i)).collect());
    }
    let mut out = Vec::with_capacity(REGISTERS);
    let mut at = HEADER;
    while at < s.len() {
        let (len, value, size) = sparse_op(s, at);
        if value > 0 && out.len() + len > REGISTERS {
            return None;
        }
        out.extend(std::iter::repeat_n(value, len));
        at += size;
    }
    (out.len() == REGISTERS).then_some(out)
}

/// A new, empty HLL: sparse, all registers in XZERO runs, cardinality 0 cached.
fn new_hll() -> Vec<u8> {
    let mut s = b"HYLL".to_vec();
    s.extend([ENCODING_SPARSE, 0, 0, 0]);
    s.extend([0u8; 8]);
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        push_zeros(&mut s, run);
        left -= run;
    }
    s
}

/// Rewrite a sparse HLL as dense (`hllSparseToDense`); the header is kept.
fn to_dense(s: &mut Vec<u8>) -> Result<(), ()> {
    if s[4] == ENCODING_DENSE {
        return Ok(());
    }
    let registers = registers_of(s).ok_or(())?;
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HEADER].copy_from_slice(&s[..HEADER]);
    dense[4] = ENCODING_DENSE;
    for (i, &v) in registers.iter().enumerate() {
        if v > 0 {
            dense_set(&mut dense[HEADER..], i, v);
        }
    }
    *s = dense;
    Ok(())
}

fn invalidate_cache(s: &mut [u8]) {
    s[15] |= 0x80;
}

/// Raise register `index` to `count` (`hllSparseSet` / `hllDenseSet`): Ok(true) when it grew.
fn set_register(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, ()> {
    if s[4] == ENCODING_DENSE {
        if count > dense_get(&s[HEADER..], index) {
            dense_set(&mut s[HEADER..], index, count);
            return Ok(true);
        }
        return Ok(false);
    }
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    // Find the opcode covering `index`.
    let (mut at, mut first, mut prev) = (HEADER, 0usize, None);
    let mut span = 0;
    while at < s.len() {
        let (len, _, size) = sparse_op(s, at);
        span = len;
        if index < first + len {
            break;
        }
        prev = Some(at);
        at += size;
        first += len;
    }
    if span == 0 || at >= s.len() {
        return Err(());
    }
    let (runlen, value, oplen) = sparse_op(s, at);
    let is_val = value > 0;
    if is_val && value >= count {
        return Ok(false);
    }
    if runlen == 1 && (is_val || oplen == 1) {
        // A single register: set it in place.
        s[at] = val_op(count, 1);
    } else {
        let last = first + runlen - 1;
        let mut seq = Vec::with_capacity(5);
        if is_val {
            if index != first {
                seq.push(val_op(value, index - first));
            }
            seq.push(val_op(count, 1));
            if index != last {
                seq.push(val_op(value, last - index));
            }
        } else {
            if index != first {
                push_zeros(&mut seq, index - first);
            }
            seq.push(val_op(count, 1));
            if index != last {
                push_zeros(&mut seq, last - index);
            }
        }
        if seq.len() > oplen && s.len() + seq.len() - oplen > SPARSE_MAX_BYTES {
            return promote(s, index, count);
        }
        s.splice(at..at + oplen, seq);
    }
    // Merge adjacent VAL opcodes of the same value, scanning up to 5 opcodes from `prev`.
    let mut p = prev.unwrap_or(HEADER);
    let mut scan = 5;
    while p < s.len() && scan > 0 {
        scan -= 1;
        let (len, value, size) = sparse_op(s, p);
        if value == 0 {
            p += size;
            continue;
        }
        if p + 1 < s.len() && s[p + 1] & 0x80 != 0 {
            let (len2, value2, _) = sparse_op(s, p + 1);
            if value == value2 && len + len2 <= VAL_MAX_LEN {
                s[p + 1] = val_op(value, len + len2);
                s.remove(p);
                continue;
            }
        }
        p += 1;
    }
    invalidate_cache(s);
    Ok(true)
}

fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, ()> {
    to_dense(s)?;
    dense_set(&mut s[HEADER..], index, count);
    Ok(true)
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// `hllCount`: Ertl's improved estimator over the register histogram.
fn estimate(registers: &[u8]) -> u64 {
    let m = REGISTERS as f64;
    let mut histogram = [0u32; 64];
    for &r in registers {
        histogram[r as usize] += 1;
    }
    let mut z = m * tau((m - histogram[Q as usize + 1] as f64) / m);
    for j in (1..=Q as usize).rev() {
        z += histogram[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histogram[0] as f64 / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// `isHLLObjectOrReply`: the string must carry the magic, a known encoding and, dense, its size.
fn check_hll(value: &Value) -> Result<&Vec<u8>, Reply> {
    let Value::Str(s) = value else {
        return Err(Reply::err(errors::WRONGTYPE));
    };
    let valid = s.len() >= HEADER
        && &s[..4] == b"HYLL"
        && s[4] <= ENCODING_SPARSE
        && (s[4] != ENCODING_DENSE || s.len() == DENSE_SIZE);
    if valid {
        Ok(s)
    } else {
        Err(Reply::err(NOT_HLL))
    }
}

/// The allocation of an HLL string as Redis grows it (sds.rs): `dbUnshareStringValue`
/// makes it raw; each sparse update first makes room for 3 more bytes (`hllSparseSet`), and the
/// dense form is a new sds of exactly its size.
struct Sds {
    raw: RawSds,
}

impl Sds {
    fn unshare(raw: Option<RawSds>, s: &[u8]) -> Sds {
        Sds {
            raw: raw.unwrap_or_else(|| sds::exact(s.len())),
        }
    }

    fn set_register(&mut self, s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, ()> {
        let sparse = s[4] == ENCODING_SPARSE;
        if sparse && count <= VAL_MAX_VALUE {
            self.raw = sds::make_room(self.raw, s.len() + 3);
        }
        let result = set_register(s, index, count);
        if sparse && s[4] == ENCODING_DENSE {
            self.raw = sds::exact(s.len());
        }
        result
    }
}

fn pfadd(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let key = &args[1];
        let mut updated = false;
        match ctx.value(key) {
            None => {
                ctx.reserve(DENSE_SIZE as u64)?;
                ctx.db().set(key.clone(), Value::Str(new_hll()));
                updated = true;
            }
            Some(v) => {
                check_hll(v)?;
            }
        }
        let Some(entry) = ctx.entry(key) else {
            unreachable!("checked or created above")
        };
        let Value::Str(s) = &mut entry.value else {
            unreachable!("checked or created above")
        };
        let mut sds = Sds::unshare(entry.raw, s);
        for element in &args[2..] {
            let (index, count) = pattern(element);
            let result = sds.set_register(s, index, count);
            entry.raw = Some(sds.raw);
            match result {
                Ok(grew) => updated |= grew,
                Err(()) => return Err(Reply::err(CORRUPTED)),
            }
        }
        if updated {
            invalidate_cache(s);
        }
        Ok(Reply::Int(updated as i64))
    })())
}

fn pfcount(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        if args.len() > 2 {
            // Several keys: the union's estimate, nothing cached.
            let mut max = vec![0u8; REGISTERS];
            for key in &args[1..] {
                let Some(v) = ctx.value(key) else { continue };
                let s = check_hll(v)?;
                let registers = registers_of(s).ok_or_else(|| Reply::err(CORRUPTED))?;
                for (m, r) in max.iter_mut().zip(registers) {
                    *m = (*m).max(r);
                }
            }
            return Ok(Reply::Int(estimate(&max) as i64));
        }
        let Some(entry) = ctx.entry(&args[1]) else {
            return Ok(Reply::Int(0));
        };
        check_hll(&entry.value)?;
        // `dbUnshareStringValue`: PFCOUNT may write the cache, so the string becomes raw.
        let Value::Str(s) = &mut entry.value else {
            unreachable!("checked above")
        };
        entry.raw = Some(Sds::unshare(entry.raw, s).raw);
        if s[15] & 0x80 == 0 {
            return Ok(Reply::Int(
                u64::from_le_bytes(s[8..16].try_into().expect("8 bytes")) as i64,
            ));
        }
        let registers = registers_of(s).ok_or_else(|| Reply::err(CORRUPTED))?;
        let card = estimate(&registers);
        // PFCOUNT stores what it computed in the header: the key's bytes change.
        s[8..16].copy_from_slice(&card.to_le_bytes());
        Ok(Reply::Int(card as i64))
    })())
}

fn pfmerge(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let mut max = vec![0u8; REGISTERS];
        let mut use_dense = false;
        for key in &args[1..] {
            let Some(v) = ctx.value(key) else { continue };
            let s = check_hll(v)?;
            use_dense |= s[4] == ENCODING_DENSE;
            let registers = registers_of(s).ok_or_else(|| Reply::err(CORRUPTED))?;
            for (m, r) in max.iter_mut().zip(registers) {
                *m = (*m).max(r);
            }
        }
        let dest = &args[1];
        if ctx.value(dest).is_none() {
            ctx.reserve(DENSE_SIZE as u64)?;
            ctx.db().set(dest.clone(), Value::Str(new_hll()));
        }
        let Some(entry) = ctx.entry(dest) else {
            unreachable!("checked or created above")
        };
        let Value::Str(s) = &mut entry.value else {
            unreachable!("checked or created above")
        };
        let mut sds = Sds::unshare(entry.raw, s);
        if use_dense && s[4] == ENCODING_SPARSE {
            // `hllSparseToDense`: a new sds of the dense size.
            let dense = to_dense(s);
            sds.raw = sds::exact(s.len());
            entry.raw = Some(sds.raw);
            if dense.is_err() {
                return Err(Reply::err(CORRUPTED));
            }
        }
        for (index, &count) in max.iter().enumerate() {
            if count > 0 {
                // A sparse destination was checked whole above, so this cannot fail.
                let _ = sds.set_register(s, index, count);
            }
        }
        entry.raw = Some(sds.raw);
        invalidate_cache(s);
        Ok(Reply::ok())
    })())
}

/// `PFDEBUG GETREG|DECODE|ENCODING|TODENSE key` (`pfdebugCommand`): the registers, the sparse
/// opcodes as text, the encoding, or a conversion to dense. GETREG converts too.
fn pfdebug(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten((|| {
        let sub = String::from_utf8_lossy(super::until_nul(&args[1])).into_owned();
        let Some(entry) = ctx.entry(&args[2]) else {
            return Err(Reply::err("ERR The specified key does not exist"));
        };
        check_hll(&entry.value)?;
        let Value::Str(s) = &mut entry.value else {
            unreachable!("checked above")
        };
        // `dbUnshareStringValue` (sds.rs).
        let mut sds = Sds::unshare(entry.raw, s);
        entry.raw = Some(sds.raw);
        if args.len() != 3 {
            return Err(Reply::err(format!(
                "ERR Wrong number of arguments for the '{sub}' subcommand"
            )));
        }
        let mut densify = |s: &mut Vec<u8>| -> Result<bool, Reply> {
            if s[4] != ENCODING_SPARSE {
                return Ok(false);
            }
            to_dense(s).map_err(|()| Reply::err(NOT_HLL))?;
            sds.raw = sds::exact(s.len());
            Ok(true)
        };
        let reply = match sub.to_ascii_lowercase().as_str() {
            "getreg" => {
                densify(s)?;
                let registers = registers_of(s).ok_or_else(|| Reply::err(NOT_HLL))?;
                Reply::Array(
                    registers
                        .into_iter()
                        .map(|r| Reply::Int(r as i64))
                        .collect(),
                )
            }
            "decode" => {
                if s[4] != ENCODING_SPARSE {
                    return Err(Reply::err("ERR HLL encoding is not sparse"));
                }
                let mut ops = Vec::new();
                let mut at = HEADER;
                while at < s.len() {
                    let (len, value, size) = sparse_op(s, at);
                    ops.push(match (value, size) {
                        (0, 1) => format!("z:{len}"),
                        (0, _) => format!("Z:{len}"),
                        _ => format!("v:{value},{len}"),
                    });
                    at += size;
                }
                Reply::bulk(ops.join(" "))
            }
            "encoding" => Reply::Status(
                if s[4] == ENCODING_DENSE {
                    "dense"
                } else {
                    "sparse"
                }
                .into(),
            ),
            "todense" => Reply::Int(densify(s)? as i64),
            _ => {
                return Err(Reply::err(format!(
                    "ERR Unknown PFDEBUG subcommand '{sub}'"
                )))
            }
        };
        entry.raw = Some(sds.raw);
        Ok(reply)
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_redis() {
        // PFADD then PFDEBUG DECODE on Redis 7.0.15: "a" is Z:12711 v:2,1, "hello" Z:9216 v:1,1.
        assert_eq!(pattern(b"a"), (12711, 2));
        assert_eq!(pattern(b"hello"), (9216, 1));
        assert_eq!(new_hll().len(), HEADER + 2);
    }

    #[test]
    fn dense_registers_round_trip() {
        let mut r = vec![0u8; DENSE_SIZE - HEADER];
        for i in [0, 1, 2, 3, 16382, 16383] {
            dense_set(&mut r, i, (i % 63) as u8 + 1);
        }
        for i in [0, 1, 2, 3, 16382, 16383] {
            assert_eq!(dense_get(&r, i), (i % 63) as u8 + 1);
        }
    }
}
