//! Warnings drawn from a finished run: keys not declared in KEYS, keys in several hash slots
//! (CROSSSLOT on a cluster), writes followed by an error (no rollback), kills after a write.

use super::report::{Outcome, TraceEntry, Warning, WarningKind};
use std::collections::BTreeSet;

/// The cluster hash slot of a key (CRC16/XMODEM of the key or its `{hash tag}`, mod 16384).
pub fn hash_slot(key: &[u8]) -> u16 {
    let tagged = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            key[open + 1..]
                .iter()
                .position(|&b| b == b'}')
                .map(|len| &key[open + 1..open + 1 + len])
        })
        .filter(|tag| !tag.is_empty())
        .unwrap_or(key);
    crc16(tagged) % 16384
}

fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn show(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

/// Everything worth warning about in a run.
pub fn warnings(
    declared: &[Vec<u8>],
    trace: &[TraceEntry],
    outcome: Outcome,
    error_line: Option<u32>,
    first_write: bool,
) -> Vec<Warning> {
    // Nothing to look at: no traced call, at most one key, and no failure after a write.
    if trace.is_empty()
        && declared.len() <= 1
        && !(first_write && matches!(outcome, Outcome::Raised | Outcome::Killed))
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut reported = BTreeSet::new();
    for entry in trace {
        for key in &entry.keys {
            if !declared.contains(key) && reported.insert(key.clone()) {
                out.push(Warning {
                    kind: WarningKind::UndeclaredKey,
                    line: entry.line,
                    message: format!(
                        "key '{}' is accessed by {} but not declared in KEYS: a cluster cannot route it and Redis may reject it in the future",
                        show(key),
                        String::from_utf8_lossy(&entry.command[0]).to_uppercase()
                    ),
                });
            }
        }
    }
    // Cheap check first: most scripts declare one key (no slot to compute) or keys of one slot.
    let spread = declared.len() > 1 && {
        let first_slot = hash_slot(&declared[0]);
        declared.iter().skip(1).any(|k| hash_slot(k) != first_slot)
    };
    let slots: BTreeSet<u16> = if spread {
        declared.iter().map(|k| hash_slot(k)).collect()
    } else {
        BTreeSet::new()
    };
    if slots.len() > 1 {
        let listed: Vec<String> = declared
            .iter()
            .map(|k| format!("'{}' -> {}", show(k), hash_slot(k)))
            .collect();
        out.push(Warning {
            kind: WarningKind::CrossSlot,
            line: 0,
            message: format!(
                "KEYS hash to {} different slots ({}): a Redis Cluster answers CROSSSLOT; use a {{hash tag}} to keep them together",
                slots.len(),
                listed.join(", ")
            ),
        });
    }
    if first_write && matches!(outcome, Outcome::Raised) {
        let writes = trace
            .iter()
            .filter(|e| e.write && !e.reply.is_error())
            .count();
        out.push(Warning {
            kind: WarningKind::PartialWrite,
            line: error_line.unwrap_or(0),
            message: format!(
                "the script failed after {writes} write(s): Redis does not roll back, the writes before the error stay"
            ),
        });
    }
    if first_write && matches!(outcome, Outcome::Killed) {
        out.push(Warning {
            kind: WarningKind::Unkillable,
            line: error_line.unwrap_or(0),
            message: "the script wrote before it passed the busy threshold: on a real server SCRIPT KILL answers UNKILLABLE and only SHUTDOWN NOSAVE stops it".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slots_match_redis() {
        // CLUSTER KEYSLOT values from Redis.
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"bar"), 5061);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_eq!(hash_slot(b"foo{}{bar}"), hash_slot(b"foo{}{bar}"));
    }
}
