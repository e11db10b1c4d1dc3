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
    sandbox.config.busy_threshold_ms = live.server.busy_threshold_ms;
    sandbox.set_db0(before.clone());
    let report = sandbox.run(&RunRequest {
        read_only: false,
        ..request.clone()
    });
    let writes = write_lines(&report);
    let unseen = unseen_lines(&report, &request.keys, live.server.profile);
    Ok(Some(DryRun {
        report,
        before,
        after: sandbox.keyspace().db(0).clone(),
        writes,
        unseen,
    }))
}

/// Each write call of a dry run as `line N: COMMAND args`.
pub fn write_lines(report: &RunReport) -> Vec<String> {
    report
        .trace
        .iter()
        .filter(|t| t.write)
        .map(|t| {
            let command: Vec<String> = t
                .command
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            // A write after SELECT lands in another database than the keys the run was given.
            let db = if t.db != 0 {
                format!(" (in database {})", t.db)
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
    let shown = |t: &crate::engine::report::TraceEntry| {
        t.command
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    for t in &report.trace {
        let outside: Vec<String> = t
            .keys
            .iter()
            .filter(|k| t.db != 0 || !declared.contains(k))
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        if !outside.is_empty() {
            let noun = if outside.len() == 1 { "key" } else { "keys" };
            let where_ = if t.db != 0 {
                format!(
                    " in database {} after SELECT: the copy holds KEYS of the first only",
                    t.db
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
