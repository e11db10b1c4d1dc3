//! What a stop shows: the stack of the script's frames, the variables of a frame, tables expanded
//! a page at a time, and values written as LDB writes them.

use super::hook::{is_user, Stop};
use crate::engine::lua::raw::{self, L};
use crate::engine::reply::quote_bytes;
use mlua::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    fn snprintf(buf: *mut c_char, size: usize, fmt: *const c_char, ...) -> c_int;
}

/// One frame of the script (innermost first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub index: usize,
    /// The function's name as Lua knows it at the call, or "top level".
    pub function: String,
    pub line: u32,
    pub source_line: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    Local,
    Upvalue,
    /// KEYS and ARGV.
    Global,
    /// An entry of an expanded table.
    Field,
}

/// A variable (or a table entry), as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub kind: VarKind,
    /// Lua's type name.
    pub type_name: String,
    /// One line: strings quoted and escaped (cut with their length when long), tables in brief.
    pub value: String,
    /// Entries of a table, bytes of a string.
    pub len: Option<usize>,
    pub expandable: bool,
}

/// A page of a table's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub items: Vec<Variable>,
    /// Entries in the whole table.
    pub total: usize,
}

/// Strings longer than this are cut in `Variable::value`.
const SHORT_STRING: usize = 120;
/// A table summary stops after this many bytes.
const SHORT_TABLE: usize = 160;
/// LDB-style texts stop growing here whatever maxlen says (bounded memory).
const HARD_CAP: usize = 1 << 20;
const MAX_DEPTH: usize = 64;

pub(crate) fn number_text(d: f64) -> String {
    let mut buf = [0 as c_char; 64];
    let n = unsafe { snprintf(buf.as_mut_ptr(), buf.len(), c"%g".as_ptr(), d) };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    let bytes: Vec<u8> = buf[..n].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The value at `idx` as LDB prints it (`{["a"]=1; [1]=2}`, `{1; 2}` for an array), cycles
/// marked, cut at `maxlen` bytes (0: no cut) with ` ...`.
pub(crate) unsafe fn ldb_repr(l: L, idx: c_int, maxlen: usize) -> String {
    let idx = absolute(l, idx);
    let mut out = String::new();
    let mut ancestors = Vec::new();
    repr_into(l, idx, &mut out, &mut ancestors, maxlen);
    cut(out, maxlen)
}

pub(crate) fn cut(mut out: String, maxlen: usize) -> String {
    if maxlen > 0 && out.len() > maxlen {
        let mut at = maxlen;
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        out.truncate(at);
        out.push_str(" ...");
    }
    out
}

unsafe fn absolute(l: L, idx: c_int) -> c_int {
    if idx < 0 && idx > ffi::LUA_REGISTRYINDEX {
        ffi::lua_gettop(l) + idx + 1
    } else {
        idx
    }
}

unsafe fn repr_into(
    l: L,
    idx: c_int,
    out: &mut String,
    ancestors: &mut Vec<*const c_void>,
    maxlen: usize,
) {
    let limit = if maxlen == 0 { HARD_CAP } else { maxlen + 1 };
    if out.len() > limit {
        return;
    }
    match ffi::lua_type(l, idx) {
        ffi::LUA_TNIL | ffi::LUA_TNONE => out.push_str("nil"),
        ffi::LUA_TBOOLEAN => out.push_str(if ffi::lua_toboolean(l, idx) != 0 {
            "true"
        } else {
            "false"
        }),
        ffi::LUA_TNUMBER => out.push_str(&number_text(ffi::lua_tonumber(l, idx))),
        ffi::LUA_TSTRING => {
            let bytes = raw::to_bytes(l, idx).unwrap_or_default();
            // Quote only what can show (a 1 GiB string is not copied to be cut).
            let shown = &bytes[..bytes.len().min(limit)];
            out.push_str(&quote_bytes(shown));
            if shown.len() < bytes.len() {
                out.pop();
            }
        }
        ffi::LUA_TTABLE => {
            let ptr = ffi::lua_topointer(l, idx);
            if ancestors.contains(&ptr) {
                out.push_str("<cycle>");
                return;
            }
            if ancestors.len() >= MAX_DEPTH || ffi::lua_checkstack(l, 4) == 0 {
                out.push_str("{...}");
                return;
            }
            ancestors.push(ptr);
            let n = array_len(l, idx);
            let total = count_entries(l, idx);
            out.push('{');
            let mut first = true;
            if n == total {
                for i in 1..=n {
                    if !first {
                        out.push_str("; ");
                    }
                    first = false;
                    ffi::lua_rawgeti(l, idx, i as _);
                    repr_into(l, ffi::lua_gettop(l), out, ancestors, maxlen);
                    ffi::lua_pop(l, 1);
                    if out.len() > limit {
                        break;
                    }
                }
            } else {
                ffi::lua_pushnil(l);
                while ffi::lua_next(l, idx) != 0 {
                    if !first {
                        out.push_str("; ");
                    }
                    first = false;
                    let top = ffi::lua_gettop(l);
                    out.push('[');
                    repr_into(l, top - 1, out, ancestors, maxlen);
                    out.push_str("]=");
                    repr_into(l, top, out, ancestors, maxlen);
                    ffi::lua_pop(l, 1);
                    if out.len() > limit {
                        ffi::lua_pop(l, 1);
                        break;
                    }
                }
            }
            out.push('}');
            ancestors.pop();
        }
        t => {
            let name = CStr::from_ptr(ffi::lua_typename(l, t)).to_string_lossy();
            out.push_str(&format!("\"{name}@{:p}\"", ffi::lua_topointer(l, idx)));
        }
    }
}

/// Entries 1..n present without a hole.
unsafe fn array_len(l: L, idx: c_int) -> usize {
    let mut n = 0usize;
    loop {
        ffi::lua_rawgeti(l, idx, (n + 1) as _);
        let present = ffi::lua_type(l, -1) != ffi::LUA_TNIL;
        ffi::lua_pop(l, 1);
        if !present {
            return n;
        }
        n += 1;
    }
}

unsafe fn count_entries(l: L, idx: c_int) -> usize {
    let mut n = 0;
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        n += 1;
        ffi::lua_pop(l, 1);
    }
    n
}

/// A variable from the value at `idx`.
unsafe fn variable(l: L, idx: c_int, name: String, kind: VarKind, cycle: bool) -> Variable {
    let idx = absolute(l, idx);
    let t = ffi::lua_type(l, idx);
    let type_name = CStr::from_ptr(ffi::lua_typename(l, t))
        .to_string_lossy()
        .into_owned();
    let (value, len, expandable) = match t {
        ffi::LUA_TSTRING => {
            let bytes = raw::to_bytes(l, idx).unwrap_or_default();
            let value = if bytes.len() > SHORT_STRING {
                format!(
                    "{}… ({} bytes)",
                    quote_bytes(&bytes[..SHORT_STRING]),
                    bytes.len()
                )
            } else {
                quote_bytes(bytes)
            };
            (value, Some(bytes.len()), false)
        }
        ffi::LUA_TTABLE if cycle => ("<cycle>".to_string(), None, false),
        ffi::LUA_TTABLE => {
            let total = count_entries(l, idx);
            (ldb_repr(l, idx, SHORT_TABLE), Some(total), total > 0)
        }
        _ => (ldb_repr(l, idx, SHORT_TABLE), None, false),
    };
    Variable {
        name,
        kind,
        type_name,
        value,
        len,
        expandable,
    }
}

/// Visit the variables of the frame at Lua `level` (locals, upvalues, KEYS, ARGV), each value on
/// top of the stack during `f`; `f` returns true to stop with that value left on the stack.
pub(crate) unsafe fn for_each_var(
    l: L,
    level: c_int,
    mut f: impl FnMut(L, &str, VarKind) -> bool,
) -> bool {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    if ffi::lua_getstack(l, level, &mut ar) == 0 {
        return false;
    }
    let mut n = 1;
    loop {
        let name = ffi::lua_getlocal(l, &ar, n);
        if name.is_null() {
            break;
        }
        let name = CStr::from_ptr(name).to_string_lossy().into_owned();
        n += 1;
        // "(for index)" and the like are Lua's own temporaries.
        if name.starts_with('(') {
            ffi::lua_pop(l, 1);
            continue;
        }
        if f(l, &name, VarKind::Local) {
            return true;
        }
        ffi::lua_pop(l, 1);
    }
    ffi::lua_getinfo(l, c"f".as_ptr(), &mut ar);
    let func = ffi::lua_gettop(l);
    let mut n = 1;
    loop {
        let name = ffi::lua_getupvalue(l, func, n);
        if name.is_null() {
            break;
        }
        let name = CStr::from_ptr(name).to_string_lossy().into_owned();
        n += 1;
        if f(l, &name, VarKind::Upvalue) {
            ffi::lua_remove(l, func);
            return true;
        }
        ffi::lua_pop(l, 1);
    }
    ffi::lua_pop(l, 1);
    for global in [c"KEYS", c"ARGV"] {
        // Without metamethods that run code: a function's globals raise on a name they lack
        // (FCALL has no KEYS/ARGV globals); a script's may sit behind an `__index` table.
        raw_global(l, global);
        if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
            ffi::lua_pop(l, 1);
            continue;
        }
        if f(l, &global.to_string_lossy(), VarKind::Global) {
            return true;
        }
        ffi::lua_pop(l, 1);
    }
    false
}

/// Push the global `name`, read raw, or raw from the globals' `__index` table (nil otherwise).
unsafe fn raw_global(l: L, name: &std::ffi::CStr) {
    ffi::lua_pushstring(l, name.as_ptr());
    ffi::lua_rawget(l, ffi::LUA_GLOBALSINDEX);
    if ffi::lua_type(l, -1) != ffi::LUA_TNIL || ffi::lua_getmetatable(l, ffi::LUA_GLOBALSINDEX) == 0
    {
        return;
    }
    ffi::lua_pushstring(l, c"__index".as_ptr());
    ffi::lua_rawget(l, -2);
    if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
        ffi::lua_pushstring(l, name.as_ptr());
        ffi::lua_rawget(l, -2);
    } else {
        ffi::lua_pushnil(l);
    }
    // [nil, metatable, __index, value] -> [value]
    ffi::lua_replace(l, -4);
    ffi::lua_pop(l, 2);
}

/// Visit entries `offset..offset+limit` of the table at `idx` (array part first, then the
/// others): key text and value on top. Returns the number of entries.
unsafe fn for_each_entry(
    l: L,
    idx: c_int,
    offset: usize,
    limit: usize,
    mut f: impl FnMut(L, String) -> bool,
) -> usize {
    let idx = absolute(l, idx);
    let n = array_len(l, idx);
    let mut i = 0usize;
    for k in 1..=n {
        if i >= offset && i < offset.saturating_add(limit) {
            ffi::lua_rawgeti(l, idx, k as _);
            if f(l, format!("[{k}]")) {
                return usize::MAX;
            }
            ffi::lua_pop(l, 1);
        }
        i += 1;
    }
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, idx) != 0 {
        let top = ffi::lua_gettop(l);
        let in_array = ffi::lua_type(l, top - 1) == ffi::LUA_TNUMBER && {
            let k = ffi::lua_tonumber(l, top - 1);
            k.fract() == 0.0 && k >= 1.0 && k <= n as f64
        };
        if !in_array {
            if i >= offset && i < offset.saturating_add(limit) {
                let key = format!("[{}]", ldb_repr(l, top - 1, SHORT_STRING));
                ffi::lua_pushvalue(l, top);
                if f(l, key) {
                    // Leave the value only.
                    ffi::lua_replace(l, top - 1);
                    ffi::lua_pop(l, 1);
                    return usize::MAX;
                }
                ffi::lua_pop(l, 1);
            }
            i += 1;
        }
        ffi::lua_pop(l, 1);
    }
    i
}

impl Stop<'_> {
    /// Lua levels of the script's frames, innermost first.
    pub(crate) fn levels(&self) -> Vec<c_int> {
        let mut out = Vec::new();
        unsafe {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            let mut level = self.base_level;
            while ffi::lua_getstack(self.l, level, &mut ar) != 0 {
                if is_user(self.l, &mut ar) {
                    out.push(level);
                }
                level += 1;
            }
        }
        out
    }

    pub(crate) fn level_of(&self, frame: usize) -> Result<c_int, String> {
        let levels = self.levels();
        levels.get(frame).copied().ok_or_else(|| {
            format!(
                "no frame {frame} (the stack has {} frames, 0 = innermost)",
                levels.len()
            )
        })
    }

    /// Does the frame's function take varargs? Lua 5.1 has no API to read them (they sit below the
    /// frame's base, out of lua_getlocal's reach), so front ends say they are not visible.
    pub fn hidden_varargs(&self, frame: usize) -> bool {
        let Ok(level) = self.level_of(frame) else {
            return false;
        };
        unsafe {
            let mut ar: ffi::lua_Debug = std::mem::zeroed();
            ffi::lua_getstack(self.l, level, &mut ar);
            ffi::lua_getinfo(self.l, c"S".as_ptr(), &mut ar);
            ar.linedefined > 0 && self.run.session().is_vararg_function(ar.linedefined as u32)
        }
    }

    /// The script's call stack, innermost first.
    pub fn stack(&self) -> Vec<Frame> {
        let session = self.run.session();
        self.levels()
            .into_iter()
            .enumerate()
            .map(|(index, level)| unsafe {
                let mut ar: ffi::lua_Debug = std::mem::zeroed();
                ffi::lua_getstack(self.l, level, &mut ar);
                ffi::lua_getinfo(self.l, c"Sln".as_ptr(), &mut ar);
                let what = CStr::from_ptr(ar.what).to_bytes();
                let function = if what == b"main" {
                    "top level".to_string()
                } else if ar.name.is_null() {
                    "?".to_string()
                } else {
                    CStr::from_ptr(ar.name).to_string_lossy().into_owned()
                };
                let line = ar.currentline.max(0) as u32;
                Frame {
                    index,
                    function,
                    line,
                    source_line: session.source_line(line).unwrap_or("").to_string(),
                }
            })
            .collect()
    }

    /// Locals (in declaration order), upvalues, then KEYS and ARGV of a frame (0 = innermost).
    /// Varargs are not listed: Lua 5.1 gives no access to them.
    pub fn variables(&self, frame: usize) -> Result<Vec<Variable>, String> {
        let level = self.level_of(frame)?;
        let mut out = Vec::new();
        unsafe {
            for_each_var(self.l, level, |l, name, kind| {
                out.push(variable(l, -1, name.to_string(), kind, false));
                false
            });
        }
        Ok(out)
    }

    /// Entries `offset..offset+limit` of a table: `path[0]` is the variable's index in
    /// `variables(frame)`, the rest the entry indices down to the table. A table already on the
    /// path shows as `<cycle>`.
    pub fn expand(
        &self,
        frame: usize,
        path: &[usize],
        offset: usize,
        limit: usize,
    ) -> Result<Page, String> {
        let level = self.level_of(frame)?;
        let l = self.l;
        unsafe {
            let top = ffi::lua_gettop(l);
            let result = (|| {
                let (&root, rest) = path.split_first().ok_or("an empty path")?;
                let mut i = 0;
                if !for_each_var(l, level, |_, _, _| {
                    i += 1;
                    i == root + 1
                }) {
                    return Err(format!("no variable {root} in frame {frame}"));
                }
                let mut ancestors = vec![ffi::lua_topointer(l, -1)];
                for &step in rest {
                    if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
                        return Err("not a table".to_string());
                    }
                    let mut i = 0;
                    let found = for_each_entry(l, -1, step, 1, |_, _| {
                        i += 1;
                        true
                    });
                    if found != usize::MAX {
                        return Err(format!("no entry {step}"));
                    }
                    ancestors.push(ffi::lua_topointer(l, -1));
                }
                if ffi::lua_type(l, -1) != ffi::LUA_TTABLE {
                    return Err("not a table: nothing to expand".to_string());
                }
                let t = ffi::lua_gettop(l);
                let mut items = Vec::new();
                let total = for_each_entry(l, t, offset, limit, |l, key| {
                    let cycle = ffi::lua_type(l, -1) == ffi::LUA_TTABLE
                        && ancestors.contains(&ffi::lua_topointer(l, -1));
                    items.push(variable(l, -1, key, VarKind::Field, cycle));
                    false
                });
                Ok(Page { items, total })
            })();
            ffi::lua_settop(l, top);
            result
        }
    }

    /// LDB's `print`: every local of the innermost frame (name, value), or the variable `name`
    /// searched from the innermost frame outwards (locals, upvalues, KEYS, ARGV).
    pub fn print(&self, name: Option<&str>) -> Vec<(String, String)> {
        let maxlen = self.run.session().maxlen;
        let l = self.l;
        let mut out = Vec::new();
        unsafe {
            let top = ffi::lua_gettop(l);
            match name {
                None => {
                    if let Ok(level) = self.level_of(0) {
                        for_each_var(l, level, |l, n, kind| {
                            if kind == VarKind::Local {
                                out.push((n.to_string(), ldb_repr(l, -1, maxlen)));
                            }
                            false
                        });
                    }
                }
                Some(wanted) => {
                    for level in self.levels() {
                        if for_each_var(l, level, |_, n, _| n == wanted) {
                            out.push((wanted.to_string(), ldb_repr(l, -1, maxlen)));
                            break;
                        }
                    }
                }
            }
            ffi::lua_settop(l, top);
        }
        out
    }

    /// Plain, sendable data about this stop (for front ends on another thread).
    pub fn snapshot(&self) -> StopSnapshot {
        let frames = self.stack();
        let variables = self.variables(0).unwrap_or_default();
        StopSnapshot {
            line: self.line(),
            reason: self.reason().clone(),
            event: self.event(),
            frames,
            variables,
        }
    }
}

/// A stop as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopSnapshot {
    pub line: u32,
    pub reason: super::StopReason,
    pub event: u64,
    pub frames: Vec<Frame>,
    /// Of the innermost frame.
    pub variables: Vec<Variable>,
}

/// A reply as LDB's console writes it (`"bulk"`, `"+OK"`, `1`, `NULL`, `["a","b"]`).
pub fn reply_text(reply: &crate::engine::reply::Reply) -> String {
    match reply {
        crate::engine::reply::Reply::Int(n) => n.to_string(),
        crate::engine::reply::Reply::Bulk(b) => quote_bytes(b),
        crate::engine::reply::Reply::Status(s) => quote_bytes(format!("+{s}").as_bytes()),
        crate::engine::reply::Reply::Error(e) => quote_bytes(format!("-{e}").as_bytes()),
        crate::engine::reply::Reply::Nil => "NULL".into(),
        other => match other.to_resp2() {
            crate::engine::reply::Reply::Array(items) => {
                let inner: Vec<String> = items.iter().map(reply_text).collect();
                format!("[{}]", inner.join(","))
            }
            crate::engine::reply::Reply::NilArray => "NULL".into(),
            flat => reply_text(&flat),
        },
    }
}
