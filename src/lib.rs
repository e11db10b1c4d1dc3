//! evalbench: a workbench for writing and debugging Redis Lua scripts.

pub mod cli;
pub mod engine;
#[cfg(feature = "tui")]
pub mod tui;
