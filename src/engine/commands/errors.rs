//! Error texts exactly as Redis 7.0 writes them, in one place.

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const SYNTAX: &str = "ERR syntax error";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const OUT_OF_RANGE: &str = "ERR value is out of range, must be positive";
pub const MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
pub const MIN_MAX_NOT_VALID_STRING: &str = "ERR min or max not valid string range item";
pub const HASH_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const INVALID_EXPIRE: &str = "ERR invalid expire time in 'set' command";
pub const NAN_RESULT: &str = "ERR increment would produce NaN or Infinity";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";

// Script bridge texts (src/script.c, src/script_lua.c @7.0.15).
pub const UNKNOWN_COMMAND: &str = "ERR Unknown Redis command called from script";
pub const WRONG_ARGS: &str = "ERR Wrong number of args calling Redis command from script";
pub const NOSCRIPT: &str = "ERR This Redis command is not allowed from script";
pub const WRITE_IN_READ_ONLY: &str = "ERR Write commands are not allowed from read-only scripts.";

/// `ERR wrong number of arguments for 'x' command` (arity errors outside scripts and in subcommand parsers).
pub fn wrong_args(command: &str) -> String {
    format!(
        "ERR wrong number of arguments for '{}' command",
        command.to_lowercase()
    )
}

/// The sandbox's own error for a command the profile's server has but the sandbox does not
/// implement: names that server (`a Valkey 9.1 command`).
pub fn unsupported(command: &str, profile: &crate::engine::profile::Profile) -> String {
    format!(
        "ERR evalbench: the sandbox does not support '{}' (a {} command); run this script against a live server",
        command.to_uppercase(),
        profile.display_name()
    )
}
