//! What every subcommand shares.

/// Ctrl-C during live runs: SCRIPT KILL, and its verdict.
pub mod interrupt;
