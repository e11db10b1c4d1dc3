//! server commands a script may call: PING, ECHO, TIME, SELECT, SWAPDB, FLUSHDB, FLUSHALL,
//! PUBLISH (Redis 7.0.15, `src/server.c`, `src/db.c`, `src/pubsub.c`).

use super::{errors, lower, Command, Ctx};
use crate::engine::keyspace::{Value, DATABASES};
use crate::engine::number;
use crate::engine::reply::Reply;

pub static COMMANDS: &[Command] = &[
    Command::new("ping", ping),
    Command::new("echo", echo),
    Command::new("time", time),
    Command::new("select", select),
    Command::new("swapdb", swapdb),
    Command::new("flushdb", flush),
    Command::new("flushall", flush),
    Command::new("publish", publish),
    Command::new("info", info),
];

/// INFO with the sections a sandbox can answer truthfully (server, replication, keyspace), each
/// with the lines of the profile's server that do not depend on the machine; a verbatim string
/// under RESP3, a bulk string under RESP2.
fn info(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let wanted: Vec<String> = args[1..].iter().map(|a| super::lower(a)).collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "all" | "everything" | "default"));
    let want = |name: &str| all || wanted.iter().any(|w| w == name);
    let mut sections = Vec::new();
    let profile = ctx.profile;
    if want("server") {
        // The profile's own server: Valkey keeps `redis_version` at the Redis release it
        // forked from and names itself beside it.
        let mut text = format!("# Server\r\nredis_version:{}\r\n", profile.redis_version);
        if let Some((version, _)) = profile.valkey_version {
            text.push_str(&format!(
                "server_name:valkey\r\nvalkey_version:{version}\r\nvalkey_release_stage:ga\r\n"
            ));
        }
        text.push_str(&format!(
            "{}:standalone\r\nos:evalbench sandbox\r\narch_bits:64\r\nserver_time_usec:{}\r\n",
            profile.info.mode_field,
            ctx.wall_us()
        ));
        sections.push(text);
    }
    if want("replication") {
        let waiting = if profile.info.replicas_waiting_psync {
            "replicas_waiting_psync:0\r\n"
        } else {
            ""
        };
        sections.push(format!(
            "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n{waiting}master_failover_state:no-failover\r\n"
        ));
    }
    if want("keyspace") {
        let now = ctx.now_ms;
        let mut text = String::from("# Keyspace\r\n");
        for (i, db) in ctx.keyspace.dbs.iter().enumerate() {
            let keys = db.len(now);
            if keys > 0 {
                let live = || db.keys(now).filter_map(|k| db.get(k, now));
                let expires = live().filter(|e| e.expire_at_ms.is_some()).count();
                text.push_str(&format!("db{i}:keys={keys},expires={expires},avg_ttl=0"));
                if let Some(field) = profile.info.field_ttl_keys {
                    let with_field_ttls = live()
                        .filter(|e| matches!(&e.value, Value::Hash(h) if h.has_field_ttls()))
                        .count();
                    text.push_str(&format!(",{field}={with_field_ttls}"));
                }
                text.push_str("\r\n");
            }
        }
        sections.push(text);
    }
    let text = sections.join("\r\n").into_bytes();
    if ctx.resp3 {
        Reply::Verbatim {
            format: "txt".into(),
            text,
        }
    } else {
        Reply::Bulk(text)
    }
}

const INT_RANGE: &str = "ERR value is out of range, value must between -2147483648 and 2147483647";

/// `getIntFromObjectOrReply`: a long that fits in a C int; `msg` replaces both errors when given.
fn c_int(arg: &[u8], msg: Option<&str>) -> Result<i64, Reply> {
    let v = number::parse_i64(arg).ok_or_else(|| Reply::err(msg.unwrap_or(errors::NOT_INTEGER)))?;
    if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
        return Err(Reply::err(msg.unwrap_or(INT_RANGE)));
    }
    Ok(v)
}

/// `selectDb`'s range check.
fn db_index(id: i64) -> Option<usize> {
    usize::try_from(id).ok().filter(|&i| i < DATABASES)
}

fn ping(_ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    match args.len() {
        1 => Reply::Status("PONG".into()),
        2 => Reply::Bulk(args[1].clone()),
        _ => Reply::err(errors::wrong_args("ping")),
    }
}

fn echo(_ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    Reply::Bulk(args[1].clone())
}

/// TIME: [unix seconds, microseconds] as bulk strings, from the real clock (7.0 does not freeze it).
fn time(ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    let us = ctx.wall_us();
    Reply::bulks([
        us.div_euclid(1_000_000).to_string(),
        us.rem_euclid(1_000_000).to_string(),
    ])
}

/// SELECT: changes the database for the rest of this script only.
fn select(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let id = match c_int(&args[1], None) {
        Ok(id) => id,
        Err(e) => return e,
    };
    match db_index(id) {
        Some(i) => {
            ctx.db_index = i;
            Reply::ok()
        }
        None => Reply::err(errors::DB_INDEX_OUT_OF_RANGE),
    }
}

/// SWAPDB: the script keeps its database number, so it sees the swapped contents (as in Redis).
fn swapdb(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let ids = c_int(&args[1], Some("ERR invalid first DB index"))
        .and_then(|a| c_int(&args[2], Some("ERR invalid second DB index")).map(|b| (a, b)));
    let (a, b) = match ids {
        Ok(ids) => ids,
        Err(e) => return e,
    };
    match (db_index(a), db_index(b)) {
        (Some(a), Some(b)) => {
            ctx.keyspace.dbs.swap(a, b);
            Reply::ok()
        }
        _ => Reply::err(errors::DB_INDEX_OUT_OF_RANGE),
    }
}

/// FLUSHDB / FLUSHALL [ASYNC|SYNC] (`getFlushCommandFlags`): both modes empty at once here.
fn flush(ctx: &mut Ctx, args: &[Vec<u8>]) -> Reply {
    let ok_mode = match args.len() {
        1 => true,
        2 => matches!(lower(&args[1]).as_str(), "sync" | "async"),
        _ => false,
    };
    if !ok_mode {
        return Reply::err(errors::SYNTAX);
    }
    if lower(&args[0]) == "flushall" {
        ctx.keyspace.dbs.iter_mut().for_each(|db| db.clear());
    } else {
        ctx.db().clear();
    }
    Reply::ok()
}

/// PUBLISH: nobody can be subscribed in the sandbox.
fn publish(_ctx: &mut Ctx, _args: &[Vec<u8>]) -> Reply {
    Reply::Int(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::commands::TestServer;
    use crate::engine::keyspace::Value;

    fn put(s: &mut TestServer, db: usize, key: &str) {
        s.keyspace
            .db_mut(db)
            .set(key.as_bytes().to_vec(), Value::Str(b"v".to_vec()));
    }

    #[test]
    fn ping_echo_time_publish() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["PING"]), Reply::Status("PONG".into()));
        assert_eq!(s.call(&["PING", "hi"]), Reply::bulk("hi"));
        assert_eq!(
            s.call(&["PING", "a", "b"]),
            Reply::err("ERR wrong number of arguments for 'ping' command")
        );
        assert_eq!(s.call(&["ECHO", ""]), Reply::bulk(""));
        let secs = (s.now_ms / 1000).to_string();
        assert_eq!(s.call(&["TIME"]), Reply::bulks([secs.as_str(), "0"]));
        assert_eq!(s.call(&["PUBLISH", "ch", "msg"]), Reply::Int(0));
    }

    #[test]
    fn select_errors() {
        let mut s = TestServer::new();
        assert_eq!(s.call(&["SELECT", "15"]), Reply::ok());
        assert_eq!(
            s.call(&["SELECT", "16"]),
            Reply::err(errors::DB_INDEX_OUT_OF_RANGE)
        );
        assert_eq!(
            s.call(&["SELECT", "-1"]),
            Reply::err(errors::DB_INDEX_OUT_OF_RANGE)
        );
        assert_eq!(s.call(&["SELECT", "x"]), Reply::err(errors::NOT_INTEGER));
        assert_eq!(s.call(&["SELECT", "99999999999"]), Reply::err(INT_RANGE));
    }

    #[test]
    fn swapdb_and_flush() {
        let mut s = TestServer::new();
        put(&mut s, 0, "a");
        put(&mut s, 1, "b");
        assert_eq!(
            s.call(&["SWAPDB", "x", "1"]),
            Reply::err("ERR invalid first DB index")
        );
        assert_eq!(
            s.call(&["SWAPDB", "99", "x"]),
            Reply::err("ERR invalid second DB index")
        );
        assert_eq!(
            s.call(&["SWAPDB", "99999999999", "1"]),
            Reply::err("ERR invalid first DB index")
        );
        assert_eq!(
            s.call(&["SWAPDB", "0", "16"]),
            Reply::err(errors::DB_INDEX_OUT_OF_RANGE)
        );
        assert_eq!(s.call(&["SWAPDB", "0", "1"]), Reply::ok());
        assert!(s.keyspace.db(0).contains(b"b", s.now_ms));
        assert!(s.keyspace.db(1).contains(b"a", s.now_ms));
        assert_eq!(s.call(&["FLUSHDB", "foo"]), Reply::err(errors::SYNTAX));
        assert_eq!(
            s.call(&["FLUSHALL", "async", "x"]),
            Reply::err(errors::SYNTAX)
        );
        assert_eq!(s.call(&["FLUSHDB", "SYNC"]), Reply::ok());
        assert!(s.keyspace.db(0).is_empty());
        assert!(!s.keyspace.db(1).is_empty());
        assert_eq!(s.call(&["FLUSHALL", "ASYNC"]), Reply::ok());
        assert!(s.keyspace.dbs.iter().all(|d| d.is_empty()));
    }
}
