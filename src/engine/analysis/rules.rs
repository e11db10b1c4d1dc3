//! The lint rules: each with an id (for `--deny` and the README), a one-line explanation and a fix.
//! The README's rule table is generated from this list (tests/readme.rs keeps it current).

/// How bad a finding is: an error fails on every Redis; a warning is a risk or a smell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    /// Why it matters, in one line.
    pub explanation: &'static str,
    /// What to do instead.
    pub fix: &'static str,
}

pub const SYNTAX: &str = "syntax";
pub const LUA52_SYNTAX: &str = "lua52-syntax";
pub const GLOBAL_VARIABLE: &str = "global-variable";
pub const KEY_NOT_FROM_KEYS: &str = "key-not-from-keys";
pub const VALUE_IN_KEYS: &str = "value-in-keys";
pub const LITERAL_BELONGS_IN_ARGV: &str = "literal-belongs-in-argv";
pub const WRITE_BEFORE_VALIDATION: &str = "write-before-validation";
pub const UNBOUNDED_READ: &str = "unbounded-read";
pub const SETNX_THEN_EXPIRE: &str = "setnx-then-expire";
pub const REPLY_WITHOUT_TONUMBER: &str = "reply-without-tonumber";
pub const DROPPED_PCALL_ERROR: &str = "dropped-pcall-error";
pub const NONDETERMINISTIC: &str = "nondeterministic";
pub const ONE_COMMAND: &str = "one-command";
pub const COMMAND_NOT_IN_PROFILE: &str = "command-not-in-profile";
pub const WRONG_ARITY: &str = "wrong-arity";
pub const CROSS_SLOT: &str = "cross-slot";
pub const UNDECLARED_KEY: &str = "undeclared-key";
pub const NOT_ANALYSED: &str = "not-analysed";
pub const UNKILLABLE: &str = "unkillable";
pub const LIBRARY_HEADER: &str = "library-header";
pub const BAD_NAME: &str = "bad-name";
pub const DUPLICATE_FUNCTION: &str = "duplicate-function";
pub const UNKNOWN_FLAG: &str = "unknown-flag";
pub const WRITE_IN_NO_WRITES: &str = "write-in-no-writes";
pub const LOAD_TIME: &str = "load-time";

pub const RULES: &[Rule] = &[
    Rule {
        id: SYNTAX,
        severity: Severity::Error,
        explanation: "the script does not compile as Lua 5.1, the Lua of every Redis and Valkey",
        fix: "correct the syntax at the place given",
    },
    Rule {
        id: LUA52_SYNTAX,
        severity: Severity::Error,
        explanation: "Lua 5.2+ syntax or library (`//`, `goto`, bit operators, `\\x` escapes, `table.unpack`) that Lua 5.1 rejects or reads otherwise",
        fix: "write it the Lua 5.1 way: math.floor(a / b), unpack, bit.band, decimal escapes \\65",
    },
    Rule {
        id: GLOBAL_VARIABLE,
        severity: Severity::Error,
        explanation: "scripts cannot create globals, and reading an unknown global is an error in Redis 7",
        fix: "declare it `local` (functions too: `local function f() ... end`)",
    },
    Rule {
        id: KEY_NOT_FROM_KEYS,
        severity: Severity::Warning,
        explanation: "a key built in the script is not declared in KEYS: a cluster cannot route the script, and Redis cannot know what it touches",
        fix: "pass the key in KEYS (KEYS[n]) and use it from there",
    },
    Rule {
        id: VALUE_IN_KEYS,
        severity: Severity::Warning,
        explanation: "a KEYS entry is used as a value: KEYS is for key names (a cluster routes by every entry)",
        fix: "pass values in ARGV",
    },
    Rule {
        id: LITERAL_BELONGS_IN_ARGV,
        severity: Severity::Warning,
        explanation: "a literal that looks like data (an id, a timestamp) written into the script: each variant is a new script in the server's cache",
        fix: "pass it in ARGV and keep the script text constant",
    },
    Rule {
        id: WRITE_BEFORE_VALIDATION,
        severity: Severity::Warning,
        explanation: "a write comes before a check that can still end the script with an error: Redis does not roll back, the write stays",
        fix: "validate everything first, then write",
    },
    Rule {
        id: UNBOUNDED_READ,
        severity: Severity::Warning,
        explanation: "reads a whole key or keyspace of unknown size: on a large one the script blocks the server",
        fix: "read in bounded pages (SCAN/SSCAN/HSCAN/ZSCAN with COUNT, or a bounded range)",
    },
    Rule {
        id: SETNX_THEN_EXPIRE,
        severity: Severity::Warning,
        explanation: "SETNX then EXPIRE is two steps: an error between them leaves a key that never expires",
        fix: "one command: SET key value NX PX milliseconds",
    },
    Rule {
        id: REPLY_WITHOUT_TONUMBER,
        severity: Severity::Warning,
        explanation: "a string reply (GET, HGET, ...) compared or computed with a number: `<` raises an error, `==` is always false",
        fix: "convert first: tonumber(redis.call('GET', KEYS[1])) (nil for a missing key: `or 0`)",
    },
    Rule {
        id: DROPPED_PCALL_ERROR,
        severity: Severity::Warning,
        explanation: "the error a pcall catches is dropped: the script goes on as if the call had worked",
        fix: "look at the result: local ok, err = pcall(...) / if type(r) == 'table' and r.err then ... end",
    },
    Rule {
        id: NONDETERMINISTIC,
        severity: Severity::Warning,
        explanation: "the command's result differs from run to run: tests and dry runs cannot predict it",
        fix: "pass what varies in ARGV (the time, a random choice) when the script's result must be reproducible",
    },
    Rule {
        id: COMMAND_NOT_IN_PROFILE,
        severity: Severity::Warning,
        explanation: "the server version chosen (`--profile`) has no such command, or refuses it in scripts: the call fails there (profile-aware: versions differ)",
        fix: "use a command that server has (the message names the profiles that have it), or lint for the server you run",
    },
    Rule {
        id: WRONG_ARITY,
        severity: Severity::Error,
        explanation: "the call passes a number of arguments the command's table refuses: the server answers 'Wrong number of args calling Redis command from script'",
        fix: "pass the arguments the command takes (its arity counts the name too)",
    },
    Rule {
        id: CROSS_SLOT,
        severity: Severity::Warning,
        explanation: "the keys a script names (written in it, or the sidecar's KEYS) hash to different cluster slots: a Redis Cluster answers CROSSSLOT",
        fix: "give the keys one {hash tag}, such as {user:42}:cart and {user:42}:stock",
    },
    Rule {
        id: UNDECLARED_KEY,
        severity: Severity::Warning,
        explanation: "KEYS[n] past the keys the sidecar (SCRIPT.json) declares, or KEYS[0]: it is nil when the script runs",
        fix: "add the key to the sidecar's \"keys\", or use one of those declared",
    },
    Rule {
        id: UNKILLABLE,
        severity: Severity::Warning,
        explanation: "a loop or recursion in an xpcall error handler (or a `__gc` metamethod where newproxy exists) runs with Lua's hooks off once the script is killed: SCRIPT KILL cannot stop it and the server may need a restart",
        fix: "keep error handlers short and loop-free (return the error, or a fixed message); do the work after xpcall returns",
    },
    Rule {
        id: LIBRARY_HEADER,
        severity: Severity::Error,
        explanation: "a function library (a file calling redis.register_function) needs `#!lua name=<library>` as its first line, and at least one function: FUNCTION LOAD refuses it otherwise",
        fix: "start the file with `#!lua name=mylib` and nothing else on that line",
    },
    Rule {
        id: BAD_NAME,
        severity: Severity::Error,
        explanation: "a library or function name with characters other than letters, digits and `_`: FUNCTION LOAD refuses it",
        fix: "name it with letters, digits and underscores only (my_lib, get_stock)",
    },
    Rule {
        id: DUPLICATE_FUNCTION,
        severity: Severity::Error,
        explanation: "two functions of a library have one name: FUNCTION LOAD answers 'Function already exists in the library'",
        fix: "give each redis.register_function its own name",
    },
    Rule {
        id: UNKNOWN_FLAG,
        severity: Severity::Error,
        explanation: "a function flag the server does not know: FUNCTION LOAD answers 'unknown flag given'",
        fix: "use no-writes, allow-oom, allow-stale, no-cluster or allow-cross-slot-keys",
    },
    Rule {
        id: WRITE_IN_NO_WRITES,
        severity: Severity::Error,
        explanation: "a function flagged no-writes calls a write command (the profile's table says so): FCALL answers 'Write commands are not allowed from read-only scripts'",
        fix: "drop the no-writes flag, or move the write to a function without it",
    },
    Rule {
        id: LOAD_TIME,
        severity: Severity::Error,
        explanation: "a library's top level runs once, at FUNCTION LOAD, without redis.call, KEYS or ARGV: the load fails",
        fix: "call commands and read keys inside a registered function: function(keys, args) ... end",
    },
    Rule {
        id: ONE_COMMAND,
        severity: Severity::Warning,
        explanation: "the script is one command: it costs a script cache entry and a Lua call for nothing",
        fix: "send the command itself",
    },
    Rule {
        id: NOT_ANALYSED,
        severity: Severity::Warning,
        explanation: "the script is larger, or an expression nests deeper, than the analysis reads: only Lua's compile check ran",
        fix: "split the script, or the long chain of operators (a loop over a table), to have it linted",
    },
];

pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
