//! Server profiles: which real server the sandbox imitates. Everything that differs between the
//! servers evalbench follows is data in the `PROFILES` table below (and, for the command table,
//! one delta file per profile in `commands/profiles/`), so the engine reads a field instead of
//! testing a version. Redis 7.0 spells out every field; each later profile is the server it
//! follows plus what that release changed (`..REDIS_7_2`), so it reads like the release notes.
//! tests/profiles.rs pins every field of every profile. Each profile was checked against the real server named in
//! `version_tested` (tests/differential.rs runs the whole corpus per profile).

/// How a Lua number becomes text: `redis.call` arguments and double replies seen under RESP2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberFormat {
    /// Redis 7.0: `%.17g` (`0.1` is `0.10000000000000001`, `-0` stays `-0`).
    Printf17g,
    /// Redis 7.2: the shortest text that reads back the same (`fpconv_dtoa`): `0.1`, `1e+15`.
    Shortest,
    /// Redis 7.4 and later: an integral value within ±2^62 as an integer (`-0` is `0`, 1e15 is
    /// `1000000000000000`), anything else the shortest text.
    IntegerThenShortest,
    /// Double replies of Redis 7.2 and later (`d2string`): as `IntegerThenShortest`, but zero
    /// keeps its sign (`-0`) and NaN has none (`nan`).
    ReplyDouble,
}

/// How the hash-field TTL commands (HEXPIRE ... HPERSIST, HGETEX, HSETEX, HGETDEL) read their
/// arguments and word their errors, and where a field whose TTL changes goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldTtlDialect {
    /// Redis 7.4 and 8.0 (t_hash.c): `FIELDS` at a fixed place, the field moves by expiry.
    Redis,
    /// Valkey 9: options in any order before `FIELDS`, the field stays where it is.
    Valkey,
}

/// The server family: error wording and the `server` alias follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    Redis,
    Valkey,
}

impl Product {
    pub fn name(self) -> &'static str {
        match self {
            Product::Redis => "redis",
            Product::Valkey => "valkey",
        }
    }
}

/// Which string hash a Lua state uses (the profile's `lua_string_hash`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LuaStringHash {
    /// Stock Lua 5.1.5: a sample of at most about 32 bytes of a long string.
    Stock,
    /// Redis (every release line): the stock mix over every byte.
    EveryByte,
    /// Valkey 8.1 and later: MurmurHash3 (x86, 32 bits) seeded with the length.
    Murmur32,
}

#[derive(Debug, PartialEq)]
pub struct Profile {
    /// What `--profile` and `profile = ...` take: `redis-7.0`.
    pub id: &'static str,
    pub product: Product,
    /// (major, minor) of the release line the profile follows.
    pub line: (u32, u32),
    /// The real server every case was checked against.
    pub version_tested: &'static str,
    /// `redis.REDIS_VERSION` and `redis.REDIS_VERSION_NUM` (Valkey keeps reporting 7.2.4).
    pub redis_version: &'static str,
    pub redis_version_num: u32,
    /// Valkey's `server.SERVER_NAME`, `VALKEY_VERSION`, `VALKEY_VERSION_NUM`.
    pub valkey_version: Option<(&'static str, u32)>,
    /// Numbers passed to `redis.call`.
    pub argument_numbers: NumberFormat,
    /// Double replies of commands (ZSCORE, ZINCRBY, `{double=...}` under RESP2).
    pub double_replies: NumberFormat,
    /// `os` with only `os.clock` (Redis 7.4, 8.0; Valkey).
    pub os_clock: bool,
    /// `getfenv`, `setfenv`, `newproxy`: removed by the October 2025 Lua security fixes that every
    /// current patch release carries.
    pub fenv_and_newproxy: bool,
    /// Glob matching's limit (KEYS, SCAN MATCH): the pattern's Nth separate `*` past which a match
    /// is given up as none (`nesting > 1000` in `stringmatchlen`). Redis 7.2.4 has no such limit.
    pub glob_star_limit: Option<u32>,
    /// Valkey: `server` is the same table as `redis`, with `__server__err__handler`.
    pub server_alias: bool,
    /// ` script: <sha>, on @user_script:N.` (true) or ` script: on @user_script:N.` (Valkey 9).
    pub sha_in_error_suffix: bool,
    /// `Unknown Redis command called from script` (Redis) or `Unknown command ...` (Valkey).
    pub command_noun: &'static str,
    /// `redis.log` with a bad level: `Invalid debug level.` (7.0, 7.2) or `Invalid log level.`.
    pub bad_log_level: &'static str,
    /// `redis.set_repl()` with a wrong argument count: `requires two arguments` (7.0) or `one`.
    pub set_repl_arity: &'static str,
    /// The table named in the API's own errors: `redis.log() ...` or (Valkey) `server.log() ...`.
    pub api_table: &'static str,
    /// `redis.call()` without arguments, and with one that is not a string or number.
    pub no_arguments: &'static str,
    pub bad_argument: &'static str,
    /// `redis.acl_check_cmd` checks the command's arity (Redis 8.0).
    pub acl_check_cmd_arity: bool,
    /// A command with the `noscript` flag: `This Redis command ...` or (Valkey 9) `This Valkey command ...`.
    pub noscript_text: &'static str,
    /// An unknown subcommand of a known container says `unknown subcommand 'X'. Try CONFIG HELP.`
    /// (Valkey 9) rather than `Unknown command called from script`.
    pub unknown_subcommand_error: bool,
    /// This profile's command table as a delta to Redis 7.0.15's (commands/profiles/*.table),
    /// generated from the server's own `COMMAND` by tests/command_tables.rs.
    pub command_delta: &'static str,
    /// Hash-field TTL commands' parsing and errors (which exist at all is the command table's).
    pub field_ttl: FieldTtlDialect,
    /// A blocking command's timeout past the clock's range says `timeout is out of range`
    /// (7.2 and later; 7.0 casts it and calls it negative).
    pub timeout_out_of_range: bool,
    /// `SET key value IFEQ old` (Valkey 8.1 and later).
    pub set_ifeq: bool,
    /// Geo coordinates (GEOPOS, WITHCOORD) as a double reply (Redis 8.0) rather than Redis 7's
    /// `%.17Lf` bulk text (commands/geo.rs).
    pub geo_coordinates_double: bool,
    /// A missing FROMMEMBER / GEORADIUSBYMEMBER member: `member X does not exist` (Valkey 9)
    /// rather than `could not decode requested zset member` (commands/geo.rs).
    pub geo_member_named: bool,
    /// XREADGROUP creates (and marks seen) its consumer on every stream of the call, served or
    /// not (7.2 and later), rather than only where it serves entries (stream_groups.rs).
    pub xreadgroup_consumer_always: bool,
    /// XSETID refuses an ID below the stream's max deleted entry ID (7.2 and later).
    pub xsetid_checks_max_deleted: bool,
    /// XINFO CONSUMERS reports `inactive` (ms since the consumer last got an entry; 7.2+).
    pub xinfo_consumers_inactive: bool,
    /// XREAD / XREADGROUP: BLOCK in scripts, the `+` ID, the unbalanced-streams error, and how a
    /// consumer group's lag is computed.
    pub streams: &'static StreamRules,
    /// The HELP entry of every HELP reply: `    Prints this help.` (7.0) or `    Print this help.`.
    pub help_line: &'static str,
    /// GETEX checks its expire value before the key (Valkey 9): a bad one is an error even for a
    /// missing key or another type (commands/strings.rs).
    pub getex_checks_expire_first: bool,
    /// BITCOUNT and BITPOS read their range (and BIT|BYTE) before looking the key up, so a
    /// missing key no longer hides a bad range (7.4 and later). Found by the differential fuzzer.
    pub bit_range_before_lookup: bool,
    /// `BITCOUNT key start` without an end counts to the end of the string (Valkey 8.1 and later;
    /// Redis calls it a syntax error).
    pub bitcount_end_optional: bool,
    /// LPOS RANK refuses -9223372036854775808 (`value must between -9223372036854775807 and
    /// 9223372036854775807`, 7.2 and later); LREM's count the same from 7.4 on.
    pub lpos_rank_excludes_llong_min: bool,
    pub lrem_count_excludes_llong_min: bool,
    /// SCAN ... TYPE with a name that is no type: `unknown type name 'x'` (Valkey 8 and later)
    /// rather than an empty result.
    pub scan_type_checked: bool,
    /// Command replies become Lua tables sized for their entries (`lua_createtable`, Valkey):
    /// `#` of a RESP3 array with nulls and the `pairs` order of maps and sets follow it.
    pub presized_reply_tables: bool,
    /// `register_function` accepts any name; the names (letters, digits, `_`) and duplicates are
    /// checked once the library's code has run, without the `Error registering functions: `
    /// prefix and where no `pcall` can catch them (Valkey's `functionsCreateWithLibraryCtx`).
    pub function_names_checked_after_load: bool,
    /// Lua's string hash in the server's deps/lua (`luaS_newlstr`): decides `pairs()` order over
    /// string keys, so RESP3 maps/sets built by scripts and `cjson.encode` key order.
    pub lua_string_hash: LuaStringHash,
    /// MEMORY USAGE: the allocator's size classes and where the key lives.
    pub memory: &'static MemoryLayout,
    /// Small sets and lists as listpacks (7.2 and later, `t_set.c`/`t_list.c`); `None`: 7.0's
    /// intset-or-hashtable sets and quicklist lists.
    pub listpack_collections: Option<ListpackLimits>,
    /// SUNION and SDIFF build their reply in a hash table as soon as one input set is not an
    /// intset (Redis 8.0 #13567, Valkey 8.1): a plain intset first otherwise.
    pub set_ops_reply_hashtable: bool,
    /// LSET passes its index on as a C `int` (`listTypeReplaceAtIndex`, 7.2 and later): an
    /// index beyond 32 bits is cut to its low 32 bits.
    pub lset_index_int: bool,
    /// How cursors, scores, score ranges and SORT keys are read (engine/number.rs).
    pub numbers: &'static NumberRules,
    /// The Lua error table of a text without an error code (no space: `redis.error_reply('a\r\n')`)
    /// keeps the CR/LF around its message (Valkey 9); Redis and Valkey 8 trim them (`sdstrim`).
    pub codeless_error_keeps_crlf: bool,
    /// `{big_number=...}` is read as a C string, up to a NUL (Valkey 9); Redis keeps every byte.
    pub big_number_until_nul: bool,
    /// `CLUSTER KEYSLOT` answers the key's slot without cluster support (Valkey 9).
    pub keyslot_without_cluster: bool,
    /// BITFIELD reads a type's width over the whole argument (`u8\0x` is no type; Valkey 9)
    /// rather than up to a NUL.
    pub bitfield_type_whole_arg: bool,
    /// BITCOUNT reads BIT|BYTE right after the start, before the end (Valkey 8.1 and later): a
    /// bad unit is a syntax error even when the end is no number.
    pub bitcount_unit_before_end: bool,
    /// SCAN's TYPE filter reads the value before the expiry check, so an expired key of another
    /// type stays until something else reclaims it (Valkey 8 and later); Redis's TYPE check looks
    /// the key up and reclaims every expired key that passes MATCH.
    pub scan_type_before_expiry: bool,
    /// How a script's or library's `#!` line is read (engine/script.rs).
    pub shebang: &'static ShebangRules,
    /// `cmsgpack._COPYRIGHT` of the server's bundled lua-cmsgpack 0.4.0.
    pub cmsgpack_copyright: &'static str,
    /// SET with EXAT/PXAT at or before the command's time deletes the key at once (Valkey 8 and
    /// later); Redis stores it expired, so DBSIZE and SCAN see it until a lookup reclaims it.
    pub set_past_expiry_deletes: bool,
    /// How string values are encoded and shared (OBJECT ENCODING, OBJECT REFCOUNT).
    pub strings: &'static StringRules,
    /// A script that raises a table without `err` crashes the server (SIGSEGV in
    /// `luaErrorInformationDiscard`); Valkey 9 answers `ERR unknown error`.
    pub errorless_table_crashes: bool,
    /// EVALSHA of a script the cache does not hold: `... Please use EVAL.` (Redis) or without
    /// that advice (Valkey).
    pub noscript_reply: &'static str,
    /// INFO's lines that differ between the servers.
    pub info: &'static InfoRules,
    /// `RDB_VERSION`: the version DUMP writes, and the newest RESTORE accepts.
    pub rdb_version: u16,
    /// Versions RESTORE refuses although they are older than `rdb_version`: Valkey 9's foreign
    /// range (12 to 79, Redis 7.4 and later), whose types it does not share.
    pub rdb_foreign_versions: Option<(u16, u16)>,
    /// The highest RDB object type RESTORE knows: 19 (streams' second format) in RDB 10, 21
    /// (listpack sets, streams' third) in 11, 25 (hashes with field TTLs) in Redis's 12, 22
    /// (Valkey's hash with field TTLs) in Valkey's 80.
    pub rdb_max_type: u8,
}

/// INFO's lines that differ between the servers (`genRedisInfoString`).
#[derive(Debug, PartialEq)]
pub struct InfoRules {
    /// The server section's mode line: `redis_mode` (Redis) or `server_mode` (Valkey).
    pub mode_field: &'static str,
    /// The replication section has `replicas_waiting_psync` (Valkey).
    pub replicas_waiting_psync: bool,
    /// The keyspace line's count of hashes with field TTLs: `subexpiry` (Redis 7.4 and later)
    /// or `keys_with_volatile_items` (Valkey 9).
    pub field_ttl_keys: Option<&'static str>,
}

static INFO_REDIS_7_0: InfoRules = InfoRules {
    mode_field: "redis_mode",
    replicas_waiting_psync: false,
    field_ttl_keys: None,
};
static INFO_REDIS_7_4: InfoRules = InfoRules {
    field_ttl_keys: Some("subexpiry"),
    ..INFO_REDIS_7_0
};
static INFO_VALKEY_8: InfoRules = InfoRules {
    mode_field: "server_mode",
    replicas_waiting_psync: true,
    field_ttl_keys: None,
};
static INFO_VALKEY_9: InfoRules = InfoRules {
    field_ttl_keys: Some("keys_with_volatile_items"),
    ..INFO_VALKEY_8
};

/// How a server stores a string value (object.c): which are `int`, `embstr` or `raw`, and whether
/// small integers are the shared objects.
#[derive(Debug, PartialEq)]
pub struct StringRules {
    /// A value 0..9999 is one of the shared integer objects (`OBJECT REFCOUNT` 2147483647, Redis).
    /// Valkey 8 builds every value anew with its key embedded: refcount 1.
    pub shared_integers: bool,
    /// A number a script passes (SET k '12') is stored `int`; Valkey 9 keeps the script's
    /// argument object as it is (`embstr`). Counters (INCR, ...) are `int` everywhere.
    pub arguments_int_encoded: bool,
    pub embed: Embed,
}

/// When a string value that is not `int` is `embstr` (one allocation with its object).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Embed {
    /// Values up to this length (Redis: `OBJ_ENCODING_EMBSTR_SIZE_LIMIT`, 44).
    UpTo(usize),
    /// Valkey: the object, the key (sds with a one-byte header-size prefix), an expire field and
    /// the value (sds type 8) must fit in `limit` bytes (`createStringObjectWithKeyAndExpire`).
    WithKey {
        limit: usize,
        /// The object's own bytes counted (16, or 8 when the value reuses its pointer: Valkey 9).
        object: usize,
        /// The key's sds header by its length (`sdsReqType`: 1 byte below 32, then 3, ...);
        /// Valkey 8.1 counts one byte whatever the length.
        key_header_by_length: bool,
        /// A TTL set after the value was built adds the expire field (Valkey 8.1 re-embeds the
        /// value, raw when it no longer fits, unless the allocation had room for the field and
        /// kept it); Valkey 9 leaves the value as it is.
        ttl_adds_expire_field: bool,
    },
}

static STRINGS_REDIS: StringRules = StringRules {
    shared_integers: true,
    arguments_int_encoded: true,
    embed: Embed::UpTo(44),
};
static STRINGS_VALKEY_8: StringRules = StringRules {
    shared_integers: false,
    arguments_int_encoded: true,
    embed: Embed::WithKey {
        limit: 64,
        object: 16,
        key_header_by_length: false,
        ttl_adds_expire_field: true,
    },
};
static STRINGS_VALKEY_9: StringRules = StringRules {
    shared_integers: false,
    arguments_int_encoded: false,
    embed: Embed::WithKey {
        limit: 128,
        object: 8,
        key_header_by_length: true,
        ttl_adds_expire_field: false,
    },
};

/// How a server reads a script's first line, `#!lua flags=...` (`evalExtractShebangFlags`), and
/// a library's, `#!lua name=...` (`functionExtractLibMetaData`).
#[derive(Debug, PartialEq)]
pub struct ShebangRules {
    /// The engine is the first word without its `#!`, looked up (case-insensitively) once the
    /// options were read: `Could not find scripting engine 'x'` (Valkey 8 and later). Redis wants
    /// the word `#!lua` exactly and names it first: `Unexpected engine in script shebang: #!x`.
    pub engine_lookup: bool,
    /// How the line is split into words.
    pub words: &'static WordSplit,
}

/// `sdssplitargs` (Redis) or its Valkey successor built on `sdsparsearg`: quotes, escapes, blanks.
#[derive(Debug, PartialEq)]
pub struct WordSplit {
    /// A byte 0xff of the line is left out of its word (Valkey 8.1 and later: `sdsparsearg` reads
    /// a char as an int and 0xff is its `-1`, no character). An escaped `\xff` stays.
    pub drops_byte_ff: bool,
    /// A closing quote must end the word (be followed by a blank or the end) or the line is
    /// refused; Valkey 9 lets the word go on after it (`"lu"a` is `lua`).
    pub closing_quote_ends_word: bool,
}

static SHEBANG_REDIS: ShebangRules = ShebangRules {
    engine_lookup: false,
    words: &WordSplit {
        drops_byte_ff: false,
        closing_quote_ends_word: true,
    },
};
static SHEBANG_VALKEY_8: ShebangRules = ShebangRules {
    engine_lookup: true,
    words: &WordSplit {
        drops_byte_ff: true,
        closing_quote_ends_word: true,
    },
};
static SHEBANG_VALKEY_9: ShebangRules = ShebangRules {
    engine_lookup: true,
    words: &WordSplit {
        drops_byte_ff: true,
        closing_quote_ends_word: false,
    },
};

/// A C library's reading of a decimal (or hexadecimal) floating-point number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatSyntax {
    /// glibc `strtod`: leading white space, hexadecimal floats (`0x1p3`), `inf`, `infinity`,
    /// `nan(...)`; an overflow (inf) or underflow (0) sets ERANGE.
    Strtod,
    /// fast_float's `from_chars` (Redis 8.0's C++ library, Valkey 9's `ffc`) with a leading `+`:
    /// no white space, no hexadecimal; a value out of range is ±inf or ±0 with an error.
    /// `minus_then_plus_infnan`: Redis 8.0's build also reads `-+inf` (its `parse_infnan` skips
    /// a `+` after the `-`).
    FastFloat { minus_then_plus_infnan: bool },
    /// Redis 8.0's `string2d` (redis#13845): fast_float, then `strtod` over the text when
    /// fast_float stopped early (hexadecimal); fast_float's range error is an error.
    FastFloatThenStrtod,
}

/// How a SCAN-family cursor is read (`parseScanCursorOrReply`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorSyntax {
    /// Redis 7.0, 7.2: `strtoul` over the C string without leading space; `""` is 0, `-1` wraps.
    Strtoul,
    /// Redis 7.4 and later, Valkey 8 (`string2ull`): over the C string, the strict integer form
    /// (not negative), else `strtoull` with leading space and sign, refusing empty text.
    String2ull,
}

/// Where the servers read numbers differently: each field names the parser a
/// command family uses.
#[derive(Debug, PartialEq)]
pub struct NumberRules {
    pub scan_cursor: CursorSyntax,
    /// `string2d` (getDoubleFromObject): ZADD and ZINCRBY scores, ZUNIONSTORE weights, GEO
    /// coordinates, radii and box sizes.
    pub string2d: FloatSyntax,
    /// ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE, ZRANGE BYSCORE bounds (`zslParseRange`).
    pub score_ranges: FloatSyntax,
    /// SORT's numeric keys (sort.c).
    pub sort_scores: FloatSyntax,
    /// SORT refuses a key whose conversion set `errno` (Valkey 9 clears it first: `''` and
    /// values out of range are errors); Redis 8.0's fast_float never sets ERANGE there.
    pub sort_refuses_errno: bool,
}

static NUMBERS_7_0: NumberRules = NumberRules {
    scan_cursor: CursorSyntax::Strtoul,
    string2d: FloatSyntax::Strtod,
    score_ranges: FloatSyntax::Strtod,
    sort_scores: FloatSyntax::Strtod,
    sort_refuses_errno: false,
};
static NUMBERS_7_4: NumberRules = NumberRules {
    scan_cursor: CursorSyntax::String2ull,
    ..NUMBERS_7_0
};
static NUMBERS_8_0: NumberRules = NumberRules {
    scan_cursor: CursorSyntax::String2ull,
    string2d: FloatSyntax::FastFloatThenStrtod,
    score_ranges: FloatSyntax::FastFloat {
        minus_then_plus_infnan: true,
    },
    sort_scores: FloatSyntax::FastFloat {
        minus_then_plus_infnan: true,
    },
    sort_refuses_errno: false,
};
/// Valkey 9's `valkey_strtod` (ffc) everywhere.
static NUMBERS_VALKEY_9: NumberRules = NumberRules {
    scan_cursor: CursorSyntax::String2ull,
    string2d: FloatSyntax::FastFloat {
        minus_then_plus_infnan: false,
    },
    score_ranges: FloatSyntax::FastFloat {
        minus_then_plus_infnan: false,
    },
    sort_scores: FloatSyntax::FastFloat {
        minus_then_plus_infnan: false,
    },
    sort_refuses_errno: true,
};

/// The listpack limits of small sets and lists (the servers' defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListpackLimits {
    /// `set-max-listpack-entries`.
    pub set_max_entries: usize,
    /// `set-max-listpack-value`: the longest member a listpack set holds.
    pub set_max_value: usize,
    /// `list-max-listpack-size -2`: a list's listpack (and a quicklist node) up to 8 KiB.
    pub list_max_bytes: usize,
    /// A list element above `list_max_bytes` gets a plain quicklist node of its own
    /// (`isLargeElement`, 7.4 and Valkey 8.1 on; 7.2 packs elements up to 1 GiB).
    pub list_plain_nodes: bool,
}

/// The defaults of 7.2.
pub const LISTPACK_DEFAULTS: ListpackLimits = ListpackLimits {
    set_max_entries: 128,
    set_max_value: 64,
    list_max_bytes: 8192,
    list_plain_nodes: false,
};

/// 7.4 and later, Valkey 8.1 and later: large list elements in plain nodes.
pub const LISTPACK_PLAIN_NODES: ListpackLimits = ListpackLimits {
    list_plain_nodes: true,
    ..LISTPACK_DEFAULTS
};

/// What XREAD's `+` ID (the stream's last entry) means (commands/streams.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastEntryId {
    /// Redis 7.0, 7.2: not an ID (`Invalid stream ID ...`).
    Invalid,
    /// Redis 7.4, Valkey: read after the stream's last ID minus one, so an entry is served only
    /// when the last ID is a live entry. A last ID of 0-0 is an error when `zero_is_error`
    /// (`the stream last element ID is 0-0`; Redis 7.4, Valkey 8.1), else reads nothing.
    BeforeLastId { zero_is_error: bool },
    /// Redis 8.0: the last live entry, whatever was deleted after it.
    LastLiveEntry,
}

/// How the stream commands differ between the servers (commands/streams.rs and
/// stream_groups.rs).
#[derive(Debug, PartialEq)]
pub struct StreamRules {
    /// BLOCK in a script is accepted (its timeout checked, then it never blocks): 7.4 and later,
    /// Valkey 8.1 and later. Earlier servers refuse it.
    pub block_in_scripts: bool,
    pub last_entry_id: LastEntryId,
    /// The errors for an odd number of STREAMS arguments.
    pub unbalanced_xread: &'static str,
    pub unbalanced_xreadgroup: &'static str,
    pub group_lag: GroupLag,
}

/// How a consumer group's lag and `entries-read` follow deletions and trimming (t_stream.c's
/// `streamReplyWithCGLag`, `streamEstimateDistanceFromFirstEverEntry`, `streamRangeHasTombstones`
/// and the counter update in `streamReplyWithRange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupLag {
    /// Redis 7.0 to 7.4: a tombstone before the first entry never fragments the stream.
    Redis70,
    /// Valkey 8.1 and later (valkey#1952): any tombstone after the group's last ID fragments
    /// the stream, an ID before the last tombstone has no estimate, and a read recounts from the
    /// group's last ID (and from scratch when that is behind the first entry).
    Valkey81,
    /// Redis 8.0 (redis#13338, #13958): Valkey's rules, and also an exact lag for an emptied
    /// stream (0) and for a group behind both the first entry and the last tombstone (the length).
    Redis80,
}

impl GroupLag {
    /// The tombstone and counter fixes Redis 8.0 and Valkey 8.1 share.
    pub fn fragmentation_fixed(self) -> bool {
        self != GroupLag::Redis70
    }
}

const UNBALANCED_7_0: &str =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
const UNBALANCED_XREAD: &str =
    "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.";
const UNBALANCED_XREADGROUP: &str =
    "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.";

static STREAMS_7_0: StreamRules = StreamRules {
    block_in_scripts: false,
    last_entry_id: LastEntryId::Invalid,
    unbalanced_xread: UNBALANCED_7_0,
    unbalanced_xreadgroup: UNBALANCED_7_0,
    group_lag: GroupLag::Redis70,
};
static STREAMS_7_2: StreamRules = StreamRules {
    // The unbalanced-streams errors name their command.
    unbalanced_xread: UNBALANCED_XREAD,
    unbalanced_xreadgroup: UNBALANCED_XREADGROUP,
    ..STREAMS_7_0
};
static STREAMS_7_4: StreamRules = StreamRules {
    // BLOCK accepted in scripts (it never blocks there) and the `+` ID.
    block_in_scripts: true,
    last_entry_id: LastEntryId::BeforeLastId {
        zero_is_error: true,
    },
    ..STREAMS_7_2
};
/// Valkey 8.1: Redis 7.4's XREAD, with the consumer-group fixes.
static STREAMS_VALKEY_8: StreamRules = StreamRules {
    group_lag: GroupLag::Valkey81,
    ..STREAMS_7_4
};
static STREAMS_8_0: StreamRules = StreamRules {
    // `+` is the last live entry, and the error lists it.
    last_entry_id: LastEntryId::LastLiveEntry,
    unbalanced_xread: "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified.",
    group_lag: GroupLag::Redis80,
    ..STREAMS_7_4
};
static STREAMS_VALKEY_9: StreamRules = StreamRules {
    // A last ID of 0-0 reads nothing rather than erring.
    last_entry_id: LastEntryId::BeforeLastId {
        zero_is_error: false,
    },
    ..STREAMS_VALKEY_8
};

/// The default profile, and the one the built-in command table describes.
pub const DEFAULT: &Profile = &PROFILES[0];

/// Every profile, in the order `--profile` lists them. Each after the first is written as the
/// server it follows plus what that release changed.
pub static PROFILES: [Profile; 6] = [
    REDIS_7_0, REDIS_7_2, REDIS_7_4, REDIS_8_0, VALKEY_8_1, VALKEY_9_1,
];

/// Redis 7.0: the baseline, every field spelled out.
const REDIS_7_0: Profile = Profile {
    id: "redis-7.0",
    product: Product::Redis,
    line: (7, 0),
    version_tested: "7.0.15",
    redis_version: "7.0.15",
    redis_version_num: 0x07000f,
    valkey_version: None,
    argument_numbers: NumberFormat::Printf17g,
    double_replies: NumberFormat::Printf17g,
    os_clock: false,
    fenv_and_newproxy: false,
    glob_star_limit: Some(1000),
    server_alias: false,
    sha_in_error_suffix: true,
    command_noun: "Redis command",
    bad_log_level: "Invalid debug level.",
    set_repl_arity: "requires two arguments.",
    api_table: "redis",
    no_arguments: "Please specify at least one argument for this redis lib call",
    bad_argument: "Lua redis lib command arguments must be strings or integers",
    acl_check_cmd_arity: false,
    noscript_text: "ERR This Redis command is not allowed from script",
    unknown_subcommand_error: false,
    command_delta: "",
    field_ttl: FieldTtlDialect::Redis,
    timeout_out_of_range: false,
    set_ifeq: false,
    geo_coordinates_double: false,
    geo_member_named: false,
    xreadgroup_consumer_always: false,
    xsetid_checks_max_deleted: false,
    xinfo_consumers_inactive: false,
    streams: &STREAMS_7_0,
    help_line: "    Prints this help.",
    getex_checks_expire_first: false,
    bit_range_before_lookup: false,
    bitcount_end_optional: false,
    lpos_rank_excludes_llong_min: false,
    lrem_count_excludes_llong_min: false,
    scan_type_checked: false,
    presized_reply_tables: false,
    function_names_checked_after_load: false,
    lua_string_hash: LuaStringHash::EveryByte,
    memory: &MEMORY_REDIS_7_0,
    listpack_collections: None,
    set_ops_reply_hashtable: false,
    lset_index_int: false,
    numbers: &NUMBERS_7_0,
    codeless_error_keeps_crlf: false,
    big_number_until_nul: false,
    keyslot_without_cluster: false,
    bitfield_type_whole_arg: false,
    bitcount_unit_before_end: false,
    scan_type_before_expiry: false,
    shebang: &SHEBANG_REDIS,
    cmsgpack_copyright: "Copyright (C) 2012, Salvatore Sanfilippo",
    set_past_expiry_deletes: false,
    strings: &STRINGS_REDIS,
    errorless_table_crashes: true,
    noscript_reply: "NOSCRIPT No matching script. Please use EVAL.",
    info: &INFO_REDIS_7_0,
    rdb_version: 10,
    rdb_foreign_versions: None,
    rdb_max_type: 19,
};

/// Redis 7.2: Redis 7.0 and what 7.2 changed.
const REDIS_7_2: Profile = Profile {
    id: "redis-7.2",
    line: (7, 2),
    version_tested: "7.2.4",
    redis_version: "7.2.4",
    redis_version_num: 0x070204,
    // Numbers and doubles as the shortest text that reads back the same (fpconv_dtoa).
    argument_numbers: NumberFormat::Shortest,
    double_replies: NumberFormat::ReplyDouble,
    // stringmatchlen lost its nesting limit (7.4 put it back).
    glob_star_limit: None,
    // set_repl takes one argument.
    set_repl_arity: "requires one argument.",
    command_delta: include_str!("commands/profiles/redis-7.2.table"),
    // A blocking timeout past the clock's range is out of range, not negative.
    timeout_out_of_range: true,
    // Consumers: created on every stream XREADGROUP names, XSETID's max-deleted check, and
    // `inactive` in XINFO CONSUMERS.
    xreadgroup_consumer_always: true,
    xsetid_checks_max_deleted: true,
    xinfo_consumers_inactive: true,
    // The unbalanced XREAD/XREADGROUP errors name their command.
    streams: &STREAMS_7_2,
    // HELP replies say "Print", not "Prints".
    help_line: "    Print this help.",
    // LPOS RANK refuses LLONG_MIN.
    lpos_rank_excludes_llong_min: true,
    // Redis's own builds: jemalloc with an 8-byte quantum; consumers grew `active_time`.
    memory: &MEMORY_REDIS_7_2,
    // Small sets and lists as listpacks.
    listpack_collections: Some(LISTPACK_DEFAULTS),
    // LSET cuts its index to a C int.
    lset_index_int: true,
    // RDB 11: sets as listpacks, streams' third format.
    rdb_version: 11,
    rdb_max_type: 21,
    ..REDIS_7_0
};

/// Redis 7.4: Redis 7.2 and what 7.4 changed.
const REDIS_7_4: Profile = Profile {
    id: "redis-7.4",
    line: (7, 4),
    version_tested: "7.4.1",
    redis_version: "7.4.1",
    redis_version_num: 0x070401,
    // An integral number within ±2^62 goes to `redis.call` as an integer.
    argument_numbers: NumberFormat::IntegerThenShortest,
    // `os` comes back with only `os.clock`.
    os_clock: true,
    // stringmatchlen's nesting limit is back.
    glob_star_limit: Some(1000),
    // redis.log's bad level is a "log level".
    bad_log_level: "Invalid log level.",
    command_delta: include_str!("commands/profiles/redis-7.4.table"),
    // BLOCK in scripts accepted (never blocking) and XREAD's `+` ID.
    streams: &STREAMS_7_4,
    // BITCOUNT/BITPOS check their range before the key; LREM's count refuses LLONG_MIN.
    bit_range_before_lookup: true,
    lrem_count_excludes_llong_min: true,
    // A list element past 8 KiB gets a plain quicklist node.
    listpack_collections: Some(LISTPACK_PLAIN_NODES),
    // SCAN cursors read by string2ull.
    numbers: &NUMBERS_7_4,
    // INFO keyspace counts hashes with field TTLs (`subexpiry`); RDB 12 stores them.
    info: &INFO_REDIS_7_4,
    rdb_version: 12,
    rdb_max_type: 25,
    ..REDIS_7_2
};

/// Redis 8.0: Redis 7.4 and what 8.0 changed.
const REDIS_8_0: Profile = Profile {
    id: "redis-8.0",
    line: (8, 0),
    version_tested: "8.0.2",
    redis_version: "8.0.2",
    redis_version_num: 0x080002,
    // redis.acl_check_cmd checks the command's arity.
    acl_check_cmd_arity: true,
    command_delta: include_str!("commands/profiles/redis-8.0.table"),
    // GEOPOS and WITHCOORD reply doubles.
    geo_coordinates_double: true,
    // XREAD's `+` is the last live entry; consumer-group lag fixes.
    streams: &STREAMS_8_0,
    // As tested: Debian's package, the system jemalloc (16-byte quantum).
    memory: &MEMORY_REDIS_8_0,
    // SUNION and SDIFF build their reply in a hash table once an input is no intset.
    set_ops_reply_hashtable: true,
    // Scores and SORT keys read by fast_float.
    numbers: &NUMBERS_8_0,
    ..REDIS_7_4
};

/// Valkey 8.1: Redis 7.2.4, where Valkey forked, and what Valkey changed up to 8.1.
const VALKEY_8_1: Profile = Profile {
    id: "valkey-8.1",
    product: Product::Valkey,
    line: (8, 1),
    version_tested: "8.1.1",
    // `redis.REDIS_VERSION` stays 7.2.4; Valkey's own version is beside it.
    valkey_version: Some(("8.1.1", 0x080101)),
    // As Redis 7.4: integral numbers as integers, `os.clock` only, the glob nesting limit.
    argument_numbers: NumberFormat::IntegerThenShortest,
    os_clock: true,
    glob_star_limit: Some(1000),
    // The `server` table and Valkey's own wording of the scripting API's errors.
    server_alias: true,
    command_noun: "command",
    bad_log_level: "Invalid log level.",
    api_table: "server",
    no_arguments: "Please specify at least one argument for this call",
    bad_argument: "Command arguments must be strings or integers",
    command_delta: include_str!("commands/profiles/valkey-8.1.table"),
    // Hash-field TTL commands with options in any order; SET ... IFEQ.
    field_ttl: FieldTtlDialect::Valkey,
    set_ifeq: true,
    // BLOCK in scripts, XREAD's `+`, and the consumer-group lag fixes.
    streams: &STREAMS_VALKEY_8,
    // The differential fuzzer's finds: argument checks reordered or tightened.
    bit_range_before_lookup: true,
    bitcount_end_optional: true,
    lrem_count_excludes_llong_min: true,
    scan_type_checked: true,
    bitcount_unit_before_end: true,
    scan_type_before_expiry: true,
    // Reply tables presized by `lua_createtable`.
    presized_reply_tables: true,
    // Function names checked once the library has run.
    function_names_checked_after_load: true,
    // Lua strings hashed by MurmurHash3: `pairs()` order changes.
    lua_string_hash: LuaStringHash::Murmur32,
    // Keys embedded in their objects, the `hashtable`, rax allocations counted.
    memory: &MEMORY_VALKEY_8_1,
    // As Redis 7.4 and 8.0: plain list nodes, SUNION/SDIFF replies, string2ull cursors.
    listpack_collections: Some(LISTPACK_PLAIN_NODES),
    set_ops_reply_hashtable: true,
    numbers: &NUMBERS_7_4,
    // The shebang's engine looked up by name; byte 0xff dropped from its words.
    shebang: &SHEBANG_VALKEY_8,
    cmsgpack_copyright: "Copyright (C) 2012, Redis Ltd.",
    // SET with EXAT/PXAT in the past deletes the key at once.
    set_past_expiry_deletes: true,
    // Strings embedded with their key; no shared integers.
    strings: &STRINGS_VALKEY_8,
    // INFO says `server_name:valkey`, `server_mode`; RDB stays at Redis 7.2's 11.
    info: &INFO_VALKEY_8,
    noscript_reply: "NOSCRIPT No matching script.",
    ..REDIS_7_2
};

/// Valkey 9.1: Valkey 8.1 and what 9 changed.
const VALKEY_9_1: Profile = Profile {
    id: "valkey-9.1",
    line: (9, 1),
    version_tested: "9.1.2",
    valkey_version: Some(("9.1.2", 0x090102)),
    // Script errors end ` script: on @user_script:N.`, without the sha.
    sha_in_error_suffix: false,
    // Valkey names itself in the noscript error; an unknown subcommand says so.
    noscript_text: "ERR This Valkey command is not allowed from script",
    unknown_subcommand_error: true,
    command_delta: include_str!("commands/profiles/valkey-9.1.table"),
    // A missing GEO member is named in the error.
    geo_member_named: true,
    // XREAD's `+` on a stream whose last ID is 0-0 reads nothing.
    streams: &STREAMS_VALKEY_9,
    // GETEX checks its expire value before the key.
    getex_checks_expire_first: true,
    // As tested: built with libc malloc; values count their object's allocation.
    memory: &MEMORY_VALKEY_9_1,
    // valkey_strtod (ffc) for every float.
    numbers: &NUMBERS_VALKEY_9,
    // Error tables keep CR/LF; big numbers end at a NUL.
    codeless_error_keeps_crlf: true,
    big_number_until_nul: true,
    // CLUSTER KEYSLOT without cluster support; BITFIELD types over the whole argument.
    keyslot_without_cluster: true,
    bitfield_type_whole_arg: true,
    // A word of the shebang may go on after its closing quote.
    shebang: &SHEBANG_VALKEY_9,
    // A script's numbers stay as the argument objects (`embstr`); larger embedding limit.
    strings: &STRINGS_VALKEY_9,
    // INFO keyspace counts `keys_with_volatile_items`; RDB 80, Redis's 12 to 79 refused.
    errorless_table_crashes: false,
    info: &INFO_VALKEY_9,
    rdb_version: 80,
    rdb_foreign_versions: Some((12, 79)),
    rdb_max_type: 22,
    ..VALKEY_8_1
};

/// What `zmalloc_size` answers for a request: the allocator each tested server was built with.
#[derive(Debug, PartialEq)]
pub enum Allocator {
    /// jemalloc 5.3 with this quantum: 16 in Debian's packages, 8 in Redis's own builds
    /// (`--with-lg-quantum=3` in deps/Makefile), which add the classes 24, 40 and 56.
    Jemalloc { quantum: usize },
    /// glibc's `malloc_usable_size` (a Valkey built with `MALLOC=libc`): 16-byte chunks with an
    /// 8-byte header, at least 32.
    Glibc,
}

/// Where a server keeps a key and how MEMORY USAGE counts it.
#[derive(Debug, PartialEq)]
pub enum KeyLayout {
    /// Redis: the key is an sds of its own in a `dictEntry` of 24 bytes, both added to the
    /// value's size; the value is a 16-byte robj.
    SdsInDictEntry,
    /// Valkey 8.1: the key is embedded in the value's robj (an sds type 5 with a header-size
    /// byte) and the keyspace hash table has no entries; MEMORY USAGE is the value's size only,
    /// which counts the robj as 16 bytes unless the string value is embedded with the key.
    EmbeddedInObject,
    /// Valkey 9.1: as 8.1, but every value counts its robj's allocation (key and expire with
    /// it), and an embedded string value takes the place of the robj's `ptr`.
    EmbeddedCounted,
}

/// How MEMORY USAGE counts a stream's radix trees (the entries' and each PEL).
#[derive(Debug, PartialEq)]
pub enum RaxAccounting {
    /// Redis's `streamRadixTreeMemoryUsage`: 16 bytes a key and `4 + 8 * 30` a node.
    Estimate,
    /// Valkey's `raxAllocSize`: the allocations themselves, the `rax` struct and every node.
    Allocated,
}

/// The hash table a hash past its listpack limits becomes.
#[derive(Debug, PartialEq)]
pub enum HashTableLayout {
    /// Redis's `dict`: a bucket array of pointers and a 24-byte `dictEntry` per field, with
    /// the field and the value as sds strings of their own.
    Dict,
    /// Valkey 8.1's `hashtable`: 64-byte buckets of 7 entries, each entry one allocation
    /// holding the field and (up to 128 bytes in all) the value.
    Hashtable,
}

/// The sizes MEMORY USAGE adds up that differ between servers (`Profile::memory`).
#[derive(Debug, PartialEq)]
pub struct MemoryLayout {
    pub allocator: Allocator,
    pub key: KeyLayout,
    pub rax: RaxAccounting,
    pub hash_table: HashTableLayout,
    /// Valkey samples a stream's groups and their consumers as it does a collection's elements
    /// (Redis counts them all).
    pub stream_groups_sampled: bool,
    /// `sizeof(streamConsumer)`: 7.2 added `active_time`.
    pub stream_consumer: usize,
}

pub const MEMORY_REDIS_7_0: MemoryLayout = MemoryLayout {
    allocator: Allocator::Jemalloc { quantum: 16 },
    key: KeyLayout::SdsInDictEntry,
    rax: RaxAccounting::Estimate,
    hash_table: HashTableLayout::Dict,
    stream_groups_sampled: false,
    stream_consumer: 24,
};
/// Redis 7.2 and 7.4 as tested: Redis's own builds (jemalloc with an 8-byte quantum).
pub const MEMORY_REDIS_7_2: MemoryLayout = MemoryLayout {
    allocator: Allocator::Jemalloc { quantum: 8 },
    // `streamConsumer` grew `active_time`.
    stream_consumer: 32,
    ..MEMORY_REDIS_7_0
};
/// Redis 8.0 as tested: Debian's package (the system jemalloc, 16-byte quantum).
pub const MEMORY_REDIS_8_0: MemoryLayout = MemoryLayout {
    allocator: Allocator::Jemalloc { quantum: 16 },
    ..MEMORY_REDIS_7_2
};
/// Valkey 8.1 as tested: jemalloc with a 16-byte quantum; keys in their objects, the
/// `hashtable`, radix trees counted by their allocations, stream groups sampled.
pub const MEMORY_VALKEY_8_1: MemoryLayout = MemoryLayout {
    allocator: Allocator::Jemalloc { quantum: 16 },
    key: KeyLayout::EmbeddedInObject,
    rax: RaxAccounting::Allocated,
    hash_table: HashTableLayout::Hashtable,
    stream_groups_sampled: true,
    ..MEMORY_REDIS_7_2
};
/// Valkey 9.1 as tested: built with libc malloc.
pub const MEMORY_VALKEY_9_1: MemoryLayout = MemoryLayout {
    allocator: Allocator::Glibc,
    // Every value counts its object's allocation.
    key: KeyLayout::EmbeddedCounted,
    ..MEMORY_VALKEY_8_1
};

impl Profile {
    /// The profile `--profile` names, or an error listing the known ones.
    pub fn by_id(id: &str) -> Result<&'static Profile, String> {
        PROFILES
            .iter()
            .find(|p| p.id.eq_ignore_ascii_case(id.trim()))
            .ok_or_else(|| format!("unknown profile '{}': use one of {}", id.trim(), ids()))
    }

    /// Index in `PROFILES` (per-profile caches are arrays).
    pub fn index(&'static self) -> usize {
        PROFILES
            .iter()
            .position(|p| std::ptr::eq(p, self))
            .expect("profiles are the entries of PROFILES")
    }

    /// "Redis 7.0" / "Valkey 9.1".
    pub fn display_name(&self) -> String {
        let product = match self.product {
            Product::Redis => "Redis",
            Product::Valkey => "Valkey",
        };
        format!("{product} {}.{}", self.line.0, self.line.1)
    }

    /// The profile for a server that reports `product` (`redis`/`valkey`) and `version` (INFO):
    /// its own line, or the nearest line of the same product with a note saying so.
    pub fn for_server(product: &str, version: &str) -> (&'static Profile, Option<String>) {
        let wanted = match product {
            "valkey" => Product::Valkey,
            _ => Product::Redis,
        };
        let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let line = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        if let Some(p) = PROFILES
            .iter()
            .find(|p| p.product == wanted && p.line == line)
        {
            return (p, None);
        }
        let key = |l: (u32, u32)| l.0 as i64 * 1000 + l.1 as i64;
        let nearest = PROFILES
            .iter()
            .filter(|p| p.product == wanted)
            .min_by_key(|p| (key(p.line) - key(line)).abs())
            .unwrap_or(DEFAULT);
        let note = format!(
            "no profile for {product} {version}: the sandbox follows the nearest, {} (dry runs may differ; a dry-run-differs warning says when a reply does)",
            nearest.id
        );
        (nearest, Some(note))
    }

    /// `number` as this profile sends it in a `redis.call` argument.
    pub fn argument_text(&self, number: f64, out: &mut Vec<u8>) {
        format_number(self.argument_numbers, number, out)
    }

    /// A double reply as this profile writes it under RESP2.
    pub fn double_text(&self, number: f64) -> String {
        let mut out = Vec::new();
        format_number(self.double_replies, number, &mut out);
        String::from_utf8(out).expect("ASCII")
    }
}

/// Every profile id, comma separated (for help and errors).
pub fn ids() -> String {
    PROFILES.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
}

/// Write `d` as `format` says.
pub fn format_number(format: NumberFormat, d: f64, out: &mut Vec<u8>) {
    match format {
        NumberFormat::Printf17g => {
            if d.fract() == 0.0 && d != 0.0 && d.abs() < 1e15 {
                push_integer(d as i64, out);
            } else {
                out.extend_from_slice(crate::engine::reply::format_g(d, 17).as_bytes());
            }
        }
        NumberFormat::Shortest => shortest(d, out),
        NumberFormat::ReplyDouble if d == 0.0 || d.is_nan() => {
            if d.is_nan() {
                out.extend_from_slice(b"nan");
            } else {
                shortest(d, out);
            }
        }
        NumberFormat::ReplyDouble => format_number(NumberFormat::IntegerThenShortest, d, out),
        NumberFormat::IntegerThenShortest => {
            // Redis's `double2ll`: integral and within ±LLONG_MAX/2 (which is 2^62 as a double).
            const LIMIT: f64 = 4_611_686_018_427_387_904.0;
            if d.fract() == 0.0 && (-LIMIT..=LIMIT).contains(&d) {
                push_integer(d as i64, out);
            } else {
                shortest(d, out)
            }
        }
    }
}

/// `n` in decimal (itoa: no formatter, no allocation; this runs for every number a script passes).
fn push_integer(n: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The shortest digits that read back as `d`, laid out as `fpconv_dtoa` does: plain digits for
/// an integer unless it needs more than 7 trailing zeros, a plain decimal down to 1e-6 (or with
/// an exponent under 4), otherwise `d.ddde±x` without exponent padding.
fn shortest(d: f64, out: &mut Vec<u8>) {
    if d.is_sign_negative() {
        out.push(b'-');
    }
    let a = d.abs();
    if a.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if a.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    if a == 0.0 {
        out.push(b'0');
        return;
    }
    // An integer below 2^53 with at most 7 trailing zeros: its shortest digits are its own digits
    // (every integer there is a double, so no shorter text reads back the same), laid out plain.
    // Scripts mostly pass such numbers; this skips the formatting below (speed).
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if a.fract() == 0.0 && a < EXACT {
        let n = a as u64;
        if !n.is_multiple_of(100_000_000) {
            out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            return;
        }
    }
    shortest_general(a, d.is_sign_negative(), out)
}

/// `shortest` of a positive finite `a`: Grisu2's digits (engine/grisu.rs), laid out as
/// `fpconv_dtoa`'s `emit_digits` does.
fn shortest_general(a: f64, negative: bool, out: &mut Vec<u8>) {
    let (mut digits, k) = super::grisu::digits(a);
    let n = digits.len() as i32;
    let abs_exp = (k + n - 1).abs();
    if k >= 0 && abs_exp < n + 7 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', k as usize));
    } else if k < 0 && (k > -7 || abs_exp < 4) {
        let point = n + k;
        if point <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-point) as usize));
            out.extend_from_slice(&digits);
        } else {
            out.extend_from_slice(&digits[..point as usize]);
            out.push(b'.');
            out.extend_from_slice(&digits[point as usize..]);
        }
    } else {
        // fpconv keeps at most 18 digits here, 17 for a negative number (its buffer's size).
        digits.truncate(if negative { 17 } else { 18 });
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if k + n - 1 < 0 { b'-' } else { b'+' });
        out.extend_from_slice(abs_exp.to_string().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(format: NumberFormat, d: f64) -> String {
        let mut out = Vec::new();
        format_number(format, d, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Each expectation is what the real server stored for `redis.call('set', 'k', d)`.
    #[test]
    fn argument_numbers_match_each_server() {
        use NumberFormat::*;
        let cases: [(f64, &str, &str, &str); 14] = [
            (0.1, "0.10000000000000001", "0.1", "0.1"),
            (-0.0, "-0", "-0", "0"),
            (1e300, "1.0000000000000001e+300", "1e+300", "1e+300"),
            (1e15, "1000000000000000", "1e+15", "1000000000000000"),
            (1e17, "1e+17", "1e+17", "100000000000000000"),
            (
                123456789012345678.0,
                "1.2345678901234568e+17",
                "123456789012345680",
                "123456789012345680",
            ),
            (1e-5, "1.0000000000000001e-05", "0.00001", "0.00001"),
            (1.5e-7, "1.4999999999999999e-07", "1.5e-7", "1.5e-7"),
            (
                2f64.powi(62),
                "4.6116860184273879e+18",
                "4611686018427388000",
                "4611686018427387904",
            ),
            (
                2f64.powi(62) + 2048.0,
                "4.61168601842739e+18",
                "4611686018427390000",
                "4611686018427390000",
            ),
            (
                2f64.powi(63),
                "9.2233720368547758e+18",
                "9223372036854776000",
                "9223372036854776000",
            ),
            (5e-324, "4.9406564584124654e-324", "5e-324", "5e-324"),
            (1e21, "1e+21", "1e+21", "1e+21"),
            (
                1e15 + 0.5,
                "1000000000000000.5",
                "1000000000000000.5",
                "1000000000000000.5",
            ),
        ];
        for (d, v70, v72, v74) in cases {
            assert_eq!(text(Printf17g, d), v70, "7.0 {d}");
            assert_eq!(text(Shortest, d), v72, "7.2 {d}");
            assert_eq!(text(IntegerThenShortest, d), v74, "7.4 {d}");
        }
        assert_eq!(text(Shortest, f64::NAN.copysign(-1.0)), "-nan");
        // Double replies (ZINCRBY, `{double=...}`) of 7.2 and later.
        assert_eq!(text(ReplyDouble, -0.0), "-0");
        assert_eq!(text(ReplyDouble, f64::NAN.copysign(-1.0)), "nan");
        assert_eq!(text(ReplyDouble, 1e17), "100000000000000000");
        assert_eq!(text(ReplyDouble, 0.1), "0.1");
        assert_eq!(text(Shortest, f64::NEG_INFINITY), "-inf");
    }

    /// The integer fast path of `shortest` writes what the general layout writes.
    #[test]
    fn shortest_integers_match_the_general_layout() {
        let mut values: Vec<f64> = vec![1.0, 9.0, 10.0, 1e7, 1e8, 1.2e8, 99999999.0, 1e15 + 1.0];
        values.extend([
            2f64.powi(53) - 1.0,
            2f64.powi(53) - 2.0,
            2f64.powi(52) + 1.0,
        ]);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            // xorshift: integers of every length up to 2^53, some with trailing zeros.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 16) as i32 + 1;
            let n = (x >> 11) % 10u64.pow(digits as u32);
            values.push((n.max(1) * 10u64.pow((x >> 60) as u32 % 4)) as f64);
        }
        for d in values.into_iter().filter(|d| *d < 2f64.powi(53)) {
            for v in [d, -d] {
                let mut general = Vec::new();
                if v < 0.0 {
                    general.push(b'-');
                }
                shortest_general(v.abs(), v < 0.0, &mut general);
                assert_eq!(
                    text(NumberFormat::Shortest, v),
                    String::from_utf8(general).unwrap(),
                    "{v}"
                );
            }
        }
    }

    #[test]
    fn server_versions_pick_profiles() {
        assert_eq!(Profile::for_server("redis", "7.0.15").0.id, "redis-7.0");
        assert_eq!(Profile::for_server("valkey", "9.1.2"), (&PROFILES[5], None));
        let (p, note) = Profile::for_server("redis", "7.6.0");
        assert_eq!(p.id, "redis-7.4");
        assert_eq!(
            note.as_deref(),
            Some("no profile for redis 7.6.0: the sandbox follows the nearest, redis-7.4 (dry runs may differ; a dry-run-differs warning says when a reply does)")
        );
        assert_eq!(Profile::for_server("valkey", "8.0.1").0.id, "valkey-8.1");
        assert_eq!(
            Profile::by_id("redis-9.9").unwrap_err(),
            "unknown profile 'redis-9.9': use one of redis-7.0, redis-7.2, redis-7.4, redis-8.0, valkey-8.1, valkey-9.1"
        );
        assert_eq!(Profile::by_id("Valkey-8.1").unwrap().index(), 4);
    }
}
