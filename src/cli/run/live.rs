//! `evalbench run` against a live server: the write guard (a sandbox dry run on a bounded copy of the
//! declared keys), the traced run, the same report; and `run --function` on the server's library.

use super::RunArgs;
use crate::cli::common::fcall::live_call;
use crate::cli::common::report::render_text;
use crate::cli::common::target::server_spec;
use crate::cli::common::{
    backend_error, CliError, EXIT_BACKEND, EXIT_BAD_INPUT, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::keyspace::{keyspace_to_json, Db};
use crate::engine::live::copy::{copy_keys, CopyError, CopyLimits};
use crate::engine::live::fcall::server_function_for;
use crate::engine::live::guard::{dry_run, explain_with_dry_run};
use crate::engine::live::guarded::unkillable_places;
use crate::engine::live::{LiveBackend, TargetSpec, WriteMode};
use crate::engine::report::{Warning, WarningKind};
use crate::engine::{FunctionCall, RunRequest};

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
    // A cluster that is down answers CLUSTERDOWN to any run with keys: nothing to read or send.
    if let Some(refusal) = live.cluster_down_refusal(&request.keys) {
        return Err(CliError {
            code: EXIT_BACKEND,
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
                // Stopped inside one C call: on the server no kill reaches it, so no read timeout
                // or SCRIPT KILL is promised.
                let in_c = crate::engine::live::guarded::stopped_in_c(&run.report);
                if !args.yes && !in_c.is_empty() {
                    return Err(CliError {
                        code: EXIT_BAD_INPUT,
                        message: format!(
                            "refused: SCRIPT KILL cannot stop this script:\n  {}\nIf that code runs long, the server stays busy for every client and may need a restart. Nothing was sent to {to}. Rerun with --yes to send it anyway (with --read-only too, as EVAL_RO).",
                            in_c.join("\n  "),
                        ),
                    });
                }
                // A dry run stopped at the busy threshold (or memory budget) or that took a large
                // share of it would block the server: only --yes sends it.
                if !args.yes {
                    if let Some(why) = slow_dry_run(
                        &run.report,
                        live.server.busy_threshold_ms,
                        live.server.cluster_node_timeout_ms,
                        replica,
                    ) {
                        return Err(CliError {
                            code: EXIT_BAD_INPUT,
                            message: format!(
                                "refused: {why}{}.\nNothing was sent to {to}. Rerun with --yes to send it anyway (with --read-timeout SECONDS evalbench gives up and sends SCRIPT KILL).",
                                live.server.cluster_timeout_note(replica).filter(|_| !why.contains("cluster-node-timeout")).map_or(String::new(), |n| format!("; {n}")),
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
    // A Ctrl-C's kill goes to the node the script is sent to (the dry run may have followed a
    // failover since the node was first named).
    let at = live.node_for_keys(&request.keys);
    let mut report =
        crate::cli::common::interrupt::on_server_at(&request.keys, at, || live.run(request, mode))?
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
fn slow_dry_run(
    report: &crate::engine::RunReport,
    threshold_ms: u64,
    node_timeout_ms: Option<u64>,
    replica: bool,
) -> Option<String> {
    use crate::engine::live::guarded::{concerns_on, describe_concern, Concern};
    let limit = crate::engine::budget::limit();
    concerns_on(report, &[], threshold_ms, node_timeout_ms, replica, limit)
        .into_iter()
        .find_map(|c| match c {
            Concern::NodeTimeout { .. } => Some(format!(
                "the dry run in the sandbox on a copy of KEYS took{}",
                describe_concern(&c)
                    .strip_prefix("The dry run took")
                    .unwrap_or_default()
            )),
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

/// `run --function NAME LIBRARY.lua --server URL`: the function is the server's; it runs only when
/// the server's library holding NAME has LIBRARY.lua's code (else exit 2, saying how to load it).
pub fn run_live_function(
    args: &RunArgs,
    spec: crate::engine::live::TargetSpec,
    request: &RunRequest,
    name: &str,
) -> Result<(i32, String), CliError> {
    if !args.library.is_empty() {
        return Err(CliError::input(
            "--library loads libraries into the sandbox; on a live server the functions are the server's (drop --library)",
        ));
    }
    if args.repeat > 1 {
        return Err(CliError::input(
            "--repeat runs in the sandbox only (a live run is sent once); drop --repeat or --server",
        ));
    }
    if args.dump_keyspace || args.no_trace {
        return Err(CliError::input(
            "--dump-keyspace and --no-trace are not offered with --function on a live server yet (the trace is the dry run's); drop them",
        ));
    }
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let mut live = LiveBackend::connect(target).map_err(backend_error)?;
    let file = args.script_and_args[0].to_string_lossy().into_owned();
    let load_hint = |replace: bool| {
        format!(
            "evalbench function load --server URL{} --yes {file}",
            if replace { " --replace" } else { "" }
        )
    };
    match server_function_for(&mut live, name, &request.keys).map_err(backend_error)? {
        None => {
            return Err(CliError::input(format!(
                "{} has no function named {name}: load the library first ({}). Nothing was sent.",
                live.target.display,
                load_hint(false)
            )))
        }
        Some(f) if f.code != request.script => {
            return Err(CliError::input(format!(
                "the server's library {} (which holds {name}) differs from {file}: run what the server has with `evalbench function call`, or load this file first ({}; without --yes it shows the diff). Nothing was sent.",
                f.library,
                load_hint(true)
            )))
        }
        Some(_) => {}
    }
    let call = FunctionCall {
        name: name.to_string(),
        keys: request.keys.clone(),
        argv: request.argv.clone(),
        protocol: request.protocol,
        read_only: request.read_only,
    };
    live_call(&mut live, &call, args.yes, args.json, Some(request))
}
