//! What a caller asks the sandbox to run: one EVAL or one FCALL. Plain data, below the Lua
//! runtime and the debugger, which both read it; the sandbox above runs it.

use super::reply::Protocol;

/// One EVAL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunRequest {
    pub script: Vec<u8>,
    pub keys: Vec<Vec<u8>>,
    pub argv: Vec<Vec<u8>>,
    /// The caller's protocol (HELLO 3 or not).
    pub protocol: Protocol,
    /// EVAL_RO.
    pub read_only: bool,
}

impl RunRequest {
    pub fn new(script: impl Into<Vec<u8>>) -> RunRequest {
        RunRequest {
            script: script.into(),
            ..RunRequest::default()
        }
    }
}

/// One FCALL: the function's name (case-insensitive, as Redis looks it up), KEYS and ARGV.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionCall {
    pub name: String,
    pub keys: Vec<Vec<u8>>,
    pub argv: Vec<Vec<u8>>,
    pub protocol: Protocol,
    /// FCALL_RO.
    pub read_only: bool,
}
