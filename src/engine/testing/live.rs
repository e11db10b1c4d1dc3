//! `evalbench test --server`: a test file's cases run on a live server, each on an empty scratch
//! database (`--db N`), guarded as runs are: a case that writes (it has a seed, or its sandbox run
//! wrote) runs only with consent (`--yes`), never on a replica; a case without consent is sent as
//! EVAL_RO, so the server itself refuses a write the sandbox did not foresee. A function library's
//! cases FCALL the server's own library when it holds exactly the file's code (FCALL_RO without
//! consent, so only a `no-writes` function runs then); nothing is loaded. The scratch database
//! must be empty before each case; everything in it is removed after each case.
//!
//! Cases stay in the scratch database: the traced copy of a script refuses (does not send) SELECT of
//! another database, MOVE, SWAPDB, COPY ... DB, MIGRATE, FLUSHALL and CLUSTER FLUSHSLOT, and a case
//! that tried one fails. A script or library naming a way past the copy's proxy (`_G`, `getfenv`,
//! `loadstring`, ...) is not sent; a function library (the server's code, not instrumented) naming
//! one of those commands is not either.

use super::{check, CaseResult, Failure, TestCase, TestStep};
use crate::engine::keyspace::{keyspace_from_json_value, Db, Value};
use crate::engine::live::copy::{copy_keys, CopyLimits};
use crate::engine::live::fcall::{send_fcall, server_function, ServerFunction};
use crate::engine::live::instrument::{
    confinement_escape, has_word, literal_commands, masked, CONFINED_PREFIX,
};
use crate::engine::live::{LiveBackend, LiveError, WriteMode};
use crate::engine::{Reply, RunReport};
use std::time::{SystemTime, UNIX_EPOCH};

/// At most this many keys are read back from the scratch database after a run.
const MAX_KEYS: usize = 10_000;

/// A case's outcome on the server.
#[derive(Debug, Clone)]
pub enum LiveCase {
    Ran(CaseResult),
    /// Not sent, and why.
    Skipped(String),
}

/// Whether a case writes: it has a seed, or one of its sandbox runs wrote (`dry_run`).
pub fn case_writes(case: &TestCase, dry_run: &CaseResult) -> bool {
    case.seed.as_object().is_some_and(|o| !o.is_empty()) || dry_run.wrote
}

/// Run `case` on `live`'s (scratch) database. `dry_run` is the case's sandbox result.
pub fn run_case_live(
    live: &mut LiveBackend,
    script: &[u8],
    function: Option<&str>,
    case: &TestCase,
    dry_run: &CaseResult,
    allow_writes: bool,
) -> Result<LiveCase, LiveError> {
    // A function library: the server's own library must hold exactly this code (loading it is a
    // write to every database of the server, which a test never does by itself).
    let function = match function {
        None => None,
        Some(name) => match server_function(live, name)? {
            Some(f) if f.code == script => Some(f),
            Some(f) => {
                return Ok(LiveCase::Skipped(format!(
                    "the server's library '{}' holding {name} has other code than the file: load the file first with `evalbench function load --replace` (a write to the whole server)",
                    f.library
                )))
            }
            None => {
                return Ok(LiveCase::Skipped(format!(
                    "the server has no function {name}: load the library first with `evalbench function load` (a write to the whole server)"
                )))
            }
        },
    };
    let db = live.target.info.redis_settings().db();
    live.confine_db = Some(db);
    let code = function.as_ref().map_or(script, |f| f.code.as_slice());
    if let Some(name) = confinement_escape(code) {
        return Ok(LiveCase::Skipped(format!(
            "its code names {name}, a way past the calls evalbench keeps in the scratch db {db}: it is not sent"
        )));
    }
    // A run the server could not stop would freeze it for every client (and the cases after).
    let mut unkillable = crate::engine::live::guarded::unkillable_places(code, live.server.profile);
    unkillable.extend(dry_run.stopped_in_c.iter().cloned());
    if !unkillable.is_empty() {
        return Ok(LiveCase::Skipped(format!(
            "SCRIPT KILL cannot stop it ({}): it could freeze the server, so it is not sent",
            unkillable.join("; ")
        )));
    }
    if let Some(command) = function.as_ref().and_then(|f| reaching_command(&f.code)) {
        return Ok(LiveCase::Skipped(format!(
            "the function library names {command}, which can reach beyond the scratch db {db}, and the server runs its code as it is: it is not sent"
        )));
    }
    if case.steps.iter().any(|s| s.advance_ms > 0) {
        return Ok(LiveCase::Skipped(
            "it moves the clock (advance_ms), which a live server's clock cannot do".into(),
        ));
    }
    let writes = case_writes(case, dry_run);
    if let Some(f) = function
        .as_ref()
        .filter(|f| !f.no_writes() && !allow_writes)
    {
        // FCALL_RO of it would be refused by the server, whatever it does.
        return Ok(LiveCase::Skipped(format!(
            "the function {} is not flagged no-writes: give --yes to run it on the scratch db",
            f.name
        )));
    }
    if writes && !allow_writes {
        return Ok(LiveCase::Skipped(
            "it writes (its seed, or its script in the sandbox): give --yes to run it on the scratch db".into(),
        ));
    }
    if writes && live.server.is_replica() {
        return Ok(LiveCase::Skipped(
            "it writes, and the server is a replica".into(),
        ));
    }
    let keys = scratch_keys(live)?;
    if !keys.is_empty() {
        return Err(LiveError::Server(format!(
            "the scratch db is not empty before case {:?} ({}{} keys): give --db a database no one else uses",
            case.name,
            keys.len(),
            if keys.len() >= MAX_KEYS { " or more" } else { "" }
        )));
    }
    let result = run_steps(live, script, function.as_ref(), case, allow_writes);
    // Whatever happened, the scratch db is left empty.
    let cleaned = clear(live);
    let result = result?;
    cleaned?;
    Ok(LiveCase::Ran(result))
}

fn run_steps(
    live: &mut LiveBackend,
    script: &[u8],
    function: Option<&ServerFunction>,
    case: &TestCase,
    allow_writes: bool,
) -> Result<CaseResult, LiveError> {
    let mut result = CaseResult::new(case);
    write_seed(live, case)?;
    let numbered = !(case.steps.len() == 1 && case.steps[0].line == case.line);
    for (index, step) in case.steps.iter().enumerate() {
        let step_number = if numbered { index + 1 } else { 0 };
        let report = run_step(live, script, function, step, allow_writes, &mut result)?;
        result.failures.extend(calls_beyond_the_scratch_db(
            live,
            &report,
            step_number,
            step.line,
        ));
        let (db, now) = read_back(live)?;
        let reply = report.reply_for(step.protocol);
        let observed = super::observe(&report, step.protocol, &db, now);
        for (what, message) in check::differences(&step.expect, &observed, &reply) {
            result.failures.push(Failure {
                step: step_number,
                line: step.line,
                what,
                message,
            });
        }
        result.observed.push(observed);
    }
    Ok(result)
}

/// The case's seed written into the scratch db (TTLs from now).
fn write_seed(live: &mut LiveBackend, case: &TestCase) -> Result<(), LiveError> {
    let now = wall_clock_ms();
    let seed = keyspace_from_json_value(&case.seed, now)
        .map_err(|e| LiveError::Server(format!("the seed keyspace is not valid: {e}")))?;
    let commands = seed_commands(&seed, now);
    if !commands.is_empty() {
        for reply in live.pipeline(&commands)? {
            if let Reply::Error(e) = reply {
                return Err(LiveError::Server(format!("writing the seed: {e}")));
            }
        }
    }
    Ok(())
}

/// One step on the server, `repeat` times (EVAL, or FCALL of `function`; writes only where
/// allowed and the step is not read-only); the runs are added to `result`; the last report.
fn run_step(
    live: &mut LiveBackend,
    script: &[u8],
    function: Option<&ServerFunction>,
    step: &TestStep,
    allow_writes: bool,
    result: &mut CaseResult,
) -> Result<RunReport, LiveError> {
    let request = step.request(script);
    let mode = if allow_writes && !step.read_only {
        WriteMode::Allowed
    } else {
        WriteMode::ReadOnly
    };
    let mut report = None;
    for _ in 0..step.repeat {
        let r = match function {
            Some(f) => send_fcall(live, &step.call(&f.name), f, mode == WriteMode::ReadOnly)?,
            None => live.run(&request, mode)?,
        };
        result.runs += 1;
        result.elapsed_ns += r.elapsed_ns;
        report = Some(r);
    }
    Ok(report.expect("repeat is at least 1"))
}

/// A failure for each call the confinement refused to send (it reached beyond the scratch db).
fn calls_beyond_the_scratch_db(
    live: &LiveBackend,
    report: &RunReport,
    step: usize,
    line: usize,
) -> Vec<Failure> {
    report
        .trace
        .iter()
        .filter(|entry| {
            matches!(&entry.reply, Reply::Error(e)
                if e.starts_with(CONFINED_PREFIX) && e.contains("reaches beyond the scratch db"))
        })
        .map(|entry| {
            let call: Vec<String> = entry
                .command
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            Failure {
                step,
                line,
                what: "scratch-db",
                message: format!(
                    "the script called {} (line {}), which reaches beyond the scratch db {}: evalbench did not send it; a case must stay in its scratch db",
                    call.join(" "),
                    entry.line,
                    live.target.info.redis_settings().db()
                ),
            }
        })
        .collect()
}

/// The scratch db's keys read back after a step, and when.
fn read_back(live: &mut LiveBackend) -> Result<(Db, i64), LiveError> {
    let now = wall_clock_ms();
    let keys = scratch_keys(live)?;
    let mut db = Db::new();
    copy_keys(live, &keys, &mut db, &CopyLimits::default(), now)
        .map_err(|e| LiveError::Server(format!("reading the keyspace back: {e}")))?;
    Ok((db, now))
}

/// The first command a function library's code names (as a word, any case, strings included,
/// comments not) that can reach another database than the scratch one, or "a command built at run
/// time" when a call's command is not a plain literal: its code runs on the server as it is, so it
/// cannot be confined.
fn reaching_command(code: &[u8]) -> Option<&'static str> {
    if literal_commands(code).is_none() {
        return Some("a command built at run time");
    }
    let code = masked(code, true);
    [
        "SELECT",
        "MOVE",
        "SWAPDB",
        "COPY",
        "MIGRATE",
        "FLUSHALL",
        "FLUSHSLOT",
    ]
    .into_iter()
    .find(|name| has_word(&code, name.as_bytes(), false))
}

/// The keys of the scratch database (SCAN, at most MAX_KEYS).
fn scratch_keys(live: &mut LiveBackend) -> Result<Vec<Vec<u8>>, LiveError> {
    let mut cursor = b"0".to_vec();
    let mut keys = Vec::new();
    loop {
        let reply = live.command(&[b"SCAN", &cursor, b"COUNT", b"1000"])?;
        let Reply::Array(parts) = reply else {
            return Err(LiveError::Server(format!(
                "SCAN answered {}",
                reply.to_cli()
            )));
        };
        match parts.as_slice() {
            [Reply::Bulk(next), Reply::Array(found)] => {
                keys.extend(found.iter().filter_map(|k| match k {
                    Reply::Bulk(b) => Some(b.clone()),
                    _ => None,
                }));
                cursor = next.clone();
            }
            _ => {
                return Err(LiveError::Server(
                    "SCAN answered an unexpected shape".into(),
                ))
            }
        }
        if cursor == b"0" || keys.len() >= MAX_KEYS {
            break;
        }
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// Remove every key of the scratch database (UNLINK, in batches).
fn clear(live: &mut LiveBackend) -> Result<(), LiveError> {
    loop {
        let keys = scratch_keys(live)?;
        if keys.is_empty() {
            return Ok(());
        }
        let mut unlink: Vec<&[u8]> = vec![b"UNLINK"];
        unlink.extend(keys.iter().map(Vec::as_slice));
        live.command(&unlink)?;
    }
}

/// The ordinary commands that write `db` (TTLs as PEXPIRE from `now_ms`).
fn seed_commands(db: &Db, now_ms: i64) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for key in db.sorted_keys(now_ms) {
        let Some(entry) = db.get(&key, now_ms) else {
            continue;
        };
        let command = |name: &str| vec![name.as_bytes().to_vec(), key.clone()];
        match &entry.value {
            Value::Str(s) => {
                let mut c = command("SET");
                c.push(s.clone());
                out.push(c);
            }
            Value::Hash(h) => {
                let mut c = command("HSET");
                for (f, v) in h {
                    c.push(f.clone());
                    c.push(v.clone());
                }
                out.push(c);
            }
            Value::List(l) => {
                let mut c = command("RPUSH");
                c.extend(l.iter().cloned());
                out.push(c);
            }
            Value::Set(s) => {
                let mut c = command("SADD");
                c.extend(s.iter().cloned());
                out.push(c);
            }
            Value::ZSet(z) => {
                let mut c = command("ZADD");
                for (member, score) in z.iter() {
                    c.push(score.to_string().into_bytes());
                    c.push(member.clone());
                }
                out.push(c);
            }
            Value::Stream(s) => {
                for (id, fields) in &s.entries {
                    let mut c = command("XADD");
                    c.push(id.to_string().into_bytes());
                    for (f, v) in fields {
                        c.push(f.clone());
                        c.push(v.clone());
                    }
                    out.push(c);
                }
            }
        }
        if let Some(at) = entry.expire_at_ms {
            let mut c = command("PEXPIRE");
            c.push((at - now_ms).max(1).to_string().into_bytes());
            out.push(c);
        }
    }
    out
}

fn wall_clock_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_whose_commands_are_built_at_run_time_is_not_confined() {
        let library = |body: &str| {
            format!("#!lua name=lib\nredis.register_function('f', function(keys, args) {body} end)")
        };
        assert_eq!(
            reaching_command(library("return redis.call('GET', keys[1])").as_bytes()),
            None
        );
        assert_eq!(
            reaching_command(library("return redis.call('select', 0)").as_bytes()),
            Some("SELECT")
        );
        assert_eq!(
            reaching_command(
                library("redis.call('SEL' .. 'ECT', 0) return redis.call('SET', 'k', 1)")
                    .as_bytes()
            ),
            Some("a command built at run time")
        );
        assert_eq!(
            reaching_command(library("local c = redis.call return c(args[1], 0)").as_bytes()),
            Some("a command built at run time")
        );
    }
}
