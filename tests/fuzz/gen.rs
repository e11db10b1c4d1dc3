//! Random Redis command sequences over a small mixed-type keyspace with TTLs, written as a Lua script
//! of `redis.pcall`/`redis.call` calls, for the crash fuzzer (`tests/fuzz.rs`) and the differential
//! fuzzer (`tests/diff_fuzz.rs`).
//!
//! Every choice goes through [`Src`], so the same generator is driven by a seeded RNG (`rand`) or by
//! the bytes of a libFuzzer-shaped input (`arbitrary::Unstructured`). Commands are written from
//! templates in Redis 7.0's syntax; what Redis leaves to chance is either not generated (random pops,
//! TIME, OBJECT FREQ) or normalized inside the script on both sides (unordered replies sorted, TTLs in
//! 10 s buckets, SCAN read to its end in one call), so a difference is the sandbox's.

#![allow(dead_code)]

use serde_json::{json, Map, Value as Json};

/// A source of choices.
pub trait Src {
    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize;
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

impl Src for rand::rngs::StdRng {
    fn below(&mut self, n: usize) -> usize {
        rand::RngExt::random_range(self, 0..n)
    }
}

impl Src for arbitrary::Unstructured<'_> {
    fn below(&mut self, n: usize) -> usize {
        // An exhausted input reads as zeros: the generator then makes its shortest choices.
        self.choose_index(n).unwrap_or(0)
    }
}

/// The four known mismatch groups between the sandbox and later servers: inputs that provoke them are generated only when enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Known {
    /// Zset scores needing 17 significant digits in the seed keyspace JSON.
    SeedFloat,
    /// `LMOVE l l ...` / `RPOPLPUSH l l` (the same key as source and destination).
    SameKeyMove,
    /// `redis.error_reply` with a NUL in its text.
    ErrorReplyNul,
    /// A NUL inside keyword, range and cursor arguments.
    NulArgument,
}

impl Known {
    pub const ALL: [Known; 4] = [
        Known::SeedFloat,
        Known::SameKeyMove,
        Known::ErrorReplyNul,
        Known::NulArgument,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Known::SeedFloat => "seed-float",
            Known::SameKeyMove => "same-key-move",
            Known::ErrorReplyNul => "error-reply-nul",
            Known::NulArgument => "nul-argument",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub enabled: Vec<Known>,
    /// Keep numbers small (offsets, counts): the crash fuzzer's runs stay cheap.
    pub small: bool,
}

impl Options {
    pub fn has(&self, k: Known) -> bool {
        self.enabled.contains(&k)
    }
}

/// One statement of the script: `r[i] = <expr>`, with the groups its generation used.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub command: String,
    pub expr: String,
    pub tags: Vec<Known>,
}

/// A generated case: the seed keyspace, the statements, the protocols.
#[derive(Debug, Clone)]
pub struct Program {
    pub seed: Json,
    pub seed_tags: Vec<Known>,
    pub stmts: Vec<Stmt>,
    /// `redis.setresp(3)` at the start of the script.
    pub script_resp3: bool,
    /// The caller's protocol.
    pub client_resp: u8,
}

/// The script's helpers, each included when a statement uses it.
const HELPERS: &[(&str, &str)] = &[
    ("Tms", "local t = redis.call('TIME')\nlocal Tms = t[1] * 1000 + math.floor(t[2] / 1000)\nlocal T = tonumber(t[1])\n"),
    ("U(", "local function U(x) if type(x) ~= 'table' or x.err then return x end if x.set then local a = {} for k in pairs(x.set) do a[#a + 1] = k end x = a end table.sort(x) return x end\n"),
    ("SC(", "local function SC(x, w) if type(x) ~= 'table' or x.err then return x end local g = {} for i = 1, #x[2], w do g[#g + 1] = {x[2][i], x[2][i + 1]} end table.sort(g, function(a, b) return a[1] < b[1] end) local o = {} for _, p in ipairs(g) do o[#o + 1] = p[1] if w == 2 then o[#o + 1] = p[2] end end return {x[1], o} end\n"),
    ("PAIRS(", "local function PAIRS(x) if type(x) ~= 'table' or x.err then return x end local g = {} if x.map then for k, v in pairs(x.map) do g[#g + 1] = {k, v} end else for i = 1, #x, 2 do g[#g + 1] = {x[i], x[i + 1]} end end table.sort(g, function(a, b) return a[1] < b[1] end) local o = {} for _, p in ipairs(g) do o[#o + 1] = p[1] o[#o + 1] = p[2] end return o end\n"),
    ("B(", "local function B(x, unit) if type(x) ~= 'number' or x < 0 then return x end return math.floor((x * unit + 5000) / 10000) end\n"),
    ("A(", "local function A(x, unit) if type(x) ~= 'number' or x < 0 then return x end return math.floor((x * unit - Tms + 5000) / 10000) end\n"),
];

impl Program {
    /// The Lua script.
    pub fn script(&self) -> String {
        let mut s = String::new();
        if self.script_resp3 {
            s.push_str("redis.setresp(3)\n");
        }
        s.push_str("local r = {}\n");
        let uses = |name: &str| {
            self.stmts.iter().any(|st| st.expr.contains(name))
                || (name == "Tms"
                    && self
                        .stmts
                        .iter()
                        .any(|st| st.expr.contains("A(") || st.expr.contains(" T ")))
        };
        for (name, code) in HELPERS {
            if uses(name) {
                s.push_str(code);
            }
        }
        for (i, st) in self.stmts.iter().enumerate() {
            s.push_str(&format!("r[{}] = {}\n", i + 1, st.expr));
        }
        // A RESP3 null is a Lua nil, which would end the returned array.
        s.push_str(&format!(
            "for i = 1, {} do if r[i] == nil then r[i] = '(nil)' end end\nreturn r",
            self.stmts.len()
        ));
        s
    }

    pub fn tags(&self) -> Vec<Known> {
        let mut t: Vec<Known> = self
            .seed_tags
            .iter()
            .chain(self.stmts.iter().flat_map(|s| s.tags.iter()))
            .copied()
            .collect();
        t.sort();
        t.dedup();
        t
    }

    /// The case in the `.cases` format of tests/cases.
    pub fn to_case(&self, name: &str) -> String {
        let mut out = format!("### {name}\n");
        if self.seed.as_object().is_some_and(|m| !m.is_empty()) {
            out.push_str(&format!("@seed {}\n", self.seed));
        }
        if self.client_resp == 3 {
            out.push_str("@resp 3\n");
        }
        out.push_str(&self.script());
        out.push('\n');
        out
    }
}

// ---- keys and values ----

/// Key names by type; `nokey` never exists in a seed.
const STRINGS: &[&str] = &["str1", "str2"];
const HASHES: &[&str] = &["hash1", "hash2"];
const LISTS: &[&str] = &["list1", "list2"];
const SETS: &[&str] = &["set1", "set2"];
const ZSETS: &[&str] = &["zset1", "zset2"];
const STREAMS: &[&str] = &["strm1"];
const ALL_KEYS: &[&str] = &[
    "str1", "str2", "hash1", "hash2", "list1", "list2", "set1", "set2", "zset1", "zset2", "strm1",
    "nokey",
];

const VALUES: &[&str] = &[
    "a",
    "b",
    "c",
    "d",
    "1",
    "2",
    "3",
    "10",
    "-3",
    "3.5",
    "",
    "x y",
    "abcabc",
    "007",
    "1e3",
    "9223372036854775807",
];
const FIELDS: &[&str] = &["a", "b", "c", "f1", "f2", "1", "n"];
const INTS: &[&str] = &[
    "0", "1", "2", "3", "-1", "-2", "5", "10", "-100", "abc", "1.5", "",
];
const BIG_INTS: &[&str] = &[
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
];
const BIT_OFFSETS: &[&str] = &[
    "0",
    "1",
    "7",
    "8",
    "15",
    "63",
    "100",
    "-1",
    "x",
    "4294967296",
];
const BITFIELD_TYPES: &[&str] = &["u1", "u8", "i8", "i5", "u63", "i64", "u64", "i0", "x"];
const BITFIELD_OFFSETS: &[&str] = &["0", "3", "#1", "#2", "100", "-1", "#x", "#"];
const COUNTS: &[&str] = &["0", "1", "2", "3", "5", "100", "-1"];
const FLOATS: &[&str] = &[
    "0",
    "1",
    "1.5",
    "-0.25",
    "2.5",
    "10",
    "1e3",
    "inf",
    "-inf",
    "+inf",
    "3.0000000000000004",
    "0.1",
    "-7",
    "abc",
    "1e308",
    "nan",
];
const SCORE_BOUNDS: &[&str] = &[
    "-inf", "+inf", "0", "1", "(1", "2.5", "(2.5", "-1", "10", "(10", "x",
];
const LEX_BOUNDS: &[&str] = &["-", "+", "[a", "(a", "[b", "(c", "[d", "[", "a"];
const STREAM_IDS: &[&str] = &[
    "-", "+", "0", "0-1", "1", "1-1", "1-2", "2-0", "3", "5-5", "(1-1", "9-9", "x",
];
const NEW_IDS: &[&str] = &["1-1", "1-2", "2-0", "3-*", "4", "5-5", "10-1", "0-0", "0-1"];
const PATTERNS: &[&str] = &["*", "s*", "*1", "?et*", "[hz]*", "*a*", "nokey", "\\*"];
/// Durations, none equal to a seed TTL (so GT/LT never compares equal by chance), multiples of 10 s
/// so the 10 s buckets of `B` never straddle a boundary.
const SECONDS: &[&str] = &["10", "100", "1000", "20000", "0", "-5"];
const MILLIS: &[&str] = &["10000", "100000", "1000000", "0", "-5"];
const DBS: &[&str] = &["0", "1", "2", "16", "x"];
const TYPES: &[&str] = &["string", "hash", "list", "set", "zset", "stream", "x"];

#[derive(Clone, Copy, PartialEq)]
enum Fam {
    Any,
    Str,
    Hash,
    List,
    Set,
    Zset,
    Stream,
}

/// How a reply is normalized inside the script.
#[derive(Clone, Copy, PartialEq)]
enum Norm {
    None,
    /// Unordered members: sorted.
    Unordered,
    /// A SCAN-like reply: elements sorted (in pairs for HSCAN/ZSCAN); `Scan(0)`: a field-value
    /// reply (HGETALL, a map in RESP3) as pairs sorted by field.
    Scan(u8),
    /// A relative time: 10 s buckets of (x * unit ms).
    Bucket(u32),
    /// An absolute unix time: 10 s buckets of (x * unit ms - now).
    Absolute(u32),
}

/// Command templates in Redis 7.0 syntax. Lower-case words are slots (below), upper-case words
/// literal keywords; `[a | b c]` is optional (one alternative or nothing), `{a | b}` required,
/// `(...)+` one to three repetitions, `#k` a numkeys argument and that many keys.
const TEMPLATES: &[(&str, Fam, Norm)] = &[
    // keys
    ("COPY k k [DB db] [REPLACE]", Fam::Any, Norm::None),
    ("DBSIZE", Fam::Any, Norm::None),
    ("DEL (k)+", Fam::Any, Norm::None),
    ("EXISTS (k)+", Fam::Any, Norm::None),
    ("EXPIRE k sec [NX | XX | GT | LT]", Fam::Any, Norm::None),
    ("EXPIREAT k at [NX | XX | GT | LT]", Fam::Any, Norm::None),
    ("EXPIRETIME k", Fam::Any, Norm::Absolute(1000)),
    ("KEYS p", Fam::Any, Norm::Unordered),
    ("MOVE k db", Fam::Any, Norm::None),
    ("OBJECT HELP", Fam::Any, Norm::None),
    ("PERSIST k", Fam::Any, Norm::None),
    ("PEXPIRE k ms [NX | XX | GT | LT]", Fam::Any, Norm::None),
    ("PEXPIREAT k pat [NX | XX | GT | LT]", Fam::Any, Norm::None),
    ("PEXPIRETIME k", Fam::Any, Norm::Absolute(1)),
    ("PTTL k", Fam::Any, Norm::Bucket(1)),
    ("RENAME k k", Fam::Any, Norm::None),
    ("RENAMENX k k", Fam::Any, Norm::None),
    (
        "SCAN cursor [MATCH p] COUNT 1000 [TYPE type]",
        Fam::Any,
        Norm::Scan(1),
    ),
    ("TOUCH (k)+", Fam::Any, Norm::None),
    ("TTL k", Fam::Any, Norm::Bucket(1000)),
    ("TYPE k", Fam::Any, Norm::None),
    ("UNLINK (k)+", Fam::Any, Norm::None),
    // strings
    ("APPEND k v", Fam::Str, Norm::None),
    ("DECR k", Fam::Str, Norm::None),
    ("DECRBY k i", Fam::Str, Norm::None),
    ("GET k", Fam::Str, Norm::None),
    ("GETDEL k", Fam::Str, Norm::None),
    (
        "GETEX k [EX sec | PX ms | EXAT at | PXAT pat | PERSIST]",
        Fam::Str,
        Norm::None,
    ),
    ("GETRANGE k i i", Fam::Str, Norm::None),
    ("GETSET k v", Fam::Str, Norm::None),
    ("INCR k", Fam::Str, Norm::None),
    ("INCRBY k i", Fam::Str, Norm::None),
    ("INCRBYFLOAT k x", Fam::Str, Norm::None),
    (
        "LCS k k [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]",
        Fam::Str,
        Norm::None,
    ),
    ("MGET (k)+", Fam::Str, Norm::None),
    ("MSET (k v)+", Fam::Str, Norm::None),
    ("MSETNX (k v)+", Fam::Str, Norm::None),
    ("PSETEX k ms v", Fam::Str, Norm::None),
    (
        "SET k v [NX | XX] [GET] [EX sec | PX ms | EXAT at | PXAT pat | KEEPTTL]",
        Fam::Str,
        Norm::None,
    ),
    ("SETEX k sec v", Fam::Str, Norm::None),
    ("SETNX k v", Fam::Str, Norm::None),
    ("SETRANGE k off v", Fam::Str, Norm::None),
    ("STRLEN k", Fam::Str, Norm::None),
    ("SUBSTR k i i", Fam::Str, Norm::None),
    // bitmaps
    ("SETBIT k bo bit", Fam::Str, Norm::None),
    ("GETBIT k bo", Fam::Str, Norm::None),
    ("BITCOUNT k [i i [BYTE | BIT]]", Fam::Str, Norm::None),
    ("BITPOS k bit [i [i [BYTE | BIT]]]", Fam::Str, Norm::None),
    ("BITOP {AND | OR | XOR} k (k)+", Fam::Str, Norm::None),
    ("BITOP NOT k k", Fam::Str, Norm::None),
    (
        "BITFIELD k (GET bft bfo | SET bft bfo i | INCRBY bft bfo i | OVERFLOW {WRAP | SAT | FAIL})+",
        Fam::Str,
        Norm::None,
    ),
    ("BITFIELD_RO k (GET bft bfo)+", Fam::Str, Norm::None),
    // hyperloglog
    ("PFADD k (v)+", Fam::Str, Norm::None),
    ("PFADD k", Fam::Str, Norm::None),
    ("PFCOUNT (k)+", Fam::Str, Norm::None),
    ("PFMERGE k (k)+", Fam::Str, Norm::None),
    // sort; no BY/GET patterns: ties between equal BY values follow each side's
    // set order
    ("SORT k [LIMIT i n] [ASC | DESC] [ALPHA] [STORE k]", Fam::List, Norm::None),
    ("SORT_RO k [LIMIT i n] [ASC | DESC] [ALPHA]", Fam::List, Norm::None),
    // hashes
    ("HDEL k (f)+", Fam::Hash, Norm::None),
    ("HEXISTS k f", Fam::Hash, Norm::None),
    ("HGET k f", Fam::Hash, Norm::None),
    // A hash with a value above 64 bytes (hash-max-listpack-value) is a hash table in Redis: its
    // order is Redis's hash order, so hash replies are compared as sets.
    ("HGETALL k", Fam::Hash, Norm::Scan(0)),
    ("HINCRBY k f i", Fam::Hash, Norm::None),
    ("HINCRBYFLOAT k f x", Fam::Hash, Norm::None),
    ("HKEYS k", Fam::Hash, Norm::Unordered),
    ("HLEN k", Fam::Hash, Norm::None),
    ("HMGET k (f)+", Fam::Hash, Norm::None),
    ("HMSET k (f v)+", Fam::Hash, Norm::None),
    (
        "HSCAN k cursor [MATCH p] COUNT 1000",
        Fam::Hash,
        Norm::Scan(2),
    ),
    ("HSET k (f v)+", Fam::Hash, Norm::None),
    ("HSETNX k f v", Fam::Hash, Norm::None),
    ("HRANDFIELD k {0 | 100}", Fam::Hash, Norm::Unordered),
    ("HSTRLEN k f", Fam::Hash, Norm::None),
    ("HVALS k", Fam::Hash, Norm::Unordered),
    // lists
    (
        "BLMPOP timeout #k {LEFT | RIGHT} [COUNT n]",
        Fam::List,
        Norm::None,
    ),
    ("LINDEX k i", Fam::List, Norm::None),
    ("LINSERT k {BEFORE | AFTER} v v", Fam::List, Norm::None),
    ("LLEN k", Fam::List, Norm::None),
    (
        "LMOVE k k2 {LEFT | RIGHT} {LEFT | RIGHT}",
        Fam::List,
        Norm::None,
    ),
    ("LMPOP #k {LEFT | RIGHT} [COUNT n]", Fam::List, Norm::None),
    ("LPOP k [n]", Fam::List, Norm::None),
    (
        "LPOS k v [RANK i] [COUNT n] [MAXLEN n]",
        Fam::List,
        Norm::None,
    ),
    ("LPUSH k (v)+", Fam::List, Norm::None),
    ("LPUSHX k (v)+", Fam::List, Norm::None),
    ("LRANGE k i i", Fam::List, Norm::None),
    ("LREM k i v", Fam::List, Norm::None),
    ("LSET k i v", Fam::List, Norm::None),
    ("LTRIM k i i", Fam::List, Norm::None),
    ("RPOP k [n]", Fam::List, Norm::None),
    ("RPOPLPUSH k k2", Fam::List, Norm::None),
    ("RPUSH k (v)+", Fam::List, Norm::None),
    ("RPUSHX k (v)+", Fam::List, Norm::None),
    // sets
    ("SADD k (v)+", Fam::Set, Norm::None),
    ("SCARD k", Fam::Set, Norm::None),
    ("SDIFF (k)+", Fam::Set, Norm::Unordered),
    ("SDIFFSTORE k (k)+", Fam::Set, Norm::None),
    ("SINTER (k)+", Fam::Set, Norm::Unordered),
    ("SINTERCARD #k [LIMIT n]", Fam::Set, Norm::None),
    ("SINTERSTORE k (k)+", Fam::Set, Norm::None),
    ("SISMEMBER k v", Fam::Set, Norm::None),
    ("SMEMBERS k", Fam::Set, Norm::Unordered),
    ("SMISMEMBER k (v)+", Fam::Set, Norm::None),
    ("SMOVE k k v", Fam::Set, Norm::None),
    ("SREM k (v)+", Fam::Set, Norm::None),
    // Random picks only where the whole collection comes back (the count reaches its size).
    ("SPOP k {0 | 100}", Fam::Set, Norm::Unordered),
    ("SRANDMEMBER k {0 | 100}", Fam::Set, Norm::Unordered),
    (
        "SSCAN k cursor [MATCH p] COUNT 1000",
        Fam::Set,
        Norm::Scan(1),
    ),
    ("SUNION (k)+", Fam::Set, Norm::Unordered),
    ("SUNIONSTORE k (k)+", Fam::Set, Norm::None),
    // sorted sets
    (
        "BZMPOP timeout #k {MIN | MAX} [COUNT n]",
        Fam::Zset,
        Norm::None,
    ),
    (
        "ZADD k [NX | XX] [GT | LT] [CH] [INCR] (x v)+",
        Fam::Zset,
        Norm::None,
    ),
    ("ZCARD k", Fam::Zset, Norm::None),
    ("ZCOUNT k sc sc", Fam::Zset, Norm::None),
    ("ZDIFF #k [WITHSCORES]", Fam::Zset, Norm::None),
    ("ZDIFFSTORE k #k", Fam::Zset, Norm::None),
    ("ZINCRBY k x v", Fam::Zset, Norm::None),
    (
        "ZINTER #k [WEIGHTS (x)+] [AGGREGATE {SUM | MIN | MAX}] [WITHSCORES]",
        Fam::Zset,
        Norm::None,
    ),
    ("ZINTERCARD #k [LIMIT n]", Fam::Zset, Norm::None),
    (
        "ZINTERSTORE k #k [WEIGHTS (x)+] [AGGREGATE {SUM | MIN | MAX}]",
        Fam::Zset,
        Norm::None,
    ),
    ("ZLEXCOUNT k lx lx", Fam::Zset, Norm::None),
    ("ZMPOP #k {MIN | MAX} [COUNT n]", Fam::Zset, Norm::None),
    ("ZMSCORE k (v)+", Fam::Zset, Norm::None),
    ("ZPOPMAX k [n]", Fam::Zset, Norm::None),
    ("ZPOPMIN k [n]", Fam::Zset, Norm::None),
    (
        "ZRANGE k {i i | sc sc BYSCORE | lx lx BYLEX} [REV] [LIMIT i n] [WITHSCORES]",
        Fam::Zset,
        Norm::None,
    ),
    ("ZRANGEBYLEX k lx lx [LIMIT i n]", Fam::Zset, Norm::None),
    (
        "ZRANGEBYSCORE k sc sc [WITHSCORES] [LIMIT i n]",
        Fam::Zset,
        Norm::None,
    ),
    (
        "ZRANGESTORE k k {i i | sc sc BYSCORE | lx lx BYLEX} [REV] [LIMIT i n]",
        Fam::Zset,
        Norm::None,
    ),
    ("ZRANK k v", Fam::Zset, Norm::None),
    ("ZREM k (v)+", Fam::Zset, Norm::None),
    ("ZREMRANGEBYLEX k lx lx", Fam::Zset, Norm::None),
    ("ZREMRANGEBYRANK k i i", Fam::Zset, Norm::None),
    ("ZREMRANGEBYSCORE k sc sc", Fam::Zset, Norm::None),
    ("ZREVRANGE k i i [WITHSCORES]", Fam::Zset, Norm::None),
    ("ZREVRANGEBYLEX k lx lx [LIMIT i n]", Fam::Zset, Norm::None),
    (
        "ZREVRANGEBYSCORE k sc sc [WITHSCORES] [LIMIT i n]",
        Fam::Zset,
        Norm::None,
    ),
    ("ZREVRANK k v", Fam::Zset, Norm::None),
    ("ZRANDMEMBER k {0 | 100}", Fam::Zset, Norm::Unordered),
    (
        "ZSCAN k cursor [MATCH p] COUNT 1000",
        Fam::Zset,
        Norm::Scan(2),
    ),
    ("ZSCORE k v", Fam::Zset, Norm::None),
    (
        "ZUNION #k [WEIGHTS (x)+] [AGGREGATE {SUM | MIN | MAX}] [WITHSCORES]",
        Fam::Zset,
        Norm::None,
    ),
    (
        "ZUNIONSTORE k #k [WEIGHTS (x)+] [AGGREGATE {SUM | MIN | MAX}]",
        Fam::Zset,
        Norm::None,
    ),
    // streams
    (
        "XADD k [NOMKSTREAM] [MAXLEN [= | ~] n | MINID [= | ~] id] nid (f v)+",
        Fam::Stream,
        Norm::None,
    ),
    ("XDEL k (id)+", Fam::Stream, Norm::None),
    ("XLEN k", Fam::Stream, Norm::None),
    ("XRANGE k id id [COUNT n]", Fam::Stream, Norm::None),
    ("XREAD [COUNT n] STREAMS k id", Fam::Stream, Norm::None),
    ("XREAD [COUNT n] STREAMS k k id id", Fam::Stream, Norm::None),
    ("XREVRANGE k id id [COUNT n]", Fam::Stream, Norm::None),
    (
        "XTRIM k {MAXLEN | MINID} [= | ~] {n | id} [LIMIT n]",
        Fam::Stream,
        Norm::None,
    ),
    // server
    ("ECHO v", Fam::Any, Norm::None),
    ("FLUSHDB [ASYNC | SYNC]", Fam::Any, Norm::None),
    ("FLUSHALL [ASYNC | SYNC]", Fam::Any, Norm::None),
    ("PING [v]", Fam::Any, Norm::None),
    ("PUBLISH v v", Fam::Any, Norm::None),
    ("SELECT db", Fam::Any, Norm::None),
    ("SWAPDB db db", Fam::Any, Norm::None),
];

/// Every command name the templates cover.
pub fn command_names() -> Vec<String> {
    let mut names: Vec<String> = TEMPLATES
        .iter()
        .map(|(t, _, _)| {
            let mut w = t.split(' ');
            let first = w.next().unwrap_or_default();
            match (first, w.next()) {
                ("OBJECT", Some(sub)) => format!("{first} {sub}"),
                _ => first.to_string(),
            }
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[derive(Debug, Clone)]
enum Node {
    Lit(String),
    Slot(String),
    Opt(Vec<Vec<Node>>),
    Req(Vec<Vec<Node>>),
    Rep(Vec<Node>),
}

fn parse_seq(tokens: &[&str], at: &mut usize, stop: &[&str]) -> Vec<Node> {
    let mut out = Vec::new();
    while *at < tokens.len() && !stop.contains(&tokens[*at]) {
        let t = tokens[*at];
        *at += 1;
        let node = match t {
            "[" | "{" => {
                let close = if t == "[" { "]" } else { "}" };
                let mut alts = vec![parse_seq(tokens, at, &["|", close])];
                while tokens[*at] == "|" {
                    *at += 1;
                    alts.push(parse_seq(tokens, at, &["|", close]));
                }
                *at += 1;
                if t == "[" {
                    Node::Opt(alts)
                } else {
                    Node::Req(alts)
                }
            }
            "(" => {
                let body = parse_seq(tokens, at, &[")+"]);
                *at += 1;
                Node::Rep(body)
            }
            w if w.starts_with(|c: char| c.is_ascii_lowercase() || c == '#') => {
                Node::Slot(w.into())
            }
            w => Node::Lit(w.into()),
        };
        out.push(node);
    }
    out
}

fn parse_template(t: &str) -> Vec<Node> {
    let spaced = t
        .replace('[', " [ ")
        .replace(']', " ] ")
        .replace('{', " { ")
        .replace('}', " } ")
        .replace('(', " ( ")
        .replace(")+", " )+ ")
        .replace('|', " | ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    parse_seq(&tokens, &mut at, &[])
}

/// An argument: bytes, or a Lua expression (times relative to the script's clock).
#[derive(Debug, Clone)]
enum Arg {
    Bytes(Vec<u8>),
    Expr(String),
}

struct Gen<'a, S: Src> {
    src: &'a mut S,
    opts: &'a Options,
    fam: Fam,
    tags: Vec<Known>,
    first_key: Option<String>,
    /// Leading words that name the command (and OBJECT's subcommand): never cut by a NUL, since
    /// Redis finds a name with a NUL by the chance of its hash seed (README, known differences).
    names_left: usize,
}

impl<S: Src> Gen<'_, S> {
    fn key(&mut self) -> String {
        let pool = match self.fam {
            Fam::Str => STRINGS,
            Fam::Hash => HASHES,
            Fam::List => LISTS,
            Fam::Set => SETS,
            Fam::Zset => ZSETS,
            Fam::Stream => STREAMS,
            Fam::Any => ALL_KEYS,
        };
        let k = if self.src.chance(80) {
            self.src.pick(pool)
        } else {
            self.src.pick(ALL_KEYS)
        };
        k.to_string()
    }

    /// A keyword, range or cursor argument: with `NulArgument`, sometimes cut by a NUL as a C
    /// string would be.
    fn c_string(&mut self, text: &str) -> Arg {
        let mut bytes = text.as_bytes().to_vec();
        if self.opts.has(Known::NulArgument) && self.src.chance(3) {
            bytes.push(0);
            let tails: [&[u8]; 4] = [b"", b"x", b"1", b" NX"];
            let tail = *self.src.pick(&tails);
            bytes.extend_from_slice(tail);
            self.tags.push(Known::NulArgument);
        }
        Arg::Bytes(bytes)
    }

    fn keyword(&mut self, w: &str) -> Arg {
        if self.names_left > 0 {
            self.names_left -= 1;
            return Arg::Bytes(w.as_bytes().to_vec());
        }
        let w = if self.src.chance(10) {
            w.to_ascii_lowercase()
        } else {
            w.to_string()
        };
        self.c_string(&w)
    }

    fn slot(&mut self, name: &str, out: &mut Vec<Arg>) {
        let small = self.opts.small;
        let arg = match name {
            "k" => {
                let k = self.key();
                self.first_key.get_or_insert(k.clone());
                Arg::Bytes(k.into_bytes())
            }
            "k2" => {
                // A list move's destination: the same key only with SameKeyMove.
                let mut k = self.key();
                if self.first_key.as_deref() == Some(k.as_str()) {
                    if self.opts.has(Known::SameKeyMove) {
                        self.tags.push(Known::SameKeyMove);
                    } else {
                        k = if k == "list2" { "list1" } else { "list2" }.to_string();
                    }
                }
                Arg::Bytes(k.into_bytes())
            }
            "v" => Arg::Bytes(self.src.pick(VALUES).as_bytes().to_vec()),
            "f" => Arg::Bytes(self.src.pick(FIELDS).as_bytes().to_vec()),
            "i" => {
                if !small && self.src.chance(5) {
                    Arg::Bytes(self.src.pick(BIG_INTS).as_bytes().to_vec())
                } else {
                    Arg::Bytes(self.src.pick(INTS).as_bytes().to_vec())
                }
            }
            "off" => Arg::Bytes(
                self.src
                    .pick(&["0", "1", "3", "10", "-1", "x"])
                    .as_bytes()
                    .to_vec(),
            ),
            "n" => Arg::Bytes(self.src.pick(COUNTS).as_bytes().to_vec()),
            // Bitmap arguments: offsets stay small so no run builds a huge string.
            "bo" => Arg::Bytes(self.src.pick(BIT_OFFSETS).as_bytes().to_vec()),
            "bit" => Arg::Bytes(
                self.src
                    .pick(&["0", "1", "2", "-1", "x"])
                    .as_bytes()
                    .to_vec(),
            ),
            "bft" => {
                let t = *self.src.pick(BITFIELD_TYPES);
                self.c_string(t)
            }
            "bfo" => Arg::Bytes(self.src.pick(BITFIELD_OFFSETS).as_bytes().to_vec()),
            "x" => Arg::Bytes(self.src.pick(FLOATS).as_bytes().to_vec()),
            "sc" => {
                let b = *self.src.pick(SCORE_BOUNDS);
                self.c_string(b)
            }
            "lx" => {
                let b = *self.src.pick(LEX_BOUNDS);
                self.c_string(b)
            }
            "id" => Arg::Bytes(self.src.pick(STREAM_IDS).as_bytes().to_vec()),
            "nid" => Arg::Bytes(self.src.pick(NEW_IDS).as_bytes().to_vec()),
            "p" => Arg::Bytes(self.src.pick(PATTERNS).as_bytes().to_vec()),
            "sec" => Arg::Bytes(self.src.pick(SECONDS).as_bytes().to_vec()),
            "ms" => Arg::Bytes(self.src.pick(MILLIS).as_bytes().to_vec()),
            "at" => Arg::Expr(
                self.src
                    .pick(&["T + 100", "T + 1000", "T - 10", "1", "0", "T + 20000"])
                    .to_string(),
            ),
            "pat" => Arg::Expr(
                self.src
                    .pick(&["Tms + 100000", "Tms + 10000", "Tms - 10", "1"])
                    .to_string(),
            ),
            "db" => Arg::Bytes(self.src.pick(DBS).as_bytes().to_vec()),
            "type" => Arg::Bytes(self.src.pick(TYPES).as_bytes().to_vec()),
            "cursor" => {
                // Only the first call of a scan: where a later cursor lands is Redis's hash order.
                let c = *self.src.pick(&["0", "0", "0", "x"]);
                self.c_string(c)
            }
            "timeout" => Arg::Bytes(self.src.pick(&["0", "0.1", "-1", "x"]).as_bytes().to_vec()),
            "#k" => {
                let n = 1 + self.src.below(3);
                let shown = if self.src.chance(5) {
                    self.src.pick(&["0", "-1", "5", "x"]).to_string()
                } else {
                    n.to_string()
                };
                out.push(Arg::Bytes(shown.into_bytes()));
                for _ in 0..n {
                    let k = self.key();
                    out.push(Arg::Bytes(k.into_bytes()));
                }
                return;
            }
            other => panic!("unknown slot {other} in a template"),
        };
        out.push(arg);
    }

    fn seq(&mut self, nodes: &[Node], out: &mut Vec<Arg>) {
        for node in nodes {
            match node {
                Node::Lit(w) => {
                    let a = self.keyword(w);
                    out.push(a);
                }
                Node::Slot(s) => self.slot(s, out),
                Node::Opt(alts) => {
                    if self.src.chance(40) {
                        let alt = self.src.below(alts.len());
                        self.seq(&alts[alt], out);
                    }
                }
                Node::Req(alts) => {
                    let alt = self.src.below(alts.len());
                    self.seq(&alts[alt], out);
                }
                Node::Rep(body) => {
                    for _ in 0..1 + self.src.below(3) {
                        self.seq(body, out);
                    }
                }
            }
        }
    }
}

/// A Lua string literal for any bytes.
pub fn lua_quote(bytes: &[u8]) -> String {
    let mut s = String::from("'");
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            // A decimal escape followed by a digit would read it: always three digits.
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = i;
                s.push_str(&format!("\\{b:03}"));
            }
        }
    }
    s.push('\'');
    s
}

fn statement<S: Src>(src: &mut S, opts: &Options) -> Stmt {
    // Reply constructors now and then.
    if src.chance(2) {
        let mut tags = Vec::new();
        let text: &[u8] = if opts.has(Known::ErrorReplyNul) && src.chance(50) {
            tags.push(Known::ErrorReplyNul);
            let texts: [&[u8]; 3] = [b"a\0b c", b"MY err\0x", b"\0"];
            texts[src.below(texts.len())]
        } else {
            let texts: [&[u8]; 4] = [b"my error", b"-ERR x", b"WRONG thing", b""];
            texts[src.below(texts.len())]
        };
        let f = if src.chance(70) {
            "error_reply"
        } else {
            "status_reply"
        };
        return Stmt {
            command: f.to_string(),
            expr: format!("redis.{f}({})", lua_quote(text)),
            tags,
        };
    }
    let (template, fam, norm) = *src.pick(TEMPLATES);
    let nodes = parse_template(template);
    let mut g = Gen {
        src,
        opts,
        fam,
        tags: Vec::new(),
        first_key: None,
        names_left: if template.starts_with("OBJECT ") {
            2
        } else {
            1
        },
    };
    let mut args = Vec::new();
    g.seq(&nodes, &mut args);
    // Now and then an argument dropped or repeated: arity and syntax errors.
    let random_pick = ["SPOP", "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER"]
        .iter()
        .any(|c| template.starts_with(c));
    // (Not with a time among the arguments: it would land in an error text, a millisecond apart.)
    let timed = args.iter().any(|a| matches!(a, Arg::Expr(_)));
    if args.len() > 1 && !random_pick && !timed && g.src.chance(3) {
        let at = 1 + g.src.below(args.len() - 1);
        if g.src.chance(50) {
            args.remove(at);
        } else {
            let a = args[at].clone();
            args.insert(at, a);
        }
    }
    let tags = g.tags;
    let via = if src.chance(90) { "pcall" } else { "call" };
    let rendered: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Bytes(b) => lua_quote(b),
            Arg::Expr(e) => e.clone(),
        })
        .collect();
    let call = format!("redis.{via}({})", rendered.join(", "));
    let expr = match norm {
        Norm::None => call,
        Norm::Unordered => format!("U({call})"),
        Norm::Scan(0) => format!("PAIRS({call})"),
        Norm::Scan(w) => format!("SC({call}, {w})"),
        Norm::Bucket(unit) => format!("B({call}, {unit})"),
        Norm::Absolute(unit) => format!("A({call}, {unit})"),
    };
    // The command, with its subcommand when the template fixes one (`OBJECT HELP`): mismatches
    // are grouped by it.
    let mut words = template.split(' ');
    let mut command = words.next().unwrap_or_default().to_string();
    if let Some(sub) = words
        .next()
        .filter(|w| w.chars().all(|c| c.is_ascii_uppercase()))
    {
        command = format!("{command} {sub}");
    }
    Stmt {
        command,
        expr,
        tags,
    }
}

fn seed_value<S: Src>(src: &mut S) -> Json {
    json!(*src.pick(VALUES))
}

/// A seed keyspace: each key of the pools present or not, TTLs on some.
fn seed<S: Src>(src: &mut S, opts: &Options, tags: &mut Vec<Known>) -> Json {
    let mut m = Map::new();
    let mut put = |src: &mut S, key: &str, kind: &str, value: Json| {
        let mut spec = Map::new();
        spec.insert("type".into(), json!(kind));
        spec.insert("value".into(), value);
        if src.chance(30) {
            // Seed TTLs differ from every generated duration (see SECONDS).
            spec.insert("ttl_ms".into(), json!(*src.pick(&[50000, 500000, 5000000])));
        }
        m.insert(key.to_string(), Json::Object(spec));
    };
    for key in STRINGS {
        if src.chance(60) {
            let v = seed_value(src);
            put(src, key, "string", v);
        }
    }
    for key in HASHES {
        if src.chance(60) {
            let mut h = Map::new();
            for _ in 0..1 + src.below(4) {
                let f = *src.pick(FIELDS);
                h.insert(f.into(), seed_value(src));
            }
            put(src, key, "hash", Json::Object(h));
        }
    }
    for key in LISTS {
        if src.chance(60) {
            let items: Vec<Json> = (0..1 + src.below(4)).map(|_| seed_value(src)).collect();
            put(src, key, "list", Json::Array(items));
        }
    }
    for key in SETS {
        if src.chance(60) {
            let ints = src.chance(40);
            let mut items: Vec<String> = (0..1 + src.below(4))
                .map(|_| {
                    if ints {
                        src.pick(&["1", "2", "3", "10", "-3", "007x"]).to_string()
                    } else {
                        src.pick(VALUES).to_string()
                    }
                })
                .collect();
            items.sort();
            items.dedup();
            put(src, key, "set", json!(items));
        }
    }
    for key in ZSETS {
        if src.chance(60) {
            let mut members = Map::new();
            for _ in 0..1 + src.below(4) {
                let member = src.pick(&["a", "b", "c", "d", "1", "x y"]).to_string();
                let score = if opts.has(Known::SeedFloat) && src.chance(20) {
                    tags.push(Known::SeedFloat);
                    // A double that needs 16-17 significant digits.
                    let mantissa = (src.below(1 << 30) as f64) * (src.below(1 << 22) as f64 + 1.0);
                    json!(mantissa / 1e13 - 50.0)
                } else {
                    match src.below(6) {
                        0 => json!("inf"),
                        1 => json!("-inf"),
                        2 => json!(src.below(20) as f64 / 4.0 - 1.0),
                        _ => json!(src.below(10) as i64 - 2),
                    }
                };
                members.insert(member, score);
            }
            let value: Vec<Json> = members.into_iter().map(|(m, s)| json!([m, s])).collect();
            put(src, key, "zset", Json::Array(value));
        }
    }
    for key in STREAMS {
        if src.chance(60) {
            let mut entries = Vec::new();
            for i in 0..1 + src.below(4) {
                let mut fields = Vec::new();
                for _ in 0..1 + src.below(2) {
                    fields.push(json!(*src.pick(FIELDS)));
                    fields.push(seed_value(src));
                }
                entries.push(json!([format!("{}-{}", 1 + i / 2, i % 2 + 1), fields]));
            }
            put(src, key, "stream", Json::Array(entries));
        }
    }
    Json::Object(m)
}

/// A random program of 1 to `max_stmts` statements.
pub fn program<S: Src>(src: &mut S, opts: &Options, max_stmts: usize) -> Program {
    let mut seed_tags = Vec::new();
    let seed = seed(src, opts, &mut seed_tags);
    let script_resp3 = src.chance(40);
    let client_resp = if src.chance(40) { 3 } else { 2 };
    let n = 1 + src.below(max_stmts);
    let stmts = (0..n).map(|_| statement(src, opts)).collect();
    Program {
        seed,
        seed_tags,
        stmts,
        script_resp3,
        client_resp,
    }
}
