//! The Server tab for on-call engineers, driven by keys through the synchronous harness
//! against a redis-server the test starts: the row position and column widths, searches inside a key
//! (HSCAN/ZSCAN MATCH, Esc stops), and the overview: INFO highlights, the slow log, a script that keeps
//! the server busy, and SCRIPT KILL after a y/n (OK, then NOTBUSY, then UNKILLABLE for one that wrote).
#![cfg(feature = "tui")]

mod common;

use common::RedisServer;
use evalbench::engine::live::TargetSpec;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{Confirm, Overlay, Tab};
use evalbench::tui::harness::Harness;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn workbench(server: &RedisServer) -> Harness {
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis 7.0.15 test-server")
        .expect("connect")
}

/// Send `script` on a connection of its own (the script blocks it until it ends or is killed) and
/// return the connection once the server answers BUSY to others.
fn spin(server: &RedisServer, script: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    let args = ["EVAL", script, "1", "k"];
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).expect("send");
    let mut probe = server.connect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !matches!(probe.cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY")) {
        assert!(
            Instant::now() < deadline,
            "the script turns the server busy"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    stream
}

/// The first line of the reply on `stream`.
fn reply_line(stream: &mut TcpStream) -> String {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") && stream.read(&mut byte).expect("reply") == 1 {
        line.push(byte[0]);
    }
    String::from_utf8_lossy(&line).trim_end().to_string()
}

#[test]
fn server_overview_and_script_kill() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["CONFIG", "SET", "busy-reply-threshold", "100"]);
    // A script of a few ms goes to the slow log (the inspector's own reads stay under 2 ms).
    conn.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "2000"]);
    conn.cmd(&["SET", "counter", "41"]);
    let slow = "local i = 0 while i < 5e6 do i = i + 1 end return i";
    assert_eq!(conn.cmd(&["EVAL", slow, "0"]), Reply::Int(5_000_000));
    let library = include_str!("../samples/counter_library.lua");
    assert_eq!(
        conn.cmd(&["FUNCTION", "LOAD", library]),
        Reply::bulk("counters")
    );
    let mut h = workbench(&server);

    // Alt-5 then i: the overview instead of the key list.
    h.press("<A-5>").press("i");
    assert_eq!(h.app.tab, Tab::Server);
    let screen = h.render(200, 30);
    assert!(
        screen.contains("Server overview · redis 7.0.15 test-server"),
        "{screen}"
    );
    assert!(
        screen.contains("version 7.0.15 · role master · uptime "),
        "{screen}"
    );
    assert!(
        screen.contains("db0: keys=1,expires=0,avg_ttl=0"),
        "{screen}"
    );
    assert!(
        screen.contains("no script keeps the server busy"),
        "{screen}"
    );
    assert!(
        screen.contains("┃Function libraries (FUNCTION LIST): 1"),
        "{screen}"
    );
    assert!(screen.contains("┃counters: counter_"), "{screen}");
    assert!(screen.contains("counter_get [no-writes]"), "{screen}");
    assert!(screen.contains("Slow log (SLOWLOG GET 10 of "), "{screen}");
    // Its time in readable units (µs, ms or s), then the command.
    assert!(screen.contains(&format!("s  EVAL {slow} 0")), "{screen}");
    assert!(
        screen.contains("R: read now (every 2 s) · X: SCRIPT KILL · i: keys"),
        "{screen}"
    );

    // A script keeps the server busy: R reads again and shows it.
    let mut script = spin(&server, "while true do end");
    h.press("R");
    let screen = h.render(200, 30);
    assert!(
        screen
            .contains("┃BUSY for at least #.# s: the server runs a script past its busy threshold"),
        "{screen}"
    );
    assert!(
        screen.contains("┃Redis 7.0 does not name a running EVAL script: SCRIPT KILL (X) stops it"),
        "{screen}"
    );
    // INFO answers BUSY now: what was read before stays, said as such.
    assert!(screen.contains("version 7.0.15 · role master"), "{screen}");
    assert!(
        screen.contains("┃(INFO and SLOWLOG as read before the server turned busy)"),
        "{screen}"
    );
    let overview = &h.app.server.as_ref().unwrap().overview;
    assert_eq!(
        overview.data.as_ref().unwrap().0.busy.as_deref(),
        Some("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
    );

    // X asks first; n sends nothing.
    h.press("X");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::ScriptKill))
    ));
    assert!(h
        .render(200, 30)
        .contains("Send SCRIPT KILL to the server?"));
    h.press("n");
    assert!(h.app.overlay.is_none());
    // y sends it: the status line says what happened, and the overview is read again.
    h.press("X").press("y");
    assert_eq!(
        h.app.status,
        "sent SCRIPT KILL: OK; the script was stopped (the server answers PING)"
    );
    let reply = reply_line(&mut script);
    assert!(
        reply.starts_with("-ERR Script killed by user with SCRIPT KILL"),
        "{reply}"
    );
    h.press("R");
    let screen = h.render(200, 30);
    assert!(
        screen.contains("no script keeps the server busy"),
        "{screen}"
    );
    assert!(
        screen.contains("┃last SCRIPT KILL: sent SCRIPT KILL: OK; the script was stopped (the server answers PING)"),
        "{screen}"
    );
    assert!(
        !screen.contains("before the server turned busy"),
        "{screen}"
    );

    // Nothing runs: NOTBUSY, said as such.
    h.press("X").press("y");
    assert_eq!(
        h.app.status,
        "sent SCRIPT KILL: NOTBUSY (no script was running)"
    );

    // A script that wrote cannot be killed: UNKILLABLE, said with what to do.
    let _script = spin(&server, "redis.call('SET', KEYS[1], 'x') while true do end");
    h.press("X").press("y");
    assert!(
        h.app.status.starts_with(
            "sent SCRIPT KILL: UNKILLABLE: the script has written, so only SHUTDOWN NOSAVE stops it"
        ),
        "{}",
        h.app.status
    );
    // i: back to the key list. (The server is killed with the test.)
    h.press("i");
    assert!(!h.app.server.as_ref().unwrap().overview.shown);
}

fn words(w: &[&str]) -> Vec<Vec<u8>> {
    w.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn positions_widths_and_searches_inside_a_key() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut commands = Vec::new();
    let mut mset = words(&["MSET"]);
    for i in 0..1500 {
        mset.push(format!("item:{i}").into_bytes());
        mset.push(b"v".to_vec());
    }
    commands.push(mset);
    let mut hset = words(&["HSET", "big:hash"]);
    for i in 0..5000 {
        hset.push(format!("f{i}").into_bytes());
        hset.push(format!("v{i}").into_bytes());
    }
    commands.push(hset);
    let mut zadd = words(&["ZADD", "board"]);
    for i in 0..300 {
        zadd.push(i.to_string().into_bytes());
        zadd.push(format!("m{i}").into_bytes());
    }
    commands.push(zadd);
    commands.push(vec![
        b"HSET".to_vec(),
        b"user:1".to_vec(),
        b"bio".to_vec(),
        vec![b'x'; 5000],
    ]);
    commands.push(words(&["RPUSH", "queue", "a", "b"]));
    conn.pipeline(&commands);
    let mut h = workbench(&server);

    // The row position: "1/1,000+" while the scan may list more.
    h.press("<A-5>");
    let listed = h.app.server.as_ref().unwrap().keys.len();
    assert!((1000..1504).contains(&listed), "{listed}");
    let screen = h.render(200, 30);
    let listed_text = format!("{},{:03}", listed / 1000, listed % 1000);
    assert!(
        screen.contains(&format!("┏❯Server keys · 1/{listed_text}+")),
        "{screen}"
    );
    // The key column is as wide as the keys in view (at least 10), not the whole pane.
    assert!(
        screen.contains("┃key        type   ttl     size    encoding   memory"),
        "{screen}"
    );
    h.press("<Down>").press("<Down>").press("<Down>");
    assert!(h
        .render(200, 30)
        .contains(&format!("┏❯Server keys · 4/{listed_text}+")));
    for _ in 0..5 {
        h.press("<End>");
    }
    assert!(h.render(200, 30).contains("┏❯Server keys · 1,504/1,504━"));

    // A search inside the hash: HSCAN MATCH, a page of COUNT 1000 per call, to the end.
    h.press("/").type_text("big:hash\n").press("f");
    assert!(matches!(h.app.overlay, Some(Overlay::Prompt(_))));
    h.type_text("f12*\n");
    let value = h.app.server.as_ref().unwrap().value.clone().unwrap();
    let found: BTreeSet<String> = value.lines.iter().cloned().collect();
    let expected: BTreeSet<String> = (0..5000)
        .map(|i| format!("f{i}"))
        .filter(|f| f.starts_with("f12"))
        .map(|f| format!("{f}  v{}", &f[1..]))
        .collect();
    assert_eq!(found, expected);
    assert_eq!(found.len(), 111);
    assert!(value.next.is_none());
    let screen = h.render(200, 30);
    assert!(
        screen.contains(&format!(
            "hash 'big:hash' MATCH f12* · 111 match · {} calls · end",
            value.calls
        )),
        "{screen}"
    );
    assert!(
        screen.contains(" row 1/111 · hashtable · c: copy · f: search · v: inspect · Enter: keys "),
        "{screen}"
    );

    // A search matching everything pauses a little ahead of the view; Esc stops it there: the
    // server is asked nothing more, even when scrolling to the end.
    h.press("f");
    for _ in 0.."f12*".len() {
        h.press("<Backspace>");
    }
    h.type_text("f*\n");
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
    assert!((200..5000).contains(&read), "{read}");
    h.press("<Esc>");
    let calls = h.app.server.as_ref().unwrap().value.as_ref().unwrap().calls;
    assert_eq!(
        h.app.status,
        format!("search stopped after {calls} calls: {},{:03} match so far (Esc again shows the whole value)", read / 1000, read % 1000)
    );
    for _ in 0..5 {
        h.press("<End>");
    }
    let value = h.app.server.as_ref().unwrap().value.clone().unwrap();
    assert_eq!((value.lines.len(), value.calls), (read, calls));
    assert!(h.render(200, 30).contains("· stopped (Esc: whole value)"));
    // Esc again: the whole value, as before the search.
    h.press("<Esc>");
    assert_eq!(h.app.status, "search cleared: the whole value");
    assert!(h.render(200, 30).contains("hash 'big:hash' · "));

    // A sorted set: ZSCAN MATCH, members with their scores.
    h.press("<Enter>").press("/");
    for _ in 0.."big:hash".len() {
        h.press("<Backspace>");
    }
    h.type_text("board\n").press("f").type_text("m29*\n");
    let value = h.app.server.as_ref().unwrap().value.clone().unwrap();
    let found: BTreeSet<String> = value.lines.iter().cloned().collect();
    let expected: BTreeSet<String> = (0..300)
        .filter(|i| format!("m{i}").starts_with("m29"))
        .map(|i| format!("{:>12}  m{i}", i))
        .collect();
    assert_eq!(found, expected);

    // A list cannot be searched on the server: said, nothing asked.
    h.press("<Enter>").press("/");
    for _ in 0.."board".len() {
        h.press("<Backspace>");
    }
    h.type_text("queue\n").press("f");
    assert!(h.app.overlay.is_none());
    assert_eq!(
        h.app.status,
        "a search inside a key works on hashes, sets and sorted sets (HSCAN, SSCAN, ZSCAN MATCH); 'queue' is a list"
    );

    // A long value is cut with its length shown.
    h.press("o").type_text("user:1\n");
    let screen = h.render(120, 30);
    assert!(screen.contains("┃bio  xxxxxxxx"), "{screen}");
    assert!(screen.contains("x… 5,000 B┃"), "{screen}");
}
