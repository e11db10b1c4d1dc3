//! server commands.

use super::Command;

pub static COMMANDS: &[Command] = &[];
