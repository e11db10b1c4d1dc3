//! The workbench on a live server, driven by keys through the synchronous harness (runs and the
//! Server tab's requests are carried out in place of the threads) against a redis-server the test
//! starts: browsing, filtering, paging a large hash, opening a key by name, copying keys to the
//! sandbox, the script-cache mark and SCRIPT LOAD, a guarded write, switching to the sandbox.
#![cfg(feature = "tui")]

mod common;

use common::{Conn, RedisServer};
use evalbench::engine::keyspace::Value;
use evalbench::engine::live::TargetSpec;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{Confirm, Overlay, Tab};
use evalbench::tui::harness::Harness;
use std::collections::BTreeSet;

/// 3,000 strings, a 5,000-field hash, a 100 KiB string, a small hash, and one key of each other type.
fn fill(conn: &mut Conn) {
    let mut commands = Vec::new();
    for chunk in (0..3000).collect::<Vec<_>>().chunks(500) {
        let mut mset = vec![b"MSET".to_vec()];
        for i in chunk {
            mset.push(format!("item:{i}").into_bytes());
            mset.push(format!("v{i}").into_bytes());
        }
        commands.push(mset);
    }
    for chunk in (0..5000).collect::<Vec<_>>().chunks(1000) {
        let mut hset = vec![b"HSET".to_vec(), b"big:hash".to_vec()];
        for i in chunk {
            hset.push(format!("f{i}").into_bytes());
            hset.push(format!("v{i}").into_bytes());
        }
        commands.push(hset);
    }
    let words = |w: &[&str]| w.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
    commands.push(vec![
        b"SET".to_vec(),
        b"big:string".to_vec(),
        vec![b'x'; 100 * 1024],
    ]);
    commands.push(words(&[
        "HSET", "user:1", "name", "ada", "lang", "lua", "visits", "3",
    ]));
    commands.push(words(&["RPUSH", "queue:jobs", "a", "b", "c"]));
    commands.push(words(&["ZADD", "board", "1", "m1", "2.5", "m2"]));
    commands.push(words(&["SADD", "tags", "x"]));
    commands.push(words(&["XADD", "events", "1-1", "kind", "login"]));
    commands.push(words(&["SET", "counter", "41"]));
    conn.pipeline(&commands);
}

const KEYS_IN_DB: u64 = 3000 + 8;

fn workbench(server: &RedisServer, script: &str, keys: &[&str], argv: &[&str]) -> Harness {
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    Harness::new(script, keys, argv, "")
        .with_live(target, "redis 7.0.15 test-server")
        .expect("connect")
}

#[test]
fn browsing_a_live_keyspace() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    fill(&mut conn);
    let mut h = workbench(&server, "return 1", &[], &[]);
    assert!(h.app.tabs().contains(&Tab::Server));

    // Alt-5 opens the Server tab: the scan lists about 1,000 keys, then pauses.
    h.press("<A-5>");
    assert_eq!(h.app.tab, Tab::Server);
    let view = h.app.server.as_ref().unwrap();
    assert!(
        (1000..2000).contains(&view.keys.len()),
        "{}",
        view.keys.len()
    );
    assert_eq!(view.progress.dbsize, Some(KEYS_IN_DB));
    assert!(!view.progress.done);
    let screen = h.render(120, 40);
    assert!(screen.contains("Server keys"), "{screen}");
    let listed = view.keys.len();
    assert!(
        screen.contains(&format!(
            " {},{:03} of 3,008 keys · ↓ for more ",
            listed / 1000,
            listed % 1000
        )),
        "{screen}"
    );

    // End: the selection reaches the end of the list, and the scan lists more until it is done.
    for _ in 0..10 {
        h.press("<End>");
    }
    let view = h.app.server.as_ref().unwrap();
    assert!(view.progress.done);
    let listed: BTreeSet<Vec<u8>> = view.keys.iter().cloned().collect();
    assert_eq!(listed.len(), view.keys.len(), "no key is listed twice");
    assert_eq!(listed.len() as u64, KEYS_IN_DB);
    assert!(h.render(120, 40).contains(" 3,008 of 3,008 keys · done "));

    // `/` sets the SCAN MATCH pattern: only the hash of 5,000 fields.
    h.press("/").type_text("big:h*\n");
    let view = h.app.server.as_ref().unwrap();
    assert_eq!(view.keys, vec![b"big:hash".to_vec()]);
    let summary = view.summaries[b"big:hash".as_slice()].clone().unwrap();
    assert_eq!(
        (
            summary.kind.as_str(),
            summary.size,
            summary.encoding.as_deref()
        ),
        ("hash", Some(5000), Some("hashtable"))
    );
    let value = view.value.as_ref().unwrap();
    assert_eq!(value.kind, "hash");
    assert!(!value.lines.is_empty() && value.lines.len() < 5000);
    let screen = h.render(120, 40);
    assert!(screen.contains("Server keys MATCH big:h*"), "{screen}");
    assert!(
        screen.contains(" ~3,008 of 3,008 scanned · 1 match · done "),
        "{screen}"
    );
    assert!(screen.contains("hash 'big:hash' ·"), "{screen}");
    let read = h
        .app
        .server
        .as_ref()
        .unwrap()
        .value
        .as_ref()
        .unwrap()
        .lines
        .len();
    assert!(screen.contains("/5,000 · ↓ more"), "{screen}");
    assert!(read >= 200, "read ahead of the view: {read}");

    // Enter focuses the value; scrolling to the end reads it a page (HSCAN) at a time.
    h.press("<Enter>");
    for _ in 0..200 {
        h.press("<End>");
    }
    let value = h.app.server.as_ref().unwrap().value.as_ref().unwrap();
    assert!(value.next.is_none());
    let read: BTreeSet<String> = value.lines.iter().cloned().collect();
    let expected: BTreeSet<String> = (0..5000).map(|i| format!("f{i}  v{i}")).collect();
    assert_eq!(read, expected);
    assert!(h
        .render(120, 40)
        .contains("hash 'big:hash' · 5,000/5,000 · end"));

    // `c` copies the key into the sandbox seed.
    h.press("c");
    let copied = h
        .app
        .seed
        .get(b"big:hash", h.app.now_ms.max(1))
        .expect("copied");
    match &copied.value {
        Value::Hash(hash) => assert_eq!(hash.len(), 5000),
        other => panic!("{other:?}"),
    }
    assert!(
        h.app
            .status
            .starts_with("copied 'big:hash' to the sandbox seed"),
        "{}",
        h.app.status
    );

    // `o` opens a key by its exact name, without a scan: a string is read 3 KiB (64 lines) at a
    // time, a little ahead of the view (200 lines).
    h.press("<A-5>").press("o").type_text("big:string\n");
    let view = h.app.server.as_ref().unwrap();
    assert_eq!(view.keys[0], b"big:string".to_vec());
    assert!(view.value_focus);
    let screen = h.render(120, 40);
    assert!(
        screen.contains("string 'big:string' · 12,288/102,400 B · ↓ more"),
        "{screen}"
    );
    h.press("o").type_text("no:such:key\n");
    assert!(h.app.status.is_empty() || !h.app.status.contains("panicked"));
    assert!(
        h.render(120, 40).contains("'no:such:key' does not exist")
            || h.app.server.as_ref().unwrap().error.as_deref()
                == Some("'no:such:key' does not exist")
    );

    // `t` filters by type (SCAN TYPE) with the pattern kept: a small hash, in insertion order.
    // The prompt starts with the current pattern.
    h.press("<Enter>").press("/");
    for _ in 0.."big:h*".len() {
        h.press("<Backspace>");
    }
    h.type_text("user:*\n").press("t");
    let view = h.app.server.as_ref().unwrap();
    assert_eq!(view.type_filter, Some("string"));
    assert!(view.keys.is_empty() && view.progress.done);
    h.press("t");
    let view = h.app.server.as_ref().unwrap();
    assert_eq!(view.type_filter, Some("hash"));
    assert_eq!(view.keys, vec![b"user:1".to_vec()]);
    let value = view.value.as_ref().unwrap();
    assert_eq!(value.lines, vec!["name  ada", "lang  lua", "visits  3"]);
    insta::assert_snapshot!("server_tab_120x40", h.render(120, 40));
    insta::assert_snapshot!("server_tab_80x24", h.render(80, 24));
}

#[test]
fn script_cache_mark_and_script_load() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let script = "return redis.call('GET', KEYS[1])";
    let mut h = workbench(&server, script, &["counter"], &[]);
    let sha = evalbench::engine::script::sha1_hex(script.as_bytes());
    assert!(
        h.render(160, 40).contains("not cached (F8 loads)"),
        "{}",
        h.render(160, 40)
    );
    h.press("<F8>");
    assert_eq!(
        conn.cmd(&["SCRIPT", "EXISTS", &sha]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert!(h.render(160, 40).contains(" cached "));
    assert!(h.app.status.starts_with("SCRIPT LOAD"), "{}", h.app.status);
    // An edit changes the SHA1: the mark follows it.
    h.press("<End>").type_text(" ");
    assert!(h.render(160, 40).contains("not cached (F8 loads)"));
}

#[test]
fn the_cache_mark_is_asked_again_after_the_server_restarts() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let script = "return redis.call('GET', KEYS[1])";
    let mut h = workbench(&server, script, &["counter"], &[]);
    h.press("<F8>");
    assert!(h.render(160, 40).contains(" cached "));
    // A restart empties the server's script cache: the next health check finds the connection
    // dropped (and opens it again at once), and the mark says what the server says now, not
    // what it said before the restart.
    server.restart();
    h.app.connection.check_now();
    h.settle();
    assert_eq!(
        h.app.status,
        "the live server's connection dropped and was opened again (a restart?): its script cache is asked again"
    );
    let screen = h.render(160, 40);
    assert!(screen.contains("not cached (F8 loads)"), "{screen}");
    h.press("<F8>");
    assert!(h.render(160, 40).contains(" cached "));
}

#[test]
fn a_guarded_write_then_the_sandbox_on_copied_keys() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "counter", "41"]);
    let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    let mut h = workbench(&server, script, &["counter"], &["1"]);
    assert!(h
        .render(120, 40)
        .contains("live redis 7.0.15 test-server guarded"));

    // F5: the dry run writes, so nothing is sent and the user is asked.
    h.press("<F5>");
    assert!(matches!(
        &h.app.overlay,
        Some(Overlay::Confirm(Confirm::LiveSend(..)))
    ));
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"41".to_vec()));
    // n: still nothing sent.
    h.press("n");
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"41".to_vec()));
    // The Server tab shows the key as it is on the server.
    h.press("<A-5>").press("/").type_text("counter\n");
    let value = |h: &Harness| h.app.server.as_ref().unwrap().value.clone().unwrap().lines;
    assert_eq!(value(&h), vec!["41"]);
    // F5 then y: sent with writes allowed; the reply and its Lua value come back.
    h.press("<F5>").press("y");
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"42".to_vec()));
    // The keys the run touched are read again in the Server tab.
    assert_eq!(value(&h), vec!["42"]);
    let run = h.app.last_run.as_ref().unwrap();
    assert_eq!(run.report.reply, Reply::Int(42));
    assert_eq!(run.report.lua_value.as_deref(), Some("42"));
    assert_eq!(run.report.trace.len(), 1);
    assert!(run.report.trace[0].write);
    assert!(run.live);
    // No per-call time on a live run: the trace says so rather than showing 0.
    assert!(
        h.press("<A-1>")
            .render(120, 40)
            .contains("INCRBY counter 1     (integer) 42     -  W"),
        "{}",
        h.render(120, 40)
    );

    // C copies the form's KEYS into the seed; F7 runs in the sandbox on it, leaving the server be.
    h.press("<A-5>").press("C");
    assert!(
        h.app.status.starts_with("copied 'counter'"),
        "{}",
        h.app.status
    );
    h.press("<F7>");
    assert!(h.render(120, 40).contains("sandbox (F7: live)"));
    h.press("<F5>");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply,
        Reply::Int(43)
    );
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"42".to_vec()));
}
