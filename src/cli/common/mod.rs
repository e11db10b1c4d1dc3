//! What every subcommand shares: exit statuses, the error type, connection options, the inputs of
//! a sandbox run. It names no subcommand.

/// `--export FILE` of run, race and debug.
pub mod export;
/// The guarded FCALL on a live server and its report (`function call`, `run --function --server`).
pub mod fcall;
/// Ctrl-C during live runs: SCRIPT KILL, and its verdict.
pub mod interrupt;
/// The text report of a run, and line coverage.
pub mod report;
/// The live server the connection options name.
pub mod target;

use crate::engine::display::display_text;
use crate::engine::formats::FormatError;
use crate::engine::formats::{
    load_keyspace, load_sidecar_keyspace, read_sidecar_text, sidecar_path,
};
use crate::engine::input::{self, read_bounded, read_bounded_text};
use crate::engine::keyspace::Db;
use crate::engine::{Protocol, RunRequest, Sandbox};
use clap::Args;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR_REPLY: i32 = 1;
pub const EXIT_BAD_INPUT: i32 = 2;
pub const EXIT_BACKEND: i32 = 3;

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

impl From<FormatError> for CliError {
    fn from(e: FormatError) -> CliError {
        CliError::input(e.message)
    }
}

/// A live server's failure (the connection, a lost reply): exit status 3.
pub fn backend_error(e: crate::engine::live::LiveError) -> CliError {
    CliError {
        code: EXIT_BACKEND,
        message: e.to_string(),
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

/// Read the script a command names; a missing file, a device or FIFO, or an oversized file is bad input.
pub fn read_script(path: &Path) -> Result<Vec<u8>, CliError> {
    read_bounded(path, &input::SCRIPT).map_err(|e| {
        // The script is the first word after the options, and words after it may start with `-`
        // (ARGV values), so an option the command does not know arrives here as the script's path.
        let word = path.to_string_lossy();
        if word.len() > 1 && word.starts_with('-') && !path.exists() {
            CliError::input(format!(
                "unknown option {word}: options go before the script, and --help lists this command's options"
            ))
        } else {
            CliError::input(e.to_string())
        }
    })
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

pub fn write_out(out: &mut dyn std::io::Write, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(output_error)
}

pub fn output_error(e: std::io::Error) -> CliError {
    CliError {
        code: EXIT_BACKEND,
        message: format!("cannot write the report: {e}"),
    }
}
