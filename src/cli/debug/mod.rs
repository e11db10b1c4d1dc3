//! `evalbench debug`: a headless REPL over the engine's debugger, with LDB's words and output
//! (`redis-cli --ldb`), plus backward steps, watches, conditions and breaks on commands and keys.

/// `evalbench debug --server`: the REPL over Redis's own LDB.
pub mod live;

use crate::cli::common::report::{coverage_json, coverage_text, render_text};
use crate::cli::common::{
    read_sandbox_input, CliError, SandboxInput, EXIT_BAD_INPUT, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::engine::debug::inspect::reply_text;
use crate::engine::debug::{DebugFrontend, DebugOutput, DebugSession, Resume, Stop, StopReason};
use crate::engine::display::{display_safe, display_text};
use crate::engine::reply::{quote_bytes, Reply};
use crate::engine::report::json_line;
use crate::engine::Sandbox;
use clap::Args;
use serde_json::json;
use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

pub const DEBUG_HELP: &str = "Starts stopped at the first line, as redis-cli --ldb does; type h for the words.\nCommands come from --commands (separated by ';'), then from stdin (echoed when stdin is not a\nterminal). When they run out the script runs to the end. Ends with the run's report, as `run`.\n\nExamples:\n  evalbench debug samples/rate_limiter.lua ratelimit:alice , 10 60\n  evalbench debug --sidecar --commands \"b 14; c; p; c\" samples/rate_limiter.lua\n  echo 'n\nn\np' | evalbench debug --json script.lua k1 , a1\n  evalbench debug --server redis://127.0.0.1:6379 --yes --commands \"b 3; c; p\" script.lua k1\n  evalbench debug --function counter_incr --commands \"b 5; c; p\" samples/counter_library.lua counter:page , 5\n\nFunctions: --function NAME debugs SCRIPT as a function library (#!lua name=...): it is loaded as\nFUNCTION LOAD would (--library FILE loads more first), then FCALL NAME runs under the debugger\n(stopped at the function's first line).\n\nLive server (--server URL, or -h/-p/-a/--user/-n as redis-cli): the session runs in Redis's own LDB\n(SCRIPT DEBUG YES: the server forks, the fork runs the script and its changes are rolled back).\nThe server's used_memory is shown first and the fork needs consent (an interactive y, or --yes).\n--sync runs SCRIPT DEBUG SYNC instead (blocks the server while stopped, keeps the changes): a\nreplica refuses it, and it always needs consent (y or --yes); the write guard's findings are shown. LDB offers LDB's words only:\nback, rc, goto, watch, cond, bw, over, finish, until, b LINE if/hits, b COMMAND and --coverage\nare sandbox-only and are answered with that message.";

#[derive(Args, Debug)]
pub struct DebugArgs {
    /// The server the sandbox imitates (as `run --profile`).
    #[arg(long, value_name = "ID", default_value = "redis-7.0", value_parser = crate::cli::common::parse_profile)]
    pub profile: &'static crate::engine::profile::Profile,
    /// Seed keyspace (JSON, as `run`).
    #[arg(long, value_name = "FILE")]
    pub keyspace: Option<PathBuf>,
    /// Take KEYS, ARGV and the seed keyspace from SCRIPT.json (as `run --sidecar`).
    #[arg(long)]
    pub sidecar: bool,
    /// The caller's protocol: 2, or 3 as after HELLO 3.
    #[arg(long, value_name = "2|3", default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub resp: u8,
    /// The busy threshold in ms (time stopped does not count; 0: never).
    #[arg(long, value_name = "MS", default_value_t = crate::engine::sandbox::DEFAULT_BUSY_THRESHOLD_MS)]
    pub busy_threshold: u64,
    /// Run as EVAL_RO.
    #[arg(long)]
    pub read_only: bool,
    /// The run's memory budget in MiB, as `run --max-memory`.
    #[arg(long = "max-memory", visible_alias = "memory-limit", value_name = "MIB",
          default_value_t = (crate::engine::sandbox::DEFAULT_MEMORY_LIMIT >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    pub max_memory: u64,
    /// Debugger commands to run first, separated by ';' (then stdin).
    #[arg(long, value_name = "CMDS")]
    pub commands: Option<String>,
    /// One JSON object per line (each stop, value, output line, and the final report).
    #[arg(long)]
    pub json: bool,
    /// Count line executions and print them with the report.
    #[arg(long)]
    pub coverage: bool,
    /// Also write the session to FILE as a document to share: Markdown (.md) or a standalone HTML
    /// page (.html): the script, KEYS/ARGV, every stop with its line, stack and variables, and
    /// the result. An existing FILE is kept (exit 2) unless --overwrite.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
    /// The format of --export when FILE's extension does not say it: md or html.
    #[arg(long, value_name = "md|html", requires = "export")]
    pub export_format: Option<String>,
    /// With --export: replace FILE if it exists.
    #[arg(long, requires = "export")]
    pub overwrite: bool,
    /// Do not stop at an error that ends the script.
    #[arg(long)]
    pub no_break_on_error: bool,
    /// SCRIPT is a function library (`#!lua name=...`): load it and debug an FCALL of this function.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// With --function: load this library too, before SCRIPT (repeatable).
    #[arg(long, value_name = "FILE")]
    pub library: Vec<PathBuf>,
    /// Live server: drive Redis's own LDB there (SCRIPT DEBUG YES: a forked session, rolled back).
    #[command(flatten)]
    pub server: crate::cli::common::ServerArgs,
    /// With --server: allow the fork without asking (and, with --sync, the script's writes).
    #[arg(long)]
    pub yes: bool,
    /// With --server: SCRIPT DEBUG SYNC (blocks the server while stopped; keeps the changes).
    #[arg(long)]
    pub sync: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The Lua script file, then KEY ... [, ARG ...].
    #[arg(value_name = "SCRIPT [KEY ...] [, ARG ...]", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub script_and_args: Vec<OsString>,
}

/// The REPL's words: (words, arguments, meaning). The README table is generated from it.
pub const WORDS: &[(&str, &str, &str)] = &[
    ("h help", "", "show the words"),
    (
        "s step",
        "",
        "run the current line and stop again (steps into calls)",
    ),
    ("n next", "", "the same as step (as in LDB)"),
    (
        "o over",
        "",
        "step over: stop at the next line of this function or its caller",
    ),
    (
        "finish",
        "",
        "step out: stop in the caller, showing what the function returned",
    ),
    ("c continue", "", "run to the next breakpoint"),
    ("u until", "LINE", "run to LINE"),
    (
        "back",
        "",
        "step back to the previous line event (replays the run)",
    ),
    ("rc", "", "reverse-continue to the previous breakpoint hit"),
    ("goto", "EVENT", "go to line event EVENT (earlier or later)"),
    (
        "l list",
        "[LINE] [CTX]",
        "the source around LINE (0: the current line), CTX lines each side",
    ),
    ("w whole", "", "the whole source"),
    (
        "p print",
        "[VAR]",
        "every local of the current frame, or VAR (locals, upvalues, KEYS, ARGV)",
    ),
    (
        "b break",
        "[LINE|-LINE|0]",
        "list breakpoints, set one at LINE, remove it, remove all",
    ),
    (
        "b break",
        "LINE if EXPR",
        "a conditional breakpoint (EXPR in the frame, refused if it does not compile)",
    ),
    ("b break", "LINE hits N", "stop from the Nth hit on"),
    (
        "b break",
        "COMMAND",
        "stop before every call of a Redis command (break INCR)",
    ),
    ("bw", "KEY", "stop before a write to KEY"),
    (
        "cond",
        "LINE EXPR",
        "set the condition of the breakpoint at LINE",
    ),
    (
        "watch",
        "[EXPR|-N]",
        "list watches, add EXPR (shown at every stop), remove watch N",
    ),
    ("t trace", "", "the call stack"),
    (
        "e eval",
        "CODE",
        "run Lua in the current frame (its locals readable; writes refused)",
    ),
    (
        "r redis",
        "CMD ...",
        "run a Redis command on the current keyspace (writes refused)",
    ),
    (
        "m maxlen",
        "[LEN]",
        "cut values and replies at LEN bytes (0: never)",
    ),
    ("a abort", "", "stop the script with LDB's abort error"),
];

pub(crate) const PROMPT: &str = "lua debugger> ";

/// The next debugger command: from `queued` (--commands) first, then stdin (echoed after the
/// prompt when stdin is not a terminal, so a transcript reads as a session). None: no more.
pub(crate) fn next_command(
    out: &mut dyn Write,
    json: bool,
    queued: &mut std::collections::VecDeque<String>,
    stdin: &mut Option<Box<dyn BufRead + '_>>,
    interactive: bool,
) -> Option<String> {
    if let Some(c) = queued.pop_front() {
        if !json {
            let _ = writeln!(out, "{PROMPT}{}", display_safe(&c));
        }
        return Some(c);
    }
    let input = stdin.as_mut()?;
    if interactive {
        let _ = write!(out, "{PROMPT}");
        let _ = out.flush();
    }
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => {
            *stdin = None;
            None
        }
        Ok(_) => {
            let c = line.trim_end_matches(['\n', '\r']).to_string();
            if !interactive && !json {
                let _ = writeln!(out, "{PROMPT}{}", display_safe(&c));
            }
            Some(c)
        }
    }
}

/// `--commands` split into commands (';' separates them).
pub(crate) fn queued_commands(commands: Option<&str>) -> std::collections::VecDeque<String> {
    commands
        .unwrap_or("")
        .split(';')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The REPL as a debugger front end.
struct Repl<'a> {
    out: &'a mut dyn Write,
    json: bool,
    /// Commands still to run (--commands), then stdin.
    queued: std::collections::VecDeque<String>,
    stdin: Option<Box<dyn BufRead + 'a>>,
    interactive: bool,
    watches: Vec<String>,
    /// The last answer was a step (LDB then logs the calls made).
    stepping: bool,
    detached: bool,
    /// Every stop shown, for --export.
    stops: Vec<crate::engine::debug::StopSnapshot>,
    recording: bool,
}

impl Repl<'_> {
    fn emit(&mut self, kind: &str, text: &str, extra: serde_json::Value) {
        if self.json {
            let mut obj = json!({"event": kind, "text": text});
            if let (Some(o), serde_json::Value::Object(e)) = (obj.as_object_mut(), extra) {
                o.extend(e);
            }
            let _ = writeln!(self.out, "{}", json_line(&obj));
        } else {
            let _ = writeln!(self.out, "{}", display_text(text));
        }
        let _ = self.out.flush();
    }

    fn say(&mut self, kind: &str, text: &str) {
        self.emit(kind, text, serde_json::Value::Null);
    }

    fn next_command(&mut self) -> Option<String> {
        next_command(
            &mut *self.out,
            self.json,
            &mut self.queued,
            &mut self.stdin,
            self.interactive,
        )
    }

    fn source_line(&mut self, stop: &mut Stop<'_>, line: u32, current: bool) {
        let session = stop.session();
        let Some(code) = session.source_line(line).map(str::to_string) else {
            return;
        };
        let bp = session.breakpoint_at(line).is_some();
        let prefix = match (current, bp) {
            (true, true) => "->#",
            (true, false) => "-> ",
            (false, true) => "  #",
            (false, false) => "   ",
        };
        self.emit(
            "source",
            &format!("{prefix}{line:<3} {code}"),
            json!({"line": line, "current": current}),
        );
    }

    fn list(&mut self, stop: &mut Stop<'_>, around: u32, ctx: i64) {
        let count = stop.session().line_count();
        let (from, to) = if ctx < 0 {
            (1, count)
        } else {
            (
                (around as i64 - ctx).max(1) as u32,
                ((around as i64 + ctx).min(count as i64)) as u32,
            )
        };
        for line in from..=to {
            self.source_line(stop, line, line == stop.line());
        }
    }

    fn reason_text(reason: &StopReason) -> String {
        match reason {
            StopReason::Start | StopReason::Step => "step over".into(),
            StopReason::Breakpoint { .. } => "break point".into(),
            StopReason::RedisBreakpoint => "redis.breakpoint() called".into(),
            StopReason::Error { message } => format!("error: {message}"),
            StopReason::Command { name } => format!("before {name}"),
            StopReason::KeyWrite { key } => format!("write to {}", quote_bytes(key)),
        }
    }

    fn show_stop(&mut self, stop: &mut Stop<'_>) {
        if self.stepping {
            let calls: Vec<(String, Reply)> = stop
                .new_calls()
                .iter()
                .map(|e| {
                    let words: Vec<String> = e
                        .command
                        .iter()
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect();
                    (words.join(" "), e.reply.clone())
                })
                .collect();
            for (command, reply) in calls {
                self.say("redis", &format!("<redis> {command}"));
                self.reply(stop, &reply);
            }
        }
        if let Some(values) = stop.returned().map(<[String]>::to_vec) {
            // `finish`: what the function it left returned.
            let text = if values.is_empty() {
                "<return> (no value)".to_string()
            } else {
                format!("<return> {}", values.join(", "))
            };
            self.emit("return", &text, json!({ "values": values }));
        }
        let reason = Self::reason_text(stop.reason());
        let line = stop.line();
        self.emit(
            "stop",
            &format!("* Stopped at {line}, stop reason = {reason}"),
            json!({"line": line, "reason": reason, "event_no": stop.event()}),
        );
        self.source_line(stop, line, true);
        for i in 0..self.watches.len() {
            let expr = self.watches[i].clone();
            let text = match stop.eval(0, &expr) {
                Ok(values) => values.into_iter().next().unwrap_or_else(|| "nil".into()),
                Err(e) => format!("<error> {e}"),
            };
            self.say("watch", &format!("<watch> {} {expr} = {text}", i + 1));
        }
    }

    fn value(&mut self, stop: &mut Stop<'_>, prefix: &str, text: String) {
        self.say("value", &format!("{prefix} {text}"));
        let maxlen = stop.session().maxlen;
        if maxlen > 0 && text.ends_with(" ...") && text.len() > maxlen {
            self.say(
                "hint",
                "<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.",
            );
        }
    }

    fn reply(&mut self, stop: &mut Stop<'_>, reply: &Reply) {
        if let Reply::Error(e) = reply {
            self.say("error", &format!("<error> -{e}"));
        }
        let text = crate::engine::debug::inspect::cut(reply_text(reply), stop.session().maxlen);
        self.value(stop, "<reply>", text);
    }

    /// Run one command; Some(resume) ends the stop.
    fn command(&mut self, stop: &mut Stop<'_>, input: &str) -> Option<Resume> {
        let input = input.trim();
        let (word, rest) = match input.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (input, ""),
        };
        let args: Vec<&str> = rest.split_whitespace().collect();
        let number = |s: &str| s.parse::<i64>().ok();
        match (word, args.as_slice()) {
            ("", _) => None,
            ("h" | "help", _) => {
                self.say(
                    "help",
                    "evalbench debugger words (LDB's, plus the ones marked +):",
                );
                for (words, a, meaning) in WORDS {
                    let names: Vec<String> = words.split(' ').map(|w| w.to_string()).collect();
                    let left = format!("{} {a}", names.join("|"));
                    self.say("help", &format!("{left:<28} {meaning}"));
                }
                None
            }
            ("s" | "step" | "n" | "next", []) => Some(Resume::StepInto),
            ("o" | "over", []) => Some(Resume::StepOver),
            ("finish", []) => Some(Resume::StepOut),
            ("c" | "continue", []) => Some(Resume::Continue),
            ("u" | "until", [n]) if number(n).is_some_and(|n| n > 0) => {
                Some(Resume::RunToLine(number(n).unwrap_or(1) as u32))
            }
            ("back", []) => Some(Resume::StepBack),
            ("rc", []) => Some(Resume::ReverseContinue),
            ("goto", [n]) if number(n).is_some_and(|n| n > 0) => {
                Some(Resume::GotoEvent(number(n).unwrap_or(1) as u64))
            }
            ("a" | "abort", []) => Some(Resume::Abort),
            ("l" | "list", _) if args.len() <= 2 && args.iter().all(|a| number(a).is_some()) => {
                let mut around = args.first().and_then(|a| number(a)).unwrap_or(0);
                if around <= 0 {
                    around = stop.line() as i64;
                }
                let ctx = args.get(1).and_then(|a| number(a)).unwrap_or(5);
                self.list(stop, around as u32, ctx);
                None
            }
            ("w" | "whole", []) => {
                self.list(stop, 1, -1);
                None
            }
            ("p" | "print", []) => {
                for (name, value) in stop.print(None) {
                    self.value(stop, "<value>", format!("{name} = {value}"));
                }
                if stop.hidden_varargs(0) {
                    self.say("info", "<info> ... (varargs): not visible in Lua 5.1");
                }
                None
            }
            ("p" | "print", [name]) => {
                match stop.print(Some(name)).into_iter().next() {
                    Some((_, value)) => self.value(stop, "<value>", value),
                    None => self.say("error", "No such variable."),
                }
                None
            }
            ("b" | "break", []) => {
                let lines: Vec<u32> = stop.session().breakpoints.iter().map(|b| b.line).collect();
                if lines.is_empty() {
                    self.say("info", "No breakpoints set. Use 'b <line>' to add one.");
                } else {
                    self.say("info", &format!("{} breakpoints set:", lines.len()));
                    for line in lines {
                        self.source_line(stop, line, line == stop.line());
                        let bp = stop.session().breakpoint_at(line).cloned();
                        if let Some(bp) = bp {
                            let mut extra = Vec::new();
                            if let Some(c) = &bp.condition {
                                extra.push(format!("if {c}"));
                            }
                            if let Some(h) = bp.hit_count {
                                extra.push(format!("from hit {h}"));
                            }
                            extra.push(format!("hit {} times", stop.hits(bp.id)));
                            self.say("info", &format!("      ({})", extra.join(", ")));
                        }
                    }
                }
                let commands = stop.session().command_breaks.clone();
                for c in commands {
                    self.say("info", &format!("break before {c}"));
                }
                let keys = stop.session().key_write_breaks.clone();
                for k in keys {
                    self.say(
                        "info",
                        &format!("break before a write to {}", quote_bytes(&k)),
                    );
                }
                None
            }
            ("b" | "break", [n]) if number(n) == Some(0) => {
                let s = stop.session();
                s.breakpoints.clear();
                s.command_breaks.clear();
                s.key_write_breaks.clear();
                self.say("info", "All breakpoints removed.");
                None
            }
            ("b" | "break", [n]) if number(n).is_some_and(|n| n < 0) => {
                let line = (-number(n).unwrap_or(0)) as u32;
                let text = if stop.session().remove_breakpoint(line) {
                    "Breakpoint removed."
                } else {
                    "No breakpoint in the specified line."
                };
                self.say("info", text);
                None
            }
            ("b" | "break", [n, ..]) if number(n).is_some() => {
                let line = number(n).unwrap_or(0) as u32;
                let tail = rest[n.len()..].trim();
                let (condition, hits) = if let Some(c) = tail.strip_prefix("if ") {
                    (Some(c.trim()), None)
                } else if let Some(h) = tail.strip_prefix("hits ") {
                    match h.trim().parse::<u64>() {
                        Ok(h) if h > 0 => (None, Some(h)),
                        _ => {
                            self.say("error", "<error> hits takes a count above 0: b LINE hits N");
                            return None;
                        }
                    }
                } else if tail.is_empty() {
                    (None, None)
                } else {
                    self.say("error", "<error> b LINE [if EXPR | hits N]");
                    return None;
                };
                self.set_breakpoint(stop, line, condition, hits);
                None
            }
            ("b" | "break", [name]) if name.chars().all(|c| c.is_ascii_alphabetic()) => {
                let upper = name.to_ascii_uppercase();
                if crate::engine::commands::lookup(&name.to_ascii_lowercase()).is_none() {
                    self.say("error", &format!("<error> {upper} is not a Redis command"));
                    return None;
                }
                let s = stop.session();
                if !s.command_breaks.contains(&upper) {
                    s.command_breaks.push(upper.clone());
                }
                self.say("info", &format!("Stopping before every {upper}."));
                None
            }
            ("bw", [key]) => {
                let k = key.as_bytes().to_vec();
                let s = stop.session();
                if !s.key_write_breaks.contains(&k) {
                    s.key_write_breaks.push(k);
                }
                self.say(
                    "info",
                    &format!(
                        "Stopping before a write to {}.",
                        quote_bytes(key.as_bytes())
                    ),
                );
                None
            }
            ("cond", [n, _, ..]) if number(n).is_some_and(|n| n > 0) => {
                let cond = rest[n.len()..].trim().to_string();
                self.set_breakpoint(stop, number(n).unwrap_or(1) as u32, Some(&cond), None);
                None
            }
            ("watch", []) => {
                if self.watches.is_empty() {
                    self.say("info", "No watches. Use 'watch <expr>' to add one.");
                }
                for i in 0..self.watches.len() {
                    let expr = self.watches[i].clone();
                    let text = match stop.eval(0, &expr) {
                        Ok(v) => v.into_iter().next().unwrap_or_else(|| "nil".into()),
                        Err(e) => format!("<error> {e}"),
                    };
                    self.say("watch", &format!("<watch> {} {expr} = {text}", i + 1));
                }
                None
            }
            ("watch", [n]) if number(n).is_some_and(|n| n < 0) => {
                let i = (-number(n).unwrap_or(0)) as usize;
                if i >= 1 && i <= self.watches.len() {
                    self.watches.remove(i - 1);
                    self.say("info", "Watch removed.");
                } else {
                    self.say("error", "No such watch.");
                }
                None
            }
            ("watch", _) => {
                self.watches.push(rest.to_string());
                let i = self.watches.len();
                let text = match stop.eval(0, rest) {
                    Ok(v) => v.into_iter().next().unwrap_or_else(|| "nil".into()),
                    Err(e) => format!("<error> {e}"),
                };
                self.say("watch", &format!("<watch> {i} {rest} = {text}"));
                None
            }
            ("t" | "trace", []) => {
                let frames = stop.stack();
                for (i, f) in frames.iter().enumerate() {
                    let head = if i == 0 {
                        format!("In {}:", f.function)
                    } else {
                        format!("From {}:", f.function)
                    };
                    self.say("trace", &head);
                    self.source_line(stop, f.line, i == 0);
                }
                self.say("trace", &format!("(line event {})", stop.event()));
                None
            }
            ("e" | "eval", [_, ..]) => {
                match stop.eval(0, rest) {
                    Ok(values) => {
                        let text = values.into_iter().next().unwrap_or_else(|| "nil".into());
                        self.value(stop, "<retval>", text);
                    }
                    Err(e) => self.say("error", &format!("<error> {e}")),
                }
                None
            }
            ("r" | "redis", [_, ..]) => {
                let argv: Vec<Vec<u8>> = match crate::engine::live::ldb::split_args(rest) {
                    Ok(a) => a,
                    Err(e) => {
                        self.say("error", &format!("<error> {e}"));
                        return None;
                    }
                };
                self.say("redis", &format!("<redis> {rest}"));
                let reply = stop.redis(&argv);
                self.reply(stop, &reply);
                None
            }
            ("m" | "maxlen", []) => {
                let m = stop.session().maxlen;
                self.limit_text(m);
                None
            }
            ("m" | "maxlen", [n]) if number(n).is_some_and(|n| n >= 0) => {
                let mut m = number(n).unwrap_or(0) as usize;
                if m != 0 && m < 60 {
                    m = 60;
                }
                stop.session().maxlen = m;
                self.limit_text(m);
                None
            }
            _ => {
                self.say(
                    "error",
                    "<error> Unknown Redis Lua debugger command or wrong number of arguments.",
                );
                None
            }
        }
    }

    fn limit_text(&mut self, m: usize) {
        let text = if m == 0 {
            "<value> replies are unlimited.".to_string()
        } else {
            format!("<value> replies are truncated at {m} bytes.")
        };
        self.say("info", &text);
    }

    fn set_breakpoint(
        &mut self,
        stop: &mut Stop<'_>,
        line: u32,
        condition: Option<&str>,
        hits: Option<u64>,
    ) {
        match stop.session().add_breakpoint(line, condition, hits) {
            Ok(set) => {
                if set.line != set.asked {
                    self.say(
                        "info",
                        &format!(
                            "Line {} has no code: breakpoint set at line {}.",
                            set.asked, set.line
                        ),
                    );
                }
                self.source_line(stop, set.line, set.line == stop.line());
            }
            Err(e) => self.say("error", &format!("<error> {e}")),
        }
    }
}

impl DebugFrontend for Repl<'_> {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume {
        if self.detached {
            return Resume::Continue;
        }
        self.show_stop(stop);
        if self.recording {
            self.stops.push(stop.snapshot());
        }
        loop {
            let Some(input) = self.next_command() else {
                self.detached = true;
                self.say("info", "(no more commands: the script runs to the end)");
                return Resume::Continue;
            };
            if let Some(resume) = self.command(stop, &input) {
                self.stepping = matches!(
                    resume,
                    Resume::StepInto | Resume::StepOver | Resume::StepOut
                );
                return resume;
            }
        }
    }

    fn output(&mut self, output: DebugOutput) {
        if self.detached {
            return;
        }
        match output {
            DebugOutput::Debug { line, text } => {
                self.say("debug", &format!("<debug> line {line}: {text}"))
            }
            DebugOutput::Note(text) => self.say("info", &format!("<info> {text}")),
        }
    }
}

/// Run `evalbench debug`, writing the session to `out`; returns the exit status.
pub fn debug_command(
    args: &DebugArgs,
    out: &mut dyn Write,
    stdin: Option<Box<dyn BufRead + '_>>,
    interactive: bool,
) -> Result<i32, CliError> {
    // --server: the session runs in Redis's own LDB (debug/live.rs).
    if let Some(spec) = crate::cli::common::target::server_spec(&args.server, args.resp == 3)? {
        if args.function.is_some() || !args.library.is_empty() {
            return Err(CliError::input(
                "--function debugs in the sandbox only (Redis's LDB debugs EVAL scripts, not FCALL); drop --server",
            ));
        }
        if args.export.is_some() {
            return Err(CliError::input(
                "--export writes a sandbox session (its stops and variables); drop --server",
            ));
        }
        return crate::cli::debug::live::debug_live(args, spec, out, stdin, interactive);
    }
    if args.yes || args.sync {
        return Err(CliError::input(
            "--yes and --sync are for a live server's LDB; give --server URL (or -h/-p) too",
        ));
    }
    let mut sandbox = Sandbox::new();
    sandbox.set_profile(args.profile);
    sandbox.config.busy_threshold_ms = args.busy_threshold;
    // One budget for the run and what it reads (the seed) and writes (an export).
    crate::engine::budget::set_limit((args.max_memory as usize).saturating_mul(1 << 20));
    sandbox.config.memory_limit = crate::engine::budget::limit();
    let SandboxInput {
        script_path,
        request,
        seed,
    } = read_sandbox_input(
        &args.script_and_args,
        args.sidecar,
        args.keyspace.as_deref(),
        args.resp,
        args.read_only,
        sandbox.now_ms(),
    )?;
    if !args.library.is_empty() && args.function.is_none() {
        return Err(CliError::input(
            "--library loads a function library for --function NAME; add --function",
        ));
    }
    let script = &request.script;
    let parsed = match &args.function {
        Some(_) => DebugSession::for_library(script),
        None => DebugSession::new(script),
    };
    let mut session = match parsed {
        Ok(s) => s,
        Err((message, line)) => {
            let text = match line {
                Some(n) => {
                    let msg = message
                        .strip_prefix(&format!("user_script:{n}: "))
                        .or_else(|| message.strip_prefix(&format!("user_function:{n}: ")))
                        .unwrap_or(&message);
                    let code = String::from_utf8_lossy(script)
                        .split('\n')
                        .nth(n as usize - 1)
                        .unwrap_or("")
                        .trim_end_matches('\r')
                        .to_string();
                    format!(
                        "{}:{n}: the script does not compile: {msg}\n-> {n:<3} {code}",
                        script_path.display()
                    )
                }
                None => format!("{}: {message}", script_path.display()),
            };
            return Err(CliError {
                code: EXIT_BAD_INPUT,
                message: text,
            });
        }
    };
    session.coverage = args.coverage;
    session.break_on_error = !args.no_break_on_error;
    sandbox.set_db0(seed);
    // --function: the libraries are loaded as FUNCTION LOAD would, then the FCALL is debugged.
    let call = match &args.function {
        Some(name) => Some(load_libraries(
            &mut sandbox,
            args,
            &script_path,
            &request,
            name,
        )?),
        None => None,
    };
    // The export's name and target are checked before the session starts.
    let export = match &args.export {
        Some(file) => {
            let format =
                crate::cli::common::export::export_format(file, args.export_format.as_deref())?;
            crate::cli::common::export::check_target(file, args.overwrite)?;
            Some((file, format))
        }
        None => None,
    };
    let queued = queued_commands(args.commands.as_deref());
    let json_mode = args.json;
    let mut repl = Repl {
        out,
        json: json_mode,
        queued,
        stdin,
        interactive,
        watches: Vec::new(),
        stepping: false,
        detached: false,
        stops: Vec::new(),
        recording: args.export.is_some(),
    };
    if !json_mode {
        repl.say(
            "info",
            "Lua debugging session started (evalbench sandbox). Type h for help.",
        );
        repl.say("info", "");
    }
    let report = match &call {
        Some(call) => sandbox.debug_function(call, &mut session, &mut repl),
        None => sandbox.debug(&request, &mut session, &mut repl),
    };
    let code = if report.run.is_error() {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    if let Some((file, format)) = export {
        let title = script_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = crate::engine::export::session::render(
            format,
            &crate::engine::export::session::SessionExport {
                title: &title,
                script: &request.script,
                keys: &request.keys,
                argv: &request.argv,
                stops: &repl.stops,
                end: Some(report.run.reply.to_cli()),
            },
        );
        crate::cli::common::export::write_text(file, &text, args.overwrite)?;
    }
    if json_mode {
        let mut obj = report.run.to_json();
        if let Some(c) = &report.coverage {
            let (ran, not_run) = coverage_json(&session, c);
            obj["coverage"] = ran;
            obj["coverage_not_run"] = not_run;
        }
        let line = json!({"event": "end", "report": obj});
        let _ = writeln!(repl.out, "{}", json_line(&line));
    } else {
        let _ = writeln!(repl.out);
        let _ = write!(
            repl.out,
            "{}",
            display_text(&render_text(&report.run, &request))
        );
        if let Some(c) = &report.coverage {
            let _ = write!(repl.out, "{}", coverage_text(&session, c));
        }
    }
    let _ = repl.out.flush();
    Ok(code)
}

/// `--function`: FUNCTION LOAD the `--library` files, then SCRIPT; the FCALL to debug.
fn load_libraries(
    sandbox: &mut Sandbox,
    args: &DebugArgs,
    script_path: &std::path::Path,
    request: &crate::engine::RunRequest,
    name: &str,
) -> Result<crate::engine::FunctionCall, CliError> {
    crate::cli::common::load_function_libraries(sandbox, &args.library, script_path, request, name)
}

/// `evalbench debug` on the process's stdin and stdout.
pub fn debug_main(args: &DebugArgs) -> Result<(i32, String), CliError> {
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut stdout = std::io::stdout();
    let input: Box<dyn BufRead> = Box::new(stdin.lock());
    let code = debug_command(args, &mut stdout, Some(input), interactive)?;
    Ok((code, String::new()))
}
