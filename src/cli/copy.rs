//! `evalbench copy`: keys of a live server as keyspace JSON, read with bounds.

use crate::cli::common::target::server_spec;
use crate::cli::common::{
    backend_error, os_bytes, CliError, ServerArgs, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::keyspace::{keyspace_to_json, Db};
use crate::engine::live::copy::{copy_keys, CopyError, CopyLimits};
use crate::engine::live::LiveBackend;
use clap::Args;
use std::ffi::OsString;

pub const COPY_HELP: &str = "Prints keyspace JSON (the --keyspace format) with each key's type, value and TTL, to debug a\nscript offline against real data. Reads are bounded: a key above 10,000 elements or 1 MiB is refused\n(exit 2) with the reason; missing keys are left out.\n\nExamples:\n  evalbench copy --server redis://10.0.0.5:6379 user:42 cart:42 > seed.json\n  evalbench run --keyspace seed.json checkout.lua user:42 cart:42 , 3";

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

/// `evalbench copy`: keys from a live server as keyspace JSON.
pub fn copy_command(args: &CopyArgs) -> Result<(i32, String), CliError> {
    let spec = server_spec(&args.server, false)?.unwrap_or_default();
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let mut live = LiveBackend::connect(target).map_err(backend_error)?;
    let keys: Vec<Vec<u8>> = args.keys.iter().map(os_bytes).collect();
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
