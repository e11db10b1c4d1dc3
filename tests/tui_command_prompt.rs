//! The `redis>` prompt of the Keyspace and Server tabs, driven by keys through the synchronous
//! harness: a command on the sandbox's seed (a write changes the seed, a read shows the reply),
//! the server's own errors, Tab completion, history, Esc; on a live redis-server the test starts:
//! a read, a write that asks (n sends nothing, y writes), KEYS refused; a tiny terminal.
#![cfg(feature = "tui")]

mod common;

use common::RedisServer;
use evalbench::engine::keyspace::Value;
use evalbench::engine::live::TargetSpec;
use evalbench::engine::reply::Reply;
use evalbench::tui::app::{Overlay, Tab};
use evalbench::tui::harness::Harness;

const SEED: &str = r#"{"a": {"type": "string", "value": "0"}, "h": {"type": "hash", "value": {"f1": "v1", "f2": "v2"}}}"#;

/// The sample-free workbench with a two-key seed, the Keyspace tab shown and the prompt open.
fn seed_prompt() -> Harness {
    let mut h = Harness::new("return 1", &[], &[], SEED);
    h.press("<A-3>");
    assert_eq!(h.app.tab, Tab::Keyspace);
    h.press(":");
    assert!(matches!(h.app.overlay, Some(Overlay::Command)));
    h
}

fn seed_string(h: &Harness, key: &str) -> Option<Vec<u8>> {
    match h
        .app
        .seed
        .get(key.as_bytes(), h.app.seed_now_ms)
        .map(|e| &e.value)
    {
        Some(Value::Str(bytes)) => Some(bytes.clone()),
        _ => None,
    }
}

/// The rows of the screen holding `text`.
fn rows_with(screen: &str, text: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.contains(text))
        .map(str::to_string)
        .collect()
}

#[test]
fn set_then_get_on_the_seed() {
    let mut h = seed_prompt();
    let screen = h.render(100, 30);
    assert_eq!(
        rows_with(&screen, "redis (seed)>"),
        vec!["┃redis (seed)>                                                                                     ┃"]
    );
    h.type_text("SET a \"one two\"").press("<Enter>");
    assert_eq!(h.app.status, "OK");
    assert_eq!(seed_string(&h, "a"), Some(b"one two".to_vec()));
    // The prompt stays open for the next line; the Keyspace tab shows the written key.
    assert!(matches!(h.app.overlay, Some(Overlay::Command)));
    assert_eq!(h.app.keyspace.selected_key(&h.app), Some(b"a".to_vec()));
    h.type_text("GET a").press("<Enter>");
    assert_eq!(h.app.status, "\"one two\"");
    // A multi-line reply goes to the panel above the prompt.
    h.type_text("HGETALL h").press("<Enter>");
    assert_eq!(h.app.status, "4 lines (PgUp/PgDn scroll them)");
    let screen = h.render(100, 30);
    assert_eq!(rows_with(&screen, "1) \"f1\"").len(), 1, "{screen}");
    assert!(screen.contains("┃4) \"v2\""), "{screen}");
}

#[test]
fn a_seed_write_from_the_prompt_is_undone_by_ctrl_z() {
    let mut h = seed_prompt();
    h.type_text("SET fresh 1").press("<Enter>");
    assert_eq!(seed_string(&h, "fresh"), Some(b"1".to_vec()));
    assert!(
        h.app.editor.modified,
        "a seed write marks the buffer modified"
    );
    // A read is no step of the undo.
    h.type_text("GET fresh").press("<Enter>");
    h.press("<Esc>").press("<C-z>");
    assert_eq!(seed_string(&h, "fresh"), None);
}

#[test]
fn unknown_commands_and_wrong_arity_as_the_server_says() {
    let mut h = seed_prompt();
    h.type_text("NOPE a b").press("<Enter>");
    // Longer than the status line: begun there, whole in the panel.
    assert_eq!(
        h.app.status,
        "(error) ERR unknown command 'NOPE', with args beginning wit…"
    );
    assert_eq!(
        h.app.command.output.join("\n"),
        "(error) ERR unknown command 'NOPE', with args beginning with: 'a' 'b' "
    );
    h.type_text("GET").press("<Enter>");
    assert_eq!(
        h.app.status,
        "(error) ERR wrong number of arguments for 'get' command"
    );
    h.type_text("GET \"a").press("<Enter>");
    assert_eq!(
        h.app.status,
        "unbalanced quotes: close the quote or escape it with \\"
    );
}

#[test]
fn tab_completes_up_recalls_esc_closes() {
    let mut h = seed_prompt();
    h.type_text("hgetal").press("<Tab>");
    assert_eq!(h.app.command.input, "HGETALL ");
    h.press("<C-u>").type_text("hge").press("<Tab>");
    assert_eq!(h.app.command.input, "HGET");
    assert_eq!(h.app.status, "2 commands start with 'HGET'");
    assert_eq!(h.app.command.output, vec!["HGET HGETALL"]);
    h.press("<C-u>").type_text("GET a").press("<Enter>");
    h.type_text("TYPE h").press("<Enter>");
    assert_eq!(h.app.status, "hash");
    h.press("<Up>");
    assert_eq!(h.app.command.input, "TYPE h");
    h.press("<Up>");
    assert_eq!(h.app.command.input, "GET a");
    h.press("<Down>").press("<Down>");
    assert_eq!(h.app.command.input, "");
    // Esc closes without running what is typed; the history stays for the session.
    h.type_text("DEL a").press("<Esc>");
    assert!(h.app.overlay.is_none());
    assert_eq!(seed_string(&h, "a"), Some(b"0".to_vec()));
    h.press(":").press("<Up>");
    assert_eq!(h.app.command.input, "TYPE h");
    // The prompt takes every key while open: q types, it does not quit.
    h.type_text("q");
    assert_eq!(h.app.command.input, "TYPE hq");
    assert!(!h.app.quit);
}

#[test]
fn the_line_edits_anywhere_as_in_a_shell() {
    let mut h = seed_prompt();
    let at = |h: &Harness| (h.app.command.input.clone(), h.app.command.cursor);
    // A letter forgotten at the start: Home, →, type it.
    h.type_text("GT a").keys("<Home> <Right>").type_text("E");
    assert_eq!(at(&h), ("GET a".into(), 2));
    // Backspace and Delete work where the cursor is, not at the end.
    h.keys("<End> <Left> <Left> <Backspace>");
    assert_eq!(at(&h), ("GE a".into(), 2));
    h.type_text("T").press("<Del>");
    assert_eq!(at(&h), ("GETa".into(), 3));
    h.type_text(" ").keys("<C-a> <Del>");
    assert_eq!(at(&h), ("ET a".into(), 0));
    h.type_text("G").press("<C-e>");
    assert_eq!(at(&h), ("GET a".into(), 5));
    // The cursor's cell, mid-line, on screen: the character under it is drawn there.
    h.keys("<Left> <Left>");
    let screen = h.render(60, 15);
    assert_eq!(
        rows_with(&screen, "redis (seed)>"),
        vec!["┃redis (seed)> GET a                                       ┃"],
        "{screen}"
    );
    h.press("<Enter>");
    assert_eq!(h.app.status, "\"0\"");
    assert_eq!(at(&h), ("".into(), 0));
    // History: the recalled line is edited from its end; Down comes back to the draft.
    h.type_text("TYPE h").press("<Enter>");
    h.type_text("DBS").keys("<Left> <Up>");
    assert_eq!(at(&h), ("TYPE h".into(), 6));
    h.keys("<Left> <Left> <Up>");
    assert_eq!(at(&h), ("GET a".into(), 5));
    h.keys("<Down> <Down>");
    assert_eq!(at(&h), ("DBS".into(), 3));
    // Ctrl-W cuts the word before the cursor, Ctrl-K to the end, Ctrl-U to the start; Ctrl-← →
    // move by words.
    h.keys("<C-u>").type_text("SET a one two").press("<C-w>");
    assert_eq!(at(&h), ("SET a one ".into(), 10));
    h.keys("<C-Left> <C-Left> <C-k>");
    assert_eq!(at(&h), ("SET ".into(), 4));
    h.type_text("b x").keys("<C-Left> <C-u>");
    assert_eq!(at(&h), ("x".into(), 0));
    // A paste goes where the cursor is.
    h.paste("GET b\n");
    assert_eq!(at(&h), ("GET b x".into(), 6));
    // A long line keeps the cursor in view: at its start, the end is cut with `…`.
    h.keys("<C-u> <End> <C-u>")
        .type_text("SET a 0123456789012345678901234567890123456789012345678901234567890123456789")
        .press("<Home>");
    let screen = h.render(60, 15);
    assert_eq!(
        rows_with(&screen, "redis (seed)>"),
        vec!["┃redis (seed)> SET a 0123456789012345678901234567890123456…┃"],
        "{screen}"
    );
}

#[test]
fn a_tiny_terminal_keeps_the_prompt_and_cuts_with_an_ellipsis() {
    let mut h = seed_prompt();
    h.type_text("HGETALL h").press("<Enter>");
    h.type_text("SET a 0123456789012345678901234567890123456789012345678901234567890123456789");
    let screen = h.render(60, 15);
    let prompt = rows_with(&screen, "redis (seed)>");
    assert_eq!(
        prompt,
        vec!["┃redis (seed)> …890123456789012345678901234567890123456789 ┃"],
        "{screen}"
    );
    // Two reply rows fit: the second says how many follow.
    assert!(screen.contains("┃1) \"f1\""), "{screen}");
    assert!(screen.contains("┃… 2 more lines (PgDn)"), "{screen}");
    h.press("<PageDown>");
    let screen = h.render(60, 15);
    assert!(screen.contains("┃4) \"v2\""), "{screen}");
}

fn live_workbench(server: &RedisServer) -> Harness {
    common::isolate_app_dirs();
    let target = TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..TargetSpec::default()
    }
    .resolve()
    .expect("target");
    let mut h = Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis 7.0.15 test-server")
        .expect("connect");
    h.press("<A-5>");
    assert_eq!(h.app.tab, Tab::Server);
    h.press(":");
    assert!(matches!(h.app.overlay, Some(Overlay::Command)));
    h
}

/// `cmdstat_set:calls=N` of INFO commandstats (0 when SET never ran).
fn set_calls(conn: &mut common::Conn) -> u64 {
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO is a bulk string");
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn live_reads_run_writes_ask_keys_is_refused() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    conn.cmd(&["SET", "counter", "41"]);
    conn.cmd(&["CONFIG", "RESETSTAT"]);
    let mut h = live_workbench(&server);
    let screen = h.render(100, 30);
    assert_eq!(rows_with(&screen, "redis (live)>").len(), 1, "{screen}");

    h.type_text("GET counter").press("<Enter>");
    assert_eq!(h.app.status, "\"41\"");

    // A write asks; n sends nothing.
    h.type_text("SET counter 42").press("<Enter>");
    assert_eq!(
        h.app.status,
        "SET writes to the live server: send it? (y/n)"
    );
    let screen = h.render(100, 30);
    assert_eq!(
        rows_with(&screen, "send it?"),
        vec!["┃SET writes to the live server: send it? y sends, n or Esc sends nothing                           ┃", " SET writes to the live server: send it? (y/n) │"],
        "{screen}"
    );
    h.press("n");
    assert_eq!(h.app.status, "nothing was sent");
    assert_eq!(set_calls(&mut conn), 0);
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"41".to_vec()));

    // y writes.
    h.press("<Up>").press("<Enter>").press("y");
    assert_eq!(h.app.status, "OK");
    assert_eq!(set_calls(&mut conn), 1);
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"42".to_vec()));

    // KEYS is refused with what to use instead; nothing reaches the server.
    h.type_text("KEYS *").press("<Enter>");
    assert_eq!(
        h.app.status,
        "KEYS is not sent: it walks every key in one call and blocks…"
    );
    assert_eq!(
        h.app.command.output.join("\n"),
        "KEYS is not sent: it walks every key in one call and blocks the server; use SCAN 0 MATCH <pattern> COUNT 100 (the Server tab's / filter scans for you)"
    );
    let Reply::Bulk(info) = conn.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO is a bulk string");
    };
    assert!(!String::from_utf8_lossy(&info).contains("cmdstat_keys"));

    // A refusal longer than the status line is whole in the panel, wrapped.
    h.type_text("FLUSHALL").press("<Enter>");
    let screen = h.render(100, 30);
    assert_eq!(
        rows_with(&screen, "FLUSHALL is not sent"),
        vec![
            "┃FLUSHALL is not sent: it deletes every key; delete keys one by one (DEL, UNLINK) or use redis-cli ┃",
            " FLUSHALL is not sent: it deletes every key; delete keys one… │"
        ],
        "{screen}"
    );
    assert!(screen.contains("┃if you mean it"), "{screen}");
    assert_eq!(conn.cmd(&["GET", "counter"]), Reply::Bulk(b"42".to_vec()));

    // The server's own error for an unknown command.
    h.type_text("NOPE a").press("<Enter>");
    assert_eq!(
        h.app.command.output.join("\n"),
        "(error) ERR unknown command 'NOPE', with args beginning with: 'a' "
    );
}

#[test]
fn a_large_live_reply_is_bounded_with_a_count() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let mut conn = server.connect();
    let mut hset = vec![b"HSET".to_vec(), b"big".to_vec()];
    for i in 0..5000 {
        hset.push(format!("f{i}").into_bytes());
        hset.push(format!("v{i}").into_bytes());
    }
    conn.pipeline(&[hset]);
    let mut h = live_workbench(&server);
    h.type_text("HGETALL big").press("<Enter>");
    let output = &h.app.command.output;
    assert_eq!(output.len(), 1002, "{:?}", &output[output.len() - 3..]);
    assert_eq!(output[1000], "1001) … 9,000 more (10,000 elements)");
    assert_eq!(
        output[1001],
        "(the reply is cut: it shows its first 1,000 elements and 64 KiB)"
    );
}

#[test]
fn a_write_is_never_sent_to_a_replica() {
    let Some(master) = RedisServer::start() else {
        return;
    };
    let port = master.port.to_string();
    let Some(replica) = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]) else {
        return;
    };
    let mut h = live_workbench(&replica);
    h.type_text("SET k 1").press("<Enter>");
    assert!(h.app.command.asking.is_none());
    assert_eq!(
        h.app.status,
        "SET is not sent: the server is a replica (role slave); writ…"
    );
    assert_eq!(
        h.app.command.output.join("\n"),
        "SET is not sent: the server is a replica (role slave); writes go to its master"
    );
    assert_eq!(master.connect().cmd(&["EXISTS", "k"]), Reply::Int(0));
}
