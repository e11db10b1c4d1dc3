//! evalbench: a workbench for writing and debugging Redis Lua scripts.

pub mod cli;
pub mod cli_debug;
/// `evalbench debug --server`: the REPL over Redis's own LDB.
pub mod cli_debug_live;
/// `evalbench run --export FILE` (issue 14).
pub mod cli_export;
/// `evalbench function` and `run --function --server`: a live server's libraries (issue 13).
pub mod cli_function;
/// Ctrl-C during live runs: SCRIPT KILL, and its verdict.
pub mod cli_interrupt;
/// `evalbench lesson` (issue 14).
pub mod cli_lesson;
pub mod cli_lint;
pub mod cli_live;
/// `evalbench race`: the race lab headless (issue 14).
pub mod cli_race;
pub mod cli_test;
pub mod engine;
#[cfg(feature = "tui")]
pub mod tui;
