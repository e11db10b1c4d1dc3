//! Which lines of a script hold code: the line info of every function in the compiled chunk,
//! read from its `lua_dump` (Lua 5.1 has no API listing the lines of nested functions).

use crate::engine::lua::raw;
use mlua::ffi;
use std::ffi::{c_int, c_void};

/// Lua's compile message and its line.
pub type CompileError = (String, Option<u32>);

/// Per line (index = line number): can a line event happen there; and the first lines of the
/// functions that take varargs (`...`; the main chunk's, always empty in a script, left out).
/// Err: Lua's compile message and its line.
pub fn code_lines(body: &[u8]) -> Result<(Vec<bool>, Vec<u32>), CompileError> {
    let dump = unsafe { compile_and_dump(body)? };
    let mut lines = Vec::new();
    let mut reader = Reader {
        bytes: &dump,
        pos: 12,
        vararg_functions: Vec::new(),
    };
    reader.function(&mut lines).ok_or_else(|| {
        (
            "evalbench: cannot read the compiled script's line info".to_string(),
            None,
        )
    })?;
    Ok((lines, reader.vararg_functions))
}

unsafe extern "C-unwind" fn writer(
    _l: *mut ffi::lua_State,
    p: *const c_void,
    sz: usize,
    ud: *mut c_void,
) -> c_int {
    let out = &mut *(ud as *mut Vec<u8>);
    out.extend_from_slice(std::slice::from_raw_parts(p as *const u8, sz));
    0
}

unsafe fn compile_and_dump(body: &[u8]) -> Result<Vec<u8>, (String, Option<u32>)> {
    let l = ffi::luaL_newstate();
    if l.is_null() {
        return Err(("evalbench: cannot create a Lua state".into(), None));
    }
    let status = ffi::luaL_loadbuffer(
        l,
        body.as_ptr() as *const _,
        body.len(),
        c"@user_script".as_ptr(),
    );
    let result = if status != 0 {
        let msg = String::from_utf8_lossy(raw::to_bytes(l, -1).unwrap_or(b"?")).into_owned();
        let line = msg
            .strip_prefix("user_script:")
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse().ok());
        Err((msg, line))
    } else {
        let mut out: Vec<u8> = Vec::new();
        ffi::lua_dump_(l, writer, &mut out as *mut Vec<u8> as *mut c_void);
        Ok(out)
    };
    ffi::lua_close(l);
    result
}

/// A reader of Lua 5.1's dump format (x86-64: int 4, size_t 8, Instruction 4, number 8).
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    vararg_functions: Vec<u32>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn int(&mut self) -> Option<usize> {
        let b = self.take(4)?;
        Some(i32::from_le_bytes([b[0], b[1], b[2], b[3]]).max(0) as usize)
    }
    fn size(&mut self) -> Option<usize> {
        let b = self.take(8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?) as usize)
    }
    fn string(&mut self) -> Option<()> {
        let n = self.size()?;
        self.take(n).map(|_| ())
    }
    fn function(&mut self, lines: &mut Vec<bool>) -> Option<()> {
        self.string()?;
        let defined = self.int()?;
        self.take(4)?; // lastlinedefined
        let header = self.take(4)?; // nups, numparams, is_vararg, maxstacksize
        if header[2] != 0 && defined > 0 {
            self.vararg_functions.push(defined as u32);
        }
        let code = self.int()?;
        self.take(code.checked_mul(4)?)?;
        let constants = self.int()?;
        for _ in 0..constants {
            match self.take(1)?[0] as c_int {
                ffi::LUA_TNIL => {}
                ffi::LUA_TBOOLEAN => {
                    self.take(1)?;
                }
                ffi::LUA_TNUMBER => {
                    self.take(8)?;
                }
                ffi::LUA_TSTRING => self.string()?,
                _ => return None,
            }
        }
        let protos = self.int()?;
        for _ in 0..protos {
            self.function(lines)?;
        }
        let lineinfo = self.int()?;
        for _ in 0..lineinfo {
            let line = self.int()?;
            if line >= lines.len() {
                lines.resize(line + 1, false);
            }
            lines[line] = true;
        }
        let locvars = self.int()?;
        for _ in 0..locvars {
            self.string()?;
            self.take(8)?;
        }
        let upvalues = self.int()?;
        for _ in 0..upvalues {
            self.string()?;
        }
        Some(())
    }
}
