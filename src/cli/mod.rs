//! The headless command line: `evalbench run` (see README for the contract).

use crate::engine::display::{display_bytes, display_safe, display_text};
use crate::engine::input::{self, read_bounded, read_bounded_text};
use crate::engine::keyspace::{keyspace_from_json, keyspace_to_json, Db, KeyspaceJsonError};
use crate::engine::report::{micros, RunReport};
use crate::engine::{Protocol, RunRequest, Sandbox};
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What every subcommand shares: exit statuses, errors, the live target, Ctrl-C.
pub mod common;
/// `evalbench debug`, and with --server the REPL over Redis's own LDB.
pub mod debug;
/// `evalbench function` and `run --function --server`: a live server's libraries.
pub mod function;
/// `evalbench lesson`.
pub mod lesson;
/// `evalbench lint`.
pub mod lint;
/// `evalbench race`: the race lab headless.
pub mod race;
/// `evalbench run`'s pieces: --export and --server.
pub mod run;
/// `evalbench test`.
pub mod test;

pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR_REPLY: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;
pub const EXIT_BACKEND: i32 = 3;

#[derive(Parser, Debug)]
#[command(
    name = "evalbench",
    version,
    about = "A workbench for writing and debugging Redis Lua scripts (EVAL), with a Redis-faithful embedded sandbox",
    after_help = "Examples:\n  evalbench run samples/rate_limiter.lua ratelimit:alice , 10 60\n  evalbench run --json --dump-keyspace samples/unlock.lua lock:order , token-1\n  evalbench run --keyspace seed.json --resp 3 script.lua k1 k2 , a1\n  evalbench test samples/                                    (the cases of samples/*.test.toml)\n  evalbench lint samples/*.lua                               (check scripts without running them)\n  evalbench lesson list                                      (a guided path: tasks with checks and hints)\n  evalbench --server redis://127.0.0.1:6379 script.lua      (the workbench on a live server)\n  evalbench -h 10.0.0.5 -p 6380 --user ops --askpass         (the same, redis-cli style)\n  evalbench --present samples/stock_decrement.lua            (presenter mode, for a class)\n\nWithout a command, evalbench opens the workbench (terminal UI) on FILE or on a bundled sample;\nwhen stdout is not a terminal it runs the sample headless and prints the report.\n-h is the live server's host, as in redis-cli; --help prints this help."
)]
#[command(args_conflicts_with_subcommands = true, disable_help_flag = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A script to open in the workbench (default: a bundled sample).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The theme of the workbench (dark, light).
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// The server the workbench's sandbox imitates (as `run --profile`; default: config.toml's
    /// `profile`, else redis-7.0; a live server picks its own).
    #[arg(long, value_name = "ID", value_parser = parse_profile)]
    pub profile: Option<&'static crate::engine::profile::Profile>,
    /// Open the workbench on a live server: runs go there, guarded (a sandbox dry run first, writes
    /// only after a y/n confirmation), and the Server tab browses its keyspace.
    #[command(flatten)]
    pub server: ServerArgs,
    /// Start the workbench in presenter mode: one large pane, readable from the back of a room
    /// (Alt-P switches it).
    #[arg(long)]
    pub present: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a script once (or --repeat N times) in the sandbox, or on a live server, and print the report.
    #[command(after_help = RUN_HELP, disable_help_flag = true)]
    Run(RunArgs),
    /// Copy keys from a live server into a keyspace JSON file for the sandbox (bounded, type-aware reads).
    #[command(after_help = COPY_HELP, disable_help_flag = true)]
    Copy(CopyArgs),
    /// Debug a script in the sandbox with LDB's words (step, breakpoints, print, eval) and more.
    #[command(after_help = crate::cli::debug::DEBUG_HELP, disable_help_flag = true)]
    Debug(crate::cli::debug::DebugArgs),
    /// Run the cases of test files (NAME.test.toml beside NAME.lua): expected replies, errors, keyspaces.
    #[command(after_help = crate::cli::test::TEST_HELP, disable_help_flag = true)]
    Test(crate::cli::test::TestArgs),
    /// Check scripts without running them: keys not in KEYS, writes before checks, unbounded reads, Lua 5.2+ syntax.
    #[command(after_help = crate::cli::lint::LINT_HELP, disable_help_flag = true)]
    Lint(crate::cli::lint::LintArgs),
    /// Lessons: a task, a starting script, checks and hints (list, show N, check N FILE).
    #[command(after_help = crate::cli::lesson::LESSON_HELP)]
    Lesson(crate::cli::lesson::LessonArgs),
    /// Run one logic as N clients: plain commands, one script, MULTI/EXEC, WATCH; every interleaving's outcome.
    #[command(after_help = crate::cli::race::RACE_HELP, disable_help_flag = true)]
    Race(crate::cli::race::RaceArgs), // issue 14: the race lab
    /// A live server's function libraries: list, show, load (guarded), call (FCALL, guarded).
    #[command(after_help = crate::cli::function::FUNCTION_HELP)]
    Function(crate::cli::function::FunctionArgs), // issue 13: live Functions
}

const RUN_HELP: &str = "Arguments after SCRIPT are literal: keys, then a lone ',' and the ARGV values (as redis-cli --eval).\nA later ',' is an ARGV value; values such as --json, -5 or -- are passed through.\n\nWith --sidecar, KEYS, ARGV and the seed keyspace come from SCRIPT.json (every sample has one);\nkeys, args or --keyspace given on the command line take precedence.\n\nLive server (--server URL, or -h/-p/-a/--user/-n as redis-cli; REDIS_URL alone runs in the sandbox:\nuse --server \"$REDIS_URL\"): the same report, with the trace recorded by a traced copy of the\nscript (same reply, errors and data as a plain EVAL). Runs are guarded: the script is first dry-run in the sandbox on a bounded copy of its KEYS; if it would write,\nthe run is refused (exit 2) unless --yes is given; otherwise it is sent as EVAL_RO, so the server itself\nrefuses any write. --read-only always sends EVAL_RO. A dry run that read what the copy lacks (a key outside\nKEYS, KEYS/SCAN/INFO/...) is no preview, and a script SCRIPT KILL cannot stop (a loop in an xpcall error\nhandler) may freeze the server: both are refused (exit 2) unless --yes is given.\n\nFunctions: --function NAME runs SCRIPT as a function library (#!lua name=...): it is loaded as\nFUNCTION LOAD would, then FCALL NAME (FCALL_RO with --read-only); --library FILE loads more libraries first.\nWith --server, the function is the server's: it runs (guarded as a script, see `evalbench function --help`)\nonly when the server's library holding NAME has SCRIPT's code; otherwise exit 2 and how to load it.\n\nExit status: 0 non-error reply, 1 error reply, 2 bad usage or input (or a refused write), 3 backend failure.\n\nExamples:\n  evalbench run samples/unlock.lua lock:order , token-1\n  evalbench run --json --dump-keyspace samples/stock_decrement.lua stock:sku1 , 2\n  evalbench run --sidecar --repeat 1000 --json samples/token_bucket.lua\n  evalbench run --function counter_incr samples/counter_library.lua counter:page , 5\n  evalbench run --profile valkey-9.1 samples/unlock.lua lock:order , token-1   (as Valkey 9.1 answers)\n  evalbench run --compare-profile valkey-9.1 samples/unlock.lua lock:order , token-1   (and Valkey 9.1's reply if it differs)\n  evalbench run --sidecar --export run.html samples/stock_decrement.lua   (a page to share: .md or .html)\n  evalbench run --server redis://127.0.0.1:6379 samples/unlock.lua lock:order , token-1\n  evalbench run -h 10.0.0.5 -p 6380 --user ops --askpass --yes samples/stock_decrement.lua stock:sku1 , 2\n  evalbench run --server redis://127.0.0.1:6379 --yes --function counter_incr samples/counter_library.lua counter:page , 5";

/// Where the live server is, as redis-cli takes it.
#[derive(Args, Debug, Default, Clone, PartialEq)]
pub struct ServerArgs {
    /// Run on a live server: redis://[user:password@]host:port[/db] or unix:///path (REDIS_URL is the
    /// address when only -a/--user/-n/... are given; REDIS_URL alone does not leave the sandbox).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Live server host (as redis-cli -h).
    #[arg(short = 'h', long = "host", value_name = "HOST")]
    pub host: Option<String>,
    /// Live server port (as redis-cli -p).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    pub port: Option<u16>,
    /// Password (as redis-cli -a; prefer --askpass or REDISCLI_AUTH: arguments show in `ps`).
    #[arg(short = 'a', long = "pass", value_name = "PASSWORD")]
    pub pass: Option<String>,
    /// ACL user name.
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Read the password from the terminal without echo.
    #[arg(long)]
    pub askpass: bool,
    /// Database number (as redis-cli -n).
    #[arg(short = 'n', value_name = "DB")]
    pub db: Option<i64>,
    /// Connect with TLS (as redis-cli --tls; a rediss:// URL does the same).
    #[arg(long)]
    pub tls: bool,
    /// CA certificate (PEM) to verify the server with, instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS, with --key.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// Client private key (PEM), with --cert.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Do not verify the server's certificate (as redis-cli --insecure).
    #[arg(long)]
    pub insecure: bool,
    /// Give up connecting after this many seconds (default 3).
    #[arg(long, value_name = "SECS")]
    pub connect_timeout: Option<f64>,
    /// Give up waiting for a reply after this many seconds (default: wait; a script may run past the
    /// busy threshold until it ends or is killed); a script given up on is stopped with SCRIPT KILL.
    #[arg(long, value_name = "SECS")]
    pub read_timeout: Option<f64>,
    /// Do not warn about a password on the command line (as redis-cli --no-auth-warning).
    #[arg(long)]
    pub no_auth_warning: bool,
}

const COPY_HELP: &str = "Prints keyspace JSON (the --keyspace format) with each key's type, value and TTL, to debug a\nscript offline against real data. Reads are bounded: a key above 10,000 elements or 1 MiB is refused\n(exit 2) with the reason; missing keys are left out.\n\nExamples:\n  evalbench copy --server redis://10.0.0.5:6379 user:42 cart:42 > seed.json\n  evalbench run --keyspace seed.json checkout.lua user:42 cart:42 , 3";

#[derive(Args, Debug)]
pub struct CopyArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The keys to copy.
    #[arg(value_name = "KEY", required = true, num_args = 1..)]
    pub keys: Vec<OsString>,
}

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
    /// EVAL only): "on valkey-9.1 this reads ...". Issue 12.
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

/// `--profile ID` (engine/profile.rs).
pub fn parse_profile(id: &str) -> Result<&'static crate::engine::profile::Profile, String> {
    crate::engine::profile::Profile::by_id(id)
}

/// A user-facing failure with its exit status.
#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_BAD_INPUT,
            message: message.into(),
        }
    }
}

pub fn os_bytes(s: &OsString) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_os_str().as_bytes().to_vec()
}

/// Split `KEY ... , ARG ...` at the first lone comma.
pub fn split_keys_and_argv(rest: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    match rest.iter().position(|a| a == b",") {
        Some(i) => (rest[..i].to_vec(), rest[i + 1..].to_vec()),
        None => (rest.to_vec(), Vec::new()),
    }
}

/// Where the member at `path` (object keys from the root) is written in the JSON `text`: the line and
/// column (1-based) of its key. A key with the same name elsewhere (in a sidecar's "keys" list, in a
/// nested value) does not count.
pub fn locate_member(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    // One entry per open container: (is an object, lies on `path`).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut expect_key = false;
    // Whether the value about to start lies on `path` (the root does).
    let mut next_on_path = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(bytes.len());
                if expect_key {
                    expect_key = false;
                    let depth = stack.len();
                    let parent_on_path = stack.last().is_some_and(|(_, on)| *on);
                    next_on_path = parent_on_path
                        && depth <= path.len()
                        && serde_json::from_str::<String>(text.get(start..end)?)
                            .ok()
                            .as_deref()
                            == Some(path[depth - 1]);
                    if next_on_path && depth == path.len() {
                        let before = &text[..start];
                        let line = before.matches('\n').count() + 1;
                        let column = start - before.rfind('\n').map_or(0, |p| p + 1) + 1;
                        return Some((line, column));
                    }
                }
                i = end;
                continue;
            }
            b'{' => {
                stack.push((true, next_on_path));
                expect_key = true;
                next_on_path = false;
            }
            b'[' => {
                stack.push((false, false));
                next_on_path = false;
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => expect_key = stack.last().is_some_and(|(object, _)| *object),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Load a keyspace JSON file; errors say file, line and column.
pub fn load_keyspace(path: &Path, text: &str, now_ms: i64) -> Result<Db, CliError> {
    keyspace_at(path, text, &[], text, now_ms)
}

/// Load the keyspace a sidecar holds (`keyspace` of `car_text`, the file as read): errors give the
/// line and column in the sidecar file.
pub fn load_sidecar_keyspace(
    car_path: &Path,
    car_text: &str,
    keyspace: &serde_json::Value,
    now_ms: i64,
) -> Result<Db, CliError> {
    keyspace_at(
        car_path,
        car_text,
        &["keyspace"],
        &keyspace.to_string(),
        now_ms,
    )
}

/// Load the keyspace `json`, written at `at` (object keys) in the file `path` that reads `text`.
fn keyspace_at(
    path: &Path,
    text: &str,
    at: &[&str],
    json: &str,
    now_ms: i64,
) -> Result<Db, CliError> {
    keyspace_from_json(json, now_ms).map_err(|e| match e {
        KeyspaceJsonError::Syntax {
            line,
            column,
            message,
        } => {
            // A sidecar's keyspace was parsed already: only its shape can be wrong, at the member.
            let (line, column) = if at.is_empty() {
                (line, column)
            } else {
                locate_member(text, at).unwrap_or((1, 1))
            };
            CliError::input(format!(
                "{}:{line}:{column}: malformed keyspace JSON: {message}",
                path.display()
            ))
        }
        e @ KeyspaceJsonError::OverBudget { .. } => {
            CliError::input(format!("{}: {e}", path.display()))
        }
        KeyspaceJsonError::Invalid { key, message } => {
            let mut member = at.to_vec();
            member.push(&key);
            let (line, column) = locate_member(text, &member).unwrap_or((1, 1));
            CliError::input(format!(
                "{}:{line}:{column}: key {key:?}: {message} (see the keyspace format in README.md)",
                path.display()
            ))
        }
    })
}

/// A sample's sidecar: keys, argv, seed keyspace, expected reply, description.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Sidecar {
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub keys: Vec<String>,
    #[serde(default)]
    pub argv: Vec<String>,
    #[serde(default)]
    pub keyspace: Option<serde_json::Value>,
    #[serde(default)]
    pub expected: Option<serde_json::Value>,
    /// A function library's function to call (issue 13; the workbench's form picks it).
    #[serde(default)]
    pub function: Option<String>,
    /// The workbench's breakpoints on the script (the CLI does not use them).
    #[serde(default)]
    pub breakpoints: Vec<SidecarBreakpoint>,
    /// The workbench's debugger watches (Lua expressions).
    #[serde(default)]
    pub watches: Vec<String>,
}

/// A breakpoint as a sidecar keeps it: its line, and when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct SidecarBreakpoint {
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hit_count: Option<u64>,
}

pub fn sidecar_path(script: &Path) -> PathBuf {
    script.with_extension("json")
}

pub fn read_sidecar(path: &Path) -> Result<Sidecar, CliError> {
    read_sidecar_text(path).map(|(car, _)| car)
}

/// The sidecar and the file's text (to place errors in its seed keyspace).
pub fn read_sidecar_text(path: &Path) -> Result<(Sidecar, String), CliError> {
    let text = read_bounded_text(path, &input::KEYSPACE_JSON)
        .map_err(|e| CliError::input(format!("sidecar: {e}")))?;
    // The seed inside counts against the budget while it is parsed; syntax errors are left to
    // the sidecar's own parse below, which names them the same way.
    if let Err(e @ KeyspaceJsonError::OverBudget { .. }) =
        crate::engine::keyspace::json::json_within_budget(&text)
    {
        return Err(CliError::input(format!("{}: {e}", path.display())));
    }
    let car = serde_json::from_str(&text).map_err(|e| {
        CliError::input(format!(
            "{}:{}:{}: malformed sidecar: {}",
            path.display(),
            e.line(),
            e.column(),
            e
        ))
    })?;
    Ok((car, text))
}

/// Read the script a command names; a missing file, a device or FIFO, or an oversized file is bad input.
pub fn read_script(path: &Path) -> Result<Vec<u8>, CliError> {
    read_bounded(path, &input::SCRIPT).map_err(|e| CliError::input(e.to_string()))
}

/// What a sandbox run reads from the command line and files (`run` and `debug`): the script, KEYS
/// and ARGV (from the command line, or the sidecar when none are given), the seed keyspace, all
/// through the bounded readers.
pub struct SandboxInput {
    pub script_path: PathBuf,
    pub request: RunRequest,
    pub seed: Db,
}

pub fn read_sandbox_input(
    script_and_args: &[OsString],
    sidecar: bool,
    keyspace: Option<&Path>,
    resp: u8,
    read_only: bool,
    now: i64,
) -> Result<SandboxInput, CliError> {
    let script_path = PathBuf::from(&script_and_args[0]);
    let script = read_script(&script_path)?;
    let rest: Vec<Vec<u8>> = script_and_args[1..].iter().map(os_bytes).collect();
    let (mut keys, mut argv) = split_keys_and_argv(&rest);
    let mut seed = Db::new();
    if sidecar {
        let sidecar = sidecar_path(&script_path);
        let (car, car_text) = read_sidecar_text(&sidecar)?;
        if rest.is_empty() {
            keys = car.keys.iter().map(|k| k.as_bytes().to_vec()).collect();
            argv = car.argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        }
        if let Some(ks) = &car.keyspace {
            seed = load_sidecar_keyspace(&sidecar, &car_text, ks, now)?;
        }
    }
    if let Some(path) = keyspace {
        let text = read_bounded_text(path, &input::KEYSPACE_JSON)
            .map_err(|e| CliError::input(format!("--keyspace: {e}")))?;
        seed = load_keyspace(path, &text, now)?;
    }
    let request = RunRequest {
        script,
        keys,
        argv,
        protocol: if resp == 3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
        read_only,
    };
    Ok(SandboxInput {
        script_path,
        request,
        seed,
    })
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
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(args.profile);
    sandbox.config.busy_threshold_ms = args.busy_threshold;
    sandbox.config.tracing = !args.no_trace;
    // One budget for the run and what it reads (the seed) and writes (an export).
    crate::engine::budget::set_limit((args.max_memory as usize).saturating_mul(1 << 20));
    sandbox.config.memory_limit = crate::engine::budget::limit();
    let SandboxInput { request, seed, .. } = read_sandbox_input(
        &args.script_and_args,
        args.sidecar,
        args.keyspace.as_deref(),
        args.resp,
        args.read_only,
        sandbox.now_ms(),
    )?;
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
    // --export (run/export.rs): a bad format is refused before the script runs.
    let export = match &args.export {
        Some(file) => {
            let format =
                crate::cli::run::export::export_format(file, args.export_format.as_deref())?;
            crate::cli::run::export::check_target(file, args.overwrite)?;
            Some((file.clone(), format))
        }
        None => None,
    };
    if let Some(spec) = crate::cli::run::live::target_spec(args)? {
        if args.compare_profile.is_some() {
            return Err(CliError::input(
                "--compare-profile runs the script in the sandbox under two profiles; a live server answers as itself (drop --compare-profile or --server)",
            ));
        }
        if export.is_some() {
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
        // --function on a live server: the server's function, when its library is this file (issue 13).
        let (code, text) = match &args.function {
            Some(name) => crate::cli::function::run_live_function(args, spec, &request, name)?,
            None => crate::cli::run::live::run_live(args, spec, &request)?,
        };
        write_out(out, text.as_bytes())?;
        return Ok(code);
    }

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
    // --coverage: the run goes through the debugger, which never stops, counting lines.
    let mut coverage = None;
    let mut coverage_session = if args.coverage {
        // A script that does not compile has no lines to count: its report says why.
        crate::engine::debug::DebugSession::new(&request.script)
            .ok()
            .map(|mut s| {
                s.coverage = true;
                s.stop_at_start = false;
                s.break_on_error = false;
                s
            })
    } else {
        None
    };
    // Functions (issue 13): the libraries are loaded once; each run is an FCALL.
    let call = match &args.function {
        Some(name) => Some(load_libraries(&mut sandbox, args, &request, name)?),
        None => None,
    };
    let mut timings = Vec::with_capacity(args.repeat as usize);
    let mut report = None;
    // --compare-profile (issue 12) runs again on the seed as it was, at the same time.
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
        if export.is_some() && i + 1 == args.repeat {
            export_before = Some(db.clone());
        }
        sandbox.set_db0(db);
        let r = match (&call, coverage_session.as_mut()) {
            (Some(call), _) => sandbox.fcall(call),
            (None, Some(session)) => {
                let debugged = sandbox.debug(&request, session, &mut crate::engine::debug::NoStops);
                coverage = debugged.coverage;
                debugged.run
            }
            (None, None) => sandbox.run(&request),
        };
        timings.push(r.elapsed_ns);
        report = Some(r);
    }
    let report = report.expect("at least one run");
    let code = if report.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    let after_ms = sandbox.now_ms();
    if let (Some((file, format)), Some(before)) = (&export, &export_before) {
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
            report: &report,
            backend: "sandbox",
            keyspace: Some((before, sandbox.keyspace().db(0))),
            now_ms: after_ms,
        };
        crate::cli::run::export::write_export(file, *format, &run, args.overwrite)?;
    }
    let comparison = match (args.compare_profile, &compare_seed) {
        (Some(other), Some((db, at))) => Some(crate::engine::compare::run_under_profile(
            &request,
            db,
            *at,
            &sandbox.config,
            other,
            &report,
        )),
        _ => None,
    };
    // A REDIS_URL exported for an application is not used unless a server option is given: say so.
    let unused_url = std::env::var_os("REDIS_URL")
        .filter(|v| !v.is_empty())
        .map(|_| "note: REDIS_URL is set but not used: evalbench runs in the sandbox unless --server (or -h/-p/-a/-n) is given; --server \"$REDIS_URL\" runs on that server");
    if args.json {
        if let Some(note) = unused_url {
            eprintln!("evalbench: {note}");
        }
        let mut extra = serde_json::Map::new();
        extra.insert("backend".into(), json!("sandbox"));
        if let Some(call) = &call {
            extra.insert("function".into(), json!(call.name));
        }
        if args.dump_keyspace {
            extra.insert(
                "keyspace".into(),
                keyspace_to_json(sandbox.keyspace().db(0), after_ms),
            );
        }
        if args.repeat > 1 {
            extra.insert("repeat".into(), repeat_json(&mut timings));
        }
        if let Some(c) = &comparison {
            extra.insert("compare".into(), compare_json(c, &report));
        }
        if let (Some(session), Some(counts)) = (&coverage_session, &coverage) {
            let (ran, not_run) = crate::cli::debug::coverage_json(session, counts);
            extra.insert("coverage".into(), ran);
            extra.insert("coverage_not_run".into(), not_run);
        }
        report
            .write_json(extra, out)
            .and_then(|()| out.flush())
            .map_err(output_error)?;
        return Ok(code);
    }
    let text = {
        let mut text = String::from("backend: sandbox\n");
        if let Some(call) = &call {
            let mode = if call.read_only { "FCALL_RO" } else { "FCALL" };
            text.push_str(&format!("function: {} ({mode})\n", call.name));
        }
        if let Some(note) = unused_url {
            text.push_str(note);
            text.push('\n');
        }
        text.push_str(&render_text(&report, &request));
        if let Some(c) = &comparison {
            text.push_str(&format!("\n{}\n", c.summary()));
        }
        if args.repeat > 1 {
            let r = repeat_json(&mut timings);
            text.push_str(&format!(
                "\nrepeat: {} runs, min {} µs, median {} µs, p99 {} µs\n",
                r["runs"], r["min_us"], r["median_us"], r["p99_us"]
            ));
        }
        if let (Some(session), Some(counts)) = (&coverage_session, &coverage) {
            text.push_str(&crate::cli::debug::coverage_text(session, counts));
        }
        if args.dump_keyspace {
            text.push_str("\nkeyspace:\n");
            text.push_str(
                &serde_json::to_string_pretty(&keyspace_to_json(
                    sandbox.keyspace().db(0),
                    after_ms,
                ))
                .expect("JSON"),
            );
            text.push('\n');
        }
        // The keyspace dump is JSON: C0 is escaped, C1 and bidi code points are not.
        display_text(&text).into_owned()
    };
    write_out(out, text.as_bytes())?;
    Ok(code)
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

/// FUNCTION LOAD each of `libraries`, then the script (`request`'s text, read from
/// `script_path`); the FCALL of function `name` with the request's KEYS/ARGV (run and debug).
pub(crate) fn load_function_libraries(
    sandbox: &mut Sandbox,
    libraries: &[PathBuf],
    script_path: &Path,
    request: &RunRequest,
    name: &str,
) -> Result<crate::engine::FunctionCall, CliError> {
    let mut loaded = Vec::new();
    for path in libraries {
        loaded.push((path.clone(), read_script(path)?));
    }
    loaded.push((script_path.to_path_buf(), request.script.clone()));
    for (path, code) in &loaded {
        sandbox.function_load(code, false).map_err(|e| {
            CliError::input(format!(
                "{}: FUNCTION LOAD failed: {e}",
                display_text(&path.display().to_string())
            ))
        })?;
    }
    Ok(crate::engine::FunctionCall {
        name: name.to_string(),
        keys: request.keys.clone(),
        argv: request.argv.clone(),
        protocol: request.protocol,
        read_only: request.read_only,
    })
}

fn write_out(out: &mut dyn std::io::Write, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(output_error)
}

fn output_error(e: std::io::Error) -> CliError {
    CliError {
        code: EXIT_BACKEND,
        message: format!("cannot write the report: {e}"),
    }
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

/// The human report: reply as redis-cli prints it, trace, notes, timing, warnings. Text from the
/// script (replies, arguments, log lines, messages quoting keys) is escaped where it is placed, so
/// a field cannot spill over lines; a last pass over the whole report is the guarantee that no
/// control or bidi character reaches the terminal.
pub fn render_text(report: &RunReport, request: &RunRequest) -> String {
    let out = render_text_fields(report, request);
    display_text(&out).into_owned()
}

fn render_text_fields(report: &RunReport, request: &RunRequest) -> String {
    let mut out = String::new();
    out.push_str(&report.reply_for(report.protocol).to_cli());
    out.push('\n');
    if !report.trace.is_empty() {
        out.push_str(&format!("\ntrace ({} calls):\n", report.trace.len()));
        out.push_str(&format!(
            "{:>4} {:>5}  {:<40} {:<30} {:>9}\n",
            "seq", "line", "command", "reply", "µs"
        ));
        for e in &report.trace {
            let command: Vec<Cow<str>> = e.command.iter().map(|a| display_bytes(a)).collect();
            let undeclared = e.keys.iter().any(|k| !request.keys.contains(k));
            let marks = format!(
                "{}{}",
                if e.write { " W" } else { "" },
                if undeclared { " !undeclared" } else { "" }
            );
            // A live server's trace has no time per call (the script's total is the server's).
            let micros = if report.round_trip_ns.is_some() {
                "-".to_string()
            } else {
                format!("{:.3}", e.elapsed_ns as f64 / 1000.0)
            };
            out.push_str(&format!(
                "{:>4} {:>5}  {:<40} {:<30} {:>9}{}\n",
                e.seq,
                e.line,
                shorten(&command.join(" "), 40),
                shorten(&display_safe(&e.reply.to_cli().replace('\n', " ")), 30),
                micros,
                marks
            ));
        }
    }
    if !report.notes.is_empty() {
        out.push_str("\nconversion notes:\n");
        for n in &report.notes {
            out.push_str(&format!("  - {}\n", display_safe(&n.to_string())));
        }
    }
    if !report.logs.is_empty() {
        out.push_str("\nredis.log:\n");
        for l in &report.logs {
            out.push_str(&format!(
                "  [{}] line {}: {}\n",
                l.level,
                l.line,
                display_bytes(&l.message)
            ));
        }
    }
    out.push_str(&format!(
        "\ntime: {:.3} ms of the {} ms busy threshold ({:.2}%)",
        report.elapsed_ns as f64 / 1e6,
        report.busy_threshold_ms,
        report.threshold_ratio() * 100.0
    ));
    if let Some(w) = report.first_write_ns {
        out.push_str(&format!("; first write at {:.3} ms", w as f64 / 1e6));
    }
    if let Some(rt) = report.round_trip_ns {
        out.push_str(&format!(
            " (server time); round trip {:.3} ms",
            rt as f64 / 1e6
        ));
    }
    out.push('\n');
    if !report.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &report.warnings {
            let at = if w.line > 0 {
                format!("line {}: ", w.line)
            } else {
                String::new()
            };
            out.push_str(&format!("  - {at}{}\n", display_safe(&w.message)));
        }
    }
    // Which server the run imitates (last, so the report's other lines keep their places).
    if let Ok(profile) = crate::engine::profile::Profile::by_id(report.profile) {
        out.push_str(&format!(
            "\nprofile: {} (as {} {})\n",
            profile.id,
            profile.product.name(),
            profile.version_tested
        ));
    }
    out
}

fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}

/// `evalbench [FILE]` without a terminal: run FILE (with its sidecar's KEYS, ARGV and seed when it has
/// one), or the bundled rate-limiter sample, in the sandbox, and explain what to do next.
pub fn run_demo(file: Option<&Path>) -> Result<(i32, String), CliError> {
    const SCRIPT: &str = include_str!("../../samples/rate_limiter.lua");
    const SIDECAR: &str = include_str!("../../samples/rate_limiter.json");
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
