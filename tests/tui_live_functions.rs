//! The workbench on a live server's Functions, by keys: F5 on a library buffer runs the
//! guarded FCALL of the server's function (the consent dialog names it; n sends nothing, y sends
//! it; a no-writes function goes as FCALL_RO unasked; a library unlike the server's is refused),
//! Alt-U shows what loading the editor's library changes and loads it on y (Esc: nothing), and with
//! the real engine thread Esc during the dry run sends nothing and Esc on the server sends
//! FUNCTION KILL.
#![cfg(feature = "tui")]

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::guarded::Phase;
use evalbench::engine::live::{LiveBackend, TargetSpec};
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{App, Confirm, Overlay};
use evalbench::tui::config::Config;
use evalbench::tui::harness::Harness;
use evalbench::tui::inputs::InputsState;
use evalbench::tui::keymap::parse_key;
use evalbench::tui::worker::Worker;
use ratatui::crossterm::event::Event;
use std::time::{Duration, Instant};

const LIBRARY: &str = include_str!("../samples/counter_library.lua");

fn target(server: &RedisServer) -> evalbench::engine::live::Target {
    TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target")
}

fn workbench(server: &RedisServer, script: &str, keys: &[&str], argv: &[&str]) -> Harness {
    common::isolate_app_dirs();
    Harness::new(script, keys, argv, "")
        .with_live(target(server), "redis 7.0.15 test-server")
        .expect("connect")
}

fn fcalls(conn: &mut Conn) -> Vec<String> {
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("cmdstat_fcall") || l.starts_with("cmdstat_eval"))
        .map(|l| l.split(",usec=").next().unwrap_or(l).to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[test]
fn f5_on_a_library_calls_the_servers_function_guarded() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    conn.cmd(&["SET", "counter:page", "41"]);
    let mut h = workbench(&server, LIBRARY, &["counter:page"], &["1"]);

    // counter_incr has no no-writes flag and its dry run writes: the guard asks, naming FCALL.
    h.press("<F5>");
    let Some(Overlay::Confirm(Confirm::LiveFcall(_, _, function))) = &h.app.overlay else {
        panic!("the guard asks: {:?}", h.app.status)
    };
    assert_eq!(function, "counter_incr");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("┃The dry run WRITES (line 24: INCRBY counter:page 1). Nothing was    ┃"),
        "{screen}"
    );
    assert!(
        screen.contains("┃sent. y sends FCALL counter_incr with writes allowed; Esc on the    ┃"),
        "{screen}"
    );
    // n: nothing sent.
    h.press("n");
    assert_eq!(conn.cmd(&["GET", "counter:page"]), Reply::bulk("41"));
    assert_eq!(fcalls(&mut conn), Vec::<String>::new());

    // F5 then y: FCALL sent; the server's reply with the dry run's trace.
    h.press("<F5>").press("y");
    assert_eq!(conn.cmd(&["GET", "counter:page"]), Reply::bulk("42"));
    assert_eq!(fcalls(&mut conn), vec!["cmdstat_fcall:calls=1".to_string()]);
    let run = h.app.last_run.as_ref().expect("a run");
    assert!(run.live);
    assert_eq!(run.report.reply, Reply::Int(42));
    assert_eq!(run.report.trace.len(), 1);
    assert_eq!(run.report.trace[0].command[0], b"INCRBY".to_vec());
    assert_eq!(run.report.trace[0].line, 24);
    assert!(
        h.press("<A-2>").render(120, 40).contains("(integer) 42"),
        "{}",
        h.render(120, 40)
    );

    // Alt-F picks counter_get (no-writes): F5 sends FCALL_RO without asking.
    h.press("<A-f>").press("<F5>");
    assert!(
        h.app.overlay.is_none(),
        "no question for a no-writes function"
    );
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        Reply::Int(42)
    );
    assert_eq!(
        fcalls(&mut conn),
        vec![
            "cmdstat_fcall:calls=1".to_string(),
            "cmdstat_fcall_ro:calls=1".to_string()
        ]
    );

    // An edited library is not the server's: nothing is sent, the reply says how to load it.
    let edited = LIBRARY.replace("-- A function library", "-- An edited function library");
    let mut h = workbench(&server, &edited, &["counter:page"], &["1"]);
    h.press("<A-f>").press("<F5>");
    let run = h.app.last_run.as_ref().unwrap();
    assert!(!run.live);
    assert_eq!(
        run.report.reply,
        Reply::Error("evalbench: not sent: the server's library counters (which holds counter_get) differs from the editor's: Alt-U loads the editor's to the server (it shows what changes first)".into())
    );
    assert_eq!(fcalls(&mut conn).len(), 2);
}

#[test]
fn alt_u_shows_what_changes_and_loads_on_y() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    let edited = LIBRARY.replace("flags = {'no-writes'},", "flags = {},");
    let mut h = workbench(&server, &edited, &["counter:page"], &[]);

    h.press("<A-u>");
    assert!(
        matches!(
            &h.app.overlay,
            Some(Overlay::Confirm(Confirm::LoadLibrary(_)))
        ),
        "{}",
        h.app.status
    );
    let screen = h.render(120, 40);
    for line in [
        "Load library to the server",
        "library counters: replaces the server's library of that name (FUNCTION LOAD REPLACE)",
        "  flags of counter_get: no-writes -> no flags",
        "--- server: counters",
        "+++ the editor",
        "-  flags = {'no-writes'},",
        "+  flags = {},",
        "y sends FUNCTION LOAD REPLACE to the server; n or Esc: nothing is sent.",
    ] {
        assert!(screen.contains(line), "{line:?} in\n{screen}");
    }
    // Esc: nothing is loaded.
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    let code = |conn: &mut Conn| match conn.cmd(&["FUNCTION", "LIST", "WITHCODE"]) {
        Reply::Array(libs) => match &libs[0] {
            Reply::Array(fields) => fields[7].to_cli(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert!(code(&mut conn).contains("'no-writes'"));

    // Alt-U then y: loaded; the server has the editor's code.
    h.press("<A-u>").press("y");
    assert_eq!(h.app.status, "loaded library counters to the server");
    assert!(!code(&mut conn).contains("'no-writes'"));
    // Loading the same code again sends nothing.
    h.press("<A-u>");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        h.app.status,
        "nothing to load: the server's library counters has the editor's code"
    );

    // A script (not a library) is not loaded.
    let mut h = workbench(&server, "return 1", &[], &[]);
    h.press("<A-u>");
    assert_eq!(
        h.app.status,
        "Alt-U loads a function library (#!lua name=...): the editor holds a script"
    );
}

/// The real engine thread, for Esc in each phase.
struct Bench {
    app: App,
    worker: Worker,
}

const BOUND: Duration = Duration::from_secs(30);

impl Bench {
    fn new(server: &RedisServer, script: &str) -> Bench {
        common::isolate_app_dirs();
        let live = LiveBackend::connect(target(server)).expect("connect");
        let mut app = App::new(script, None, Config::default());
        app.inputs = InputsState::from_lists(&["k".to_string()], &[]);
        app.config.busy_threshold_ms = live.server.busy_threshold_ms;
        app.set_live_server("redis test-server".into());
        Bench {
            app,
            worker: Worker::start_with(Some(live)),
        }
    }

    fn press(&mut self, key: &str) {
        let effects = self
            .app
            .on_event(&Event::Key(parse_key(key).expect("key notation")));
        evalbench::tui::apply(effects, &self.worker, None);
    }

    fn wait_for(&mut self, what: &str, done: impl Fn(&Bench) -> bool) {
        let deadline = Instant::now() + BOUND;
        loop {
            while let Ok(event) = self.worker.events.try_recv() {
                self.app.on_engine_event(event);
            }
            if done(self) {
                return;
            }
            assert!(Instant::now() < deadline, "waited {BOUND:?} for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn wait_for_phase(&mut self, phase: Phase) {
        self.wait_for(&format!("phase {phase:?}"), |b| {
            b.app.running.and_then(|r| r.phase.map(|(p, _)| p)) == Some(phase)
                && b.worker.live_phase() == phase
        });
    }

    fn wait_until_finished(&mut self) {
        self.wait_for("the run to finish", |b| b.app.running.is_none());
    }
}

const SPIN_LIBRARY: &str = "#!lua name=spin\nredis.register_function{function_name = 'spin', flags = {'no-writes'},\n  callback = function(keys) local i = 0 while true do i = i + 1 end end}\n";

#[test]
fn esc_before_the_send_sends_nothing_and_on_the_server_sends_function_kill() {
    // A busy threshold of a minute: the dry run would spin that long unless Esc stops it.
    let Some(server) = RedisServer::start_with(&["--busy-reply-threshold", "60000"]) else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["FUNCTION", "LOAD", SPIN_LIBRARY]);
    let mut b = Bench::new(&server, SPIN_LIBRARY);
    b.press("<F5>");
    b.wait_for_phase(Phase::DryRun);
    b.press("<Esc>");
    assert_eq!(
        b.app.status,
        "cancelling before the script reaches the server: nothing will be sent"
    );
    b.wait_until_finished();
    assert!(
        b.app
            .status
            .starts_with("evalbench: cancelled during the dry run (after "),
        "{}",
        b.app.status
    );
    assert!(b.app.overlay.is_none());
    assert_eq!(fcalls(&mut conn), Vec::<String>::new());
    drop(b);

    // A threshold of 200 ms: the dry run stops there and the guard asks; y sends FCALL_RO, which
    // spins on the server until Esc sends FUNCTION KILL (SCRIPT KILL does not stop a function).
    assert_eq!(
        conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "200"]),
        Reply::ok()
    );
    let mut b = Bench::new(&server, SPIN_LIBRARY);
    b.press("<F5>");
    b.wait_until_finished();
    let Some(Overlay::Confirm(Confirm::LiveFcall(_, question, function))) = &b.app.overlay else {
        panic!("the guard asks: {}", b.app.status)
    };
    let text = evalbench::engine::live::fcall::question_text(question, function);
    assert!(
        text.starts_with(
            "The dry run did not complete: stopped at the busy threshold (200 ms) after "
        ),
        "{text}"
    );
    assert!(
        text.ends_with("Nothing was sent. y sends FCALL_RO spin (the server refuses any write); Esc on the server sends FUNCTION KILL. Send it to the live server? (y/n)"),
        "{text}"
    );
    b.press("y");
    b.wait_for_phase(Phase::OnServer);
    b.press("<Esc>");
    assert_eq!(
        b.app.status,
        "the function runs on the server: sending FUNCTION KILL…"
    );
    b.wait_until_finished();
    let run = b.app.last_run.as_ref().expect("a run");
    assert!(
        matches!(&run.report.reply, Reply::Error(e) if e.starts_with("ERR Script killed by user with ") && e.ends_with(" script: spin, on @user_function:3.")),
        "{:?}",
        run.report.reply
    );
    assert!(
        b.app.status.ends_with(
            "; sent FUNCTION KILL: OK; the function was stopped (the server answers PING)"
        ),
        "{}",
        b.app.status
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    assert_eq!(
        fcalls(&mut conn),
        vec!["cmdstat_fcall_ro:calls=1".to_string()]
    );
}
