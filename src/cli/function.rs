//! `evalbench function list|show|load|call --server URL`: a live server's function
//! libraries, and `run --function NAME LIBRARY.lua --server URL`. Calls and loads go through the
//! engine's guards (engine/live/fcall.rs, function_load.rs); this file only reads options and prints.

use crate::cli::common::fcall::{live_call, protocol, server_line};
use crate::cli::common::target::server_spec;
use crate::cli::common::{
    backend_error, os_bytes, read_script, split_keys_and_argv, CliError, ServerArgs,
    EXIT_BAD_INPUT, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::display::display_text;
use crate::engine::live::function_load::{load, plan_load, LoadRefusal};
use crate::engine::live::functions::{library_with_code, list};
use crate::engine::live::LiveBackend;
use crate::engine::reply::Reply;
use crate::engine::FunctionCall;
use clap::{Args, Subcommand};
use serde_json::json;
use std::ffi::OsString;
use std::path::PathBuf;

pub const FUNCTION_HELP: &str = "The function libraries of a live server (Redis 7+ Functions).\n\n  list   the libraries and their functions (FUNCTION LIST)\n  show   one library's code as the server has it (FUNCTION LIST WITHCODE LIBRARYNAME)\n  load   load a library file (FUNCTION LOAD [REPLACE]): prints what changes (functions added,\n         removed, flags changed, a line diff of the code) and loads only with --yes; refused on a replica;\n         --every-master loads it on each master of a cluster (one --yes for all; --json: an object per master)\n  call   FCALL a function, guarded as `run --server` guards a script: a dry run of the server's library\n         in the sandbox on a copy of KEYS first; a function not flagged no-writes needs --yes\n\nFUNCTION DUMP, RESTORE, DELETE and FLUSH are not offered.\nExit status: 0 done, 1 error reply, 2 bad usage or refused (nothing sent), 3 backend failure.\n\nExamples:\n  evalbench function list --server redis://127.0.0.1:6379\n  evalbench function show --server redis://127.0.0.1:6379 counters > counters.lua\n  evalbench function load --server redis://127.0.0.1:6379 samples/counter_library.lua\n  evalbench function load --server redis://127.0.0.1:6379 --replace --yes samples/counter_library.lua\n  evalbench function call --server redis://127.0.0.1:6379 --yes counter_incr counter:page , 5\n  evalbench function call --server redis://127.0.0.1:6379 --read-only counter_get counter:page";

#[derive(Args, Debug)]
pub struct FunctionArgs {
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    #[command(subcommand)]
    pub action: FunctionAction,
}

#[derive(Subcommand, Debug)]
pub enum FunctionAction {
    /// List the server's libraries and their functions with flags (FUNCTION LIST).
    #[command(disable_help_flag = true, after_help = FUNCTION_HELP)]
    List(ListArgs),
    /// Print one library's code as the server has it.
    #[command(disable_help_flag = true, after_help = FUNCTION_HELP)]
    Show(ShowArgs),
    /// Load a library file to the server: shows what changes, loads only with --yes.
    #[command(disable_help_flag = true, after_help = FUNCTION_HELP)]
    Load(LoadArgs),
    /// FCALL (or FCALL_RO) a function of the server, guarded, with the dry run's trace.
    #[command(disable_help_flag = true, after_help = FUNCTION_HELP)]
    Call(CallArgs),
}

#[derive(Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The library's name (exactly).
    #[arg(value_name = "LIBRARY")]
    pub library: String,
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Replace the server's library of the same name (FUNCTION LOAD REPLACE).
    #[arg(long)]
    pub replace: bool,
    /// Load it (without --yes, only what would change is printed).
    #[arg(long)]
    pub yes: bool,
    /// On a cluster: load it on every master (each has its own libraries), one --yes for all.
    #[arg(long)]
    pub every_master: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The library file (`#!lua name=...`).
    #[arg(value_name = "LIBRARY.lua")]
    pub file: PathBuf,
}

#[derive(Args, Debug)]
pub struct CallArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Send it: a function not flagged no-writes (or a slow dry run) is refused without it.
    #[arg(long)]
    pub yes: bool,
    /// FCALL_RO: the server refuses any write (and a function not flagged no-writes).
    #[arg(long)]
    pub read_only: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// The caller's protocol: 2, or 3 as after HELLO 3.
    #[arg(long, value_name = "2|3", default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub resp: u8,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The function's name, then KEY ... [, ARG ...].
    #[arg(value_name = "NAME [KEY ...] [, ARG ...]", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub name_and_args: Vec<OsString>,
}

fn connect(server: &ServerArgs, resp3: bool) -> Result<LiveBackend, CliError> {
    let spec = server_spec(server, resp3)?.ok_or_else(|| {
        CliError::input("evalbench function works on a live server: give --server URL (or -h/-p)")
    })?;
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    LiveBackend::connect(target).map_err(backend_error)
}

pub fn function_main(args: &FunctionArgs) -> Result<(i32, String), CliError> {
    match &args.action {
        FunctionAction::List(a) => list_command(a),
        FunctionAction::Show(a) => show_command(a),
        FunctionAction::Load(a) => load_command(a),
        FunctionAction::Call(a) => call_command(a),
    }
}

fn list_command(args: &ListArgs) -> Result<(i32, String), CliError> {
    let mut live = connect(&args.server, false)?;
    let (mut libraries, total) = list(&mut live).map_err(backend_error)?;
    // The server lists a library's functions in its hash order: by name, for a stable listing.
    for l in &mut libraries {
        l.functions.sort_by(|a, b| a.name.cmp(&b.name));
    }
    if args.json {
        let libs: Vec<serde_json::Value> = libraries
            .iter()
            .map(|l| {
                json!({
                    "library": l.name,
                    "engine": l.engine,
                    "functions": l.functions.iter().map(|f| json!({
                        "name": f.name, "flags": f.flags, "description": f.description,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let obj = json!({"server": server_line(&live), "libraries": libs, "total": total});
        return Ok((
            EXIT_OK,
            format!("{}\n", serde_json::to_string_pretty(&obj).expect("JSON")),
        ));
    }
    let mut out = format!("server: {}\n", server_line(&live));
    for l in &libraries {
        out.push_str(&format!("{} ({})\n", l.name, l.engine));
        for f in &l.functions {
            let flags = if f.flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", f.flags.join(","))
            };
            let description = f
                .description
                .as_ref()
                .map(|d| format!("  {d}"))
                .unwrap_or_default();
            out.push_str(&format!("  {}{flags}{description}\n", f.name));
        }
    }
    out.push_str(&match total {
        0 => "no libraries\n".to_string(),
        1 => "1 library\n".to_string(),
        n if n > libraries.len() => format!("{n} libraries ({} listed)\n", libraries.len()),
        n => format!("{n} libraries\n"),
    });
    Ok((EXIT_OK, display_text(&out).into_owned()))
}

fn show_command(args: &ShowArgs) -> Result<(i32, String), CliError> {
    use std::io::IsTerminal;
    let mut live = connect(&args.server, false)?;
    let Some((_, code)) = library_with_code(&mut live, &args.library).map_err(backend_error)?
    else {
        return Err(CliError::input(format!(
            "{} has no library named {} (evalbench function list --server URL lists them)",
            live.target.display, args.library
        )));
    };
    let text = String::from_utf8_lossy(&code).into_owned();
    // Redirected to a file it is the code as is; on a terminal no control character reaches it.
    let text = if std::io::stdout().is_terminal() {
        display_text(&text).into_owned()
    } else {
        text
    };
    Ok((
        EXIT_OK,
        if text.ends_with('\n') {
            text
        } else {
            text + "\n"
        },
    ))
}

fn load_refusal(e: LoadRefusal) -> CliError {
    match e {
        LoadRefusal::Live(e) => backend_error(e),
        other => CliError::input(format!("refused: {other}. Nothing was sent.")),
    }
}

fn load_command(args: &LoadArgs) -> Result<(i32, String), CliError> {
    let code = read_script(&args.file)?;
    let mut live = connect(&args.server, false)?;
    let label = args.file.display().to_string();
    let plan = plan_load(&mut live, &code, &label).map_err(load_refusal)?;
    if args.every_master {
        return load_every_master_command(args, &mut live, &plan, &code);
    }
    let summary = plan.summary();
    let refuse = |message: String, summary: &str| {
        eprintln!("evalbench: {}", display_text(&message));
        Ok((EXIT_BAD_INPUT, display_text(summary).into_owned()))
    };
    let server = server_line(&live);
    let json_of = |sent: bool, reply: Option<&Reply>| {
        let mut obj = json!({
            "server": server,
            "library": plan.library,
            "exists": plan.exists,
            "same_code": plan.same_code,
            "functions": plan.functions.iter().map(|f| json!({"name": f.name, "flags": f.flags})).collect::<Vec<_>>(),
            "added": plan.added,
            "removed": plan.removed,
            "flags_changed": plan.flags_changed.iter().map(|(f, b, a)| json!({"function": f, "before": b, "after": a})).collect::<Vec<_>>(),
            "diff": plan.diff,
            "sandbox_error": plan.sandbox_error,
            "cluster_node": plan.cluster_node,
            "sent": sent,
        });
        if let Some(r) = reply {
            obj["reply"] = r.to_json();
        }
        format!("{}\n", serde_json::to_string_pretty(&obj).expect("JSON"))
    };
    let shown = |sent: bool, reply: Option<&Reply>| {
        if args.json {
            json_of(sent, reply)
        } else {
            display_text(&summary).into_owned()
        }
    };
    if plan.exists && !args.replace {
        return refuse(
            format!(
                "refused: {} already has a library named {}: --replace replaces it (FUNCTION LOAD REPLACE; the changes are above). Nothing was sent.",
                live.target.display, plan.library
            ),
            &shown(false, None),
        );
    }
    if plan.same_code {
        return Ok((
            EXIT_OK,
            shown(false, None)
                + if args.json {
                    ""
                } else {
                    "nothing sent: the server's library has this code already\n"
                },
        ));
    }
    if !args.yes {
        return refuse(
            format!(
                "refused: FUNCTION LOAD writes to {} (the changes are above). Nothing was sent. Rerun with --yes to load it.",
                live.target.display
            ),
            &shown(false, None),
        );
    }
    let reply = load(&mut live, &plan, &code, args.replace).map_err(load_refusal)?;
    let code = if reply.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    if args.json {
        return Ok((code, json_of(true, Some(&reply))));
    }
    let answer = match &reply {
        Reply::Bulk(name) => format!("loaded: {}\n", String::from_utf8_lossy(name)),
        other => format!("{}\n", other.to_cli()),
    };
    Ok((code, display_text(&(summary + &answer)).into_owned()))
}

/// `function load --every-master`: each master's state, one consent, each master's answer.
fn load_every_master_command(
    args: &LoadArgs,
    live: &mut crate::engine::live::LiveBackend,
    plan: &crate::engine::live::function_load::LoadPlan,
    code: &[u8],
) -> Result<(i32, String), CliError> {
    use crate::engine::live::function_load::{load_every_master, masters_with};
    if !live.server.cluster {
        return Err(CliError::input(format!(
            "--every-master loads a library on each master of a cluster; {} is not a cluster (drop --every-master)",
            live.target.display
        )));
    }
    let masters = masters_with(live, &plan.library, code).map_err(load_refusal)?;
    // --json: the library and each master's state, what was sent and its answer.
    let server = server_line(live);
    let json_of = |loads: &[crate::engine::live::function_load::MasterLoad]| {
        let nodes: Vec<serde_json::Value> = masters
            .iter()
            .map(|m| {
                let mut obj = json!({"node": m.node, "addr": m.addr, "state": m.state(), "sent": false, "reply": null, "error": null});
                if let Some(load) = loads.iter().find(|l| l.addr == m.addr) {
                    for (k, v) in load.to_json().as_object().into_iter().flatten() {
                        obj[k] = v.clone();
                    }
                }
                obj
            })
            .collect();
        let obj = json!({
            "server": server,
            "library": plan.library,
            "masters": nodes,
            "loaded": loads.iter().filter(|l| l.sent && !l.failed()).count(),
            "failed": loads.iter().filter(|l| l.failed()).count(),
        });
        format!("{}\n", serde_json::to_string_pretty(&obj).expect("JSON"))
    };
    let mut text = format!(
        "library {}: on {} masters\n",
        if plan.library.is_empty() {
            "(no name= in the shebang)"
        } else {
            &plan.library
        },
        masters.len()
    );
    for m in &masters {
        text.push_str(&format!("  {}\n", m.describe()));
    }
    let refuse = |message: String, text: &str| {
        eprintln!("evalbench: {}", display_text(&message));
        let shown = if args.json {
            json_of(&[])
        } else {
            display_text(text).into_owned()
        };
        Ok((EXIT_BAD_INPUT, shown))
    };
    let replaced: Vec<&str> = masters
        .iter()
        .filter(|m| m.exists && !m.same_code)
        .map(|m| m.node.as_str())
        .collect();
    if !replaced.is_empty() && !args.replace {
        return refuse(
            format!(
                "refused: {} already {} a library named {} with other code: --replace replaces it (FUNCTION LOAD REPLACE). Nothing was sent.",
                replaced.join(", "),
                if replaced.len() == 1 { "has" } else { "have" },
                plan.library
            ),
            &text,
        );
    }
    if masters.iter().all(|m| m.same_code) {
        if args.json {
            return Ok((EXIT_OK, json_of(&[])));
        }
        return Ok((
            EXIT_OK,
            display_text(&(text + "nothing sent: every master has this code already\n"))
                .into_owned(),
        ));
    }
    if !args.yes {
        return refuse(
            format!(
                "refused: FUNCTION LOAD writes to {} (their state is above). Nothing was sent. Rerun with --yes to load it on each.",
                match masters.iter().filter(|m| !m.same_code).count() {
                    1 => "1 master".to_string(),
                    n => format!("{n} masters"),
                }
            ),
            &text,
        );
    }
    let loads = load_every_master(live, &plan.library, code, args.replace).map_err(load_refusal)?;
    let code = if loads.iter().any(|l| l.failed()) {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    if args.json {
        return Ok((code, json_of(&loads)));
    }
    for load in &loads {
        text.push_str(&format!("{}: {}\n", load.node, load.describe()));
    }
    Ok((code, display_text(&text).into_owned()))
}

fn call_command(args: &CallArgs) -> Result<(i32, String), CliError> {
    let all: Vec<Vec<u8>> = args.name_and_args.iter().map(os_bytes).collect();
    let name = String::from_utf8_lossy(&all[0]).into_owned();
    let (keys, argv) = split_keys_and_argv(&all[1..]);
    let mut live = connect(&args.server, args.resp == 3)?;
    let call = FunctionCall {
        name,
        keys,
        argv,
        protocol: protocol(args.resp),
        read_only: args.read_only,
    };
    live_call(&mut live, &call, args.yes, args.json, None)
}
