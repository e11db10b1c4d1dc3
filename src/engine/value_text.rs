//! Readable forms of one value, for the workbench's value inspector and its viewers: JSON
//! pretty-printed (JSON held inside strings expanded too), a cmsgpack payload decoded as a
//! script's `cmsgpack.unpack` reads it, and a hex dump whose rows fit a given width, so no
//! viewer ever hides a byte.

use serde_json::{Map, Value as Json};

/// `bytes` parsed as JSON and pretty-printed, strings that hold JSON documents expanded in place.
/// The error says where the text stops being JSON.
pub fn pretty_json(bytes: &[u8]) -> Result<String, String> {
    let value: Json = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    Ok(pretty(&value))
}

/// `value` pretty-printed (two-space indent), JSON inside strings expanded.
pub fn pretty(value: &Json) -> String {
    let expanded = expand_strings(value.clone(), 0);
    serde_json::to_string_pretty(&expanded).unwrap_or_default()
}

/// Nested JSON documents deeper than this stay strings (a string of a string of… a document).
const EXPAND_DEPTH: usize = 8;

/// Strings holding a JSON object or array become that object or array (recursively).
fn expand_strings(value: Json, depth: usize) -> Json {
    match value {
        Json::String(s) if depth < EXPAND_DEPTH => match inner_document(&s) {
            Some(inner) => expand_strings(inner, depth + 1),
            None => Json::String(s),
        },
        Json::Array(items) => Json::Array(
            items
                .into_iter()
                .map(|v| expand_strings(v, depth))
                .collect(),
        ),
        Json::Object(map) => Json::Object(
            map.into_iter()
                .map(|(k, v)| (k, expand_strings(v, depth)))
                .collect(),
        ),
        other => other,
    }
}

/// A string that is a whole JSON object or array (a number or a word stays a string).
fn inner_document(s: &str) -> Option<Json> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<Json>(s)
        .ok()
        .filter(|v| v.is_object() || v.is_array())
}

/// Whether `bytes` is a JSON object or array (what the inspector opens pretty-printed).
pub fn is_json_document(bytes: &[u8]) -> bool {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    matches!(first, Some(b'{') | Some(b'['))
        && serde_json::from_slice::<Json>(bytes).is_ok_and(|v| v.is_object() || v.is_array())
}

/// The objects of a cmsgpack payload (as `cmsgpack.pack` writes it) as JSON: one value, or an
/// array of them when the payload holds several (`cmsgpack.pack(a, b)`). Binary strings that are
/// not UTF-8 show their bytes escaped (`\xff`); map keys that are not strings show as text.
pub fn msgpack_to_json(bytes: &[u8]) -> Result<Json, String> {
    if bytes.is_empty() {
        return Err("not msgpack: the value is empty".into());
    }
    let mut reader = Reader { bytes, at: 0 };
    let mut values = Vec::new();
    while reader.at < bytes.len() {
        values.push(reader.value(0)?);
    }
    // Every ASCII byte is a msgpack integer by itself: text is not read as a row of them.
    let text = bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r'));
    if text && values.len() > 1 {
        return Err(format!(
            "not msgpack: plain text (cmsgpack.unpack would read its {} bytes as {} small integers)",
            bytes.len(),
            values.len()
        ));
    }
    Ok(if values.len() == 1 {
        values.pop().unwrap_or(Json::Null)
    } else {
        Json::Array(values)
    })
}

/// Deeper than this a payload is refused (a crafted value must not exhaust the stack).
const MSGPACK_DEPTH: usize = 256;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "not msgpack: {n} more bytes expected at byte {} of {}",
                self.at,
                self.bytes.len()
            ));
        };
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn int(&mut self, n: usize) -> Result<i64, String> {
        let u = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok(((u << shift) as i64) >> shift)
    }

    fn text(&mut self, n: usize) -> Result<Json, String> {
        let raw = self.take(n)?;
        Ok(Json::String(match std::str::from_utf8(raw) {
            Ok(s) => s.to_string(),
            Err(_) => crate::engine::reply::quote_bytes(raw)
                .trim_matches('"')
                .to_string(),
        }))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Json, String> {
        // Never reserve more than the bytes left could hold (one byte per element at least).
        let mut items = Vec::with_capacity(n.min(self.bytes.len() - self.at));
        for _ in 0..n {
            items.push(self.value(depth + 1)?);
        }
        Ok(Json::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Json, String> {
        let mut map = Map::new();
        for _ in 0..n {
            let key = match self.value(depth + 1)? {
                Json::String(s) => s,
                other => other.to_string(),
            };
            let value = self.value(depth + 1)?;
            map.insert(key, value);
        }
        Ok(Json::Object(map))
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MSGPACK_DEPTH {
            return Err(format!("not msgpack: nested deeper than {MSGPACK_DEPTH}"));
        }
        let at = self.at;
        let tag = self.take(1)?[0];
        let number = |n: f64| serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number);
        Ok(match tag {
            0x00..=0x7f => Json::from(tag),
            0x80..=0x8f => self.map(usize::from(tag & 0x0f), depth)?,
            0x90..=0x9f => self.array(usize::from(tag & 0x0f), depth)?,
            0xa0..=0xbf => self.text(usize::from(tag & 0x1f))?,
            0xc0 => Json::Null,
            0xc2 => Json::Bool(false),
            0xc3 => Json::Bool(true),
            0xc4 | 0xd9 => {
                let n = self.uint(1)? as usize;
                self.text(n)?
            }
            0xc5 | 0xda => {
                let n = self.uint(2)? as usize;
                self.text(n)?
            }
            0xc6 | 0xdb => {
                let n = self.uint(4)? as usize;
                self.text(n)?
            }
            0xca => number(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => number(f64::from_bits(self.uint(8)?)),
            0xcc => Json::from(self.uint(1)?),
            0xcd => Json::from(self.uint(2)?),
            0xce => Json::from(self.uint(4)?),
            0xcf => Json::from(self.uint(8)?),
            0xd0 => Json::from(self.int(1)?),
            0xd1 => Json::from(self.int(2)?),
            0xd2 => Json::from(self.int(4)?),
            0xd3 => Json::from(self.int(8)?),
            0xdc => {
                let n = self.uint(2)? as usize;
                self.array(n, depth)?
            }
            0xdd => {
                let n = self.uint(4)? as usize;
                self.array(n, depth)?
            }
            0xde => {
                let n = self.uint(2)? as usize;
                self.map(n, depth)?
            }
            0xdf => {
                let n = self.uint(4)? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Json::from(i64::from(tag as i8)),
            other => {
                return Err(format!(
                    "not msgpack: byte 0x{other:02x} at {at} starts no value cmsgpack writes"
                ))
            }
        })
    }
}

/// How many bytes a hex row of `width` columns shows: `offset  hex…  text`, 8 + 2 + 3n + 1 + n
/// columns, a multiple of 4 bytes from 8 on, at least 1.
pub fn hex_bytes_per_row(width: usize) -> usize {
    let n = width.saturating_sub(11) / 4;
    match n {
        0 => 1,
        n if n >= 8 => n - n % 4,
        n => n,
    }
}

/// A hex dump of `bytes` in rows of `width` columns: `00000010  61 62 …  ab..`, printable ASCII
/// on the right, `.` for the rest. Every byte is on some row.
pub fn hex_rows(bytes: &[u8], width: usize) -> Vec<String> {
    let per_row = hex_bytes_per_row(width);
    bytes
        .chunks(per_row)
        .enumerate()
        .map(|(i, chunk)| {
            let mut row = format!("{:08x}  ", i * per_row);
            for b in chunk {
                row.push_str(&format!("{b:02x} "));
            }
            for _ in chunk.len()..per_row {
                row.push_str("   ");
            }
            row.push(' ');
            row.extend(chunk.iter().map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            }));
            row
        })
        .collect()
}

/// A duration in microseconds as people read it: `850 µs`, `12.3 ms`, `5.02 s`, `8m 15s`.
pub fn micros_text(us: i64) -> String {
    let us = us.max(0);
    match us {
        0..=999 => format!("{us} µs"),
        1_000..=999_999 => {
            let text = format!("{:.1}", us as f64 / 1e3);
            format!("{} ms", text.trim_end_matches(".0"))
        }
        1_000_000..=59_999_999 => format!("{:.2} s", us as f64 / 1e6),
        _ => seconds_text(us / 1_000_000),
    }
}

/// Whole seconds as `495` → `8m 15s`, `7380` → `2h 3m`, `97200` → `1d 3h` (two units at most).
pub fn seconds_text(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Reply, RunRequest, Sandbox};

    #[test]
    fn json_inside_a_string_is_expanded() {
        let text = br#"{"user":"{\"id\":7,\"tags\":[\"a\"]}","n":"12"}"#;
        assert_eq!(
            pretty_json(text).unwrap(),
            "{\n  \"user\": {\n    \"id\": 7,\n    \"tags\": [\n      \"a\"\n    ]\n  },\n  \"n\": \"12\"\n}"
        );
        assert_eq!(
            pretty_json(b"{\"a\":").unwrap_err(),
            "not JSON: EOF while parsing a value at line 1 column 5"
        );
        assert!(is_json_document(b" [1,2]"));
        assert!(!is_json_document(b"12"));
    }

    #[test]
    fn what_the_engines_cmsgpack_packs_decodes() {
        let mut sandbox = Sandbox::new();
        let report = sandbox.run(&RunRequest::new(
            "return cmsgpack.pack({name='ann', n=-3, big=70000, f=1.5, list={1,2,'x'}, ok=true}, 'two')",
        ));
        let Reply::Bulk(packed) = report.reply else {
            panic!("{:?}", report.reply)
        };
        let json = msgpack_to_json(&packed).unwrap();
        let first = &json[0];
        assert_eq!(first["name"], "ann");
        assert_eq!(first["n"], -3);
        assert_eq!(first["big"], 70000);
        assert_eq!(first["f"], 1.5);
        assert_eq!(first["list"], serde_json::json!([1, 2, "x"]));
        assert_eq!(first["ok"], true);
        assert_eq!(json[1], "two");
        assert_eq!(
            msgpack_to_json(&packed[..packed.len() - 2]).unwrap_err(),
            format!(
                "not msgpack: 3 more bytes expected at byte {} of {}",
                packed.len() - 3,
                packed.len() - 2
            )
        );
        assert_eq!(
            msgpack_to_json(b"\xc1").unwrap_err(),
            "not msgpack: byte 0xc1 at 0 starts no value cmsgpack writes"
        );
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(micros_text(850), "850 µs");
        assert_eq!(micros_text(12_300), "12.3 ms");
        assert_eq!(micros_text(1_000), "1 ms");
        assert_eq!(micros_text(5_017_984), "5.02 s");
        assert_eq!(micros_text(495_000_000), "8m 15s");
        assert_eq!(seconds_text(495), "8m 15s");
        assert_eq!(seconds_text(12), "12s");
        assert_eq!(seconds_text(7_380), "2h 3m");
        assert_eq!(seconds_text(97_200), "1d 3h");
    }

    #[test]
    fn hex_rows_fit_their_width_and_show_every_byte() {
        let bytes: Vec<u8> = (0..=99).collect();
        for width in [20, 40, 42, 80, 117] {
            let rows = hex_rows(&bytes, width);
            assert!(rows.iter().all(|r| r.chars().count() <= width), "{width}");
            let shown: usize = rows
                .iter()
                .map(|r| {
                    r[10..]
                        .split("  ")
                        .next()
                        .unwrap()
                        .split_whitespace()
                        .count()
                })
                .sum();
            assert_eq!(shown, 100, "{width}");
        }
        assert_eq!(hex_bytes_per_row(42), 7);
        assert_eq!(hex_bytes_per_row(80), 16);
        assert_eq!(
            hex_rows(b"ab\x00cdefgh", 27),
            [
                "00000000  61 62 00 63  ab.c",
                "00000004  64 65 66 67  defg",
                "00000008  68           h"
            ]
        );
    }
}
