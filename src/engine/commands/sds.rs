//! The allocation of a raw string, as Redis 7.0's `sds.c` sizes it: commands that grow a
//! string in place (APPEND, SETRANGE, SETBIT, BITFIELD) make it `raw` and may leave spare room
//! (`sdsMakeRoomFor` doubles below 1 MB); OBJECT ENCODING says `raw` and MEMORY USAGE counts the
//! allocation. The entry carries it (`Entry::raw`); other writes replace the entry or clear it.

use super::memory::jemalloc_size;
use super::Ctx;
use crate::engine::keyspace::{Entry, RawSds};
use crate::engine::profile::Embed;

/// `SDS_MAX_PREALLOC`: growth doubles below it and adds it above.
const MAX_PREALLOC: usize = 1024 * 1024;

/// `sdsReqType` as header bytes: type 5 (1 byte, below 32), 8, 16, 32, 64. (Newer sources
/// move each bound down by the header's size, 252 and 65,529; Redis 8.0.2 and Valkey 8.1.1 still
/// measure as these: `tests/cases/sds_header_sizes.cases`.)
pub fn header(len: usize) -> usize {
    match len {
        0..=31 => 1,
        32..=255 => 3,
        256..=65_535 => 5,
        65_536..=0xffff_ffff => 9,
        _ => 17,
    }
}

/// The header `sdsnewlen` gives `len` bytes: `sdsReqType`'s, but an empty sds is made type 8.
pub fn new_header(len: usize) -> usize {
    if len == 0 {
        3
    } else {
        header(len)
    }
}

/// The largest `alloc` a header type can record (`sdsTypeMaxSize`).
fn type_max(header: usize) -> usize {
    match header {
        3 => 0xff,
        5 => 0xffff,
        9 => 0xffff_ffff,
        _ => usize::MAX,
    }
}

/// `sdsnewlen(len)`: exactly `len` bytes (an empty one is type 8; type 5 records no spare room).
pub fn exact(len: usize) -> RawSds {
    let header = new_header(len);
    let bytes = jemalloc_size(header + len + 1);
    let capacity = if header == 1 {
        len
    } else {
        (bytes - header - 1).min(type_max(header))
    };
    RawSds { bytes, capacity }
}

/// `sdsMakeRoomFor(s, new_len - len)` (greedy): unchanged while the room suffices.
pub fn make_room(sds: RawSds, new_len: usize) -> RawSds {
    if new_len <= sds.capacity {
        return sds;
    }
    let wanted = if new_len < MAX_PREALLOC {
        new_len * 2
    } else {
        new_len + MAX_PREALLOC
    };
    // Type 5 cannot record spare room: growth makes at least type 8.
    let header = header(wanted).max(3);
    let bytes = jemalloc_size(header + wanted + 1);
    RawSds {
        bytes,
        capacity: (bytes - header - 1).min(type_max(header)),
    }
}

/// `dbUnshareStringValue` then growth to `new_len` bytes: a string not yet raw is first copied
/// into an exact sds (`createRawStringObject`).
pub fn unshare_and_grow(entry: &mut Entry, len: usize, new_len: usize) {
    let sds = entry.raw.unwrap_or_else(|| exact(len));
    entry.raw = Some(make_room(sds, new_len.max(len)));
}

/// A string the command created as a raw object of exactly its bytes (BITOP, PFADD, SETRANGE
/// and SETBIT on a missing key).
pub fn created_raw(ctx: &mut Ctx, key: &[u8], len: usize) {
    if let Some(entry) = ctx.entry(key) {
        entry.raw = Some(exact(len));
    }
}

/// After growing the string at `key` from `len` to `new_len` bytes in place.
pub fn grew(ctx: &mut Ctx, key: &[u8], len: usize, new_len: usize) {
    if let Some(entry) = ctx.entry(key) {
        unshare_and_grow(entry, len, new_len);
    }
}

/// The sizes behind the profile's `Embed` rule, in sds headers.
impl Embed {
    /// Whether a value of `value_len` bytes at a key of `key_len` bytes is `embstr`; `expire_field`:
    /// the object carries an expire field.
    pub fn fits(self, key_len: usize, value_len: usize, expire_field: bool) -> bool {
        match self {
            Embed::UpTo(limit) => value_len <= limit,
            Embed::WithKey {
                limit,
                key_header_by_length,
                ..
            } => {
                let header = if key_header_by_length {
                    header(key_len)
                } else {
                    1
                };
                // sds type 8 holds 255 bytes at most.
                value_len <= 255 && self.size(header, key_len, value_len, expire_field) <= limit
            }
        }
    }

    /// The bytes an embedded object asks the allocator for (the key's sds header by its length).
    pub fn allocation(self, key_len: usize, value_len: usize, expire_field: bool) -> usize {
        self.size(header(key_len), key_len, value_len, expire_field)
    }

    /// The object, the key (header-size byte, header, bytes, terminator), the expire field and
    /// the value as sds type 8 (3-byte header, bytes, terminator).
    fn size(self, key_header: usize, key_len: usize, value_len: usize, expire: bool) -> usize {
        let object = match self {
            Embed::UpTo(_) => 16,
            Embed::WithKey { object, .. } => object,
        };
        object + 1 + key_header + key_len + 1 + if expire { 8 } else { 0 } + 3 + value_len + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_greedy_sizes() {
        // SETBIT k 7 1 on a missing key: one byte, type 5: 3 bytes -> 8.
        assert_eq!(
            exact(1),
            RawSds {
                bytes: 8,
                capacity: 1
            }
        );
        // 126 bytes, type 8: 130 -> 160 (156 usable).
        assert_eq!(exact(126).bytes, 160);
        // APPEND 'def' to an embstr 'abc': an exact copy (type 5), then 6 -> 12 wanted, type 8.
        let grown = make_room(exact(3), 6);
        assert_eq!(
            grown,
            RawSds {
                bytes: 16,
                capacity: 12
            }
        );
        // Room left: no reallocation.
        assert_eq!(make_room(grown, 12), grown);
    }
}
