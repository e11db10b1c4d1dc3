//! One command typed by hand (the workbench's `redis>` prompt): split as the KEYS / ARGV form
//! splits, checked against a profile's command table as a client connection checks it (the
//! server's own words for an unknown command or a wrong arity, not the script bridge's), run on a
//! keyspace through the same handlers `redis.call` uses, or judged for a live server.

use crate::engine::clock::ManualClock;
use crate::engine::commands::{self, table, CommandRng, Ctx, Refusal, Resolved, StopCheck};
use crate::engine::keyspace::{Db, Keyspace};
use crate::engine::profile::Profile;
use crate::engine::reply::Reply;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The words of a command line, or what is wrong with it.
pub fn split(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let words = crate::engine::script::split_args(line)
        .ok_or_else(|| "unbalanced quotes: close the quote or escape it with \\".to_string())?;
    Ok(words.into_iter().map(String::into_bytes).collect())
}

/// Resolve `args` as the server does for a client: its errors for an unknown command, an
/// unknown subcommand and a wrong number of arguments (a client may send what a script may not,
/// so the script-only refusal does not apply).
pub fn resolve(profile: &'static Profile, args: &[Vec<u8>]) -> Result<&'static Resolved, String> {
    let Some(name) = args.first() else {
        return Err("ERR empty command".into());
    };
    match commands::resolve_in(profile, args) {
        Ok(resolved) => Ok(resolved),
        Err(Refusal::WrongArity) => Err(commands::errors::wrong_args(&arity_name(profile, args))),
        Err(Refusal::UnknownSubcommand(container, sub)) => {
            Err(unknown_subcommand(&container, &sub))
        }
        Err(Refusal::NoScript) => {
            // Found and of the right arity: only a script may not call it.
            let full = arity_name(profile, args);
            commands::lookup_in(profile, &full).ok_or_else(|| unknown_command(args))
        }
        Err(Refusal::Unknown) => {
            let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
            match args.get(1) {
                // A profile that calls an unknown subcommand an unknown command in scripts
                // still names it to a client.
                Some(sub) if commands::is_container(profile, &lower) => Err(unknown_subcommand(
                    &lower,
                    &String::from_utf8_lossy(commands::until_nul(sub)),
                )),
                _ => Err(unknown_command(args)),
            }
        }
    }
}

/// The table name an arity error names: `get`, or `config|get` for a subcommand (Redis 7 names
/// the subcommand by its full name).
fn arity_name(profile: &'static Profile, args: &[Vec<u8>]) -> String {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    match args.get(1) {
        Some(sub) if commands::is_container(profile, &name) => {
            let full = format!(
                "{name}|{}",
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            );
            if commands::lookup_in(profile, &full).is_some() {
                full
            } else {
                name
            }
        }
        _ => name,
    }
}

fn unknown_subcommand(container: &str, sub: &str) -> String {
    format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        cut(sub, 128),
        container.to_ascii_uppercase()
    )
}

/// `ERR unknown command 'foo', with args beginning with: 'a' 'b' ` as the server writes it: the
/// name up to 128 bytes, then arguments while the list is under 128 bytes.
fn unknown_command(args: &[Vec<u8>]) -> String {
    let mut listed = String::new();
    for arg in &args[1..] {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        listed.push('\'');
        listed.push_str(&cut(&String::from_utf8_lossy(arg), room));
        listed.push_str("' ");
    }
    format!(
        "ERR unknown command '{}', with args beginning with: {listed}",
        cut(&String::from_utf8_lossy(&args[0]), 128)
    )
}

fn cut(text: &str, bytes: usize) -> String {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// What happened to a command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The reply (a bounded copy when `cut`).
    Reply { reply: Reply, cut: bool },
    /// Not sent: why, and what to use instead.
    Refused(String),
    /// The connection failed.
    Failed(String),
}

/// The longest a hand-typed command may take on the seed (KEYS on a large seed stops here).
const SEED_COMMAND_TIME: Duration = Duration::from_secs(2);

/// Run one command on a seed keyspace, as a client of the profile's server would: `now_ms` is the
/// seed's clock. Returns the reply and whether the command is a write that succeeded.
pub fn run_on_seed(
    profile: &'static Profile,
    seed: &mut Db,
    now_ms: i64,
    args: &[Vec<u8>],
) -> (Reply, bool) {
    let resolved = match resolve(profile, args) {
        Ok(r) => r,
        Err(text) => return (Reply::Error(text), false),
    };
    if let Some(text) = not_for_the_seed(resolved) {
        return (Reply::Error(text), false);
    }
    let clock = ManualClock::new(now_ms.saturating_mul(1000));
    let cancel = AtomicBool::new(false);
    let mut rng = CommandRng::default();
    // The seed is database 0 of a server made for this one command.
    let mut keyspace = Keyspace::new();
    std::mem::swap(&mut keyspace.dbs[0], seed);
    let mut ctx = Ctx {
        keyspace: &mut keyspace,
        db_index: 0,
        now_ms,
        clock: &clock,
        resp3: false,
        rng: &mut rng,
        spare_bytes: crate::engine::budget::spare(),
        over_budget: false,
        profile,
        stop: StopCheck::new(Some(Instant::now() + SEED_COMMAND_TIME), &cancel),
    };
    let reply = commands::execute(resolved, &mut ctx, args).to_resp2();
    let (over_budget, stopped) = (ctx.over_budget, ctx.stop.stopped);
    std::mem::swap(&mut keyspace.dbs[0], seed);
    if over_budget {
        return (
            Reply::Error(crate::engine::budget::over_budget_text(
                crate::engine::budget::limit(),
            )),
            false,
        );
    }
    if stopped {
        return (
            Reply::Error(format!(
                "ERR evalbench: stopped after {} s; narrow it (SCAN with MATCH and COUNT)",
                SEED_COMMAND_TIME.as_secs()
            )),
            false,
        );
    }
    let wrote = resolved.info.is_write() && !reply.is_error();
    (reply, wrote)
}

/// The seed is one database of keys: commands about a connection or another database say so.
fn not_for_the_seed(resolved: &Resolved) -> Option<String> {
    let name = resolved.info.name;
    let why = match name {
        "select" | "swapdb" | "move" => "the seed is one database (database 0)",
        "multi" | "exec" | "discard" | "watch" | "unwatch" => {
            "each line runs on its own; write the transaction as a script (F5 runs it atomically)"
        }
        _ => return None,
    };
    Some(format!(
        "ERR evalbench: {} does not apply to the seed: {why}",
        name.to_ascii_uppercase()
    ))
}

/// What a command line may do on a live server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveVerdict {
    /// A read: it runs.
    Run,
    /// A write or an administrative command: it runs once the user agrees (the reason to ask).
    Ask(String),
    /// Never sent from the workbench: why, and what to use instead.
    Refuse(String),
}

/// Judge a command for a live server whose `role` INFO gave ("master", "slave", "replica").
/// Refused outright are the commands that hold the shared connection (MONITOR, SUBSCRIBE,
/// blocking reads, MULTI, SELECT, HELLO) and those whose damage one stray `y` cannot undo
/// (KEYS, FLUSHALL, FLUSHDB, SHUTDOWN, DEBUG, CONFIG SET): the workbench is for looking, and
/// redis-cli stays the tool for deliberate administration.
pub fn live_verdict(profile: &'static Profile, role: &str, args: &[Vec<u8>]) -> LiveVerdict {
    let resolved = match resolve(profile, args) {
        Ok(r) => r,
        // The server answers with its own error: nothing can go wrong.
        Err(_) => return LiveVerdict::Run,
    };
    let info = resolved.info;
    let name = info.name;
    let upper = name.replace('|', " ").to_ascii_uppercase();
    let refuse = |why: &str| LiveVerdict::Refuse(format!("{upper} is not sent: {why}"));
    match name {
        "keys" => {
            return refuse(
                "it walks every key in one call and blocks the server; use SCAN 0 MATCH <pattern> COUNT 100 (the Server tab's / filter scans for you)",
            )
        }
        "flushall" | "flushdb" => {
            return refuse("it deletes every key; delete keys one by one (DEL, UNLINK) or use redis-cli if you mean it")
        }
        "shutdown" => return refuse("it stops the server; use redis-cli if you mean it"),
        "debug" => return refuse("DEBUG can crash or stall the server; use redis-cli on a test server"),
        "config|set" | "config|resetstat" | "config|rewrite" => {
            return refuse("it changes the server's configuration; use redis-cli if you mean it (CONFIG GET reads it)")
        }
        "monitor" => return refuse("it streams every command forever on this connection; run redis-cli MONITOR in a terminal"),
        "select" | "hello" | "auth" | "reset" | "quit" | "client|reply" => {
            return refuse("it changes the workbench's connection; connect again with the database or user you want")
        }
        "multi" | "exec" | "discard" | "watch" | "unwatch" => {
            return refuse("each line runs on its own; write the transaction as a script (F5 runs it atomically)")
        }
        _ => {}
    }
    if info.has(table::F_PUBSUB) && name.contains("subscribe") {
        return refuse(
            "it turns the connection into a subscriber; run redis-cli SUBSCRIBE in a terminal",
        );
    }
    // XREAD and XREADGROUP carry the flag, but block only with BLOCK.
    let stream_read = matches!(name, "xread" | "xreadgroup");
    let blocks = !stream_read || args.iter().any(|a| a.eq_ignore_ascii_case(b"block"));
    if info.has(table::F_BLOCKING) && blocks {
        return refuse("it blocks the connection until data arrives; use the non-blocking form (LPOP, XREAD without BLOCK, ...)");
    }
    let write = info.is_write() || info.has(table::F_MAY_REPLICATE);
    let replica = matches!(role, "slave" | "replica");
    if write && replica {
        return refuse(&format!(
            "the server is a replica (role {role}); writes go to its master"
        ));
    }
    if write {
        return LiveVerdict::Ask(format!("{upper} writes to the live server"));
    }
    if info.has(table::F_ADMIN) {
        return LiveVerdict::Ask(format!("{upper} is an administrative command"));
    }
    LiveVerdict::Run
}

/// Command names of the profile's table starting with `prefix` (any case), upper case, sorted;
/// subcommands are left out (their parent is completed).
pub fn complete(profile: &'static Profile, prefix: &str) -> Vec<String> {
    let prefix = prefix.to_ascii_lowercase();
    let mut names: Vec<String> = commands::table_of(profile)
        .into_iter()
        .filter(|info| !info.name.contains('|') && info.name.starts_with(&prefix))
        .map(|info| info.name.to_ascii_uppercase())
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::DEFAULT;

    fn words(line: &str) -> Vec<Vec<u8>> {
        split(line).unwrap()
    }

    #[test]
    fn errors_are_a_clients_not_a_scripts() {
        assert_eq!(
            resolve(DEFAULT, &words("NOPE a b")).err().unwrap(),
            "ERR unknown command 'NOPE', with args beginning with: 'a' 'b' "
        );
        assert_eq!(
            resolve(DEFAULT, &words("GET")).err().unwrap(),
            "ERR wrong number of arguments for 'get' command"
        );
        assert_eq!(
            resolve(DEFAULT, &words("CONFIG GET")).err().unwrap(),
            "ERR wrong number of arguments for 'config|get' command"
        );
        assert_eq!(
            resolve(DEFAULT, &words("OBJECT NOPE k")).err().unwrap(),
            "ERR unknown subcommand 'NOPE'. Try OBJECT HELP."
        );
        assert_eq!(
            split("GET \"a").unwrap_err(),
            "unbalanced quotes: close the quote or escape it with \\"
        );
    }

    #[test]
    fn a_write_changes_the_seed_and_says_so() {
        let mut seed = Db::new();
        let now = 1_700_000_000_000;
        let (reply, wrote) = run_on_seed(DEFAULT, &mut seed, now, &words("SET a \"x y\""));
        assert_eq!((reply.to_cli(), wrote), ("OK".to_string(), true));
        let (reply, wrote) = run_on_seed(DEFAULT, &mut seed, now, &words("GET a"));
        assert_eq!((reply.to_cli(), wrote), ("\"x y\"".to_string(), false));
        let (reply, _) = run_on_seed(DEFAULT, &mut seed, now, &words("SELECT 1"));
        assert_eq!(
            reply.to_cli(),
            "(error) ERR evalbench: SELECT does not apply to the seed: the seed is one database (database 0)"
        );
    }

    #[test]
    fn live_verdicts() {
        let v = |line: &str, role: &str| live_verdict(DEFAULT, role, &words(line));
        assert_eq!(v("GET a", "master"), LiveVerdict::Run);
        assert_eq!(v("NOPE", "master"), LiveVerdict::Run);
        assert_eq!(
            v("SET a 1", "master"),
            LiveVerdict::Ask("SET writes to the live server".into())
        );
        assert_eq!(
            v("SET a 1", "slave"),
            LiveVerdict::Refuse(
                "SET is not sent: the server is a replica (role slave); writes go to its master"
                    .into()
            )
        );
        assert!(
            matches!(v("KEYS *", "master"), LiveVerdict::Refuse(t) if t.contains("use SCAN 0 MATCH"))
        );
        assert!(
            matches!(v("BLPOP q 0", "master"), LiveVerdict::Refuse(t) if t.starts_with("BLPOP is not sent: it blocks"))
        );
        assert!(
            matches!(v("config set maxmemory 1", "master"), LiveVerdict::Refuse(t) if t.starts_with("CONFIG SET is not sent"))
        );
        assert!(matches!(v("SUBSCRIBE c", "master"), LiveVerdict::Refuse(_)));
        assert_eq!(v("XREAD STREAMS s 0", "master"), LiveVerdict::Run);
        assert!(matches!(
            v("XREAD BLOCK 0 STREAMS s $", "master"),
            LiveVerdict::Refuse(_)
        ));
    }

    #[test]
    fn completes_command_names() {
        assert_eq!(complete(DEFAULT, "hge"), vec!["HGET", "HGETALL"]);
        assert!(complete(DEFAULT, "zzz").is_empty());
    }
}
