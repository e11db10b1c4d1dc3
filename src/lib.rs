//! evalbench: a workbench for writing and debugging Redis Lua scripts.

pub mod cli;
pub mod engine;
/// The files users write (sidecars, seed keyspaces), read for both front ends.
pub mod formats;
#[cfg(feature = "tui")]
pub mod tui;
