//! The COMMAND subcommands a script may call that the command table answers (Redis 7.0.15
//! `src/server.c`): COUNT, LIST (FILTERBY PATTERN or MODULE) and GETKEYS. COMMAND INFO, DOCS and
//! GETKEYSANDFLAGS need the ACL categories, tips and key specs, which the table does not carry.

use super::table::{F_MOVABLEKEYS, F_NO_MANDATORY_KEYS};
use super::{glob_match_stoppable, lookup_in, lower, table_of, Command, Ctx, Resolved};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("command|count", count),
    Command::new("command|list", list),
    Command::new("command|getkeys", getkeys),
];

/// The profile's top-level commands (subcommands are not counted).
fn count(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    let n = table_of(ctx.profile)
        .iter()
        .filter(|c| !c.name.contains('|'))
        .count();
    Reply::Int(n as i64)
}

/// Every command and subcommand name (`parent|sub`), in byte order (Redis's is its hash
/// table's); FILTERBY PATTERN glob, or MODULE (no module is loaded: none).
fn list(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let names = table_of(ctx.profile).into_iter().map(|c| c.name);
    let star_limit = ctx.profile.glob_star_limit;
    let stop = &mut ctx.stop;
    let picked: Vec<&str> = match args.len() {
        2 => names.collect(),
        5 if lower(&args[2]) == "filterby" => match lower(&args[3]).as_str() {
            "pattern" => names
                .filter(|n| {
                    glob_match_stoppable(&args[4], n.as_bytes(), true, star_limit, stop)
                        == Some(true)
                })
                .collect(),
            "module" => Vec::new(),
            "aclcat" => {
                return Reply::err(super::errors::unsupported(
                    "command list filterby aclcat",
                    ctx.profile,
                ))
            }
            _ => return Reply::err(super::errors::SYNTAX),
        },
        _ => return Reply::err(super::errors::SYNTAX),
    };
    Reply::Array(picked.into_iter().map(Reply::bulk).collect())
}

/// COMMAND GETKEYS command [arg ...]: the key arguments of that call.
fn getkeys(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let call = &args[2..];
    let Some(resolved) = find(ctx, call) else {
        return Reply::err("ERR Invalid command specified");
    };
    let info = resolved.info;
    if info.first_key <= 0 && !info.has(F_MOVABLEKEYS) {
        return Reply::err("ERR The command has no key arguments");
    }
    if !info.arity_ok(call.len()) {
        return Reply::err("ERR Invalid number of arguments specified for command");
    }
    let mut positions = match movable_keys(info.name, call) {
        Some(positions) => positions,
        None => resolved.key_positions(call),
    };
    // The key specs give keys in argument order.
    positions.sort_unstable();
    if positions.is_empty() && !info.has(F_NO_MANDATORY_KEYS) {
        return Reply::err("ERR Invalid arguments specified for command");
    }
    Reply::Array(
        positions
            .into_iter()
            .filter_map(|i| call.get(i))
            .map(|k| Reply::Bulk(k.clone()))
            .collect(),
    )
}

/// The command or, for a container, its subcommand (`lookupCommand`).
fn find(ctx: &Ctx, call: &[Vec<u8>]) -> Option<&'static Resolved> {
    let name = lower(&call[0]);
    let top = lookup_in(ctx.profile, &name)?;
    let is_container = table_of(ctx.profile)
        .iter()
        .any(|c| c.name.split_once('|').is_some_and(|(p, _)| p == name));
    if !is_container {
        return Some(top);
    }
    let sub = call.get(1)?;
    lookup_in(ctx.profile, &format!("{name}|{}", lower(sub)))
}

/// Keys of the script commands the sandbox does not dispatch (`evalGetKeys`): `numkeys` keys
/// after the script or function name.
fn movable_keys(name: &str, call: &[Vec<u8>]) -> Option<Vec<usize>> {
    if !matches!(
        name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    ) {
        return None;
    }
    let numkeys = crate::engine::number::parse_i64(&call[2]).unwrap_or(0);
    let n = usize::try_from(numkeys).unwrap_or(0).min(call.len() - 3);
    Some((3..3 + n).collect())
}
