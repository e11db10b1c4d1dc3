//! DUMP and RESTORE (`cluster.c`'s `dumpCommand`, `restoreCommand`, `verifyDumpPayload`): the
//! payload is the value's RDB serialization as the profile's server writes it (rdb.rs).

use super::rdb::{self, LoadError};
use super::{errors, flatten, int_arg, lower, Command, Ctx};
use crate::engine::keyspace::{Entry, StringBuild};
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[Command::new("dump", dump), Command::new("restore", restore)];

const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
const BAD_TTL: &str = "ERR Invalid TTL value, must be >= 0";
const BAD_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
const BAD_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
const BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
const BAD_FORMAT: &str = "ERR Bad data format";

fn dump(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let profile = ctx.profile;
    let Some(entry) = ctx.entry(&args[1]) else {
        return Reply::Nil;
    };
    match rdb::dump(&mut entry.value, profile) {
        Ok(payload) => Reply::Bulk(payload),
        Err(e) => Reply::Error(e),
    }
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]: options
/// first, then the key, the TTL, the payload, as the server checks them. IDLETIME and FREQ are
/// checked and then have nothing to set: a sandbox key is never idle and no LFU policy runs.
fn restore(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    flatten(restore_inner(ctx, args))
}

fn restore_inner(ctx: &mut Ctx, args: &[Vec<u8>]) -> Result<Reply, Reply> {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq) = (false, false);
    let mut j = 4;
    while j < args.len() {
        let more = j + 1 < args.len();
        match lower(&args[j]).as_str() {
            "replace" => replace = true,
            "absttl" => absttl = true,
            // One of IDLETIME and FREQ: the other then is a syntax error.
            "idletime" if more && !freq => {
                if int_arg(&args[j + 1])? < 0 {
                    return Err(Reply::err(BAD_IDLETIME));
                }
                idle = true;
                j += 1;
            }
            "freq" if more && !idle => {
                if !(0..=255).contains(&int_arg(&args[j + 1])?) {
                    return Err(Reply::err(BAD_FREQ));
                }
                freq = true;
                j += 1;
            }
            _ => return Err(Reply::err(errors::SYNTAX)),
        }
        j += 1;
    }
    let key = &args[1];
    if !replace && ctx.entry(key).is_some() {
        return Err(Reply::err(BUSYKEY));
    }
    let ttl = int_arg(&args[2])?;
    if ttl < 0 {
        return Err(Reply::err(BAD_TTL));
    }
    let profile = ctx.profile;
    rdb::verify(&args[3], profile).map_err(|_| Reply::err(BAD_PAYLOAD))?;
    let value = rdb::load(&args[3], profile).map_err(|e| match e {
        LoadError::NotYet(text) => Reply::Error(text),
        _ => Reply::err(BAD_FORMAT),
    })?;
    // The script's time (`commandTimeSnapshot`): two RESTOREs of one script set one expiry.
    let now = ctx.now_ms;
    if replace {
        ctx.db().remove(key, now);
    }
    let expire_at_ms = match ttl {
        0 => None,
        t if absttl => Some(t),
        t => Some(t.saturating_add(now)),
    };
    // A TTL already past: the key is not created (and REPLACE deleted the old one).
    if expire_at_ms.is_some_and(|at| at <= now) {
        return Ok(Reply::ok());
    }
    ctx.db().insert_entry(
        key.clone(),
        Entry {
            value,
            expire_at_ms,
            raw: None,
            built: StringBuild {
                with_expire_field: expire_at_ms.is_some(),
                had_ttl: expire_at_ms.is_some(),
                ..StringBuild::default()
            },
        },
    );
    Ok(Reply::ok())
}
