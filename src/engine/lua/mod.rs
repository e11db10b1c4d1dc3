//! The Lua bridge: a Lua 5.1 state set up as Redis 7.0 sets up its scripting VM.

pub mod api;
pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod convert;
pub mod raw;
pub mod structlib;
#[cfg(test)]
pub(crate) mod testutil;
pub mod vm;
