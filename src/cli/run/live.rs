//! `evalbench run` against a live server: connection options as redis-cli takes them, the write guard
//! (a sandbox dry run on a bounded copy of the declared keys), the traced run, the same report.

use crate::cli::{
    render_text, CliError, CopyArgs, RunArgs, ServerArgs, EXIT_BACKEND, EXIT_BAD_INPUT,
    EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::keyspace::{keyspace_to_json, Db};
use crate::engine::live::copy::{copy_keys, CopyError, CopyLimits};
use crate::engine::live::guard::{dry_run, explain_with_dry_run};
use crate::engine::live::guarded::unkillable_places;
use crate::engine::live::{LiveBackend, LiveError, TargetSpec, WriteMode};
use crate::engine::report::{Warning, WarningKind};
use crate::engine::RunRequest;

/// The live target the options name, or None to run in the sandbox. REDIS_URL alone does not switch
/// to a live server: `--server` (or -h/-p/-a/--user/-n/--askpass) does, and then REDIS_URL is its default.
/// (A REDIS_URL exported for an application must not send a script under test to that server: the
/// report says which backend ran, and notes an unused REDIS_URL.)
pub fn target_spec(args: &RunArgs) -> Result<Option<TargetSpec>, CliError> {
    let spec = server_spec(&args.server, args.resp == 3)?;
    if spec.is_none() && args.yes {
        return Err(CliError::input(
            "--yes allows writes on a live server; give --server URL (or -h/-p) too",
        ));
    }
    Ok(spec)
}

/// A timeout flag in seconds as milliseconds; zero, negative or not finite is bad input.
fn seconds_to_ms(flag: &str, secs: Option<f64>) -> Result<Option<u64>, CliError> {
    match secs {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Ok(Some((s * 1000.0).ceil() as u64)),
        Some(s) => Err(CliError::input(format!(
            "{flag} {s}: give a positive number of seconds (for example {flag} 2.5)"
        ))),
    }
}

/// Printed on stderr when a password is given on the command line.
pub const PASSWORD_WARNING: &str = "evalbench: warning: a password on the command line (-a, or in the --server URL) can be seen by other users in `ps`; use --askpass or REDISCLI_AUTH instead (--no-auth-warning hides this)";

/// The target the connection options name, or None when none is given.
pub fn server_spec(args: &ServerArgs, resp3: bool) -> Result<Option<TargetSpec>, CliError> {
    let wants_live = args.server.is_some()
        || args.host.is_some()
        || args.port.is_some()
        || args.pass.is_some()
        || args.user.is_some()
        || args.askpass
        || args.db.is_some()
        || args.tls;
    if !wants_live {
        return Ok(None);
    }
    let mut password = args
        .pass
        .clone()
        .or_else(|| std::env::var("REDISCLI_AUTH").ok());
    if args.askpass {
        password =
            Some(rpassword::prompt_password("Password: ").map_err(|e| {
                CliError::input(format!("--askpass: cannot read the password: {e}"))
            })?);
    }
    let url = args.server.clone().filter(|s| !s.is_empty());
    let url_password = url.as_deref().is_some_and(|u| {
        redis::IntoConnectionInfo::into_connection_info(u)
            .is_ok_and(|info| info.redis_settings().password().is_some())
    });
    if (args.pass.is_some() || url_password) && !args.no_auth_warning {
        // As redis-cli warns for -a and -u: other users of the machine see arguments in `ps`.
        eprintln!("{PASSWORD_WARNING}");
    }
    Ok(Some(TargetSpec {
        url,
        host: args.host.clone(),
        port: args.port,
        user: args.user.clone(),
        password,
        db: args.db,
        resp3,
        connect_timeout_ms: seconds_to_ms("--connect-timeout", args.connect_timeout)?,
        read_timeout_ms: seconds_to_ms("--read-timeout", args.read_timeout)?,
        tls: args.tls || args.cacert.is_some() || args.cert.is_some(),
        cacert: args.cacert.clone(),
        cert: args.cert.clone(),
        key: args.key.clone(),
        insecure: args.insecure,
    }))
}

fn backend_error(e: LiveError) -> CliError {
    CliError {
        code: EXIT_BACKEND,
        message: e.to_string(),
    }
}

fn copy_error(e: CopyError) -> CliError {
    match e {
        CopyError::Live(e) => backend_error(e),
        other => CliError::input(other.to_string()),
    }
}

pub fn run_live(
    args: &RunArgs,
    spec: TargetSpec,
    request: &RunRequest,
) -> Result<(i32, String), CliError> {
    if args.repeat > 1 {
        return Err(CliError::input(
            "--repeat runs in the sandbox only (a live run is sent once); drop --repeat or --server",
        ));
    }
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let mut live = LiveBackend::connect(target).map_err(backend_error)?;
    // Ctrl-C from here on: nothing is sent before the script reaches the server; SCRIPT KILL once it
    // runs there.
    crate::cli::common::interrupt::watch(&live);
    live.tracing = !args.no_trace;
    // Decided from the key names alone: nothing is read, dry-run or sent.
    if let Some(refusal) = live.cross_slot_refusal(request) {
        return Err(CliError {
            code: EXIT_BAD_INPUT,
            message: format!("refused: {refusal}"),
        });
    }
    // On a cluster, the node the script goes to (the master of its first key's slot).
    let node = live.node_for_keys(&request.keys);
    let to = node
        .as_ref()
        .map_or(live.target.display.clone(), |n| n.describe());
    let replica = live.runs_on_replica(&request.keys);
    // --read-only and a replica run as EVAL_RO whatever the dry run says: the server refuses writes.
    let read_only = args.read_only || replica;
    let mut dry = None;
    let mut no_dry_run = None;
    // Before the dry run, which would run the same code in the sandbox.
    let places = unkillable_places(&request.script, live.server.profile);
    if !places.is_empty() && !args.yes {
        return Err(CliError {
            code: EXIT_BAD_INPUT,
            message: format!(
                "refused: SCRIPT KILL cannot stop this script:\n  {}\nIf that code runs long, the server stays busy for every client and may need a restart. Nothing was sent to {}. Rerun with --yes to send it anyway (with --read-only too, as EVAL_RO).",
                places.join("\n  "),
                live.target.display
            ),
        });
    }
    let mode = if args.yes && !read_only {
        WriteMode::Allowed
    } else {
        let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
        match dry_run(&mut live, request, now) {
            Ok(run) => {
                if !run.writes.is_empty() {
                    // Say only what can make the write happen.
                    let (why, remedy) = if args.read_only {
                        ("--read-only is set", "Drop --read-only and add --yes to let it write.".to_string())
                    } else if replica && node.is_some() {
                        // A cluster: only a keyless script stays on the replica given to connect.
                        ("the script goes to a replica", "A replica refuses writes: give the keys it writes (it then goes to their slot's master), with --yes.".to_string())
                    } else if replica {
                        ("the server is a replica", "A replica refuses writes: run it on the primary, with --yes.".to_string())
                    } else {
                        ("writes on a live server need --yes", "Rerun with --yes to allow writes.".to_string())
                    };
                    return Err(CliError {
                        code: EXIT_BAD_INPUT,
                        message: format!(
                            "refused: a dry run in the sandbox on a copy of KEYS shows the script writes ({why}):\n  {}\nNothing was sent to {to}. {remedy}",
                            run.writes.join("\n  "),
                        ),
                    });
                }
                // A dry run stopped at the busy threshold (or memory budget) or that took a large
                // share of it would block the server: only --yes sends it (issue 11).
                if !args.yes {
                    if let Some(why) = slow_dry_run(&run.report, live.server.busy_threshold_ms) {
                        return Err(CliError {
                            code: EXIT_BAD_INPUT,
                            message: format!(
                                "refused: {why}{}.\nNothing was sent to {to}. Rerun with --yes to send it anyway (with --read-timeout SECONDS evalbench gives up and sends SCRIPT KILL).",
                                live.server.cluster_timeout_note().map_or(String::new(), |n| format!("; {n}")),
                            ),
                        });
                    }
                }
                // Calls that read what the copy of KEYS lacks: the dry run previews nothing.
                if !args.yes && !run.unseen.is_empty() {
                    return Err(CliError {
                        code: EXIT_BAD_INPUT,
                        message: format!(
                            "refused: the dry run in the sandbox on a copy of KEYS is no preview of the server: {} what the copy lacks:\n  {}\nNothing was sent to {}. Declare every key the script touches in KEYS, or rerun with --yes to send it anyway (with --read-only too, as EVAL_RO: the server refuses any write).",
                            if run.unseen.len() == 1 { "this call reads" } else { "these calls read" },
                            run.unseen.join("\n  "),
                            live.target.display
                        ),
                    });
                }
                dry = Some(run.report);
            }
            Err(CopyError::Live(e)) => return Err(backend_error(e)),
            // The copy is only for the dry run: EVAL_RO keeps a read-only run safe without it.
            Err(e) if read_only => no_dry_run = Some(e.to_string()),
            Err(e) => {
                return Err(CliError::input(format!(
                    "{e} (the write guard copies the declared keys to dry-run the script; rerun with --read-only to run it as EVAL_RO without the dry run, or with --yes to skip the dry run and allow writes)"
                )))
            }
        }
        WriteMode::ReadOnly
    };
    let mut report =
        crate::cli::common::interrupt::on_server(&request.keys, || live.run(request, mode))?
            .map_err(backend_error)?;
    if let Some(dry) = &dry {
        explain_with_dry_run(&mut report, dry);
    }
    if let Some(why) = no_dry_run {
        report.warnings.push(Warning {
            kind: WarningKind::DryRunDiffers,
            line: 0,
            message: format!("no dry run ({why}); the script ran as EVAL_RO, so the server refused any write: the Lua value and conversion notes are not shown"),
        });
    }
    let code = if report.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    let dump = if args.dump_keyspace {
        // The keys the script touched: the declared ones and those its calls named.
        let mut keys = request.keys.clone();
        for t in &report.trace {
            for k in &t.keys {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
        let mut db = Db::new();
        copy_keys(&mut live, &keys, &mut db, &CopyLimits::default(), now).map_err(copy_error)?;
        Some(keyspace_to_json(&db, now))
    } else {
        None
    };
    let server = format!("{} ({})", live.target.display, live.server.summary());
    let result = crate::engine::live::outcome_summary(&report);
    let out = if args.json {
        let mut obj = report.to_json();
        obj["backend"] = serde_json::json!("live");
        obj["server"] = serde_json::json!(server);
        obj["result"] = serde_json::json!(result);
        obj["written"] = serde_json::json!(crate::engine::live::written_keys(&report)
            .iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>());
        if let Some(node) = &live.last_node {
            obj["node"] = node.to_json();
        }
        obj["mode"] = serde_json::json!(match mode {
            WriteMode::ReadOnly => "read-only",
            WriteMode::Allowed => "writes-allowed",
        });
        if let Some(ks) = dump {
            obj["keyspace"] = ks;
        }
        serde_json::to_string_pretty(&obj).expect("JSON serializes")
    } else {
        let mut text = format!("backend: live\nserver: {server}\n");
        if let Some(node) = &live.last_node {
            text.push_str(&format!("node: {}\n", node.describe()));
        }
        text.push_str(&format!("result: {result}\n"));
        for note in &live.server.notes {
            text.push_str(&format!("note: {note}\n"));
        }
        text.push_str(&render_text(&report, request));
        if let Some(ks) = dump {
            text.push_str("\nkeyspace (keys the script touched):\n");
            text.push_str(&serde_json::to_string_pretty(&ks).expect("JSON"));
            text.push('\n');
        }
        // The server's own texts (version, notes) and the keyspace dump, as the report.
        crate::engine::display::display_text(&text).into_owned()
    };
    Ok((code, out))
}

/// Why a finished dry run is too slow to send unasked (the guard's concern in words), if it is.
fn slow_dry_run(report: &crate::engine::RunReport, threshold_ms: u64) -> Option<String> {
    use crate::engine::live::guarded::{concerns, Concern};
    let limit = crate::engine::budget::limit();
    concerns(report, &[], threshold_ms, limit)
        .into_iter()
        .find_map(|c| match c {
            Concern::Incomplete { why, ms } => {
                Some(format!("the dry run in the sandbox on a copy of KEYS did not complete: {why} after {ms:.1} ms (on the server it would keep every other client waiting until it ends or is killed)"))
            }
            Concern::Slow { ms, threshold_ms } => Some(format!(
                "the dry run in the sandbox on a copy of KEYS took {ms:.1} ms, {:.0}% of the server's busy threshold of {threshold_ms} ms (the server may be slower)",
                ms * 100.0 / threshold_ms as f64
            )),
            _ => None,
        })
}

/// `evalbench copy`: keys from a live server as keyspace JSON.
pub fn copy_command(args: &CopyArgs) -> Result<(i32, String), CliError> {
    let spec = server_spec(&args.server, false)?.unwrap_or_default();
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let mut live = LiveBackend::connect(target).map_err(backend_error)?;
    let keys: Vec<Vec<u8>> = args.keys.iter().map(crate::cli::os_bytes).collect();
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    let mut db = Db::new();
    copy_keys(&mut live, &keys, &mut db, &CopyLimits::default(), now).map_err(|e| match e {
        CopyError::Live(e) => backend_error(e),
        other => CliError::input(other.to_string()),
    })?;
    // Keys the server does not hold are said, with their node on a cluster: an empty `{}` alone
    // reads as "copied, nothing in it".
    let json_db = keyspace_to_json(&db, now);
    let missing: Vec<String> = keys
        .iter()
        .filter(|k| !db.contains(k, now))
        .map(|k| {
            let name = String::from_utf8_lossy(k).into_owned();
            match live.node_for_key(k) {
                Some(node) => format!(
                    "{name} (slot {} on {node})",
                    crate::engine::lint::hash_slot(k)
                ),
                None => name,
            }
        })
        .collect();
    if !missing.is_empty() && missing.len() == keys.len() {
        return Err(CliError {
            code: EXIT_ERROR_REPLY,
            message: format!(
                "no such key on {}: {}; nothing was copied",
                live.target.display,
                missing.join(", ")
            ),
        });
    }
    if !missing.is_empty() {
        eprintln!(
            "evalbench: not on {}, left out: {}",
            live.target.display,
            missing.join(", ")
        );
    }
    let json = serde_json::to_string_pretty(&json_db).expect("JSON");
    Ok((EXIT_OK, json + "\n"))
}
