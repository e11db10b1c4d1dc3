//! `evalbench debug --server`: the REPL over Redis's own LDB (engine/live/ldb.rs). The fork's cost is
//! shown and consented to first; `--sync` passes the write guard of `run --server`.

use crate::cli::common::{
    read_sandbox_input, CliError, EXIT_BACKEND, EXIT_BAD_INPUT, EXIT_ERROR_REPLY, EXIT_OK,
};
use crate::cli::debug::{queued_commands, DebugArgs, PROMPT};
use crate::engine::display::display_text;
use crate::engine::live::cluster::NodeRef;
use crate::engine::live::copy::CopyError;
use crate::engine::live::guard::dry_run;
use crate::engine::live::guarded::unkillable_places;
use crate::engine::live::guarded::{describe_concern, Concern};
use crate::engine::live::ldb::{self, LdbAnswer, LdbMode, LdbSession, NOT_REMOTE};
use crate::engine::live::{LiveBackend, LiveError, TargetSpec};
use crate::engine::reply::Reply;
use crate::engine::report::json_line;
use serde_json::json;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// What the REPL waits for: a line typed, the end of the input, or Ctrl-C.
enum Event {
    Line(String),
    Eof,
    Interrupt,
}

/// Ctrl-Cs since the session started.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::SeqCst) > 0
}

/// Ctrl-C from now on, and the lines of the process's stdin (`lines`), as events: a Ctrl-C at the
/// prompt is seen at once, not after the next line. A Ctrl-C while the server runs the script is
/// acted on when LDB stops it (a breakpoint, or LDB's own stop at the busy threshold); a second one
/// exits at once.
fn watch_events(lines: bool) -> mpsc::Receiver<Event> {
    let (tx, rx) = mpsc::channel();
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT]) {
        let tx = tx.clone();
        let _ = std::thread::Builder::new()
            .name("ctrl-c".into())
            .spawn(move || {
                for _ in signals.forever() {
                    if INTERRUPTS.fetch_add(1, Ordering::SeqCst) > 0 {
                        eprintln!("evalbench: interrupted again: exiting without ending the LDB session; the server goes on with the script without its debugger (to its end, or until its busy threshold)");
                        std::process::exit(crate::cli::common::interrupt::EXIT_INTERRUPTED);
                    }
                    eprintln!("evalbench: interrupted (Ctrl-C): aborting the script at its next stop in the LDB session (Ctrl-C again exits at once)");
                    let _ = tx.send(Event::Interrupt);
                }
            });
    }
    if lines {
        let _ = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || loop {
                let mut line = String::new();
                let event = match std::io::stdin().lock().read_line(&mut line) {
                    Ok(0) | Err(_) => Event::Eof,
                    Ok(_) => Event::Line(line),
                };
                let eof = matches!(event, Event::Eof);
                if tx.send(event).is_err() || eof {
                    break;
                }
            });
    }
    rx
}

/// The next command: a queued one, else a line typed; None at the end of the input; Err on Ctrl-C.
fn next_event(
    console: &mut Console<'_>,
    queued: &mut std::collections::VecDeque<String>,
    events: &mpsc::Receiver<Event>,
    stdin: bool,
    interactive: bool,
) -> Result<Option<String>, ()> {
    if let Some(c) = queued.pop_front() {
        if !console.json {
            let _ = writeln!(console.out, "{PROMPT}{}", display_text(&c));
        }
        return Ok(Some(c));
    }
    if !stdin {
        return Ok(None);
    }
    if interactive {
        let _ = write!(console.out, "{PROMPT}");
        let _ = console.out.flush();
    }
    match events.recv() {
        Ok(Event::Line(line)) => {
            let c = line.trim_end_matches(['\n', '\r']).to_string();
            if !interactive && !console.json {
                let _ = writeln!(console.out, "{PROMPT}{}", display_text(&c));
                let _ = console.out.flush();
            }
            Ok(Some(c))
        }
        Ok(Event::Eof) | Err(_) => Ok(None),
        Ok(Event::Interrupt) => Err(()),
    }
}

/// After Ctrl-C: abort the script where the session stopped (LDB's `abort`), and say what the
/// server answered and whether it answers PING. Returns the session's end and the words.
fn abort_session(
    session: &mut LdbSession,
    console: &mut Console<'_>,
    target: &crate::engine::live::Target,
    on: &str,
) -> (Option<Reply>, String) {
    let (ended, what) = match session.send(&[b"abort".to_vec()]) {
        Ok(answer) => {
            console.lines(&answer);
            match &answer.ended {
                Some(reply) => (
                    answer.ended.clone(),
                    format!(
                        "sent abort to the LDB session{on}, which ended with {}",
                        reply.to_cli().replace('\n', " ")
                    ),
                ),
                None => (
                    None,
                    format!("sent abort to the LDB session{on}, which did not end"),
                ),
            }
        }
        Err(e) => (
            None,
            format!("sent abort to the LDB session{on}, whose connection failed ({e})"),
        ),
    };
    let kept = match session.mode {
        LdbMode::Fork => "its changes are rolled back",
        LdbMode::Sync => "changes made before the stop are kept",
    };
    (
        ended,
        format!("{what} ({kept}); {}", ldb::ping_in_words(target)),
    )
}

fn backend_error(e: LiveError) -> CliError {
    match e {
        // The server's own refusal (SCRIPT DEBUG answered with an error): a refused run, as `run`'s.
        LiveError::Server(text) => CliError {
            code: EXIT_BAD_INPUT,
            message: text,
        },
        other => CliError {
            code: EXIT_BACKEND,
            message: other.to_string(),
        },
    }
}

/// The words LDB cannot offer, for the banner and `help`.
fn sandbox_only() -> String {
    let mut words: Vec<&str> = NOT_REMOTE.iter().map(|(w, _)| *w).collect();
    words.dedup();
    format!(
        "Not on a live server (sandbox only): {}, b LINE if/hits, b COMMAND, coverage.",
        words.join(", ")
    )
}

struct Console<'a> {
    out: &'a mut dyn Write,
    json: bool,
}

impl Console<'_> {
    fn say(&mut self, kind: &str, text: &str, line: Option<u32>) {
        if self.json {
            let mut obj = json!({"event": kind, "text": text});
            if let Some(n) = line {
                obj["line"] = json!(n);
            }
            let _ = writeln!(self.out, "{}", json_line(&obj));
        } else {
            let _ = writeln!(self.out, "{}", display_text(text));
        }
        let _ = self.out.flush();
    }

    fn lines(&mut self, answer: &LdbAnswer) {
        for l in &answer.lines {
            let (kind, line) = ldb::classify(l);
            self.say(kind, l, line);
        }
    }
}

/// After a y on a cluster: the slot map read again; when a failover moved the session's node since
/// the question, nothing is sent, that is said, and the question is to be asked again naming the
/// node it goes to now (true).
fn moved(
    live: &mut LiveBackend,
    node: &mut Option<NodeRef>,
    keys: &[Vec<u8>],
    console: &mut Console<'_>,
) -> bool {
    let Some(asked) = node.as_ref() else {
        return false;
    };
    let Some(now) = ldb::node_moved(live, keys, asked) else {
        return false;
    };
    let change = describe_concern(&Concern::NodeChanged {
        from: asked.describe(),
        to: now.describe(),
    });
    console.say(
        "info",
        &format!("{change}. Nothing was sent; asking again."),
        None,
    );
    *node = Some(now);
    true
}

/// Ask "y" on an interactive stdin; anything else (or no terminal) is a no.
fn consent(out: &mut dyn Write, stdin: &mut Option<Box<dyn BufRead + '_>>, question: &str) -> bool {
    let Some(input) = stdin.as_mut() else {
        return false;
    };
    let _ = write!(out, "{question} [y/N] ");
    let _ = out.flush();
    let mut line = String::new();
    input.read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

pub fn debug_live(
    args: &DebugArgs,
    spec: TargetSpec,
    out: &mut dyn Write,
    mut stdin: Option<Box<dyn BufRead + '_>>,
    interactive: bool,
) -> Result<i32, CliError> {
    for (given, flag, why) in [
        (
            args.keyspace.is_some(),
            "--keyspace",
            "the server's own data is used",
        ),
        (
            args.coverage,
            "--coverage",
            "LDB cannot count line executions",
        ),
    ] {
        if given {
            return Err(CliError::input(format!(
                "{flag} is for the sandbox debugger: on a live server {why}; drop {flag} or --server"
            )));
        }
    }
    let now = crate::engine::clock::Clock::now_ms(&crate::engine::clock::SystemClock);
    let input = read_sandbox_input(
        &args.script_and_args,
        args.sidecar,
        None,
        args.resp,
        args.read_only,
        now,
    )?;
    let request = input.request;
    let target = spec.resolve().map_err(|e| CliError::input(e.to_string()))?;
    let mut live = LiveBackend::connect(target).map_err(backend_error)?;
    // Decided from the key names alone: nothing is read or sent.
    if let Some(refusal) = live.cross_slot_refusal(&request) {
        return Err(CliError {
            code: EXIT_BAD_INPUT,
            message: format!("refused: {refusal}"),
        });
    }
    // A cluster that is down answers CLUSTERDOWN to a script with keys: nothing to send.
    if let Some(refusal) = live.cluster_down_refusal(&request.keys) {
        return Err(CliError {
            code: EXIT_BACKEND,
            message: format!("refused: {refusal}"),
        });
    }
    let mode = if args.sync {
        LdbMode::Sync
    } else {
        LdbMode::Fork
    };
    let mut console = Console {
        out,
        json: args.json,
    };
    // On a cluster the session runs on the node serving the KEYS' slot (one connection, one node);
    // a question answered y holds for the node it named only.
    let mut node = ldb::session_node(&mut live, &request.keys);
    let display = loop {
        let pre = ldb::preflight(&mut live, mode, node.as_ref()).map_err(backend_error)?;
        if let Some(refusal) = pre.refusal {
            return Err(CliError {
                code: EXIT_BAD_INPUT,
                message: refusal,
            });
        }
        let display = node
            .as_ref()
            .map_or_else(|| live.target.display.clone(), |n| n.describe());
        let through = match &node {
            Some(n) if n.addr != live.target.display => {
                format!(", reached through {}", live.target.display)
            }
            _ => String::new(),
        };
        console.say(
            "info",
            &format!("server: {display}{through} ({})", live.server.summary()),
            None,
        );
        match mode {
            LdbMode::Fork => {
                let memory = match (&pre.used_memory_human, pre.used_memory) {
                    (Some(h), Some(b)) => format!("used_memory {h} ({b} bytes)"),
                    _ => "used_memory unknown (INFO memory was not answered)".into(),
                };
                console.say(
                    "info",
                    &format!("SCRIPT DEBUG YES forks {} ({memory}): the fork grows by every page the server changes while the session lasts; the script's changes are rolled back.", if node.is_some() { display.as_str() } else { "the server" }),
                    None,
                );
                // Code SCRIPT KILL cannot stop keeps the fork's process running once it loops there
                // (LDB's abort cannot reach it either).
                let places = unkillable_places(&request.script, live.server.profile);
                let warning = (!places.is_empty()).then(|| format!(
                    "SCRIPT KILL cannot stop this script ({}): looping there, the fork's process keeps running (and holding its memory) until the server is restarted",
                    places.join("; ")
                ));
                let unkillable = warning.as_ref().map_or(String::new(), |w| format!("; {w}"));
                let fork = match &node {
                    Some(_) => format!("Fork {display}?"),
                    None => "Fork it?".to_string(),
                };
                let question = warning.map_or(fork.clone(), |w| format!("{w}. {fork}"));
                let asked = interactive && !args.yes && consent(console.out, &mut stdin, &question);
                if !(args.yes || asked) {
                    return Err(CliError::input(format!(
                        "refused: SCRIPT DEBUG YES would fork {display} ({memory}){unkillable}; rerun with --yes to allow the fork{}",
                        if interactive { "" } else { " (stdin is not a terminal to ask on)" }
                    )));
                }
                if asked && moved(&mut live, &mut node, &request.keys, &mut console) {
                    continue;
                }
            }
            LdbMode::Sync => {
                // SCRIPT DEBUG SYNC runs the script as plain EVAL, keeps its writes and blocks the
                // server while it is stopped: whatever the dry run shows, it is not sent unasked. What
                // the guard of `run --server` finds is said, so the consent is informed.
                let mut findings = String::new();
                let mut section = |title: &str, lines: &[String]| {
                    findings.push_str(&format!("\n  {title}"));
                    for l in lines {
                        findings.push_str(&format!("\n    {l}"));
                    }
                };
                let places = unkillable_places(&request.script, live.server.profile);
                if !places.is_empty() {
                    // Not dry-run: the sandbox would run the same code.
                    section(
                        "SCRIPT KILL cannot stop it (the server may need a restart):",
                        &places,
                    );
                } else {
                    match dry_run(&mut live, &request, now) {
                        Ok(run) => {
                            let in_c = crate::engine::live::guarded::stopped_in_c(&run.report);
                            if !in_c.is_empty() {
                                section(
                                    "SCRIPT KILL cannot stop it (the server may need a restart):",
                                    &in_c,
                                );
                            }
                            if !run.writes.is_empty() {
                                section(
                                    "A dry run in the sandbox on a copy of KEYS writes:",
                                    &run.writes,
                                );
                            }
                            if !run.unseen.is_empty() {
                                section("The dry run is no preview of the server: these calls read what the copy of KEYS lacks:", &run.unseen);
                            }
                            if run.writes.is_empty() && run.unseen.is_empty() {
                                section("A dry run in the sandbox on a copy of KEYS shows no write, but it cannot vouch for the server.", &[]);
                            }
                        }
                        Err(CopyError::Live(e)) => return Err(backend_error(e)),
                        Err(e) => section(&format!("No dry run: {e}."), &[]),
                    }
                }
                let why = format!(
                    "SCRIPT DEBUG SYNC blocks {display} for every other client while the script is stopped, and keeps every write the script makes (no rollback), so it always needs consent."
                );
                let start = match &node {
                    Some(_) => format!("Start it on {display}?"),
                    None => "Start it?".to_string(),
                };
                let asked = interactive
                    && !args.yes
                    && consent(
                        console.out,
                        &mut stdin,
                        &format!("{why}{findings}\n{start}"),
                    );
                if !(args.yes || asked) {
                    return Err(CliError::input(format!(
                        "refused: {why}{findings}\nNothing was sent to {display}. Rerun with --yes to allow it, or drop --sync for a forked session (SCRIPT DEBUG YES: its changes are rolled back){}.",
                        if interactive { "" } else { " (stdin is not a terminal to ask on)" }
                    )));
                }
                if asked && moved(&mut live, &mut node, &request.keys, &mut console) {
                    continue;
                }
                console.say(
                    "info",
                    "SCRIPT DEBUG SYNC: the server is blocked while the script is stopped, and the script's changes are kept.",
                    None,
                );
            }
        }
        break display;
    };
    let target = ldb::session_target(&live, node.as_ref());
    // On a cluster, the node in the words that follow (standalone: the server, as given).
    let on = node
        .as_ref()
        .map_or(String::new(), |n| format!(" on {}", n.describe()));
    // From the EVAL on, Ctrl-C ends the session on the server (abort) instead of leaving the
    // script to go on there without its debugger; the prompt reads stdin in a thread for it.
    let has_stdin = stdin.is_some();
    drop(stdin);
    let events = watch_events(has_stdin);
    let (mut session, first) = LdbSession::start(&target, mode, &request).map_err(backend_error)?;
    if !args.json {
        console.say(
            "info",
            &format!("Lua debugging session started on {display} (Redis's LDB). Type h for help."),
            None,
        );
        console.say("info", &sandbox_only(), None);
        console.say("info", "", None);
    }
    console.lines(&first);
    let mut ended = first.ended;
    let mut queued = queued_commands(args.commands.as_deref());
    // What a Ctrl-C did, once one came.
    let mut interruption: Option<String> = None;
    while ended.is_none() {
        if interrupted() {
            let (end, words) = abort_session(&mut session, &mut console, &target, &on);
            ended = end;
            interruption = Some(words);
            break;
        }
        let next = next_event(&mut console, &mut queued, &events, has_stdin, interactive);
        let Ok(next) = next else {
            continue; // Ctrl-C at the prompt: aborted at the top of the loop.
        };
        let Some(line) = next else {
            // As the sandbox REPL: out of commands, the script runs to the end (quietly).
            console.say(
                "info",
                "(no more commands: the script runs to the end)",
                None,
            );
            let mut words: &[&str] = &["b", "0"];
            loop {
                let argv: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
                let answer = session.send(&argv).map_err(backend_error)?;
                if answer.ended.is_some() {
                    ended = answer.ended;
                    break;
                }
                if interrupted() {
                    break;
                }
                words = &["c"];
            }
            continue;
        };
        let word = line.split_whitespace().next().unwrap_or("");
        let argv = match ldb::to_ldb(&line) {
            Ok(argv) if argv.is_empty() => continue,
            Ok(argv) => argv,
            Err(text) => {
                console.say("error", &text, None);
                continue;
            }
        };
        let answer = session.send(&argv).map_err(backend_error)?;
        console.lines(&answer);
        if let Some(hint) = ldb::eval_hint(&answer.lines) {
            console.say("hint", hint, None);
        }
        if matches!(word, "h" | "help") {
            console.say("help", &sandbox_only(), None);
        }
        ended = answer.ended;
    }
    if interrupted() && interruption.is_none() {
        interruption = Some(format!(
            "the session had ended by itself meanwhile; {}",
            ldb::ping_in_words(&target)
        ));
    }
    let reply = ended.unwrap_or(Reply::Nil);
    let code = if matches!(reply, Reply::Error(_)) {
        EXIT_ERROR_REPLY
    } else {
        EXIT_OK
    };
    let how = match session.mode {
        LdbMode::Fork => {
            format!("(Lua debugging session{on} ended -- dataset changes rolled back)")
        }
        LdbMode::Sync => format!("(Lua debugging session{on} ended -- dataset changes kept)"),
    };
    if args.json {
        let mut obj = json!({"event": "end", "text": how, "reply": reply.to_cli(), "error": code == EXIT_ERROR_REPLY});
        if let Some(node) = &node {
            obj["node"] = node.to_json();
        }
        let _ = writeln!(console.out, "{}", json_line(&obj));
    } else {
        console.say("info", "", None);
        console.say("info", &how, None);
        console.say("info", "", None);
        console.say("reply", &reply.to_cli(), None);
    }
    if let Some(words) = interruption {
        return Err(CliError {
            code: crate::cli::common::interrupt::EXIT_INTERRUPTED,
            message: format!("interrupted (Ctrl-C): {words}"),
        });
    }
    Ok(code)
}
