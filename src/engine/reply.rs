//! The typed reply: every RESP2 and RESP3 kind, how a RESP2 client sees a RESP3 reply,
//! the raw RESP bytes, the redis-cli rendering and the JSON form of `evalbench run --json`.

use base64::Engine as _;
use serde_json::{json, Value as Json};

/// A reply as a command produces it (rich: RESP3 kinds allowed) or as a client receives it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+text`
    Status(String),
    /// `-CODE text` (the full text, code included)
    Error(String),
    /// `:n`
    Int(i64),
    /// `$n` bulk string, binary safe
    Bulk(Vec<u8>),
    /// RESP2 null bulk `$-1` / RESP3 null `_`
    Nil,
    /// RESP2 null array `*-1` / RESP3 null `_`
    NilArray,
    /// `*n`
    Array(Vec<Reply>),
    /// RESP3 `,d` (RESP2: bulk string `%.17g`)
    Double(f64),
    /// RESP3 `#t`/`#f` (RESP2: `:1`/`:0`)
    Bool(bool),
    /// RESP3 `%n` (RESP2: flat array k1 v1 k2 v2 ...)
    Map(Vec<(Reply, Reply)>),
    /// RESP3 `~n` (RESP2: array)
    Set(Vec<Reply>),
    /// RESP3 `(digits` (RESP2: bulk string)
    BigNumber(String),
    /// RESP3 `=len fmt:text` (RESP2: bulk string of text)
    Verbatim { format: String, text: Vec<u8> },
}

/// The client protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

impl Protocol {
    pub fn from_number(n: u8) -> Option<Protocol> {
        match n {
            2 => Some(Protocol::Resp2),
            3 => Some(Protocol::Resp3),
            _ => None,
        }
    }
    pub fn number(self) -> u8 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Status("OK".into())
    }
    pub fn err(text: impl Into<String>) -> Reply {
        Reply::Error(text.into())
    }
    pub fn bulk(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply::Bulk(bytes.into())
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
    /// An array of bulk strings.
    pub fn bulks<I, B>(items: I) -> Reply
    where
        I: IntoIterator<Item = B>,
        B: Into<Vec<u8>>,
    {
        Reply::Array(items.into_iter().map(|b| Reply::Bulk(b.into())).collect())
    }

    /// What a client speaking `protocol` receives for this reply.
    pub fn for_protocol(&self, protocol: Protocol) -> Reply {
        match protocol {
            Protocol::Resp3 => self.clone(),
            Protocol::Resp2 => self.to_resp2(),
        }
    }

    /// Downgrade RESP3 kinds the way Redis writes them to a RESP2 connection.
    pub fn to_resp2(&self) -> Reply {
        self.to_resp2_with(&format_double_resp2)
    }

    /// `to_resp2` with a server's own text for doubles (engine/profile.rs: `double_text`).
    pub fn to_resp2_with(&self, double: &dyn Fn(f64) -> String) -> Reply {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.to_resp2_inner(double))
    }

    fn to_resp2_inner(&self, double: &dyn Fn(f64) -> String) -> Reply {
        match self {
            Reply::Double(d) => Reply::Bulk(double(*d).into_bytes()),
            Reply::Bool(b) => Reply::Int(*b as i64),
            Reply::Map(pairs) => Reply::Array(
                pairs
                    .iter()
                    .flat_map(|(k, v)| [k.to_resp2_with(double), v.to_resp2_with(double)])
                    .collect(),
            ),
            Reply::Set(items) | Reply::Array(items) => {
                Reply::Array(items.iter().map(|i| i.to_resp2_with(double)).collect())
            }
            Reply::BigNumber(n) => Reply::Bulk(n.clone().into_bytes()),
            Reply::Verbatim { text, .. } => Reply::Bulk(text.clone()),
            other => other.clone(),
        }
    }

    /// The raw bytes on the wire.
    pub fn to_resp(&self, protocol: Protocol) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_resp(protocol, &mut out);
        out
    }

    fn write_resp(&self, protocol: Protocol, out: &mut Vec<u8>) {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || {
            self.write_resp_inner(protocol, out)
        })
    }

    fn write_resp_inner(&self, protocol: Protocol, out: &mut Vec<u8>) {
        let resp3 = protocol == Protocol::Resp3;
        match self {
            Reply::Status(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Int(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
            Reply::Bulk(b) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Nil if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::NilArray if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
            Reply::Array(items) => {
                out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
                for item in items {
                    item.write_resp(protocol, out);
                }
            }
            _ if !resp3 => self.to_resp2().write_resp(protocol, out),
            Reply::Double(d) => {
                out.extend_from_slice(format!(",{}\r\n", format_double_resp2(*d)).as_bytes())
            }
            Reply::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            Reply::Map(pairs) => {
                out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
                for (k, v) in pairs {
                    k.write_resp(protocol, out);
                    v.write_resp(protocol, out);
                }
            }
            Reply::Set(items) => {
                out.extend_from_slice(format!("~{}\r\n", items.len()).as_bytes());
                for item in items {
                    item.write_resp(protocol, out);
                }
            }
            Reply::BigNumber(n) => out.extend_from_slice(format!("({n}\r\n").as_bytes()),
            Reply::Verbatim { format, text } => {
                out.extend_from_slice(format!("={}\r\n{}:", text.len() + 4, format).as_bytes());
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// The typed JSON of `evalbench run --json` (see README).
    pub fn to_json(&self) -> Json {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.to_json_inner())
    }

    fn to_json_inner(&self) -> Json {
        match self {
            Reply::Status(s) => json!({ "status": s }),
            Reply::Error(s) => json!({ "error": s }),
            Reply::Int(n) => json!({ "int": n }),
            Reply::Bulk(b) => bytes_json("bulk", b),
            Reply::Nil | Reply::NilArray => Json::Null,
            Reply::Array(items) => {
                json!({ "array": items.iter().map(Reply::to_json).collect::<Vec<_>>() })
            }
            Reply::Double(d) => json!({ "double": double_json(*d) }),
            Reply::Bool(b) => json!({ "bool": b }),
            Reply::Map(pairs) => {
                json!({ "map": pairs.iter().map(|(k, v)| json!([k.to_json(), v.to_json()])).collect::<Vec<_>>() })
            }
            Reply::Set(items) => {
                json!({ "set": items.iter().map(Reply::to_json).collect::<Vec<_>>() })
            }
            Reply::BigNumber(n) => json!({ "big_number": n }),
            Reply::Verbatim { format, text } => {
                json!({ "verbatim": { "format": format, "text": String::from_utf8_lossy(text) } })
            }
        }
    }

    /// The reply as `redis-cli` prints it on a terminal (`--no-raw`).
    pub fn to_cli(&self) -> String {
        let mut out = String::new();
        self.write_cli(&mut out, 0);
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }

    fn write_cli(&self, out: &mut String, indent: usize) {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || {
            self.write_cli_inner(out, indent)
        })
    }

    fn write_cli_inner(&self, out: &mut String, indent: usize) {
        match self {
            Reply::Status(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Reply::Error(s) => {
                out.push_str("(error) ");
                out.push_str(s);
                out.push('\n');
            }
            Reply::Int(n) => out.push_str(&format!("(integer) {n}\n")),
            Reply::Bulk(b) => {
                out.push_str(&quote_bytes(b));
                out.push('\n');
            }
            Reply::Nil | Reply::NilArray => out.push_str("(nil)\n"),
            Reply::Double(d) => out.push_str(&format!("(double) {}\n", format_double_resp2(*d))),
            Reply::Bool(b) => out.push_str(if *b { "(true)\n" } else { "(false)\n" }),
            Reply::BigNumber(n) => out.push_str(&format!("(big number) {n}\n")),
            Reply::Verbatim { text, .. } => {
                out.push_str(&String::from_utf8_lossy(text));
                out.push('\n');
            }
            Reply::Array(items) | Reply::Set(items) => {
                if items.is_empty() {
                    out.push_str(if matches!(self, Reply::Set(_)) {
                        "(empty set)\n"
                    } else {
                        "(empty array)\n"
                    });
                    return;
                }
                let sep = if matches!(self, Reply::Set(_)) {
                    '~'
                } else {
                    ')'
                };
                let width = items.len().to_string().len();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&" ".repeat(indent));
                    }
                    let label = format!("{:>width$}{sep} ", i + 1);
                    out.push_str(&label);
                    item.write_cli(out, indent + label.len());
                }
            }
            Reply::Map(pairs) => {
                if pairs.is_empty() {
                    out.push_str("(empty hash)\n");
                    return;
                }
                let width = pairs.len().to_string().len();
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&" ".repeat(indent));
                    }
                    let label = format!("{:>width$}# ", i + 1);
                    out.push_str(&label);
                    let mut key = String::new();
                    k.write_cli(&mut key, indent + label.len());
                    out.push_str(key.trim_end_matches('\n'));
                    out.push_str(" => ");
                    let nested = matches!(v, Reply::Array(a) | Reply::Set(a) if !a.is_empty());
                    if nested {
                        out.push('\n');
                        out.push_str(&" ".repeat(indent + label.len()));
                    }
                    v.write_cli(out, indent + label.len());
                }
            }
        }
    }
}

/// How much of a reply a bounded copy keeps (trace entries, the workbench's preview).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// Elements kept in all (nested ones included).
    pub elements: usize,
    /// String bytes kept in all.
    pub bytes: usize,
}

/// What a trace entry keeps of each reply and argument list: 64 KiB of text, 1,000 elements.
pub const TRACE_ALLOWANCE: Allowance = Allowance {
    elements: 1000,
    bytes: 64 * 1024,
};

/// `12345678` as `12,345,678`.
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first bytes of `bytes` the allowance leaves, with `… (N bytes)` when some were cut.
pub fn cut_bytes(bytes: &[u8], allowance: &mut Allowance) -> (Vec<u8>, bool) {
    if bytes.len() <= allowance.bytes {
        allowance.bytes -= bytes.len();
        return (bytes.to_vec(), false);
    }
    let keep = allowance.bytes;
    allowance.bytes = 0;
    let mut out = bytes[..keep].to_vec();
    out.extend_from_slice(format!("… ({} bytes)", grouped(bytes.len())).as_bytes());
    (out, true)
}

fn cut_text(text: &str, allowance: &mut Allowance) -> String {
    if text.len() <= allowance.bytes {
        allowance.bytes -= text.len();
        return text.to_string();
    }
    let mut keep = allowance.bytes;
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    allowance.bytes = 0;
    format!("{}… ({} bytes)", &text[..keep], grouped(text.len()))
}

impl Reply {
    /// Whether the whole reply fits the allowance (which it uses up); stops early when not.
    fn fits(&self, a: &mut Allowance) -> bool {
        let take = |a: &mut Allowance, n: usize| {
            if n > a.bytes {
                false
            } else {
                a.bytes -= n;
                true
            }
        };
        match self {
            Reply::Status(s) | Reply::Error(s) | Reply::BigNumber(s) => take(a, s.len()),
            Reply::Bulk(b) | Reply::Verbatim { text: b, .. } => take(a, b.len()),
            Reply::Array(items) | Reply::Set(items) => items.iter().all(|i| {
                a.elements > 0 && {
                    a.elements -= 1;
                    i.fits(a)
                }
            }),
            Reply::Map(pairs) => pairs.iter().all(|(k, v)| {
                a.elements > 0 && {
                    a.elements -= 1;
                    k.fits(a) && v.fits(a)
                }
            }),
            _ => true,
        }
    }

    /// A copy within the allowance: strings cut with `… (N bytes)`, collections after their first
    /// elements with a status `… N more (M elements)`. Costs what it keeps, not the reply's size.
    pub fn bounded_copy(&self, a: &mut Allowance) -> Reply {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.bounded_inner(a))
    }

    fn bounded_inner(&self, a: &mut Allowance) -> Reply {
        fn items(list: &[Reply], a: &mut Allowance) -> Vec<Reply> {
            let mut out = Vec::with_capacity(list.len().min(a.elements) + 1);
            for item in list {
                if a.elements == 0 {
                    break;
                }
                a.elements -= 1;
                out.push(item.bounded_copy(a));
            }
            if out.len() < list.len() {
                out.push(more(list.len() - out.len(), list.len()));
            }
            out
        }
        fn more(left: usize, total: usize) -> Reply {
            Reply::Status(format!(
                "… {} more ({} elements)",
                grouped(left),
                grouped(total)
            ))
        }
        match self {
            Reply::Status(s) => Reply::Status(cut_text(s, a)),
            Reply::Error(s) => Reply::Error(cut_text(s, a)),
            Reply::BigNumber(s) => Reply::BigNumber(cut_text(s, a)),
            Reply::Bulk(b) => Reply::Bulk(cut_bytes(b, a).0),
            Reply::Verbatim { format, text } => Reply::Verbatim {
                format: format.clone(),
                text: cut_bytes(text, a).0,
            },
            Reply::Array(list) => Reply::Array(items(list, a)),
            Reply::Set(list) => Reply::Set(items(list, a)),
            Reply::Map(pairs) => {
                let mut out = Vec::with_capacity(pairs.len().min(a.elements) + 1);
                for (k, v) in pairs {
                    if a.elements == 0 {
                        break;
                    }
                    a.elements -= 1;
                    out.push((k.bounded_copy(a), v.bounded_copy(a)));
                }
                if out.len() < pairs.len() {
                    out.push((more(pairs.len() - out.len(), pairs.len()), Reply::Nil));
                }
                Reply::Map(out)
            }
            other => other.clone(),
        }
    }

    /// The reply itself when it fits the allowance, else a bounded copy; true when cut.
    pub fn into_bounded(self, a: &mut Allowance) -> (Reply, bool) {
        let mut probe = *a;
        if self.fits(&mut probe) {
            *a = probe;
            (self, false)
        } else {
            (self.bounded_copy(a), true)
        }
    }

    /// A bounded preview for display (a huge reply is never formatted whole).
    pub fn preview(&self) -> Reply {
        self.bounded_copy(&mut TRACE_ALLOWANCE.clone())
    }

    /// The JSON of `to_json`, streamed by serde (no intermediate tree), as a client speaking
    /// `protocol` receives the reply (downgraded on the fly, without a copy).
    pub fn json_for(&self, protocol: Protocol) -> ReplyJson<'_> {
        ReplyJson {
            reply: self,
            resp2: protocol == Protocol::Resp2,
        }
    }
}

/// Serializes a reply as [`Reply::to_json`] would (see [`Reply::json_for`]).
#[derive(Clone, Copy)]
pub struct ReplyJson<'a> {
    reply: &'a Reply,
    resp2: bool,
}

impl serde::Serialize for ReplyJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.serialize_inner(s))
    }
}

impl ReplyJson<'_> {
    fn child<'b>(&self, reply: &'b Reply) -> ReplyJson<'b> {
        ReplyJson {
            reply,
            resp2: self.resp2,
        }
    }

    fn serialize_inner<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn one<S: serde::Serializer, T: serde::Serialize + ?Sized>(
            s: S,
            key: &str,
            value: &T,
        ) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(key, value)?;
            m.end()
        }
        fn bytes<S: serde::Serializer>(s: S, kind: &str, b: &[u8]) -> Result<S::Ok, S::Error> {
            match std::str::from_utf8(b) {
                Ok(text) => one(s, kind, text),
                Err(_) => one(
                    s,
                    &format!("{kind}_b64"),
                    &base64::engine::general_purpose::STANDARD.encode(b),
                ),
            }
        }
        let resp2 = self.resp2;
        match self.reply {
            Reply::Status(t) => one(s, "status", t),
            Reply::Error(t) => one(s, "error", t),
            Reply::Int(n) => one(s, "int", n),
            Reply::Bulk(b) => bytes(s, "bulk", b),
            Reply::Nil | Reply::NilArray => s.serialize_unit(),
            Reply::Double(d) if resp2 => bytes(s, "bulk", format_double_resp2(*d).as_bytes()),
            Reply::Double(d) => one(s, "double", &double_json(*d)),
            Reply::Bool(b) if resp2 => one(s, "int", &(*b as i64)),
            Reply::Bool(b) => one(s, "bool", b),
            Reply::BigNumber(n) if resp2 => bytes(s, "bulk", n.as_bytes()),
            Reply::BigNumber(n) => one(s, "big_number", n),
            Reply::Verbatim { text, .. } if resp2 => bytes(s, "bulk", text),
            Reply::Verbatim { format, text } => one(
                s,
                "verbatim",
                &Verbatim {
                    format,
                    text: String::from_utf8_lossy(text),
                },
            ),
            Reply::Array(items) | Reply::Set(items) => {
                let kind = if matches!(self.reply, Reply::Set(_)) && !resp2 {
                    "set"
                } else {
                    "array"
                };
                one(
                    s,
                    kind,
                    &Seq(items.iter().map(|i| self.child(i)), items.len()),
                )
            }
            Reply::Map(pairs) if resp2 => {
                let flat = pairs
                    .iter()
                    .flat_map(|(k, v)| [self.child(k), self.child(v)]);
                one(s, "array", &Seq(flat, pairs.len() * 2))
            }
            Reply::Map(pairs) => {
                let list = pairs
                    .iter()
                    .map(|(k, v)| Seq([self.child(k), self.child(v)].into_iter(), 2));
                one(s, "map", &Seq(list, pairs.len()))
            }
        }
    }
}

#[derive(serde::Serialize)]
struct Verbatim<'a> {
    format: &'a str,
    text: std::borrow::Cow<'a, str>,
}

/// A sequence serialized from an iterator (cloned: iterators over references are cheap).
struct Seq<I>(I, usize);

impl<I, T> serde::Serialize for Seq<I>
where
    I: Iterator<Item = T> + Clone,
    T: serde::Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.1))?;
        for item in self.0.clone() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

/// `%.17g` as Redis 7.0 formats doubles (`addReplyDouble`), with glibc's spelling of specials.
pub fn format_double_resp2(d: f64) -> String {
    if d.is_nan() {
        return if d.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format_g(d, 17)
}

/// C's `%.{precision}g` for finite values.
pub fn format_g(d: f64, precision: usize) -> String {
    if d.is_nan() {
        return if d.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Fast path: an integer with at most `precision` (up to 15) digits prints as itself.
    if d.fract() == 0.0 && d.abs() < 10f64.powi(precision.min(15) as i32) {
        return (d as i64).to_string();
    }
    let p = precision.max(1);
    // Exponent after rounding to p significant digits.
    let sci = format!("{:.*e}", p - 1, d);
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    if exp < -4 || exp >= p as i32 {
        let mantissa = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim_fraction(&format!("{:.*}", decimals, d)).to_string()
    }
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn double_json(d: f64) -> Json {
    if d.is_finite() {
        json!(d)
    } else {
        json!(format_double_resp2(d))
    }
}

fn bytes_json(kind: &str, bytes: &[u8]) -> Json {
    match std::str::from_utf8(bytes) {
        Ok(s) => json!({ kind: s }),
        Err(_) => {
            json!({ format!("{kind}_b64"): base64::engine::general_purpose::STANDARD.encode(bytes) })
        }
    }
}

/// redis-cli's quoting of a bulk string (`sdscatrepr`).
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    quote_bytes_into(bytes, &mut out);
    out
}

/// `quote_bytes` appended to `out` (no String of its own: the run's reply preview calls it per value).
pub fn quote_bytes_into(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\x");
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
    }
    out.push('"');
}

/// Parse one RESP2/RESP3 reply from `input`; returns the reply and the bytes consumed,
/// or `None` when the input is incomplete. Attributes (`|`) are skipped as Redis's Lua bridge does.
pub fn parse_resp(input: &[u8]) -> Result<Option<(Reply, usize)>, String> {
    parse_nested(input, 0)
}

/// Deeper replies are refused rather than parsed (no server sends them; garbage may).
const MAX_RESP_DEPTH: usize = 1000;

fn parse_nested(input: &[u8], depth: usize) -> Result<Option<(Reply, usize)>, String> {
    if depth > MAX_RESP_DEPTH {
        return Err(format!("reply nested deeper than {MAX_RESP_DEPTH} levels"));
    }
    // Each level is a few frames: grow the stack rather than overflow a small thread's.
    stacker::maybe_grow(32 * 1024, 1024 * 1024, || parse_level(input, depth))
}

fn parse_level(input: &[u8], depth: usize) -> Result<Option<(Reply, usize)>, String> {
    let Some(line_end) = find_crlf(input) else {
        return Ok(None);
    };
    if line_end == 0 {
        return Err("a reply line without its type byte".into());
    }
    let kind = input[0];
    let line_owned = String::from_utf8_lossy(&input[1..line_end]);
    let line: &str = &line_owned;
    let after = line_end + 2;
    let count = |s: &str| {
        s.parse::<i64>()
            .map_err(|e| format!("bad length {s:?}: {e}"))
    };
    let parse_many = |n: usize, mut pos: usize| -> Result<Option<(Vec<Reply>, usize)>, String> {
        let mut items = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            match parse_nested(&input[pos..], depth + 1)? {
                Some((r, used)) => {
                    items.push(r);
                    pos += used;
                }
                None => return Ok(None),
            }
        }
        Ok(Some((items, pos)))
    };
    Ok(match kind {
        b'+' => Some((Reply::Status(line.to_string()), after)),
        b'-' => Some((Reply::Error(line.to_string()), after)),
        b':' => Some((Reply::Int(count(line)?), after)),
        b'_' => Some((Reply::Nil, after)),
        b'#' => Some((Reply::Bool(line == "t"), after)),
        b',' => Some((Reply::Double(parse_double_text(line)), after)),
        b'(' => Some((Reply::BigNumber(line.to_string()), after)),
        b'$' | b'=' | b'!' => {
            let n = count(line)?;
            if n < 0 {
                return Ok(Some((Reply::Nil, after)));
            }
            let n = n as usize;
            if input.len() < after + n + 2 {
                return Ok(None);
            }
            let body = input[after..after + n].to_vec();
            let used = after + n + 2;
            match kind {
                b'=' => {
                    let format = String::from_utf8_lossy(&body[..3.min(body.len())]).to_string();
                    let text = body.get(4..).unwrap_or_default().to_vec();
                    Some((Reply::Verbatim { format, text }, used))
                }
                b'!' => Some((
                    Reply::Error(String::from_utf8_lossy(&body).to_string()),
                    used,
                )),
                _ => Some((Reply::Bulk(body), used)),
            }
        }
        b'*' | b'~' | b'>' => {
            let n = count(line)?;
            if n < 0 {
                return Ok(Some((Reply::NilArray, after)));
            }
            parse_many(n as usize, after)?.map(|(items, used)| {
                (
                    if kind == b'~' {
                        Reply::Set(items)
                    } else {
                        Reply::Array(items)
                    },
                    used,
                )
            })
        }
        b'%' | b'|' => {
            let n = usize::try_from(count(line)?)
                .map_err(|_| format!("negative map length {line:?}"))?;
            match parse_many(n.saturating_mul(2), after)? {
                None => None,
                Some((items, used)) => {
                    let mut it = items.into_iter();
                    let mut pairs = Vec::with_capacity(n);
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        pairs.push((k, v));
                    }
                    if kind == b'|' {
                        // An attribute is metadata for the reply that follows it.
                        return Ok(
                            parse_nested(&input[used..], depth + 1)?.map(|(r, u)| (r, used + u))
                        );
                    }
                    Some((Reply::Map(pairs), used))
                }
            }
        }
        other => return Err(format!("unknown RESP type byte {:?}", other as char)),
    })
}

fn parse_double_text(s: &str) -> f64 {
    match s {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" => f64::NAN,
        "-nan" => -f64::NAN,
        _ => s.parse().unwrap_or(f64::NAN),
    }
}

fn find_crlf(input: &[u8]) -> Option<usize> {
    input.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_matches_c() {
        assert_eq!(format_g(2.71, 17), "2.71");
        assert_eq!(format_g(0.1, 17), "0.10000000000000001");
        assert_eq!(format_g(1e300, 17), "1.0000000000000001e+300");
        assert_eq!(format_g(1.5, 17), "1.5");
        assert_eq!(format_g(2.0, 17), "2");
        assert_eq!(format_g(1e17, 17), "1e+17");
        assert_eq!(format_g(1e-7, 17), "9.9999999999999995e-08");
        assert_eq!(format_g(123456789012345.0, 14), "1.2345678901234e+14");
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(-0.0, 17), "-0");
        assert_eq!(format_g(100000000.0, 17), "100000000");
    }

    /// redis-cli's `sdscatrepr` layout, written straight into the caller's buffer.
    #[test]
    fn quote_bytes_escapes_as_redis_cli() {
        assert_eq!(
            quote_bytes(b"a\"b\\c\n\r\t\x07\x08\x00\x1f\x7f\xff~"),
            r#""a\"b\\c\n\r\t\a\b\x00\x1f\x7f\xff~""#
        );
        let mut out = String::from("{");
        quote_bytes_into(b"k\x01", &mut out);
        assert_eq!(out, r#"{"k\x01""#);
    }

    #[test]
    fn resp_round_trip() {
        let r = Reply::Array(vec![
            Reply::Int(1),
            Reply::Error("E x".into()),
            Reply::Status("fine".into()),
            Reply::Double(1.5),
        ]);
        assert_eq!(
            r.to_resp(Protocol::Resp2),
            b"*4\r\n:1\r\n-E x\r\n+fine\r\n$3\r\n1.5\r\n"
        );
        let raw = r.to_resp(Protocol::Resp3);
        assert_eq!(parse_resp(&raw).unwrap().unwrap().0, r);
    }

    #[test]
    fn cli_rendering_nests() {
        let r = Reply::Array(vec![
            Reply::Int(1),
            Reply::Array(vec![
                Reply::Int(2),
                Reply::Array(vec![Reply::Int(3), Reply::bulk("a")]),
            ]),
        ]);
        assert_eq!(
            r.to_cli(),
            "1) (integer) 1\n2) 1) (integer) 2\n   2) 1) (integer) 3\n      2) \"a\""
        );
    }
}
