//! The Lua bridge: a Lua 5.1 state set up as Redis 7.0 sets up its scripting VM.
//!
//! Safety contract shared by every `unsafe fn` in this module (instead of one `# Safety` section
//! each): `l` is a valid state of the sandbox's VM, used on the thread that owns it, with the
//! stack slots the function documents; raw C functions are only called by Lua.
#![allow(clippy::missing_safety_doc)]

pub mod api;
pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod convert;
pub(crate) mod debug_hooks;
// The Redis Functions engine's Lua state.
pub mod function;
pub mod raw;
// string.format that the busy threshold can stop.
pub mod strformat;
// Lua's string hash per server: pairs() order over string keys.
pub mod string_hash;
pub mod structlib;
#[cfg(test)]
pub(crate) mod testutil;
pub mod vm;
pub mod watchdog;
