//! `evalbench run`: a script once (or --repeat N times) in the sandbox, or on a live server.

/// `evalbench run --export FILE`.
pub mod export;
/// `evalbench run --server`.
pub mod live;

use crate::cli::common::report::{coverage_json, coverage_text, render_text};
use crate::cli::common::{
    load_function_libraries, output_error, parse_profile, read_sandbox_input, read_script,
    write_out, CliError, SandboxInput, ServerArgs, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::debug::DebugSession;
use crate::engine::display::display_text;
use crate::engine::formats::{
    load_keyspace, load_sidecar_keyspace, read_sidecar_text, sidecar_path, Sidecar,
};
use crate::engine::keyspace::{keyspace_to_json, Db};
use crate::engine::report::{micros, RunReport};
use crate::engine::{RunRequest, Sandbox};
use clap::Args;
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub const RUN_HELP: &str = "Arguments after SCRIPT are literal: keys, then a lone ',' and the ARGV values (as redis-cli --eval).\nA later ',' is an ARGV value; values such as --json, -5 or -- are passed through.\n\nWith --sidecar, KEYS, ARGV and the seed keyspace come from SCRIPT.json (every sample has one);\nkeys, args or --keyspace given on the command line take precedence.\n\nLive server (--server URL, or -h/-p/-a/--user/-n as redis-cli; REDIS_URL alone runs in the sandbox:\nuse --server \"$REDIS_URL\"): the same report, with the trace recorded by a traced copy of the\nscript (same reply, errors and data as a plain EVAL). Runs are guarded: the script is first dry-run in the sandbox on a bounded copy of its KEYS; if it would write,\nthe run is refused (exit 2) unless --yes is given; otherwise it is sent as EVAL_RO, so the server itself\nrefuses any write. --read-only always sends EVAL_RO. A dry run that read what the copy lacks (a key outside\nKEYS, KEYS/SCAN/INFO/...) is no preview, and a script SCRIPT KILL cannot stop (a loop in an xpcall error\nhandler) may freeze the server: both are refused (exit 2) unless --yes is given.\n\nFunctions: --function NAME runs SCRIPT as a function library (#!lua name=...): it is loaded as\nFUNCTION LOAD would, then FCALL NAME (FCALL_RO with --read-only); --library FILE loads more libraries first.\nWith --server, the function is the server's: it runs (guarded as a script, see `evalbench function --help`)\nonly when the server's library holding NAME has SCRIPT's code; otherwise exit 2 and how to load it.\n\nExit status: 0 non-error reply, 1 error reply, 2 bad usage or input (or a refused write), 3 backend failure.\n\nExamples:\n  evalbench run samples/unlock.lua lock:order , token-1\n  evalbench run --json --dump-keyspace samples/stock_decrement.lua stock:sku1 , 2\n  evalbench run --sidecar --repeat 1000 --json samples/token_bucket.lua\n  evalbench run --function counter_incr samples/counter_library.lua counter:page , 5\n  evalbench run --profile valkey-9.1 samples/unlock.lua lock:order , token-1   (as Valkey 9.1 answers)\n  evalbench run --compare-profile valkey-9.1 samples/unlock.lua lock:order , token-1   (and Valkey 9.1's reply if it differs)\n  evalbench run --sidecar --export run.html samples/stock_decrement.lua   (a page to share: .md or .html)\n  evalbench run --server redis://127.0.0.1:6379 samples/unlock.lua lock:order , token-1\n  evalbench run -h 10.0.0.5 -p 6380 --user ops --askpass --yes samples/stock_decrement.lua stock:sku1 , 2\n  evalbench run --server redis://127.0.0.1:6379 --yes --function counter_incr samples/counter_library.lua counter:page , 5";

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Seed keyspace (JSON: {"key": "value" | {"type", "value", "ttl_ms"}}).
    #[arg(long, value_name = "FILE")]
    pub keyspace: Option<PathBuf>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Include the keyspace after the run.
    #[arg(long)]
    pub dump_keyspace: bool,
    /// The caller's protocol: 2, or 3 as after HELLO 3.
    #[arg(long, value_name = "2|3", default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub resp: u8,
    /// Stop the script with Redis's kill error after this many milliseconds (0: never).
    #[arg(long, value_name = "MS", default_value_t = crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS)]
    pub busy_threshold: u64,
    /// The run's memory budget in MiB: Lua, keyspace, trace, reply and snapshots together (past
    /// it the run stops with an error).
    #[arg(long = "max-memory", visible_alias = "memory-limit", value_name = "MIB",
          default_value_t = (crate::engine::sandbox::DEFAULT_MEMORY_LIMIT >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_memory: u64,
    /// Run N times on the same VM, resetting the keyspace to the seed before each run, and report timings.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub repeat: u64,
    /// Do not record the trace nor describe the returned Lua value (for timing with --repeat; on a live
    /// server: send the script as is, untraced).
    #[arg(long)]
    pub no_trace: bool,
    /// Run as EVAL_RO: write commands are refused (with --function: FCALL_RO).
    #[arg(long)]
    pub read_only: bool,
    /// Count how many times each script line ran (the debugger's line hook; sandbox only, once).
    #[arg(long)]
    pub coverage: bool,
    /// SCRIPT is a function library (`#!lua name=...`): load it and FCALL this function of it.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// With --function: load this library too, before SCRIPT (repeatable).
    #[arg(long, value_name = "FILE")]
    pub library: Vec<PathBuf>,
    /// Take KEYS, ARGV and the seed keyspace from the script's sidecar (SCRIPT.json, as the samples have).
    #[arg(long)]
    pub sidecar: bool,
    /// The server the sandbox imitates: redis-7.0, redis-7.2, redis-7.4, redis-8.0, valkey-8.1,
    /// valkey-9.1 (number formatting, globals, error texts, command table).
    #[arg(long, value_name = "ID", default_value = "redis-7.0", value_parser = parse_profile)]
    pub profile: &'static crate::engine::profile::Profile,
    /// Run the script under this profile too and report its reply when it differs (sandbox,
    /// EVAL only): "on valkey-9.1 this reads ...".
    #[arg(long, value_name = "ID", value_parser = parse_profile)]
    pub compare_profile: Option<&'static crate::engine::profile::Profile>,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Allow a live run to write (without it, a script that would write is refused).
    #[arg(long)]
    pub yes: bool,
    /// Also write the run to FILE as a document to share: Markdown (.md) or a standalone HTML page
    /// (.html): script, KEYS/ARGV, trace, reply under RESP2 and RESP3, keyspace changes, warnings,
    /// timing. An existing FILE is kept (exit 2) unless --overwrite is given.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
    /// The format of --export when FILE's extension does not say it: md or html.
    #[arg(long, value_name = "md|html", requires = "export")]
    pub export_format: Option<String>,
    /// With --export: replace FILE if it exists.
    #[arg(long, requires = "export")]
    pub overwrite: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The Lua script file, then KEY ... [, ARG ...].
    #[arg(value_name = "SCRIPT [KEY ...] [, ARG ...]", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub script_and_args: Vec<OsString>,
}

/// Run `evalbench run`; returns the exit status and what to print on stdout.
pub fn run_command(args: &RunArgs) -> Result<(i32, String), CliError> {
    let mut out = Vec::new();
    let code = run_command_to(args, &mut out)?;
    Ok((code, String::from_utf8_lossy(&out).into_owned()))
}

/// Run `evalbench run`, writing the report to `out` as it is made (the JSON of a huge reply is
/// streamed, never held whole); returns the exit status.
pub fn run_command_to(args: &RunArgs, out: &mut dyn std::io::Write) -> Result<i32, CliError> {
    let mut sandbox = configured_sandbox(args);
    let SandboxInput { request, seed, .. } = read_sandbox_input(
        &args.script_and_args,
        args.sidecar,
        args.keyspace.as_deref(),
        args.resp,
        args.read_only,
        sandbox.now_ms(),
    )?;
    check_function_flags(args)?;
    let export = export_target(args)?;
    if let Some(spec) = live::target_spec(args)? {
        check_live_flags(args, export.is_some())?;
        // --function on a live server: the server's function, when its library is this file.
        let (code, text) = match &args.function {
            Some(name) => live::run_live_function(args, spec, &request, name)?,
            None => live::run_live(args, spec, &request)?,
        };
        write_out(out, text.as_bytes())?;
        return Ok(code);
    }
    check_coverage_flags(args)?;
    let runs = run_in_sandbox(&mut sandbox, args, &request, seed, export.is_some())?;
    let code = if runs.report.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    if let (Some((file, format)), Some(before)) = (&export, &runs.export_before) {
        write_run_export(args, &sandbox, &request, &runs, (file, *format), before)?;
    }
    let comparison = match (args.compare_profile, &runs.compare_seed) {
        (Some(other), Some((db, at))) => Some(crate::engine::compare::run_under_profile(
            &request,
            db,
            *at,
            &sandbox.config,
            other,
            &runs.report,
        )),
        _ => None,
    };
    if args.json {
        write_json_report(args, &sandbox, runs, comparison.as_ref(), out)?;
    } else {
        let text = text_report(args, &sandbox, &request, runs, comparison.as_ref());
        write_out(out, text.as_bytes())?;
    }
    Ok(code)
}

/// The sandbox as the flags set it: profile, busy threshold, tracing and one memory budget for the
/// run and what it reads (the seed) and writes (an export).
fn configured_sandbox(args: &RunArgs) -> Sandbox {
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(args.profile);
    sandbox.config.busy_threshold_ms = args.busy_threshold;
    sandbox.config.tracing = !args.no_trace;
    crate::engine::budget::set_limit((args.max_memory as usize).saturating_mul(1 << 20));
    sandbox.config.memory_limit = crate::engine::budget::limit();
    sandbox
}

/// --library and --compare-profile against --function, wherever the run goes.
fn check_function_flags(args: &RunArgs) -> Result<(), CliError> {
    if args.function.is_none() && !args.library.is_empty() {
        return Err(CliError::input(
            "--library loads a function library for --function NAME; add --function",
        ));
    }
    if args.compare_profile.is_some() && args.function.is_some() {
        return Err(CliError::input(
            "--compare-profile re-runs an EVAL; it does not follow a --function call yet (drop one of them)",
        ));
    }
    Ok(())
}

/// --export FILE and its format: a bad format or a kept file is refused before the script runs.
fn export_target(
    args: &RunArgs,
) -> Result<Option<(PathBuf, crate::engine::export::Format)>, CliError> {
    let Some(file) = &args.export else {
        return Ok(None);
    };
    let format = export::export_format(file, args.export_format.as_deref())?;
    export::check_target(file, args.overwrite)?;
    Ok(Some((file.clone(), format)))
}

/// The flags that only mean something in the sandbox, refused with a live server.
fn check_live_flags(args: &RunArgs, exporting: bool) -> Result<(), CliError> {
    if args.compare_profile.is_some() {
        return Err(CliError::input(
            "--compare-profile runs the script in the sandbox under two profiles; a live server answers as itself (drop --compare-profile or --server)",
        ));
    }
    if exporting {
        return Err(CliError::input(
            "--export writes sandbox runs for now (a live run's keyspace changes are not recorded); drop --server, or drop --export",
        ));
    }
    if args.keyspace.is_some() {
        return Err(CliError::input(
            "--keyspace seeds the sandbox; with a live server the data is the server's (drop --keyspace, or drop --server to run in the sandbox)",
        ));
    }
    if args.coverage {
        return Err(CliError::input(
            "--coverage counts lines in the sandbox; a live server cannot (drop --coverage or --server)",
        ));
    }
    Ok(())
}

/// --coverage counts one EVAL: not a function call, not the runs of --repeat.
fn check_coverage_flags(args: &RunArgs) -> Result<(), CliError> {
    if args.coverage && args.function.is_some() {
        return Err(CliError::input(
            "--coverage counts the lines of a script; it does not follow a --function call yet",
        ));
    }
    if args.coverage && args.repeat > 1 {
        return Err(CliError::input(
            "--coverage counts one run (its line hook would slow the timings of --repeat); drop one of them",
        ));
    }
    Ok(())
}

/// What the sandbox runs leave for the report.
struct SandboxRuns {
    /// The last run's report.
    report: RunReport,
    /// Each run's time (ns), for --repeat.
    timings: Vec<u64>,
    /// The FCALL made, with --function.
    call: Option<crate::engine::FunctionCall>,
    /// With --coverage: the debugger's session and the executions per line.
    coverage: Option<(DebugSession, BTreeMap<u32, u64>)>,
    /// With --export: the keyspace before the last run.
    export_before: Option<Db>,
    /// With --compare-profile: the seed and the clock as the run found them.
    compare_seed: Option<(Db, i64)>,
    /// The clock after the runs: the TTLs of the keyspace shown and exported.
    after_ms: i64,
}

/// Run the script (or FCALL) `args.repeat` times, each on a fresh copy of the seed.
fn run_in_sandbox(
    sandbox: &mut Sandbox,
    args: &RunArgs,
    request: &RunRequest,
    seed: Db,
    exporting: bool,
) -> Result<SandboxRuns, CliError> {
    // --coverage: the run goes through the debugger, which never stops, counting lines.
    let mut coverage_session = if args.coverage {
        // A script that does not compile has no lines to count: its report says why.
        DebugSession::new(&request.script).ok().map(|mut s| {
            s.coverage = true;
            s.stop_at_start = false;
            s.break_on_error = false;
            s
        })
    } else {
        None
    };
    let mut counts = None;
    // Functions: the libraries are loaded once; each run is an FCALL.
    let call = match &args.function {
        Some(name) => Some(load_libraries(sandbox, args, request, name)?),
        None => None,
    };
    let mut timings = Vec::with_capacity(args.repeat as usize);
    let mut report = None;
    // --compare-profile runs again on the seed as it was, at the same time.
    let compare_seed = args
        .compare_profile
        .map(|_| (seed.clone(), sandbox.now_ms()));
    // The seed is copied only when a later run needs it again (a copy counts against the budget).
    let mut seed = Some(seed);
    let mut export_before = None;
    for i in 0..args.repeat {
        let db = if i + 1 == args.repeat {
            seed.take().unwrap_or_default()
        } else {
            seed.clone().unwrap_or_default()
        };
        // --export shows the keyspace before the last run (a copy only then).
        if exporting && i + 1 == args.repeat {
            export_before = Some(db.clone());
        }
        sandbox.set_db0(db);
        let r = match (&call, coverage_session.as_mut()) {
            (Some(call), _) => sandbox.fcall(call),
            (None, Some(session)) => {
                let debugged = sandbox.debug(request, session, &mut crate::engine::debug::NoStops);
                counts = debugged.coverage;
                debugged.run
            }
            (None, None) => sandbox.run(request),
        };
        timings.push(r.elapsed_ns);
        report = Some(r);
    }
    Ok(SandboxRuns {
        report: report.expect("at least one run"),
        timings,
        call,
        coverage: coverage_session.zip(counts),
        export_before,
        compare_seed,
        after_ms: sandbox.now_ms(),
    })
}

/// --export: the last run as a document (the keyspace before it and after it).
fn write_run_export(
    args: &RunArgs,
    sandbox: &Sandbox,
    request: &RunRequest,
    runs: &SandboxRuns,
    (file, format): (&Path, crate::engine::export::Format),
    before: &Db,
) -> Result<(), CliError> {
    let script_path = Path::new(&args.script_and_args[0]);
    let title = script_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run = crate::engine::export::RunExport {
        title: &title,
        script: &request.script,
        keys: &request.keys,
        argv: &request.argv,
        report: &runs.report,
        backend: "sandbox",
        keyspace: Some((before, sandbox.keyspace().db(0))),
        now_ms: runs.after_ms,
    };
    export::write_export(file, format, &run, args.overwrite)
}

/// A REDIS_URL exported for an application is not used unless a server option is given: say so.
fn unused_url_note() -> Option<&'static str> {
    std::env::var_os("REDIS_URL")
        .filter(|v| !v.is_empty())
        .map(|_| "note: REDIS_URL is set but not used: evalbench runs in the sandbox unless --server (or -h/-p/-a/-n) is given; --server \"$REDIS_URL\" runs on that server")
}

/// `run --json`: the report as one JSON object, written as it is made.
fn write_json_report(
    args: &RunArgs,
    sandbox: &Sandbox,
    mut runs: SandboxRuns,
    comparison: Option<&crate::engine::compare::ProfileComparison>,
    out: &mut dyn std::io::Write,
) -> Result<(), CliError> {
    if let Some(note) = unused_url_note() {
        eprintln!("evalbench: {note}");
    }
    let mut extra = serde_json::Map::new();
    extra.insert("backend".into(), json!("sandbox"));
    if let Some(call) = &runs.call {
        extra.insert("function".into(), json!(call.name));
    }
    if args.dump_keyspace {
        extra.insert(
            "keyspace".into(),
            keyspace_to_json(sandbox.keyspace().db(0), runs.after_ms),
        );
    }
    if args.repeat > 1 {
        extra.insert("repeat".into(), repeat_json(&mut runs.timings));
    }
    if let Some(c) = comparison {
        extra.insert("compare".into(), compare_json(c, &runs.report));
    }
    if let Some((session, counts)) = &runs.coverage {
        let (ran, not_run) = coverage_json(session, counts);
        extra.insert("coverage".into(), ran);
        extra.insert("coverage_not_run".into(), not_run);
    }
    runs.report
        .write_json(extra, out)
        .and_then(|()| out.flush())
        .map_err(output_error)
}

/// The text report of a sandbox run: backend, reply, trace, comparison, timings, coverage, keyspace.
fn text_report(
    args: &RunArgs,
    sandbox: &Sandbox,
    request: &RunRequest,
    mut runs: SandboxRuns,
    comparison: Option<&crate::engine::compare::ProfileComparison>,
) -> String {
    let mut text = String::from("backend: sandbox\n");
    if let Some(call) = &runs.call {
        let mode = if call.read_only { "FCALL_RO" } else { "FCALL" };
        text.push_str(&format!("function: {} ({mode})\n", call.name));
    }
    if let Some(note) = unused_url_note() {
        text.push_str(note);
        text.push('\n');
    }
    text.push_str(&render_text(&runs.report, request));
    if let Some(c) = comparison {
        text.push_str(&format!("\n{}\n", c.summary()));
    }
    if args.repeat > 1 {
        let r = repeat_json(&mut runs.timings);
        text.push_str(&format!(
            "\nrepeat: {} runs, min {} µs, median {} µs, p99 {} µs\n",
            r["runs"], r["min_us"], r["median_us"], r["p99_us"]
        ));
    }
    if let Some((session, counts)) = &runs.coverage {
        text.push_str(&coverage_text(session, counts));
    }
    if args.dump_keyspace {
        text.push_str("\nkeyspace:\n");
        text.push_str(
            &serde_json::to_string_pretty(&keyspace_to_json(
                sandbox.keyspace().db(0),
                runs.after_ms,
            ))
            .expect("JSON"),
        );
        text.push('\n');
    }
    // The keyspace dump is JSON: C0 is escaped, C1 and bidi code points are not.
    display_text(&text).into_owned()
}

/// `"compare"` of `run --json --compare-profile`: the other profile, whether its reply differs,
/// and (when it does) that reply as its caller receives it.
fn compare_json(
    c: &crate::engine::compare::ProfileComparison,
    first: &RunReport,
) -> serde_json::Value {
    let mut obj = json!({"profile": c.profile.id, "differs": c.differs});
    if c.differs {
        obj["reply"] = c.report.reply_for(first.protocol).to_json();
    }
    obj
}

/// Load `--library` files then SCRIPT as function libraries (FUNCTION LOAD); the FCALL to make.
fn load_libraries(
    sandbox: &mut Sandbox,
    args: &RunArgs,
    request: &RunRequest,
    name: &str,
) -> Result<crate::engine::FunctionCall, CliError> {
    let script_path = PathBuf::from(&args.script_and_args[0]);
    load_function_libraries(sandbox, &args.library, &script_path, request, name)
}

fn repeat_json(timings: &mut [u64]) -> serde_json::Value {
    timings.sort_unstable();
    let pick = |q: f64| timings[((timings.len() - 1) as f64 * q).round() as usize];
    json!({
        "runs": timings.len(),
        "min_us": micros(timings[0]),
        "median_us": micros(pick(0.5)),
        "p99_us": micros(pick(0.99)),
    })
}

/// `evalbench [FILE]` without a terminal: run FILE (with its sidecar's KEYS, ARGV and seed when it has
/// one), or the bundled rate-limiter sample, in the sandbox, and explain what to do next.
pub fn run_demo(file: Option<&Path>) -> Result<(i32, String), CliError> {
    const SCRIPT: &str = include_str!("../../../samples/rate_limiter.lua");
    const SIDECAR: &str = include_str!("../../../samples/rate_limiter.json");
    let mut sandbox = Sandbox::new();
    let now = sandbox.now_ms();
    let (script, car, seed, what) = match file {
        Some(path) => {
            let script = read_script(path)?;
            let car_path = sidecar_path(path);
            let (car, seed) = if car_path != path && car_path.is_file() {
                let (car, text) = read_sidecar_text(&car_path)?;
                let seed = match &car.keyspace {
                    Some(ks) => load_sidecar_keyspace(&car_path, &text, ks, now)?,
                    None => Db::new(),
                };
                (car, seed)
            } else {
                (Sidecar::default(), Db::new())
            };
            (script, car, seed, path.display().to_string())
        }
        None => {
            let car: Sidecar =
                serde_json::from_str(SIDECAR).map_err(|e| CliError::input(e.to_string()))?;
            let seed = match &car.keyspace {
                Some(ks) => {
                    load_keyspace(Path::new("samples/rate_limiter.json"), &ks.to_string(), now)?
                }
                None => Db::new(),
            };
            let what = format!(
                "the bundled sample samples/rate_limiter.lua ({})",
                car.description
            );
            (SCRIPT.as_bytes().to_vec(), car, seed, what)
        }
    };
    sandbox.set_db0(seed);
    let request = RunRequest {
        script,
        keys: car.keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        argv: car.argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        ..RunRequest::default()
    };
    let report = sandbox.run(&request);
    let mut out = format!(
        "evalbench: ran {what} in the embedded sandbox (no terminal for the workbench)\n  KEYS = {:?}  ARGV = {:?}\n\n",
        car.keys, car.argv
    );
    out.push_str(&render_text(&report, &request));
    out.push_str("\nTry: evalbench run samples/<name>.lua KEY ... , ARG ...   (evalbench run --help for more)\n");
    Ok((
        if report.is_error() {
            EXIT_ERROR_REPLY
        } else {
            EXIT_OK
        },
        out,
    ))
}
