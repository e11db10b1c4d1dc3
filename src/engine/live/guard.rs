//! The write guard of live runs: dry-run the script in the sandbox on a bounded copy of its declared
//! keys, and list the writes it would make.

use super::copy::{copy_keys, CopyError, CopyLimits};
use super::guarded::{Cancelled, Phase};
use super::LiveBackend;
use crate::engine::keyspace::Db;
use crate::engine::report::{Warning, WarningKind};
use crate::engine::{RunReport, RunRequest, Sandbox};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub struct DryRun {
    pub report: RunReport,
    /// The declared keys as copied from the server, and the sandbox's database after the dry run.
    pub before: Db,
    pub after: Db,
    /// Each write call as `line N: COMMAND args`.
    pub writes: Vec<String>,
    /// What the dry run could not see (`unseen_lines`): when any, it is no preview of the server.
    pub unseen: Vec<String>,
}

pub fn dry_run(
    live: &mut LiveBackend,
    request: &RunRequest,
    now_ms: i64,
) -> Result<DryRun, CopyError> {
    let dry = dry_run_with(live, request, now_ms, &|_| Ok(()), &mut |_| {})?;
    Ok(dry.expect("a dry run without a control is never cancelled"))
}

/// `dry_run` that a `RunControl` can cancel: `enter` is told each phase (Copying, DryRun) and
/// refuses when the run was cancelled (then Ok(None): nothing more is done); `watch` receives the
/// sandbox's stop flag before the script starts.
pub fn dry_run_with(
    live: &mut LiveBackend,
    request: &RunRequest,
    now_ms: i64,
    enter: &dyn Fn(Phase) -> Result<(), Cancelled>,
    watch: &mut dyn FnMut(Arc<AtomicBool>),
) -> Result<Option<DryRun>, CopyError> {
    if enter(Phase::Copying).is_err() {
        return Ok(None);
    }
    let mut before = Db::new();
    copy_keys(
        live,
        &request.keys,
        &mut before,
        &CopyLimits::default(),
        now_ms,
    )?;
    if enter(Phase::DryRun).is_err() {
        return Ok(None);
    }
    let mut sandbox = Sandbox::new();
    watch(sandbox.cancel_handle());
    // The dry run imitates the server it guards (engine/profile.rs).
    sandbox.set_profile(live.server.profile);
    // A runaway stops in the dry run where the server would call it busy.
    sandbox.config.busy_threshold_ms = dry_run_threshold_ms(live.server.busy_threshold_ms);
    sandbox.set_db0(before.clone());
    let report = sandbox.run(&RunRequest {
        read_only: false,
        ..request.clone()
    });
    let db = live.target.info.redis_settings().db();
    let writes = write_lines_in(&report, db);
    let unseen = unseen_lines_in(&report, &request.keys, live.server.profile, db);
    Ok(Some(DryRun {
        report,
        before,
        after: sandbox.keyspace().db(0).clone(),
        writes,
        unseen,
    }))
}

/// The busy threshold of a dry run for a server with `server_ms`: the same, except that a server's
/// 0 (every script is busy for other clients from its start) must not leave the sandbox without
/// any (0 there is "never"): the dry run stops at the default then.
pub fn dry_run_threshold_ms(server_ms: u64) -> u64 {
    if server_ms == 0 {
        crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS
    } else {
        server_ms
    }
}

/// Each write call of a dry run as `line N: COMMAND args`.
pub fn write_lines(report: &RunReport) -> Vec<String> {
    write_lines_in(report, 0)
}

/// The server's database of each call of a dry run whose connection is on database `start`: the
/// sandbox runs from its database 0 (holding the copy), so until the script's first SELECT its
/// database 0 stands for `start`; after it, databases are the server's own.
fn server_dbs(report: &RunReport, start: i64) -> Vec<i64> {
    let mut selected = false;
    report
        .trace
        .iter()
        .map(|t| {
            let db = if selected { t.db as i64 } else { start };
            // (A refused SELECT moves neither.)
            selected |= !matches!(t.reply, crate::engine::reply::Reply::Error(_))
                && t.command
                    .first()
                    .is_some_and(|c| c.eq_ignore_ascii_case(b"SELECT"));
            db
        })
        .collect()
}

/// `write_lines` of a dry run for a connection on database `start`: a write in another database
/// says which.
pub fn write_lines_in(report: &RunReport, start: i64) -> Vec<String> {
    let dbs = server_dbs(report, start);
    report
        .trace
        .iter()
        .zip(dbs)
        .filter(|(t, _)| t.write)
        .map(|(t, server_db)| {
            let command: Vec<String> = t
                .command
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            // A write after SELECT lands in another database than the keys the run was given.
            let db = if server_db != start {
                format!(" (in database {server_db})")
            } else {
                String::new()
            };
            format!("line {}: {}{db}", t.line, command.join(" "))
        })
        .collect()
}

/// Each call of a dry run whose reply the copy of KEYS cannot predict, as `line N: COMMAND args
/// (why)`: a key outside the declared KEYS (or in another database), a command whose reply depends
/// on more than its keys (the command table's flags say which), and calls beyond the traced ones.
pub fn unseen_lines(
    report: &RunReport,
    declared: &[Vec<u8>],
    profile: &'static crate::engine::profile::Profile,
) -> Vec<String> {
    unseen_lines_in(report, declared, profile, 0)
}

/// `unseen_lines` of a dry run for a connection on database `start` (the copy holds its KEYS).
pub fn unseen_lines_in(
    report: &RunReport,
    declared: &[Vec<u8>],
    profile: &'static crate::engine::profile::Profile,
    start: i64,
) -> Vec<String> {
    let dbs = server_dbs(report, start);
    let shown = |t: &crate::engine::report::TraceEntry| {
        t.command
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    for (t, server_db) in report.trace.iter().zip(dbs) {
        // Only the sandbox's database 0 holds the copy, and only while it stands for `start`.
        let elsewhere = t.db != 0 || server_db != start;
        let outside: Vec<String> = t
            .keys
            .iter()
            .filter(|k| elsewhere || !declared.contains(k))
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        if !outside.is_empty() {
            let noun = if outside.len() == 1 { "key" } else { "keys" };
            let where_ = if elsewhere {
                format!(
                    " in database {server_db} after SELECT: the copy holds KEYS of the first only"
                )
            } else {
                format!(
                    " not in KEYS: the copy lacks {}",
                    if outside.len() == 1 { "it" } else { "them" }
                )
            };
            out.push(format!(
                "line {}: {} ({noun} {}{where_})",
                t.line,
                shown(t),
                outside.join(", ")
            ));
            continue;
        }
        let resolved = t
            .command
            .first()
            .is_some_and(|c| !c.is_empty())
            .then(|| crate::engine::commands::resolve_in(profile, &t.command).ok())
            .flatten();
        let why = resolved.and_then(|r| match r.implementation {
            // The dry run answered with an error the server would not give.
            None => Some("the sandbox does not run it: the server's reply is not known"),
            Some(_) => r.info.beyond_its_keys(&t.command),
        });
        if let Some(why) = why {
            out.push(format!("line {}: {} ({why})", t.line, shown(t)));
        }
    }
    // Calls outside the trace that the server answers from its own state.
    for w in &report.warnings {
        if w.kind == crate::engine::report::WarningKind::ServerState {
            out.push(format!("line {}: {}", w.line, w.message));
        }
    }
    if report.trace.len() >= crate::engine::lua::api::MAX_TRACED_CALLS {
        out.push(format!(
            "more calls than the {} evalbench traces (what they touched is not known)",
            crate::engine::lua::api::MAX_TRACED_CALLS
        ));
    }
    out
}

/// The server sends only the converted reply. When the live run replied as its dry run did, the dry
/// run's Lua value and conversion notes explain it too and are copied into the live report; when
/// the replies differ, a warning says so (the script read data the copy of KEYS did not hold: an
/// undeclared key, a concurrent change, or a server unlike the sandbox's profile).
pub fn explain_with_dry_run(report: &mut RunReport, dry: &RunReport) {
    if report.reply == dry.reply {
        report.lua_value = dry.lua_value.clone();
        report.notes = dry.notes.clone();
    } else {
        report.warnings.push(Warning {
            kind: WarningKind::DryRunDiffers,
            line: 0,
            message: format!(
                "the dry run in the sandbox replied {}, the server {}: the Lua value and conversion notes are not shown",
                dry.reply.to_cli().replace('\n', " "),
                report.reply.to_cli().replace('\n', " ")
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::profile::DEFAULT;

    fn unseen(script: &str, keys: &[&str]) -> Vec<String> {
        let mut sandbox = Sandbox::new();
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
        let report = sandbox.run(&RunRequest {
            keys: keys.clone(),
            ..RunRequest::new(script)
        });
        unseen_lines(&report, &keys, DEFAULT)
    }

    #[test]
    fn a_write_after_select_names_its_database() {
        let mut sandbox = Sandbox::new();
        let report = sandbox.run(&RunRequest {
            keys: vec![b"k".to_vec()],
            ..RunRequest::new("redis.call('SET', KEYS[1], 'a')\nredis.call('SELECT', 3)\nreturn redis.call('SET', KEYS[1], 'b')")
        });
        assert_eq!(
            write_lines(&report),
            vec![
                "line 1: SET k a".to_string(),
                "line 3: SET k b (in database 3)".to_string()
            ]
        );
    }

    /// A connection on database 3: SELECT 0 leaves the copy's database, though the sandbox's
    /// database 0 holds the copy.
    #[test]
    fn select_away_from_the_connections_database_is_seen_by_its_number() {
        let mut sandbox = Sandbox::new();
        let keys = vec![b"k".to_vec()];
        let report = sandbox.run(&RunRequest {
            keys: keys.clone(),
            ..RunRequest::new("local a = redis.call('GET', KEYS[1])\nredis.call('SELECT', 0)\nreturn redis.call('SET', KEYS[1], 'x')")
        });
        assert_eq!(
            unseen_lines_in(&report, &keys, DEFAULT, 3),
            vec!["line 3: SET k x (key k in database 0 after SELECT: the copy holds KEYS of the first only)".to_string()]
        );
        assert_eq!(
            write_lines_in(&report, 3),
            vec!["line 3: SET k x (in database 0)".to_string()]
        );
        // On database 0 the same script stays in the copy's database.
        assert_eq!(
            unseen_lines_in(&report, &keys, DEFAULT, 0),
            Vec::<String>::new()
        );
        assert_eq!(
            write_lines_in(&report, 0),
            vec!["line 3: SET k x".to_string()]
        );
    }

    #[test]
    fn calls_the_copy_cannot_answer_are_listed_with_their_line() {
        assert_eq!(
            unseen("return redis.call('GET', KEYS[1])", &["k"]),
            Vec::<String>::new()
        );
        assert_eq!(
            unseen("local a = redis.call('GET', KEYS[1])\nreturn redis.call('MGET', KEYS[1], 'x', 'y')", &["k"]),
            vec!["line 2: MGET k x y (keys x, y not in KEYS: the copy lacks them)".to_string()]
        );
        assert_eq!(
            unseen("redis.call('SELECT', 2)\nreturn redis.call('EXISTS', KEYS[1])", &["k"]),
            vec!["line 2: EXISTS k (key k in database 2 after SELECT: the copy holds KEYS of the first only)".to_string()]
        );
        assert_eq!(
            unseen("return redis.pcall('DBSIZE')", &[]),
            vec!["line 1: DBSIZE (it reads the whole keyspace)".to_string()]
        );
        assert_eq!(
            unseen("local n = 0\nif redis.acl_check_cmd('SET', KEYS[1], 'v') then n = 1 end\nreturn n", &["k"]),
            vec!["line 2: redis.acl_check_cmd SET k v (the answer depends on the ACL user the server runs the script for: the sandbox answers as the default user, who may run every command)".to_string()]
        );
        assert_eq!(
            unseen("return redis.pcall('MEMORY', 'DOCTOR')", &[]),
            vec!["line 1: MEMORY DOCTOR (the sandbox does not run it: the server's reply is not known)".to_string()]
        );
    }
}
