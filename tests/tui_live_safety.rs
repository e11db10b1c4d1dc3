//! Live runs never surprise: the workbench's App driven by keys with the real engine
//! thread (`Worker`) against a redis-server the test starts. Esc in each phase of a live run (at the
//! guard's question, during the dry run, on the server before and after the script wrote, after
//! the run), a dry run that did not complete, a key above the copy limit sent as EVAL_RO with
//! consent. The server's INFO commandstats and SLOWLOG prove what ran. Phases are waited for
//! (bounded), never slept on.
#![cfg(feature = "tui")]

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::guarded::Phase;
use evalbench::engine::live::{LiveBackend, TargetSpec};
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{App, Confirm, Overlay};
use evalbench::tui::config::Config;
use evalbench::tui::inputs::InputsState;
use evalbench::tui::keymap::parse_key;
use evalbench::tui::worker::Worker;
use ratatui::crossterm::event::Event;
use std::time::{Duration, Instant};

/// How long a phase or a result may take to come on a loaded machine.
const BOUND: Duration = Duration::from_secs(30);

struct Bench {
    app: App,
    worker: Worker,
}

impl Bench {
    fn new(server: &RedisServer, script: &str, keys: &[&str]) -> Bench {
        common::isolate_app_dirs();
        let target = TargetSpec {
            url: Some(format!("redis://127.0.0.1:{}", server.port)),
            ..TargetSpec::default()
        }
        .resolve()
        .expect("target");
        let live = LiveBackend::connect(target).expect("connect");
        let mut app = App::new(script, None, Config::default());
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        app.inputs = InputsState::from_lists(&keys, &[]);
        app.config.busy_threshold_ms = live.server.busy_threshold_ms;
        app.set_live_server("redis test-server".into());
        Bench {
            app,
            worker: Worker::start_with(Some(live)),
        }
    }

    /// Press a key (keymap notation) and hand the effects to the engine thread.
    fn press(&mut self, key: &str) -> &mut Self {
        let key = parse_key(key).expect("key notation");
        let effects = self.app.on_event(&Event::Key(key));
        evalbench::tui::apply(effects, &self.worker, None);
        self
    }

    fn pump(&mut self) {
        while let Ok(event) = self.worker.events.try_recv() {
            self.app.on_engine_event(event);
        }
    }

    /// Wait (bounded) until `done` holds, handing the engine's events to the App meanwhile.
    fn wait_for(&mut self, what: &str, done: impl Fn(&Bench) -> bool) {
        let deadline = Instant::now() + BOUND;
        loop {
            self.pump();
            if done(self) {
                return;
            }
            assert!(Instant::now() < deadline, "waited {BOUND:?} for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn phase(&self) -> Option<Phase> {
        self.app.running.and_then(|r| r.phase.map(|(p, _)| p))
    }

    fn wait_for_phase(&mut self, phase: Phase) {
        self.wait_for(&format!("phase {phase:?}"), |b| {
            b.phase() == Some(phase) && b.worker.live_phase() == phase
        });
    }

    fn wait_until_finished(&mut self) {
        self.wait_for("the run to finish", |b| b.app.running.is_none());
    }

    fn question(&self) -> Option<String> {
        match &self.app.overlay {
            Some(Overlay::Confirm(Confirm::LiveSend(_, q))) => Some(q.text()),
            _ => None,
        }
    }

    fn screen(&self) -> String {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).expect("terminal");
        let theme = evalbench::tui::theme::Theme::dark();
        terminal
            .draw(|frame| evalbench::tui::ui::draw(frame, &self.app, &theme))
            .expect("draw");
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }
}

/// A server that logs every command in SLOWLOG, with this busy threshold.
fn server(busy_threshold_ms: u64) -> Option<RedisServer> {
    let server = RedisServer::start_with(&[
        "--busy-reply-threshold",
        &busy_threshold_ms.to_string(),
        "--slowlog-log-slower-than",
        "0",
        "--slowlog-max-len",
        "10000",
    ])?;
    Some(server)
}

/// The calls of every script command (EVAL, EVAL_RO, EVALSHA, EVALSHA_RO) in INFO commandstats.
fn script_calls(conn: &mut Conn) -> Vec<String> {
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("cmdstat_eval"))
        .map(|l| l.split(",usec=").next().unwrap_or(l).to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The commands SLOWLOG logged (all of them: the log threshold is 0), their names upper-cased.
fn slowlog_commands(conn: &mut Conn) -> Vec<String> {
    let Reply::Array(entries) = conn.cmd(&["SLOWLOG", "GET", "10000"]) else {
        panic!("SLOWLOG GET")
    };
    entries
        .iter()
        .filter_map(|e| match e {
            Reply::Array(fields) => match fields.get(3) {
                Some(Reply::Array(args)) => match args.first() {
                    Some(Reply::Bulk(name)) => {
                        Some(String::from_utf8_lossy(name).to_ascii_uppercase())
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn nothing_ran(conn: &mut Conn) {
    assert_eq!(script_calls(conn), Vec::<String>::new());
    let scripts: Vec<String> = slowlog_commands(conn)
        .into_iter()
        .filter(|c| c.starts_with("EVAL") || c.starts_with("FCALL"))
        .collect();
    assert_eq!(scripts, Vec::<String>::new());
}

const SPIN: &str = "local i = 0 while true do i = i + 1 end";

#[test]
fn esc_during_the_dry_run_sends_nothing() {
    // A busy threshold of a minute: the dry run would spin that long unless Esc stops it.
    let Some(server) = server(60_000) else {
        return;
    };
    let mut conn = server.connect();
    let mut b = Bench::new(&server, SPIN, &["k"]);
    b.press("<F5>");
    b.wait_for_phase(Phase::DryRun);
    assert!(b.screen().contains(" dry run "), "{}", b.screen());
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
    assert!(
        b.app
            .status
            .ends_with(" ms): nothing was sent to the server"),
        "{}",
        b.app.status
    );
    assert!(b.app.overlay.is_none(), "no question after a cancel");
    nothing_ran(&mut conn);
}

#[test]
fn a_dry_run_stopped_at_the_threshold_asks_then_esc_on_the_server_kills_it() {
    let Some(server) = server(200) else {
        return;
    };
    let mut conn = server.connect();
    let mut b = Bench::new(&server, SPIN, &["k"]);

    // The dry run stops at the server's threshold: nothing is sent, the guard asks with its time.
    b.press("<F5>");
    b.wait_until_finished();
    let question = b.question().expect("the guard asks");
    assert!(
        question.starts_with(
            "The dry run did not complete: stopped at the busy threshold (200 ms) after "
        ),
        "{question}"
    );
    assert!(
        question.ends_with(" ms (on the server it would keep every other client waiting until it ends or is killed). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to the live server? (y/n)"),
        "{question}"
    );
    let screen = b.screen();
    assert!(
        screen.contains("The dry run did not complete: stopped at the busy"),
        "{screen}"
    );
    // Esc at the question: nothing is sent.
    b.press("<Esc>");
    assert!(b.app.overlay.is_none());
    nothing_ran(&mut conn);

    // Asked again, y: sent as EVAL_RO without a second dry run; on the server it spins until Esc.
    b.press("<F5>");
    b.wait_until_finished();
    assert!(b.question().is_some());
    b.press("y");
    b.wait_for_phase(Phase::OnServer);
    assert!(
        b.screen().contains(" on the server "),
        "the counter names the phase: {}",
        b.screen()
    );
    b.press("<Esc>");
    assert_eq!(
        b.app.status,
        "the script runs on the server: sending SCRIPT KILL…"
    );
    b.wait_until_finished();
    let run = b.app.last_run.as_ref().expect("a run");
    assert!(
        matches!(&run.report.reply, Reply::Error(e) if e.contains("Script killed by user with SCRIPT KILL")),
        "{:?}",
        run.report.reply
    );
    assert!(run.dry_run_ns.is_none(), "no second dry run after consent");
    assert!(
        b.app
            .status
            .ends_with("; sent SCRIPT KILL: OK; the script was stopped (the server answers PING)"),
        "{}",
        b.app.status
    );
    assert_eq!(
        script_calls(&mut conn),
        vec![
            "cmdstat_eval_ro:calls=1".to_string(),
            "cmdstat_evalsha_ro:calls=1".to_string()
        ]
    );
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));

    // After the run Esc is no cancel: no SCRIPT KILL goes out.
    let effects = b.app.on_event(&Event::Key(parse_key("<Esc>").unwrap()));
    assert!(effects.is_empty());
}

#[test]
fn esc_on_a_script_that_has_written_says_unkillable_and_what_to_do() {
    let Some(server) = server(100) else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "spin", "1"]);
    // The dry run on a copy of KEYS does not see the undeclared 'spin': it ends at once. On the
    // server the script writes, then runs 3 s (time enough for the kill to arrive on a loaded machine).
    let script = "redis.call('SET', KEYS[1], 'x')
if redis.call('GET', 'spin') then
  local t0 = redis.call('TIME')
  repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 3000000
end
return 1";
    let mut b = Bench::new(&server, script, &["k"]);
    b.press("<F5>");
    b.wait_until_finished();
    let question = b.question().expect("the dry run writes: the guard asks");
    // It asks about the undeclared key too: the dry run is no preview of the server.
    assert!(
        question.starts_with("The dry run WRITES (line 1: SET k x); The dry run is no preview of the server: it could not see what this call read (line 2: GET spin (key spin not in KEYS: the copy lacks it)). Nothing was sent. y sends it with writes allowed;"),
        "{question}"
    );
    b.press("y");
    b.wait_for_phase(Phase::OnServer);
    b.press("<Esc>");
    b.wait_until_finished();
    assert_eq!(
        b.app.last_run.as_ref().unwrap().report.reply,
        Reply::Int(1),
        "an unkillable script runs to its end"
    );
    assert!(
        b.app.status.ends_with("; sent SCRIPT KILL: UNKILLABLE: the script has written, so only SHUTDOWN NOSAVE stops it (which loses the writes since the last save; evalbench never sends it); otherwise the server stays busy until the script ends"),
        "{}",
        b.app.status
    );
    assert_eq!(conn.cmd(&["GET", "k"]), Reply::Bulk(b"x".to_vec()));
}

#[test]
fn a_key_above_the_copy_limit_is_sent_as_eval_ro_with_consent() {
    let Some(server) = server(5000) else {
        return;
    };
    let mut conn = server.connect();
    let mut hset = vec![b"HSET".to_vec(), b"big".to_vec()];
    for i in 0..10_001 {
        hset.push(format!("f{i}").into_bytes());
        hset.push(b"v".to_vec());
    }
    conn.pipeline(&[hset]);
    let mut b = Bench::new(&server, "return redis.call('HLEN', KEYS[1])", &["big"]);
    b.press("<F5>");
    b.wait_until_finished();
    let question = b.question().expect("the guard offers EVAL_RO");
    assert_eq!(
        question,
        "No dry run is possible: key 'big' is a hash of 10001 fields, above the copy limit of 10000; copy refused. Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to the live server? (y/n)"
    );
    nothing_ran(&mut conn);
    b.press("y");
    b.wait_until_finished();
    let run = b.app.last_run.as_ref().unwrap();
    assert_eq!(run.report.reply, Reply::Int(10_001));
    assert!(run.live);
    let calls = script_calls(&mut conn);
    assert!(
        calls
            .iter()
            .all(|c| c.starts_with("cmdstat_eval_ro:") || c.starts_with("cmdstat_evalsha_ro:")),
        "read-only commands only: {calls:?}"
    );

    // A script that writes is refused by the server itself.
    b.app = {
        let mut app = App::new("return redis.call('DEL', KEYS[1])", None, Config::default());
        app.inputs = InputsState::from_lists(&["big".to_string()], &[]);
        app.set_live_server("redis test-server".into());
        app
    };
    b.press("<F5>");
    b.wait_until_finished();
    b.press("y");
    b.wait_until_finished();
    let run = b.app.last_run.as_ref().unwrap();
    assert!(
        matches!(&run.report.reply, Reply::Error(e) if e.contains("Write commands are not allowed from read-only scripts")),
        "{:?}",
        run.report.reply
    );
    assert_eq!(conn.cmd(&["HLEN", "big"]), Reply::Int(10_001));
}

/// The workbench on a server that needs a password, given none: the CLI's one line and exit 3,
/// and the terminal never taken over (no escape sequence reaches it). `script` gives the
/// workbench the terminal it needs.
#[test]
fn noauth_at_connect_is_refused_with_the_clis_line() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    server
        .connect()
        .cmd(&["CONFIG", "SET", "requirepass", "secret"]);
    let url = format!("redis://127.0.0.1:{}", server.port);
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args([
            "run",
            "--server",
            &url,
            "samples/unlock.lua",
            "lock:order",
            ",",
            "t",
        ])
        .output()
        .expect("run evalbench run");
    assert_eq!(cli.status.code(), Some(3));
    let line = String::from_utf8_lossy(&cli.stderr).into_owned();
    assert_eq!(
        line,
        format!("evalbench: 127.0.0.1:{}: the server requires a password (give it with -a, --askpass or REDISCLI_AUTH, with --user for an ACL user, or in the URL: redis://user:password@host:port)\n", server.port)
    );
    let command = format!("{} --server {url}", env!("CARGO_BIN_EXE_evalbench"));
    let tui = match std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!(
                "NOTICE: skipping the terminal half: `script` (util-linux) not available ({e})"
            );
            return;
        }
    };
    assert_eq!(tui.status.code(), Some(3), "{tui:?}");
    let shown = String::from_utf8_lossy(&tui.stdout).replace("\r\n", "\n");
    assert_eq!(shown, line, "exactly the CLI's line, no screen drawn");
}

/// A server that goes away shows as disconnected in the status bar until it answers again.
#[test]
fn a_server_gone_away_shows_as_disconnected_until_it_is_back() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    let mut h = evalbench::tui::harness::Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis test-server")
        .expect("connect");
    let bar = |h: &evalbench::tui::harness::Harness| {
        h.render(120, 40)
            .lines()
            .rev()
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        bar(&h).starts_with(" live redis test-server guarded "),
        "{}",
        bar(&h)
    );

    server.stop();
    h.app.connection.check_now();
    h.settle();
    assert!(
        bar(&h).starts_with(" live redis test-server DISCONNECTED "),
        "{}",
        bar(&h)
    );
    assert!(
        h.app.status.starts_with(&format!(
            "the live server does not answer: 127.0.0.1:{}: ",
            server.port
        )),
        "{}",
        h.app.status
    );
    // Still away at the next check.
    h.app.connection.check_now();
    h.settle();
    assert!(bar(&h).contains("DISCONNECTED"));

    server.restart();
    h.app.connection.check_now();
    h.settle();
    assert!(
        bar(&h).starts_with(" live redis test-server guarded "),
        "{}",
        bar(&h)
    );
    assert_eq!(h.app.status, "the live server answers again");
    // And runs reach it again.
    h.press("<F5>");
    assert_eq!(h.app.last_run.as_ref().unwrap().report.reply, Reply::Int(1));
}

/// After a live run (its keyspace at the server's time), the seed view still shows the seed's
/// TTLs as the next sandbox run sees them.
#[test]
fn the_seed_view_keeps_relative_ttls_after_a_live_run() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    let mut h = evalbench::tui::harness::Harness::new(
        "return 1",
        &[],
        &[],
        r#"{"seeded": {"type": "string", "value": "3", "ttl_ms": 60000}}"#,
    )
    .with_live(target, "redis test-server")
    .expect("connect");
    h.press("<F5>");
    assert!(h.app.last_run.as_ref().unwrap().live);
    h.keys("<A-3> v");
    let screen = h.render(120, 40);
    assert!(screen.contains("seeded"), "{screen}");
    assert!(screen.contains("60.0s"), "{screen}");
}
