//! The workbench asks before sending what its dry run could not see or SCRIPT KILL cannot stop:
//! the App driven by keys with the real engine thread against a redis-server the test starts. The
//! prompt's text is the guard's; `n` sends nothing, `y` sends EVAL_RO (the server refuses the
//! write) unless the dry run wrote. The script that would freeze the server is never sent unasked.
#![cfg(feature = "tui")]

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::live::{LiveBackend, TargetSpec};
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{App, Confirm, Overlay};
use evalbench::tui::config::Config;
use evalbench::tui::inputs::InputsState;
use evalbench::tui::keymap::parse_key;
use evalbench::tui::worker::Worker;
use ratatui::crossterm::event::Event;
use std::time::{Duration, Instant};

const BOUND: Duration = Duration::from_secs(30);

struct Bench {
    app: App,
    worker: Worker,
}

impl Bench {
    fn new(server: &RedisServer, script: &str) -> Bench {
        common::isolate_app_dirs();
        let target = TargetSpec {
            url: Some(format!("redis://127.0.0.1:{}", server.port)),
            ..TargetSpec::default()
        }
        .resolve()
        .expect("target");
        let live = LiveBackend::connect(target).expect("connect");
        let mut app = App::new(script, None, Config::default());
        app.inputs = InputsState::from_lists(&[], &[]);
        app.config.busy_threshold_ms = live.server.busy_threshold_ms;
        app.set_live_server("redis test-server".into());
        Bench {
            app,
            worker: Worker::start_with(Some(live)),
        }
    }

    fn press(&mut self, key: &str) {
        let key = parse_key(key).expect("key notation");
        let effects = self.app.on_event(&Event::Key(key));
        evalbench::tui::apply(effects, &self.worker, None);
    }

    fn wait_until_finished(&mut self) {
        let deadline = Instant::now() + BOUND;
        loop {
            while let Ok(event) = self.worker.events.try_recv() {
                self.app.on_engine_event(event);
            }
            if self.app.running.is_none() {
                return;
            }
            assert!(Instant::now() < deadline, "waited {BOUND:?} for the run");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn question(&self) -> Option<String> {
        match &self.app.overlay {
            Some(Overlay::Confirm(Confirm::LiveSend(_, q))) => Some(q.text()),
            _ => None,
        }
    }

    fn screen(&self) -> String {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 50)).expect("terminal");
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

/// The script commands INFO commandstats counted.
/// The script commands the server counted, sorted (INFO lists them in its dict's order).
fn script_calls(conn: &mut Conn) -> Vec<String> {
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    String::from_utf8_lossy(&info)
        .lines()
        .filter(|l| l.starts_with("cmdstat_eval"))
        .map(|l| l.split(':').next().unwrap_or(l).to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn untouched(conn: &mut Conn) {
    assert_eq!(conn.cmd(&["PING"]), Reply::Status("PONG".into()));
    assert_eq!(conn.cmd(&["EXISTS", "pwned"]), Reply::Int(0));
    assert_eq!(conn.cmd(&["DBSIZE"]), Reply::Int(1));
}

#[test]
fn a_dry_run_that_could_not_see_asks_and_yes_sends_eval_ro() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "other:key", "1"]);
    let mut b = Bench::new(
        &server,
        "if redis.call('EXISTS','other:key')==1 then redis.call('SET','pwned','yes') end return 1",
    );
    b.press("<F5>");
    b.wait_until_finished();
    assert_eq!(
        b.question().as_deref(),
        Some("The dry run is no preview of the server: it could not see what this call read (line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL. Send it to the live server? (y/n)")
    );
    let screen = b.screen();
    assert!(
        screen.contains("The dry run is no preview of the server"),
        "{screen}"
    );
    assert_eq!(script_calls(&mut conn), Vec::<String>::new());
    untouched(&mut conn);
    b.press("n");
    assert_eq!(b.question(), None);
    assert_eq!(script_calls(&mut conn), Vec::<String>::new());
    b.press("<F5>");
    b.wait_until_finished();
    assert!(b.question().is_some());
    b.press("y");
    b.wait_until_finished();
    let run = b.app.last_run.as_ref().expect("a run");
    assert!(run.live);
    assert!(
        matches!(&run.report.reply, Reply::Error(e) if e.starts_with("ERR Write commands are not allowed from read-only scripts.")),
        "{:?}",
        run.report.reply
    );
    let calls = script_calls(&mut conn);
    assert!(
        !calls.is_empty() && calls.iter().all(|c| c.ends_with("_ro")),
        "{calls:?}"
    );
    untouched(&mut conn);
}

#[test]
fn a_loop_scripts_kill_cannot_stop_is_asked_about_and_never_sent_unasked() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "other:key", "1"]);
    let mut b = Bench::new(
        &server,
        "return xpcall(function() if redis.call('EXISTS','other:key')==1 then error('x') end end, function() while true do end end)",
    );
    b.press("<F5>");
    b.wait_until_finished();
    assert_eq!(
        b.question().as_deref(),
        Some("SCRIPT KILL cannot stop this script (line 1: a `while` loop in the error handler of xpcall at line 1: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart): if that code runs long, the server stays busy for every client and may need a restart; The dry run is no preview of the server: it could not see what this call read (line 1: EXISTS other:key (key other:key not in KEYS: the copy lacks it)). Nothing was sent. y sends it as EVAL_RO (the server refuses any write); Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)")
    );
    let screen = b.screen();
    assert!(
        screen.contains("SCRIPT KILL cannot stop this script"),
        "{screen}"
    );
    b.press("<Esc>");
    assert_eq!(b.question(), None);
    assert_eq!(script_calls(&mut conn), Vec::<String>::new());
    untouched(&mut conn);
}

#[test]
fn an_unkillable_place_and_a_write_are_one_question_and_yes_sends_eval_with_writes() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "other:key", "1"]);
    let mut b = Bench::new(
        &server,
        "redis.call('INCR', 'counter')\nlocal ok = xpcall(function() return 1 end, function() while true do end end)\nreturn redis.call('GET', 'counter')",
    );
    b.app.inputs = InputsState::from_lists(&["counter".into()], &[]);
    b.press("<F5>");
    b.wait_until_finished();
    assert_eq!(
        b.question().as_deref(),
        Some("SCRIPT KILL cannot stop this script (line 2: a `while` loop in the error handler of xpcall at line 2: it runs with Lua's hooks off once the script is killed, so SCRIPT KILL cannot stop it and the server may need a restart): if that code runs long, the server stays busy for every client and may need a restart; The dry run WRITES (line 1: INCR counter). Nothing was sent. y sends it with writes allowed; Esc on the server sends SCRIPT KILL, which cannot stop those places. Send it to the live server? (y/n)")
    );
    assert_eq!(script_calls(&mut conn), Vec::<String>::new());
    assert_eq!(conn.cmd(&["EXISTS", "counter"]), Reply::Int(0));
    b.press("y");
    b.wait_until_finished();
    assert_eq!(b.question(), None);
    let run = b.app.last_run.as_ref().expect("a run");
    assert!(run.live);
    assert_eq!(run.report.reply, Reply::Bulk(b"1".to_vec()));
    // EVALSHA (NOSCRIPT) and EVAL: neither read-only, and the script ran once.
    assert_eq!(
        script_calls(&mut conn),
        vec!["cmdstat_eval", "cmdstat_evalsha"]
    );
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"1".to_vec()));
}
