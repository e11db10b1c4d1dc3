//! Conversions between Lua values and replies, with Redis 7.0's rules (src/script_lua.c):
//! command reply -> Lua value (what `redis.call` returns), and the script's return value -> reply,
//! with a note for every lossy or surprising step.

use super::raw::{self, c_cast_i64, L};
use crate::engine::reply::{format_double_resp2, Reply};
use crate::engine::report::Note;
use mlua::ffi;
use std::ffi::c_int;

/// Push Redis's error table `{err="CODE msg"}` for an error text (`luaPushErrorBuff`): a text
/// starting with `-` carries its own code (the first word); otherwise the code is `ERR`.
/// Errors from command replies also carry `ignore_error_stats_update=true`.
/// Redis handles the text as a C string (`strstr`, `sdsnew`): it ends at the first NUL.
pub unsafe fn push_error_table(l: L, text: &[u8], ignore_stats: bool) {
    let text = until_nul(text);
    let (code, msg, coded): (&[u8], &[u8], bool) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(space) => (&rest[..space], &rest[space + 1..], true),
            None => (b"ERR", rest, false),
        },
        None => (b"ERR", text, false),
    };
    // `sdstrim(msg, "\r\n")`: Valkey 9 trims only a message that came with its own code.
    let msg = if coded || !super::api::current_profile().codeless_error_keeps_crlf {
        trim_crlf(msg)
    } else {
        msg
    };
    let mut full = Vec::with_capacity(code.len() + 1 + msg.len());
    full.extend_from_slice(code);
    full.push(b' ');
    full.extend_from_slice(msg);
    ffi::lua_newtable(l);
    ffi::lua_pushstring(l, c"err".as_ptr());
    raw::push_bytes(l, &full);
    ffi::lua_settable(l, -3);
    if ignore_stats {
        ffi::lua_pushstring(l, c"ignore_error_stats_update".as_ptr());
        ffi::lua_pushboolean(l, 1);
        ffi::lua_settable(l, -3);
    }
}

/// The bytes a C string function sees: up to the first NUL.
fn until_nul(s: &[u8]) -> &[u8] {
    s.iter().position(|&b| b == 0).map_or(s, |n| &s[..n])
}

fn trim_crlf(mut s: &[u8]) -> &[u8] {
    while let [b'\r' | b'\n', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b'\r' | b'\n'] = s {
        s = rest;
    }
    s
}

/// Push a command reply as the script receives it (`redisProtocolToLuaType`), in the script's
/// protocol: RESP2 gets the downgraded form (doubles as strings, maps flattened, nulls as `false`).
pub unsafe fn push_reply(l: L, reply: &Reply, resp3: bool) {
    ffi::lua_checkstack(l, 5);
    match reply {
        Reply::Status(s) => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"ok".as_ptr());
            raw::push_bytes(l, s.as_bytes());
            ffi::lua_settable(l, -3);
        }
        Reply::Error(e) => {
            let mut buf = Vec::with_capacity(e.len() + 1);
            buf.push(b'-');
            buf.extend_from_slice(e.as_bytes());
            push_error_table(l, &buf, true);
        }
        Reply::Int(n) => ffi::lua_pushnumber(l, *n as f64),
        Reply::Bulk(b) => raw::push_bytes(l, b),
        Reply::Nil | Reply::NilArray => {
            if resp3 {
                ffi::lua_pushnil(l)
            } else {
                ffi::lua_pushboolean(l, 0)
            }
        }
        Reply::Array(items) => push_array(l, items, resp3),
        _ if !resp3 => {
            let profile = super::api::current_profile();
            push_reply(l, &reply.to_resp2_with(&|d| profile.double_text(d)), false)
        }
        Reply::Double(d) => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"double".as_ptr());
            ffi::lua_pushnumber(l, *d);
            ffi::lua_settable(l, -3);
        }
        Reply::Bool(b) => ffi::lua_pushboolean(l, *b as c_int),
        Reply::Map(pairs) => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"map".as_ptr());
            new_reply_table(l, 0, pairs.len());
            for (k, v) in pairs {
                push_reply(l, k, true);
                push_reply(l, v, true);
                ffi::lua_settable(l, -3);
            }
            ffi::lua_settable(l, -3);
        }
        Reply::Set(items) => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"set".as_ptr());
            new_reply_table(l, 0, items.len());
            for item in items {
                push_reply(l, item, true);
                ffi::lua_pushboolean(l, 1);
                ffi::lua_settable(l, -3);
            }
            ffi::lua_settable(l, -3);
        }
        Reply::BigNumber(n) => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"big_number".as_ptr());
            raw::push_bytes(l, n.as_bytes());
            ffi::lua_settable(l, -3);
        }
        Reply::Verbatim { format, text } => {
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"verbatim_string".as_ptr());
            ffi::lua_newtable(l);
            ffi::lua_pushstring(l, c"string".as_ptr());
            raw::push_bytes(l, text);
            ffi::lua_settable(l, -3);
            ffi::lua_pushstring(l, c"format".as_ptr());
            raw::push_bytes(l, format.as_bytes());
            ffi::lua_settable(l, -3);
            ffi::lua_settable(l, -3);
        }
    }
}

/// The table of an array, map or set reply: sized for its entries up front on a profile that
/// does so (Valkey's `lua_createtable`), which decides `#t` over nils and the order `pairs` gives.
unsafe fn new_reply_table(l: L, array: usize, hash: usize) {
    if super::api::current_profile().presized_reply_tables {
        let size = |n: usize| c_int::try_from(n).unwrap_or(c_int::MAX);
        ffi::lua_createtable(l, size(array), size(hash));
    } else {
        ffi::lua_newtable(l);
    }
}

unsafe fn push_array(l: L, items: &[Reply], resp3: bool) {
    new_reply_table(l, items.len(), 0);
    for (i, item) in items.iter().enumerate() {
        ffi::lua_pushnumber(l, (i + 1) as f64);
        push_reply(l, item, resp3);
        ffi::lua_settable(l, -3);
    }
}

/// Where a value sits in the returned value, formatted only when a note needs it.
#[derive(Clone, Copy)]
pub enum Path<'a> {
    Root,
    Elem(&'a Path<'a>, i64),
    Map(&'a Path<'a>, &'a str),
    Set(&'a Path<'a>),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Elem(parent, i) => write!(f, "{parent}[{i}]"),
            Path::Map(parent, key) => write!(f, "{parent}.map[{key}]"),
            Path::Set(parent) => write!(f, "{parent}.set"),
        }
    }
}

/// Turns the script's return value into a reply (`luaReplyToRedisReply`), collecting notes.
pub struct ReturnConverter {
    /// The script's protocol at return time (`redis.setresp`): decides how booleans come out.
    pub script_resp3: bool,
    pub notes: Vec<Note>,
    /// Set when a nested table hit the Lua stack limit.
    pub hit_stack_limit: bool,
    /// Set when the reply being built went past the run's memory budget (the conversion stops).
    pub over_budget: bool,
    /// Values converted and string bytes copied since the last budget check.
    since_check: (usize, usize),
    /// Absolute stack index of the probe-name table (0: none).
    names_index: c_int,
}

/// The field names the return conversion probes, in Redis's order.
const PROBE_NAMES: [&std::ffi::CStr; 11] = [
    c"err",
    c"ok",
    c"double",
    c"big_number",
    c"verbatim_string",
    c"format",
    c"string",
    c"map",
    c"set",
    // Not probes: the globals every run sets, kept interned here too.
    c"KEYS",
    c"ARGV",
];

/// Positions of `KEYS` and `ARGV` in the probe-name table (1-based).
pub const KEYS_NAME_INDEX: i64 = 10;
pub const ARGV_NAME_INDEX: i64 = 11;

/// Push a table holding the probe names as interned strings (keep it in the registry).
pub unsafe fn push_probe_names(l: L) {
    ffi::lua_createtable(l, PROBE_NAMES.len() as c_int, 0);
    for (i, name) in PROBE_NAMES.iter().enumerate() {
        ffi::lua_pushstring(l, name.as_ptr());
        ffi::lua_rawseti(l, -2, i as ffi::lua_Integer + 1);
    }
}

impl ReturnConverter {
    pub fn new(script_resp3: bool) -> ReturnConverter {
        ReturnConverter {
            script_resp3,
            notes: Vec::new(),
            hit_stack_limit: false,
            over_budget: false,
            since_check: (0, 0),
            names_index: 0,
        }
    }

    fn note(&mut self, path: &Path, text: impl Into<String>) {
        // A self-referencing table would repeat its notes thousands of times.
        if self.notes.len() < 100 {
            self.notes.push(Note {
                path: path.to_string(),
                text: text.into(),
            });
        }
    }

    /// Convert the value on top of the stack and pop it.
    pub unsafe fn convert(&mut self, l: L, path: &Path) -> Reply {
        // Nesting goes as deep as the Lua stack allows (about 8000 levels): grow the Rust stack as needed.
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.convert_value(l, path))
    }

    /// The reply counts against the run's budget as it grows (checked every few thousand values
    /// or megabytes: a 10M-element reply is ~560 MB of Rust on top of the Lua table).
    unsafe fn budget_exhausted(&mut self, l: L, bytes: usize) -> bool {
        self.since_check.0 += 1;
        self.since_check.1 += bytes;
        if !self.over_budget && (self.since_check.0 >= 4096 || self.since_check.1 >= 1 << 20) {
            self.since_check = (0, 0);
            let (lua_used, limit) = super::vm::memory_of(l);
            self.over_budget = crate::engine::budget::refresh().saturating_add(lua_used) > limit;
        }
        self.over_budget
    }

    unsafe fn convert_value(&mut self, l: L, path: &Path) -> Reply {
        let bytes = if ffi::lua_type(l, -1) == ffi::LUA_TSTRING {
            raw::to_bytes(l, -1).map_or(0, <[u8]>::len)
        } else {
            0
        };
        if self.budget_exhausted(l, bytes) {
            ffi::lua_pop(l, 1);
            return Reply::Nil;
        }
        if ffi::lua_checkstack(l, 4) == 0 {
            ffi::lua_pop(l, 1);
            self.hit_stack_limit = true;
            return Reply::err("ERR reached lua stack limit");
        }
        let reply = match ffi::lua_type(l, -1) {
            ffi::LUA_TSTRING => Reply::Bulk(raw::to_bytes(l, -1).unwrap_or_default().to_vec()),
            ffi::LUA_TBOOLEAN => {
                let b = ffi::lua_toboolean(l, -1) != 0;
                if self.script_resp3 {
                    Reply::Bool(b)
                } else if b {
                    self.note(path, "true became integer 1");
                    Reply::Int(1)
                } else {
                    self.note(path, "false became a nil reply");
                    Reply::Nil
                }
            }
            ffi::LUA_TNUMBER => self.number(ffi::lua_tonumber(l, -1), path),
            ffi::LUA_TTABLE => self.table(l, path),
            ffi::LUA_TNIL => Reply::Nil,
            other => {
                let name = match other {
                    ffi::LUA_TFUNCTION => "a function",
                    ffi::LUA_TTHREAD => "a coroutine",
                    _ => "a userdata (cjson.null is one)",
                };
                self.note(path, format!("{name} became a nil reply"));
                Reply::Nil
            }
        };
        ffi::lua_pop(l, 1);
        reply
    }

    fn number(&mut self, d: f64, path: &Path) -> Reply {
        let n = c_cast_i64(d);
        if d.is_nan() || d.is_infinite() || (n == i64::MIN && d != -9.223_372_036_854_776e18) {
            self.note(
                path,
                format!(
                    "{} is not representable: became {} (the C cast on x86-64)",
                    lua_number_text(d),
                    n
                ),
            );
        } else if d.fract() != 0.0 {
            self.note(
                path,
                format!("{} truncated to integer {}", lua_number_text(d), n),
            );
        }
        Reply::Int(n)
    }

    /// Push the field `name` of the table on top of the stack (read raw); returns its type.
    /// The names come from a table of pre-interned strings (creating them costs more than the lookup).
    unsafe fn raw_field(&self, l: L, name: &std::ffi::CStr) -> c_int {
        match PROBE_NAMES
            .iter()
            .position(|n| *n == name)
            .filter(|_| self.names_index != 0)
        {
            Some(i) => {
                ffi::lua_rawgeti(l, self.names_index, i as ffi::lua_Integer + 1);
            }
            None => {
                ffi::lua_pushstring(l, name.as_ptr());
            }
        }
        ffi::lua_rawget(l, -2);
        ffi::lua_type(l, -1)
    }

    /// Use the table of probe names at stack index `index` (see `push_probe_names`).
    pub fn with_probe_names(mut self, index: c_int) -> Self {
        self.names_index = index;
        self
    }

    unsafe fn table(&mut self, l: L, path: &Path) -> Reply {
        // One pass over the keys: a table without string keys cannot match any probe.
        let scan = scan_keys(l);
        if !scan.string_keys {
            return self.array(l, path, &scan);
        }
        // Probe order of Redis: err, ok, double, big_number, verbatim_string, map, set, array.
        if let Some(reply) = self.error_or_status(l) {
            return reply;
        }
        if let Some(reply) = self.double_field(l, path) {
            return reply;
        }
        if let Some(reply) = self.big_number_field(l, path) {
            return reply;
        }
        if let Some(reply) = self.verbatim_field(l, path) {
            return reply;
        }
        if let Some(reply) = self.map_field(l, path) {
            return reply;
        }
        if let Some(reply) = self.set_field(l, path) {
            return reply;
        }
        self.array(l, path, &scan)
    }

    /// `{err=...}` or `{ok=...}` as an error or status reply.
    unsafe fn error_or_status(&mut self, l: L) -> Option<Reply> {
        if self.raw_field(l, c"err") == ffi::LUA_TSTRING {
            let text = clean_error(raw::to_bytes(l, -1).unwrap_or_default());
            ffi::lua_pop(l, 1);
            return Some(Reply::Error(text));
        }
        ffi::lua_pop(l, 1);
        if self.raw_field(l, c"ok") == ffi::LUA_TSTRING {
            let text = clean_status(raw::to_bytes(l, -1).unwrap_or_default());
            ffi::lua_pop(l, 1);
            return Some(Reply::Status(text));
        }
        ffi::lua_pop(l, 1);
        None
    }

    /// `{double=n}`.
    unsafe fn double_field(&mut self, l: L, path: &Path) -> Option<Reply> {
        if self.raw_field(l, c"double") != ffi::LUA_TNUMBER {
            ffi::lua_pop(l, 1);
            return None;
        }
        let d = ffi::lua_tonumber(l, -1);
        ffi::lua_pop(l, 1);
        self.note(
            path,
            format!(
                "{{double=}} reaches RESP2 clients as the bulk string \"{}\"",
                format_double_resp2(d)
            ),
        );
        // Redis 7.2 and later write NaN without its sign.
        let unsigned_nan = super::api::current_profile().double_replies
            == crate::engine::profile::NumberFormat::ReplyDouble;
        Some(Reply::Double(if d.is_nan() && unsigned_nan {
            f64::NAN
        } else {
            d
        }))
    }

    /// `{big_number=text}`.
    unsafe fn big_number_field(&mut self, l: L, path: &Path) -> Option<Reply> {
        if self.raw_field(l, c"big_number") != ffi::LUA_TSTRING {
            ffi::lua_pop(l, 1);
            return None;
        }
        let mut bytes = raw::to_bytes(l, -1).unwrap_or_default();
        // Valkey 9 reads the field as a C string.
        if super::api::current_profile().big_number_until_nul {
            bytes = until_nul(bytes);
        }
        let text = String::from_utf8_lossy(bytes).replace(['\r', '\n'], " ");
        ffi::lua_pop(l, 1);
        self.note(path, "{big_number=} reaches RESP2 clients as a bulk string");
        Some(Reply::BigNumber(text))
    }

    /// `{verbatim_string={format=..., string=...}}`; a table without both strings is no probe.
    unsafe fn verbatim_field(&mut self, l: L, path: &Path) -> Option<Reply> {
        if self.raw_field(l, c"verbatim_string") != ffi::LUA_TTABLE {
            ffi::lua_pop(l, 1);
            return None;
        }
        let format_type = self.raw_field(l, c"format");
        let format = raw::to_bytes(l, -1).map(<[u8]>::to_vec);
        ffi::lua_pop(l, 1);
        let string_type = self.raw_field(l, c"string");
        let text = raw::to_bytes(l, -1).map(<[u8]>::to_vec);
        ffi::lua_pop(l, 2);
        if format_type != ffi::LUA_TSTRING || string_type != ffi::LUA_TSTRING {
            return None;
        }
        // The format is read as a C string, then padded or cut to 3 bytes.
        let mut format = format.unwrap_or_default();
        if let Some(nul) = format.iter().position(|&b| b == 0) {
            format.truncate(nul);
        }
        if format.len() != 3 {
            self.note(path, "verbatim format forced to 3 characters");
        }
        format.resize(3, b' ');
        Some(Reply::Verbatim {
            format: String::from_utf8_lossy(&format).into_owned(),
            text: text.unwrap_or_default(),
        })
    }

    /// `{map={...}}`: its pairs in Lua's table order.
    unsafe fn map_field(&mut self, l: L, path: &Path) -> Option<Reply> {
        if self.raw_field(l, c"map") != ffi::LUA_TTABLE {
            ffi::lua_pop(l, 1);
            return None;
        }
        let mut pairs = Vec::new();
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, -2) != 0 {
            ffi::lua_pushvalue(l, -2);
            let label = key_label(l, -1);
            let key_path = Path::Map(path, &label);
            let k = self.convert(l, &key_path);
            let v = self.convert(l, &key_path);
            pairs.push((k, v));
            if self.over_budget {
                ffi::lua_pop(l, 1);
                break;
            }
        }
        ffi::lua_pop(l, 1);
        if pairs.len() > 1 {
            self.note(
                path,
                "map entries come out in Lua's table order, not insertion order",
            );
        }
        Some(Reply::Map(pairs))
    }

    /// `{set={...}}`: its keys in Lua's table order.
    unsafe fn set_field(&mut self, l: L, path: &Path) -> Option<Reply> {
        if self.raw_field(l, c"set") != ffi::LUA_TTABLE {
            ffi::lua_pop(l, 1);
            return None;
        }
        let mut items = Vec::new();
        ffi::lua_pushnil(l);
        while ffi::lua_next(l, -2) != 0 {
            ffi::lua_pop(l, 1);
            ffi::lua_pushvalue(l, -1);
            items.push(self.convert(l, &Path::Set(path)));
            if self.over_budget {
                ffi::lua_pop(l, 1);
                break;
            }
        }
        ffi::lua_pop(l, 1);
        if items.len() > 1 {
            self.note(path, "set members come out in Lua's table order");
        }
        Some(Reply::Set(items))
    }

    unsafe fn array(&mut self, l: L, path: &Path, scan: &KeyScan) -> Reply {
        // Sized once (doubling a 10M-element vector held both copies at once), and refused
        // up front when that alone would not fit the budget.
        let need = scan.positive_ints * std::mem::size_of::<Reply>();
        if need > 1 << 20 {
            let (lua_used, limit) = super::vm::memory_of(l);
            if crate::engine::budget::refresh() + lua_used + need > limit {
                self.over_budget = true;
                return Reply::Nil;
            }
        }
        let mut items = Vec::new();
        let mut j: i64 = 1;
        loop {
            ffi::lua_rawgeti(l, -1, j as ffi::lua_Integer);
            if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                ffi::lua_pop(l, 1);
                break;
            }
            items.push(self.convert(l, &Path::Elem(path, j)));
            if self.hit_stack_limit || self.over_budget {
                return Reply::Array(items);
            }
            if j == 1 {
                // Sized after the first element, not before: a table nested in itself (`r[1] =
                // {r}`) would reserve its size at every level of a chain thousands deep (2,000
                // elements: 256 MiB reserved for a reply of a few MiB).
                items.reserve_exact(scan.positive_ints.saturating_sub(1));
                // The capacity counts toward the next budget check.
                self.since_check.1 += need;
            }
            j += 1;
        }
        // Explain what the conversion left out.
        let beyond = scan.positive_ints - items.len();
        if beyond > 0 {
            self.note(path, format!("array cut at index {j}: element is nil ({beyond} more element(s) after it ignored)"));
        }
        let other = scan.total - scan.positive_ints;
        if other > 0 {
            let fields = field_names(l, 3);
            self.note(
                path,
                format!("hash part of the table ignored ({other} key(s): {fields})"),
            );
        }
        Reply::Array(items)
    }
}

/// What keys the table on top of the stack has.
struct KeyScan {
    total: usize,
    /// Keys that are whole numbers >= 1 (the candidates for the array conversion).
    positive_ints: usize,
    string_keys: bool,
}

unsafe fn scan_keys(l: L) -> KeyScan {
    let mut scan = KeyScan {
        total: 0,
        positive_ints: 0,
        string_keys: false,
    };
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        scan.total += 1;
        match ffi::lua_type(l, -1) {
            ffi::LUA_TNUMBER => {
                let k = ffi::lua_tonumber(l, -1);
                if k.fract() == 0.0 && k >= 1.0 {
                    scan.positive_ints += 1;
                }
            }
            ffi::LUA_TSTRING => scan.string_keys = true,
            _ => {}
        }
    }
    scan
}

/// The first few non-array keys of the table on top of the stack, for a note.
unsafe fn field_names(l: L, most: usize) -> String {
    let mut names = Vec::new();
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        ffi::lua_pop(l, 1);
        if ffi::lua_type(l, -1) == ffi::LUA_TSTRING && names.len() < most {
            names.push(
                String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or_default()).into_owned(),
            );
        }
    }
    names.join(", ")
}

/// A short label for a map key in a note path.
unsafe fn key_label(l: L, idx: c_int) -> String {
    match ffi::lua_type(l, idx) {
        ffi::LUA_TSTRING => format!(
            "{:?}",
            String::from_utf8_lossy(raw::to_bytes(l, idx).unwrap_or_default())
        ),
        ffi::LUA_TNUMBER => lua_number_text(ffi::lua_tonumber(l, idx)),
        _ => "?".into(),
    }
}

/// Lua's own `%.14g` text of a number.
pub fn lua_number_text(d: f64) -> String {
    crate::engine::reply::format_g(d, 14)
}

/// Status and error texts: cut at the first NUL, CR and LF replaced by spaces.
fn clean_status(bytes: &[u8]) -> String {
    String::from_utf8_lossy(until_nul(bytes)).replace(['\r', '\n'], " ")
}

/// An error text as `addReplyErrorFormatEx("-%s")` writes it: CR/LF at the end dropped
/// (`sdstrim`), the others replaced by spaces. Redis's error tables never end with them
/// (`error_reply` trims); Valkey 9's code-less ones can.
fn clean_error(bytes: &[u8]) -> String {
    let text = until_nul(bytes);
    let end = text
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(0, |i| i + 1);
    clean_status(&text[..end])
}

/// The value at `idx` as Lua source would write it (`{1, "a", n = 3}`), bounded in depth and
/// length, for the reply preview: what the script returned before any conversion.
pub unsafe fn describe_value(l: L, idx: c_int) -> String {
    let idx = if idx < 0 {
        ffi::lua_gettop(l) + idx + 1
    } else {
        idx
    };
    let mut out = String::with_capacity(64);
    describe_into(l, idx, 0, &mut out);
    out
}

const DESCRIBE_MAX_LEN: usize = 4000;
const DESCRIBE_MAX_DEPTH: usize = 6;

unsafe fn describe_into(l: L, idx: c_int, depth: usize, out: &mut String) {
    if out.len() > DESCRIBE_MAX_LEN {
        return;
    }
    match ffi::lua_type(l, idx) {
        ffi::LUA_TNIL | ffi::LUA_TNONE => out.push_str("nil"),
        ffi::LUA_TBOOLEAN => out.push_str(if ffi::lua_toboolean(l, idx) != 0 {
            "true"
        } else {
            "false"
        }),
        ffi::LUA_TNUMBER => {
            let d = ffi::lua_tonumber(l, idx);
            if d.fract() == 0.0 && d != 0.0 && d.abs() < 1e14 {
                // itoa: no formatter on this per-run path (speed).
                out.push_str(itoa::Buffer::new().format(d as i64));
            } else {
                out.push_str(&lua_number_text(d));
            }
        }
        ffi::LUA_TSTRING => {
            // Quote what the description can show, not the whole of a 50 MB string.
            let bytes = raw::to_bytes(l, idx).unwrap_or_default();
            let shown = &bytes[..bytes.len().min(DESCRIBE_MAX_LEN)];
            crate::engine::reply::quote_bytes_into(shown, out);
            if shown.len() < bytes.len() {
                out.push_str(&format!(
                    "… ({} bytes)",
                    crate::engine::reply::grouped(bytes.len())
                ));
            }
        }
        ffi::LUA_TTABLE if depth >= DESCRIBE_MAX_DEPTH || ffi::lua_checkstack(l, 3) == 0 => {
            out.push_str("{…}")
        }
        ffi::LUA_TTABLE => {
            out.push('{');
            let mut first = true;
            // The array part first, as a constructor would list it, then the other keys.
            let mut n: i64 = 0;
            loop {
                ffi::lua_rawgeti(l, idx, n + 1);
                let present = ffi::lua_type(l, -1) != ffi::LUA_TNIL;
                if present {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    describe_into(l, ffi::lua_gettop(l), depth + 1, out);
                }
                ffi::lua_pop(l, 1);
                if !present || out.len() > DESCRIBE_MAX_LEN {
                    break;
                }
                n += 1;
            }
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, idx) != 0 {
                let key_is_array = ffi::lua_type(l, -2) == ffi::LUA_TNUMBER && {
                    let k = ffi::lua_tonumber(l, -2);
                    k.fract() == 0.0 && k >= 1.0 && k <= n as f64
                };
                if !key_is_array {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let top = ffi::lua_gettop(l);
                    match ffi::lua_type(l, top - 1) {
                        ffi::LUA_TSTRING => {
                            let key = raw::to_bytes(l, top - 1).unwrap_or_default();
                            let identifier = !key.is_empty()
                                && key.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
                                && !key[0].is_ascii_digit();
                            if identifier {
                                out.push_str(&String::from_utf8_lossy(key));
                            } else {
                                out.push('[');
                                out.push_str(&crate::engine::reply::quote_bytes(key));
                                out.push(']');
                            }
                        }
                        _ => {
                            out.push('[');
                            describe_into(l, top - 1, depth + 1, out);
                            out.push(']');
                        }
                    }
                    out.push_str(" = ");
                    describe_into(l, top, depth + 1, out);
                }
                ffi::lua_pop(l, 1);
                if out.len() > DESCRIBE_MAX_LEN {
                    ffi::lua_pop(l, 1);
                    out.push_str(", …");
                    break;
                }
            }
            out.push('}');
        }
        ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, idx).is_null() => {
            out.push_str("cjson.null")
        }
        ffi::LUA_TFUNCTION => out.push_str("function"),
        ffi::LUA_TTHREAD => out.push_str("coroutine"),
        _ => out.push_str("userdata"),
    }
}
