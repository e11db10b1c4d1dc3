//! The command registry and dispatcher: Redis's own table (`redis_commands.rs`, generated from
//! `COMMAND` of a real 7.0.15) gives arity, flags and key positions; one file per data type gives
//! the handlers. `redis_commands.rs` was produced by running `redis-cli --json COMMAND` against
//! the reference server and turning each entry (and subcommand) into a `RedisCommandInfo` row.

pub mod docs; // COMMAND DOCS of the servers: since, group, summary, syntax
pub mod errors;
pub mod long_double;
mod redis_commands;
pub mod table;

mod bitmaps; // SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
mod blocking; // BLPOP ... WAIT in scripts, 7.2 and later
mod cluster; // CLUSTER *, CLUSTERSCAN, ASKING, READONLY, READWRITE: cluster disabled
mod command; // COMMAND COUNT, LIST, GETKEYS from the profile's table
mod dump; // DUMP RESTORE
mod generic;
mod geo; // GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH* GEORADIUS*
mod geo_sort; // the sorts of a geo search result
mod geohash; // Redis's 52-bit geohash and distance
mod glob; // KEYS/SCAN MATCH patterns, with the server's limits and a stop check
mod hash_ex; // HGETEX HSETEX HGETDEL
mod hash_ttl; // HEXPIRE ... HPERSIST
mod hashes;
mod help; // the HELP replies' shared tail, per profile
mod hyperloglog; // PFADD PFCOUNT PFMERGE
mod lists;
pub mod memory; // MEMORY USAGE, MEMORY HELP; its per-server sizes
mod pubsub; // PUBSUB CHANNELS/NUMSUB/NUMPAT/SHARD*, SPUBLISH
mod rdb; // the RDB serialization DUMP writes and RESTORE reads
pub(crate) mod sds; // a raw string's allocation: OBJECT ENCODING raw, MEMORY USAGE
mod server;
mod sets;
mod sort; // SORT SORT_RO
mod stream_groups; // XGROUP XREADGROUP XACK XPENDING XSETID XINFO
mod streams;
mod strings;
mod zsets;

use crate::engine::keyspace::{Db, Entry, Keyspace, Value};
use crate::engine::number;
use crate::engine::profile::{self, Profile};
use crate::engine::reply::Reply;
pub use glob::{filter_match, glob_match, glob_match_stoppable, StopCheck};
use std::collections::HashMap;
use std::sync::OnceLock;
pub use table::RedisCommandInfo;

/// Everything a command handler may touch.
pub struct Ctx<'a> {
    pub keyspace: &'a mut Keyspace,
    /// The database the script is on (SELECT inside a script changes it for the rest of the run).
    pub db_index: usize,
    /// Time used for expiry checks: frozen at script start, as in Redis 7.0.
    pub now_ms: i64,
    /// Wall-clock time for TIME and TTL arithmetic (Redis 7.0 does not freeze these); read only
    /// by the commands that need it.
    pub clock: &'a dyn crate::engine::clock::Clock,
    /// The script client's protocol (`redis.setresp`): some replies change shape under RESP3.
    pub resp3: bool,
    /// Random source for SPOP, SRANDMEMBER, RANDOMKEY, HRANDFIELD, ZRANDMEMBER.
    pub rng: &'a mut CommandRng,
    /// Bytes the run may still allocate (engine/budget.rs).
    pub spare_bytes: usize,
    /// Set by `reserve` when a handler refused for lack of budget: the run stops.
    pub over_budget: bool,
    /// The server the sandbox imitates (commands whose rules differ by server).
    pub profile: &'static Profile,
    /// The run's stop (busy threshold, cancel) for commands that can run long (KEYS, MATCH).
    pub stop: StopCheck<'a>,
}

impl Ctx<'_> {
    /// Before an allocation whose size comes from an argument (SETRANGE's offset, APPEND):
    /// refuse it when it would not fit the run's memory budget.
    pub fn reserve(&mut self, bytes: u64) -> Result<(), Reply> {
        if bytes > self.spare_bytes as u64 {
            self.over_budget = true;
            return Err(Reply::err("ERR evalbench: over the memory budget"));
        }
        Ok(())
    }
    pub fn db(&mut self) -> &mut Db {
        self.keyspace.db_mut(self.db_index)
    }
    /// The live entry of `key`, if any.
    pub fn entry(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let now = self.now_ms;
        self.db().get_mut(key, now)
    }
    /// The live value of `key`, if any.
    pub fn value(&mut self, key: &[u8]) -> Option<&mut Value> {
        self.entry(key).map(|e| &mut e.value)
    }
    pub fn wall_us(&self) -> i64 {
        self.clock.now_us()
    }
    pub fn wall_ms(&self) -> i64 {
        self.wall_us() / 1000
    }
}

/// A small deterministic generator (xorshift64*) for the commands that pick at random.
#[derive(Debug, Clone)]
pub struct CommandRng(u64);

impl Default for CommandRng {
    fn default() -> Self {
        CommandRng(0x9E37_79B9_7F4A_7C15)
    }
}

impl CommandRng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A handler gets the whole argv (`args[0]` is the command name as the script wrote it).
pub type Handler = fn(&mut Ctx, &[Vec<u8>]) -> Reply;
/// Key positions of a command whose keys move (`numkeys` arguments, `STREAMS`, ...).
pub type KeysFn = fn(&[Vec<u8>]) -> Vec<usize>;

/// One implemented command.
pub struct Command {
    /// Lower case, `parent|sub` for a subcommand (as in Redis's table).
    pub name: &'static str,
    pub handler: Handler,
    pub keys: Option<KeysFn>,
}

impl Command {
    pub const fn new(name: &'static str, handler: Handler) -> Command {
        Command {
            name,
            handler,
            keys: None,
        }
    }
    pub const fn with_keys(name: &'static str, handler: Handler, keys: KeysFn) -> Command {
        Command {
            name,
            handler,
            keys: Some(keys),
        }
    }
}

/// A command resolved against Redis's table.
pub struct Resolved {
    pub info: &'static RedisCommandInfo,
    pub implementation: Option<&'static Command>,
}

impl Resolved {
    /// Positions in argv of the keys this call names.
    pub fn key_positions(&self, args: &[Vec<u8>]) -> Vec<usize> {
        match self.implementation.and_then(|c| c.keys) {
            Some(f) => f(args),
            None => self.info.key_positions(args.len()),
        }
    }
}

struct Registry {
    by_name: rustc_hash::FxHashMap<&'static str, Resolved>,
    containers: rustc_hash::FxHashSet<&'static str>,
}

fn all_commands() -> impl Iterator<Item = &'static Command> {
    generic::COMMANDS
        .iter()
        .chain(dump::COMMANDS)
        .chain(strings::COMMANDS)
        .chain(bitmaps::COMMANDS)
        .chain(memory::COMMANDS)
        .chain(hyperloglog::COMMANDS)
        .chain(sort::COMMANDS)
        .chain(geo::COMMANDS)
        .chain(hashes::COMMANDS)
        .chain(hash_ttl::COMMANDS)
        .chain(hash_ex::COMMANDS)
        .chain(blocking::COMMANDS)
        .chain(cluster::COMMANDS)
        .chain(lists::COMMANDS)
        .chain(sets::COMMANDS)
        .chain(zsets::COMMANDS)
        .chain(streams::COMMANDS)
        .chain(stream_groups::COMMANDS)
        .chain(server::COMMANDS)
        .chain(cluster::COMMANDS)
        .chain(pubsub::COMMANDS)
        .chain(command::COMMANDS)
}

/// The registry of a profile: its command table (Redis 7.0.15's, or that with the profile's
/// delta applied) joined with the handlers. A handler of a command the profile's server does not
/// have is left out: the command is unknown there, as on the server.
fn registry(profile: &'static Profile) -> &'static Registry {
    static REGISTRIES: [OnceLock<Registry>; crate::engine::profile::PROFILES.len()] =
        [const { OnceLock::new() }; crate::engine::profile::PROFILES.len()];
    REGISTRIES[profile.index()].get_or_init(|| {
        let table: &'static [RedisCommandInfo] = if profile.command_delta.is_empty() {
            redis_commands::REDIS_COMMANDS
        } else {
            let rows = table::apply_delta(redis_commands::REDIS_COMMANDS, profile.command_delta)
                .unwrap_or_else(|e| panic!("commands/profiles/{}.table: {e}", profile.id));
            Box::leak(rows.into_boxed_slice())
        };
        let implemented: HashMap<&str, &'static Command> =
            all_commands().map(|c| (c.name, c)).collect();
        let mut by_name = rustc_hash::FxHashMap::default();
        let mut containers = rustc_hash::FxHashSet::default();
        for info in table {
            if let Some((parent, _)) = info.name.split_once('|') {
                let parent = table.iter().find(|c| c.name == parent).map(|c| c.name);
                containers.extend(parent);
            }
            by_name.insert(
                info.name,
                Resolved {
                    info,
                    implementation: implemented.get(info.name).copied(),
                },
            );
        }
        Registry {
            by_name,
            containers,
        }
    })
}

/// Why a command cannot be dispatched, before it runs (Redis's `scriptCall` checks, in order).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Unknown,
    /// A container's unknown subcommand, on a profile that names it (`CONFIG`, `NOSUB`).
    UnknownSubcommand(String, String),
    WrongArity,
    NoScript,
}

impl Refusal {
    /// The text under a profile (Valkey says `command` where Redis says `Redis command`).
    pub fn text_in(&self, profile: &Profile) -> String {
        let noun = profile.command_noun;
        match self {
            Refusal::Unknown => format!("ERR Unknown {noun} called from script"),
            Refusal::WrongArity => format!("ERR Wrong number of args calling {noun} from script"),
            Refusal::NoScript => profile.noscript_text.to_string(),
            Refusal::UnknownSubcommand(container, sub) => format!(
                "ERR unknown subcommand '{sub}'. Try {} HELP.",
                container.to_ascii_uppercase()
            ),
        }
    }
    pub fn text(&self) -> &'static str {
        match self {
            Refusal::Unknown | Refusal::UnknownSubcommand(..) => errors::UNKNOWN_COMMAND,
            Refusal::WrongArity => errors::WRONG_ARGS,
            Refusal::NoScript => errors::NOSCRIPT,
        }
    }
}

/// The last few commands resolved, by the exact bytes of their name: scripts call the same few
/// commands over and over.
#[derive(Default)]
pub struct ResolveCache {
    entries: Vec<(Vec<u8>, &'static Resolved)>,
    next: usize,
    /// The profile the entries were resolved in (`PROFILES` index).
    profile: usize,
}

const RESOLVE_CACHE_SIZE: usize = 8;

/// `resolve` with a cache for plain commands (subcommands are looked up each time).
pub fn resolve_cached(
    cache: &mut ResolveCache,
    profile: &'static Profile,
    args: &[Vec<u8>],
) -> Result<&'static Resolved, Refusal> {
    if cache.profile != profile.index() {
        *cache = ResolveCache {
            profile: profile.index(),
            ..ResolveCache::default()
        };
    }
    let hit = cache
        .entries
        .iter()
        .find(|(name, _)| *name == args[0])
        .map(|(_, r)| *r);
    let resolved = match hit {
        Some(r) => r,
        None => {
            let r = resolve_in(profile, args)?;
            if !registry(profile).containers.contains(r.info.name) && !r.info.name.contains('|') {
                if cache.entries.len() < RESOLVE_CACHE_SIZE {
                    cache.entries.push((args[0].clone(), r));
                } else {
                    cache.entries[cache.next] = (args[0].clone(), r);
                    cache.next = (cache.next + 1) % RESOLVE_CACHE_SIZE;
                }
            }
            return Ok(r);
        }
    };
    if !resolved.info.arity_ok(args.len()) {
        return Err(Refusal::WrongArity);
    }
    if resolved.info.has(table::F_NOSCRIPT) {
        return Err(Refusal::NoScript);
    }
    Ok(resolved)
}

/// `resolve_in` under the default profile (Redis 7.0).
pub fn resolve(args: &[Vec<u8>]) -> Result<&'static Resolved, Refusal> {
    resolve_in(profile::DEFAULT, args)
}

/// Find the command (or subcommand) `args` names in a profile's table and check arity and the
/// `noscript` flag.
pub fn resolve_in(
    profile: &'static Profile,
    args: &[Vec<u8>],
) -> Result<&'static Resolved, Refusal> {
    let reg = registry(profile);
    // Command names are short: lower-case them on the stack (this runs for every redis.call).
    let raw = &args[0];
    let mut buf = [0u8; 32];
    if raw.len() > buf.len() {
        return Err(Refusal::Unknown);
    }
    for (d, c) in buf.iter_mut().zip(raw.iter()) {
        *d = c.to_ascii_lowercase();
    }
    let Ok(name) = std::str::from_utf8(&buf[..raw.len()]) else {
        return Err(Refusal::Unknown);
    };
    let Some(top) = reg.by_name.get_key_value(name) else {
        return Err(Refusal::Unknown);
    };
    let resolved = if reg.containers.contains(top.0) {
        if args.len() < 2 {
            // A container called without a subcommand fails its own arity (-2).
            return Err(Refusal::WrongArity);
        }
        let sub = format!(
            "{}|{}",
            name,
            String::from_utf8_lossy(&args[1]).to_ascii_lowercase()
        );
        match reg.by_name.get(sub.as_str()) {
            Some(r) => r,
            None if profile.unknown_subcommand_error => {
                return Err(Refusal::UnknownSubcommand(
                    name.to_string(),
                    String::from_utf8_lossy(until_nul(&args[1])).into_owned(),
                ))
            }
            None => return Err(Refusal::Unknown),
        }
    } else {
        top.1
    };
    if !resolved.info.arity_ok(args.len()) {
        return Err(Refusal::WrongArity);
    }
    if resolved.info.has(table::F_NOSCRIPT) {
        return Err(Refusal::NoScript);
    }
    Ok(resolved)
}

/// Build the command table now rather than on the first call of the first run.
pub fn warm_up(profile: &'static Profile) {
    registry(profile);
}

/// Look a command up by its table name (`get`, `object|encoding`) in Redis 7.0's table.
pub fn lookup(name: &str) -> Option<&'static Resolved> {
    lookup_in(profile::DEFAULT, name)
}

/// Look a command up by its table name in a profile's table.
pub fn lookup_in(profile: &'static Profile, name: &str) -> Option<&'static Resolved> {
    registry(profile).by_name.get(name)
}

/// Whether a command of the profile's table has subcommands (`config`, `object`).
pub fn is_container(profile: &'static Profile, name: &str) -> bool {
    registry(profile).containers.contains(name)
}

/// A profile's whole command table (for the generator test, tests/command_tables.rs).
pub fn table_of(profile: &'static Profile) -> Vec<&'static RedisCommandInfo> {
    let mut rows: Vec<_> = registry(profile).by_name.values().map(|r| r.info).collect();
    rows.sort_by_key(|r| r.name);
    rows
}

/// Redis 7.0.15's table, the base every profile delta applies to.
pub fn base_table() -> &'static [RedisCommandInfo] {
    redis_commands::REDIS_COMMANDS
}

/// Implemented commands per data type, in the order of the README table.
pub fn implemented_by_family() -> Vec<(&'static str, Vec<&'static str>)> {
    let families: [(&str, &[Command]); 21] = [
        ("keys", generic::COMMANDS),
        (
            "dump and restore (RDB payloads; no streams yet)",
            dump::COMMANDS,
        ),
        ("strings", strings::COMMANDS),
        ("bitmaps", bitmaps::COMMANDS),
        ("hyperloglog", hyperloglog::COMMANDS),
        ("sort", sort::COMMANDS),
        ("hashes", hashes::COMMANDS),
        (
            "hash field TTLs (Redis 7.4+, Valkey 9.1)",
            hash_ttl::COMMANDS,
        ),
        (
            "hash get/set with TTLs (Redis 8.0, Valkey 9.1)",
            hash_ex::COMMANDS,
        ),
        (
            "blocking (7.2+, do not block in scripts)",
            blocking::COMMANDS,
        ),
        ("lists", lists::COMMANDS),
        ("sets", sets::COMMANDS),
        ("sorted sets", zsets::COMMANDS),
        ("streams", streams::COMMANDS),
        ("stream groups", stream_groups::COMMANDS),
        ("geo", geo::COMMANDS),
        ("server", server::COMMANDS),
        ("memory", memory::COMMANDS),
        ("pub/sub (no subscribers)", pubsub::COMMANDS),
        (
            "cluster (disabled, as on a standalone server)",
            cluster::COMMANDS,
        ),
        ("command table", command::COMMANDS),
    ];
    families
        .into_iter()
        .map(|(family, commands)| {
            let mut names: Vec<&str> = commands.iter().map(|c| c.name).collect();
            names.sort();
            (family, names)
        })
        .collect()
}

/// Run a resolved command. The caller has done the script-level checks.
pub fn execute(resolved: &Resolved, ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    match resolved.implementation {
        Some(cmd) => (cmd.handler)(ctx, args),
        None => Reply::Error(errors::unsupported(resolved.info.name, ctx.profile)),
    }
}

// ---- helpers shared by the data-type files ----

/// An argument as C code reads it (`strcasecmp`, `strtod`, `strtoul`, `%s`): up to its first NUL.
pub fn until_nul(arg: &[u8]) -> &[u8] {
    arg.iter().position(|&b| b == 0).map_or(arg, |n| &arg[..n])
}

/// Argument as lower-case ASCII, for option matching. Redis compares options with `strcasecmp`
/// on the C string, so `NX\0junk` is `NX`.
pub fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(until_nul(arg)).to_ascii_lowercase()
}

/// Parse an integer argument or produce Redis's error reply.
pub fn int_arg(arg: &[u8]) -> Result<i64, Reply> {
    number::parse_i64(arg).ok_or_else(|| Reply::err(errors::NOT_INTEGER))
}

/// Parse a float argument or produce Redis's error reply.
pub fn float_arg(arg: &[u8]) -> Result<f64, Reply> {
    number::parse_f64(arg).ok_or_else(|| Reply::err(errors::NOT_FLOAT))
}

/// `Reply` from a handler body written with `?` on `Result<Reply, Reply>`.
pub fn flatten(result: Result<Reply, Reply>) -> Reply {
    result.unwrap_or_else(|e| e)
}

/// A tiny in-memory server for unit tests of the handlers: `call(&["SET", "k", "v"])`.
#[cfg(test)]
pub(crate) struct TestServer {
    pub clock: crate::engine::clock::ManualClock,
    pub keyspace: Keyspace,
    pub rng: CommandRng,
    pub now_ms: i64,
    pub resp3: bool,
    pub profile: &'static Profile,
}

#[cfg(test)]
impl TestServer {
    pub fn new() -> TestServer {
        TestServer {
            clock: crate::engine::clock::ManualClock::new(1_700_000_000_000_000),
            keyspace: Keyspace::new(),
            rng: CommandRng::default(),
            now_ms: 1_700_000_000_000,
            resp3: false,
            profile: profile::DEFAULT,
        }
    }
    /// Run one command as a script would (RESP2 unless `resp3` is set); refusals become errors.
    pub fn call(&mut self, args: &[&str]) -> Reply {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        // Wall time follows the test's frozen time.
        self.clock.set_us(self.now_ms * 1000);
        let resolved = match resolve_in(self.profile, &args) {
            Ok(r) => r,
            Err(refusal) => return Reply::err(refusal.text_in(self.profile)),
        };
        let mut ctx = Ctx {
            keyspace: &mut self.keyspace,
            db_index: 0,
            now_ms: self.now_ms,
            clock: &self.clock,
            resp3: self.resp3,
            rng: &mut self.rng,
            spare_bytes: usize::MAX,
            over_budget: false,
            profile: self.profile,
            stop: StopCheck::never(),
        };
        execute(resolved, &mut ctx, &args)
    }
}

/// The keys a call names and whether the command is a write, from Redis 7.0.15's table (for traces
/// recorded elsewhere, as on a live server), through a cache kept across runs. `None` for a command
/// the table does not know.
pub fn describe_call(
    cache: &mut ResolveCache,
    profile: &'static Profile,
    args: &[Vec<u8>],
) -> Option<(Vec<Vec<u8>>, bool)> {
    if args.is_empty() {
        return None;
    }
    let resolved = resolve_cached(cache, profile, args).ok()?;
    let keys = resolved
        .key_positions(args)
        .into_iter()
        .filter_map(|i| args.get(i).cloned())
        .collect();
    Some((keys, resolved.info.is_write()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_commands_and_subcommands() {
        assert_eq!(resolve(&[b"GET".to_vec()]).err(), Some(Refusal::WrongArity));
        assert_eq!(resolve(&[b"nosuch".to_vec()]).err(), Some(Refusal::Unknown));
        assert_eq!(
            resolve(&[b"CONFIG".to_vec(), b"NOSUB".to_vec()]).err(),
            Some(Refusal::Unknown)
        );
        assert_eq!(
            resolve(&[b"blpop".to_vec(), b"l".to_vec(), b"0".to_vec()]).err(),
            Some(Refusal::NoScript)
        );
        assert!(resolve(&[b"get".to_vec(), b"k".to_vec()]).is_ok());
    }
}
