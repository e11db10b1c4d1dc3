//! FCALL / FCALL_RO of a function loaded on a live server, behind the same guard as a live
//! EVAL (guarded.rs): the server's own library code (FUNCTION LIST WITHCODE LIBRARYNAME, exact name) is
//! loaded into a sandbox and the function called there on a bounded copy of KEYS (the dry run); a
//! run that may write, or whose dry run was slow, stopped or impossible, waits for consent.
//!
//! What is sent: the real `FCALL` (or `FCALL_RO`), untraced. The reply, the error texts
//! (`... script: NAME, on @user_function:N.`) and the data are the server's by construction: nothing
//! is loaded, and no instrumented copy runs instead of the function. (An instrumented EVAL of the
//! library would see another chunk name, `KEYS`/`ARGV` as globals, `redis.register_function` at run
//! time and the EVAL error texts; each would need rewriting, and a miss would show a reply the real
//! FCALL never gives.)
//!
//! The trace: the dry run's, on the copy of KEYS. When the server replied as the dry run did, the
//! same deterministic code ran on the same data, and its trace (lines, commands, replies) is shown
//! with the server's reply; when the replies differ (the function read keys it did not declare, the
//! data changed in between, or the sandbox differs from the server), no trace is shown and a warning
//! says why. Known gaps (README): calls whose replies depend on time or randomness (TIME, SPOP, ...)
//! are the sandbox's in the trace; the dry run of a function that calls another library's function
//! loads only its own library (FCALL from a script is refused by Redis anyway).
//!
//! Write mode: a function flagged `no-writes`, `--read-only` (FCALL_RO asked) and a replica send
//! FCALL_RO, so the server refuses any write. A function without `no-writes` cannot be sent as
//! FCALL_RO (the server refuses it: "Can not execute a script with write flag using *_ro command."),
//! so it always needs consent, even when its dry run wrote nothing (`Concern::MayWrite`).

use super::copy::{copy_keys, CopyError, CopyLimits};
use super::functions::{find_function_on, library_with_code_on};
use super::guard::{explain_with_dry_run, DryRun};
use super::guarded::{
    concerns_on, describe_concern, keys_before, Concern, Consent, GuardedRun, Phase, Question,
    RunControl,
};
use super::{to_cmd, ClusterNode, LiveBackend, LiveError, Target};
use crate::engine::keyspace::Db;
use crate::engine::reply::Reply;
use crate::engine::report::Outcome;
use crate::engine::script::sha1_hex;
use crate::engine::{FunctionCall, RunReport, Sandbox};
use std::time::Instant;

/// A function as loaded on the server: its library's code and its flags.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerFunction {
    pub library: String,
    /// The name as the server spells it.
    pub name: String,
    pub flags: Vec<String>,
    /// The library's code, shebang included (as FUNCTION LOAD took it).
    pub code: Vec<u8>,
}

impl ServerFunction {
    pub fn no_writes(&self) -> bool {
        self.flags.iter().any(|f| f == "no-writes")
    }
}

/// The server's function `name` and its library's code; None when the server has no such function.
pub fn server_function(
    live: &mut LiveBackend,
    name: &str,
) -> Result<Option<ServerFunction>, LiveError> {
    server_function_for(live, name, &[])
}

/// The node of a cluster an FCALL with these KEYS goes to (each master has its own libraries): the
/// master serving the first key's slot; without keys, the node keyless commands go to. None off a
/// cluster.
pub fn node_for_call(live: &LiveBackend, keys: &[Vec<u8>]) -> Option<ClusterNode> {
    let node = live.node_for_keys(keys)?;
    live.known_node(&node.addr)
}

/// `server_function` as the node an FCALL with these KEYS reaches has it.
pub fn server_function_for(
    live: &mut LiveBackend,
    name: &str,
    keys: &[Vec<u8>],
) -> Result<Option<ServerFunction>, LiveError> {
    let node = node_for_call(live, keys);
    let Some((library, function)) = find_function_on(live, node.as_ref(), name)? else {
        return Ok(None);
    };
    let Some((_, code)) = library_with_code_on(live, node.as_ref(), &library.name)? else {
        // Deleted between the two reads.
        return Ok(None);
    };
    Ok(Some(ServerFunction {
        library: library.name,
        name: function.name,
        flags: function.flags,
        code,
    }))
}

/// Dry-run `call` in a sandbox that imitates the server, with the server's library loaded, on a copy
/// of KEYS. `Ok(None)`: cancelled. `Err(Err(text))`: the sandbox refuses the server's library.
fn dry_run_fcall(
    live: &mut LiveBackend,
    function: &ServerFunction,
    call: &FunctionCall,
    now_ms: i64,
    control: &RunControl,
) -> Result<Option<DryRun>, Result<CopyError, String>> {
    if control.enter(Phase::Copying).is_err() {
        return Ok(None);
    }
    let mut before = Db::new();
    copy_keys(
        live,
        &call.keys,
        &mut before,
        &CopyLimits::default(),
        now_ms,
    )
    .map_err(Ok)?;
    if control.enter(Phase::DryRun).is_err() {
        return Ok(None);
    }
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(live.server.profile);
    sandbox.config.busy_threshold_ms =
        super::guard::dry_run_threshold_ms(live.server.busy_threshold_ms);
    sandbox.function_load(&function.code, false).map_err(|e| {
        Err(format!(
            "the sandbox refuses the server's library {}: {e}",
            function.library
        ))
    })?;
    control.watch_dry_run(sandbox.cancel_handle());
    // A cancel while the library loaded: the run below would clear the stop flag it set.
    if control.is_cancelled() {
        let mut report = RunReport::refused(
            sha1_hex(&function.code),
            "evalbench: cancelled".into(),
            call.protocol,
            live.server.busy_threshold_ms,
        );
        report.outcome = Outcome::Cancelled;
        return Ok(Some(DryRun {
            report,
            after: before.clone(),
            before,
            writes: Vec::new(),
            unseen: Vec::new(),
        }));
    }
    sandbox.set_db0(before.clone());
    // FCALL_RO asked: the dry run is one too (a function without no-writes is refused as the
    // server refuses it); otherwise FCALL, so the writes show. A cancel from here on stops it: the
    // control holds its stop flag, which a run never clears before it starts.
    let report = sandbox.fcall(&FunctionCall {
        name: function.name.clone(),
        ..call.clone()
    });
    let db = live.target.info.redis_settings().db();
    let writes = super::guard::write_lines_in(&report, db);
    let unseen = super::guard::unseen_lines_in(&report, &call.keys, live.server.profile, db);
    Ok(Some(DryRun {
        report,
        before,
        after: sandbox.keyspace().db(0).clone(),
        writes,
        unseen,
    }))
}

/// The line of a function's error (`... on @user_function:12.`).
fn error_line(text: &str) -> Option<u32> {
    let at = text.rfind("@user_function:")? + "@user_function:".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// How a server's reply to FCALL ended: a raised error names the function and line.
fn outcome_of(reply: &Reply) -> (Outcome, Option<u32>) {
    match reply {
        Reply::Error(e) if e.contains(" script: ") => (Outcome::Raised, error_line(e)),
        Reply::Error(_) => (Outcome::Refused, None),
        _ => (Outcome::Returned, None),
    }
}

/// FUNCTION KILL on a fresh connection (SCRIPT KILL does not stop a function: the server answers
/// BUSY), and what happened in words.
pub fn function_kill(target: &Target) -> String {
    function_kill_report(target).text
}

/// `function_kill` with its verdict.
pub fn function_kill_report(target: &Target) -> super::KillReport {
    let (answer, after) = super::kill_on(target, "FUNCTION");
    super::judge_kill("FUNCTION", "", &answer, &after)
}

/// Send FCALL (or FCALL_RO when `read_only`) once, never again on a lost connection. When the read
/// timeout expires, the function would go on keeping the server busy: FUNCTION KILL is sent.
pub fn send_fcall(
    live: &mut LiveBackend,
    call: &FunctionCall,
    function: &ServerFunction,
    read_only: bool,
) -> Result<RunReport, LiveError> {
    let numkeys = call.keys.len().to_string();
    let mut args: Vec<&[u8]> = vec![
        if read_only { b"FCALL_RO" } else { b"FCALL" },
        function.name.as_bytes(),
        numkeys.as_bytes(),
    ];
    args.extend(call.keys.iter().map(Vec::as_slice));
    args.extend(call.argv.iter().map(Vec::as_slice));
    let started = Instant::now();
    if live.server.cluster {
        let reply = live.cluster_fcall(&args, &call.keys)?;
        let elapsed_ns = started.elapsed().as_nanos() as u64;
        return Ok(fcall_report(live, function, reply, elapsed_ns));
    }
    let result = live.send(&to_cmd(&args));
    let elapsed_ns = started.elapsed().as_nanos() as u64;
    if matches!(&result, Err(e) if e.is_timeout() && e.code().is_none()) {
        let answer = function_kill(&live.killer_target());
        live.reconnect();
        return Err(LiveError::Lost(format!(
            "{}: gave up waiting for the function (--read-timeout); {answer}",
            live.target.display
        )));
    }
    let reply = live.reply_of(result)?;
    Ok(fcall_report(live, function, reply, elapsed_ns))
}

/// The report of an FCALL the server answered with `reply`.
fn fcall_report(
    live: &LiveBackend,
    function: &ServerFunction,
    reply: Reply,
    elapsed_ns: u64,
) -> RunReport {
    let (outcome, error_line) = outcome_of(&reply);
    let mut report = RunReport::refused(
        sha1_hex(&function.code),
        String::new(),
        live.protocol(),
        live.server.busy_threshold_ms,
    );
    report.profile = live.server.profile.id;
    report.reply = reply;
    report.outcome = outcome;
    report.error_line = error_line;
    // The server's own time is not known (nothing instrumented runs): the round trip bounds it.
    report.elapsed_ns = elapsed_ns;
    report
}

/// The guard's question for a call of `function`, in words: what the dry run showed and what y
/// sends (FCALL_RO unless the consent allows writes).
pub fn question_text(question: &Question, function: &str) -> String {
    let parts: Vec<String> = question.concerns.iter().map(describe_concern).collect();
    let send = if question.consent.writes {
        format!("y sends FCALL {function} with writes allowed")
    } else {
        format!("y sends FCALL_RO {function} (the server refuses any write)")
    };
    let esc = if question
        .concerns
        .iter()
        .any(|c| matches!(c, super::guarded::Concern::Unkillable(_)))
    {
        "Esc on the server sends FUNCTION KILL, which cannot stop those places"
    } else {
        "Esc on the server sends FUNCTION KILL"
    };
    format!(
        "{}. Nothing was sent. {send}; {esc}. Send it to the live server? (y/n)",
        parts.join("; ")
    )
}

/// The refusal a guarded FCALL answers with (nothing sent), as a report.
fn refusal(live: &LiveBackend, sha: String, text: String, outcome: Outcome) -> RunReport {
    let mut report = RunReport::refused(sha, text, live.protocol(), live.server.busy_threshold_ms);
    report.outcome = outcome;
    report
}

/// Is this run sent as FCALL_RO? A `no-writes` function, FCALL_RO asked, or a replica.
pub fn sends_read_only(live: &LiveBackend, call: &FunctionCall, function: &ServerFunction) -> bool {
    call.read_only || function.no_writes() || live.server.is_replica()
}

/// A guarded FCALL of `call.name` on the live server. `control` must have been `begin`-ed; the run
/// leaves it Idle. The result's `question` (nothing sent) is answered by calling again with its
/// consent.
pub fn guarded_fcall(
    live: &mut LiveBackend,
    call: &FunctionCall,
    consent: &Consent,
    control: &RunControl,
    now_ms: i64,
) -> GuardedRun {
    let result = guarded_fcall_inner(live, call, consent, control, now_ms);
    control.end();
    result
}

fn plain(report: RunReport, before: Db, after: Db, dry_run_ns: Option<u64>) -> GuardedRun {
    GuardedRun::not_sent(report, before, after, dry_run_ns)
}

fn guarded_fcall_inner(
    live: &mut LiveBackend,
    call: &FunctionCall,
    consent: &Consent,
    control: &RunControl,
    now_ms: i64,
) -> GuardedRun {
    let not_sent = |live: &LiveBackend, when: &str, dry: Option<u64>| {
        let report = refusal(
            live,
            String::new(),
            format!("evalbench: cancelled {when}: nothing was sent to the server"),
            Outcome::Cancelled,
        );
        plain(report, Db::new(), Db::new(), dry)
    };
    let function = match server_function_for(live, &call.name, &call.keys) {
        Ok(Some(f)) => f,
        Ok(None) => {
            let text = format!(
                "evalbench: not sent: the server has no function named {} (FUNCTION LIST); load its library first (evalbench function load --server URL LIBRARY.lua)",
                call.name
            );
            return plain(
                refusal(live, String::new(), text, Outcome::Refused),
                Db::new(),
                Db::new(),
                None,
            );
        }
        Err(e) => {
            let text = format!("evalbench: not sent: {e}");
            return plain(
                refusal(live, String::new(), text, Outcome::Refused),
                Db::new(),
                Db::new(),
                None,
            );
        }
    };
    let sha = sha1_hex(&function.code);
    let replica = live.server.is_replica();
    let read_only = sends_read_only(live, call, &function);
    if replica && !function.no_writes() && !call.read_only {
        let text = format!(
            "evalbench: not sent: the server is a replica and the function {} is not flagged no-writes: a replica refuses it (and FCALL_RO refuses a function without no-writes); run it on the primary",
            function.name
        );
        return plain(
            refusal(live, sha, text, Outcome::Refused),
            Db::new(),
            Db::new(),
            None,
        );
    }

    let (before, dry) = if consent.given() {
        // Consent to the node the question named: a failover since asks again.
        if let Some(question) = super::guarded::node_changed(live, &call.keys, consent) {
            let text = format!(
                "evalbench: not sent: {}",
                super::guarded::describe_concern(&question.concerns[0])
            );
            return GuardedRun {
                question: Some(question),
                ..plain(
                    refusal(live, sha, text, Outcome::Refused),
                    Db::new(),
                    Db::new(),
                    None,
                )
            };
        }
        (
            keys_before(live, &call.keys, now_ms),
            consent.dry_run.as_deref().cloned(),
        )
    } else {
        // The library's code SCRIPT KILL (and FUNCTION KILL) cannot stop: asked about with the dry
        // run's other concerns (the sandbox stops it at the busy threshold).
        let places = super::guarded::unkillable_places(&function.code, live.server.profile);
        let no_dry_run = |live: &LiveBackend, why: String| {
            let report = refusal(
                live,
                sha.clone(),
                format!("evalbench: not sent yet: {why}: no dry run is possible"),
                Outcome::Refused,
            );
            GuardedRun {
                question: Some(Question {
                    concerns: (!places.is_empty())
                        .then(|| Concern::Unkillable(places.clone()))
                        .into_iter()
                        .chain([Concern::NoDryRun { why }])
                        .collect(),
                    consent: Consent {
                        unchecked: true,
                        unkillable: !places.is_empty(),
                        writes: !read_only,
                        ..Consent::default()
                    },
                }),
                ..plain(report, Db::new(), Db::new(), None)
            }
        };
        let dry = match dry_run_fcall(live, &function, call, now_ms, control) {
            Ok(Some(dry)) => dry,
            Ok(None) => return not_sent(live, "while copying the keys", None),
            Err(Ok(CopyError::TooLarge { .. })) if control.is_cancelled() => {
                return not_sent(live, "while copying the keys", None)
            }
            Err(Ok(e @ CopyError::TooLarge { .. })) => return no_dry_run(live, e.to_string()),
            Err(Ok(e)) => {
                let text = format!("evalbench: not sent: {e}");
                return plain(
                    refusal(live, sha, text, Outcome::Refused),
                    Db::new(),
                    Db::new(),
                    None,
                );
            }
            Err(Err(why)) => return no_dry_run(live, why),
        };
        let dry_ns = Some(dry.report.elapsed_ns);
        if dry.report.outcome == Outcome::Cancelled || control.is_cancelled() {
            let mut cancelled = not_sent(
                live,
                &format!(
                    "during the dry run (after {:.1} ms)",
                    dry.report.elapsed_ns as f64 / 1e6
                ),
                dry_ns,
            );
            cancelled.report.trace = dry.report.trace;
            cancelled.before = dry.before;
            cancelled.after = dry.after;
            return cancelled;
        }
        let memory_limit = crate::engine::budget::limit();
        let mut found = concerns_on(
            &dry.report,
            &dry.writes,
            live.server.busy_threshold_ms,
            live.server.cluster_node_timeout_ms,
            live.runs_on_replica(&call.keys),
            memory_limit,
        );
        if !dry.unseen.is_empty() {
            found.push(Concern::Unseen(dry.unseen.clone()));
        }
        if !read_only && dry.writes.is_empty() {
            found.insert(
                0,
                Concern::MayWrite {
                    function: function.name.clone(),
                },
            );
        }
        super::guarded::add_unkillable(&mut found, &places);
        if !found.is_empty() {
            let mut run = GuardedRun::asking(dry, found, !read_only);
            if let Some(question) = run.question.as_mut() {
                question.consent.node = live.node_for_keys(&call.keys);
            }
            return run;
        }
        (dry.before, Some(dry.report))
    };
    let dry_run_ns = dry
        .as_ref()
        .map(|d| d.elapsed_ns)
        .filter(|_| !consent.given());
    // A function is never sent twice: a dead connection is found and healed by a PING first (on a
    // cluster, to the node the call goes to).
    if let Err(e) = live.ping_for(&call.keys) {
        let report = refusal(
            live,
            sha,
            format!("evalbench: not sent: {e}"),
            Outcome::Refused,
        );
        return plain(report, before.clone(), before, dry_run_ns);
    }
    control.set_node(live.node_for_keys(&call.keys));
    if control.enter(Phase::OnServer).is_err() {
        return not_sent(live, "before sending", dry_run_ns);
    }
    match send_fcall(live, call, &function, read_only) {
        Ok(mut report) => {
            if let Some(dry) = &dry {
                explain_with_dry_run(&mut report, dry);
                // The same code on the same data: the dry run's calls are the server's.
                if report.reply == dry.reply {
                    report.trace = dry.trace.clone();
                }
            }
            let mut after = Db::new();
            let _ = copy_keys(live, &call.keys, &mut after, &CopyLimits::default(), now_ms);
            GuardedRun {
                sent: true,
                ..plain(report, before, after, dry_run_ns)
            }
        }
        Err(e) => {
            let report = refusal(live, sha, format!("evalbench: {e}"), Outcome::Refused);
            GuardedRun {
                sent: true,
                ..plain(report, before.clone(), before, dry_run_ns)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_error_names_its_line() {
        let reply =
            Reply::Error("ERR user_function:7: boom script: e, on @user_function:7.".into());
        assert_eq!(outcome_of(&reply), (Outcome::Raised, Some(7)));
        assert_eq!(
            outcome_of(&Reply::Error("ERR Function not found".into())),
            (Outcome::Refused, None)
        );
        assert_eq!(outcome_of(&Reply::Int(1)), (Outcome::Returned, None));
    }
}
