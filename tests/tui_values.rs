//! Every value readable: the value inspector (open, scroll, wrap, forms, search, yank, Esc) and
//! the viewers that show values in the panes.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::Tab;
use evalbench::tui::harness::Harness;

const DOC: &str = r#"{"user":{"id":7,"name":"ann"},"tags":["a","b"],"note":"{\"nested\":true}"}"#;

fn json_run() -> Harness {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "redis.call('SET', KEYS[1], ARGV[1])\nreturn redis.call('GET', KEYS[1])",
        &["doc"],
        &[DOC],
        "",
    );
    h.keys("<F5> <A-1>");
    h
}

/// The screen with the focused pane's heavy border drawn light (and its ❯ mark left out): the
/// assertions are about the text inside.
fn render(h: &Harness, width: u16, height: u16) -> String {
    h.render(width, height)
        .replace("┏❯", "┌")
        .chars()
        .map(|c| match c {
            '┏' => '┌',
            '┓' => '┐',
            '┗' => '└',
            '┛' => '┘',
            '┃' => '│',
            '━' => '─',
            c => c,
        })
        .collect()
}

fn rows(screen: &str) -> Vec<&str> {
    screen.lines().collect()
}

#[test]
fn v_on_a_trace_row_opens_its_call_pretty_printed_and_esc_closes_it() {
    let mut h = json_run();
    assert_eq!(h.app.tab, Tab::Trace);
    h.keys("j v");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(
        r[0].starts_with("┌ Inspect: call 2 (line 2) · JSON · wrap on ───"),
        "{screen}"
    );
    // The command is not JSON (said so, in place), the reply is, with the JSON inside its
    // "note" string expanded.
    assert_eq!(
        r[1],
        "│command                                                                       │"
    );
    assert!(
        r[2].starts_with("│(not JSON: expected value at line 1 column 1; m shows another form)"),
        "{screen}"
    );
    assert_eq!(
        r[3],
        "│reply                                                                         │"
    );
    let body: Vec<&str> = r[4..19]
        .iter()
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').trim_end())
        .collect();
    assert_eq!(
        body,
        [
            "{",
            "  \"user\": {",
            "    \"id\": 7,",
            "    \"name\": \"ann\"",
            "  },",
            "  \"tags\": [",
            "    \"a\",",
            "    \"b\"",
            "  ],",
            "  \"note\": {",
            "    \"nested\": true",
            "  }",
            "}",
            "",
            "",
        ]
    );
    assert!(
        r[21].contains("w wrap · m text/JSON/msgpack/hex · / search · n N · y yank · Esc close"),
        "{screen}"
    );
    h.press("<Esc>");
    assert!(h.app.overlay.is_none());
    let screen = render(&h, 80, 24);
    assert!(!screen.contains("Inspect:"), "{screen}");
    assert!(screen.contains("Trace"), "{screen}");
}

#[test]
fn m_cycles_msgpack_hex_and_text_and_every_hex_row_fits() {
    let mut h = json_run();
    h.keys("j v");
    render(&h, 80, 24);
    h.press("m");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(r[0].contains("· msgpack · wrap on"), "{screen}");
    // Text is not taken for a row of msgpack integers.
    assert_eq!(
        r[5],
        "│(not msgpack: plain text (cmsgpack.unpack would read its 74 bytes as 74 small │"
    );
    h.press("m");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(r[0].contains("· hex · wrap on"), "{screen}");
    assert_eq!(
        r[2],
        "│00000000  47 45 54 20 64 6f 63                             GET doc            │"
    );
    assert_eq!(
        r[4],
        "│00000000  7b 22 75 73 65 72 22 3a 7b 22 69 64 22 3a 37 2c  {\"user\":{\"id\":7,   │"
    );
    assert_eq!(
        r[8],
        "│00000040  5c 22 3a 74 72 75 65 7d 22 7d                    \\\":true}\"}         │"
    );
    // At 40 columns the rows hold 6 bytes and still show every one.
    let narrow = render(&h, 40, 24);
    let r = rows(&narrow);
    assert_eq!(r[2], "│00000000  47 45 54 20 64 6f  GET do   │");
    assert_eq!(r[3], "│00000006  63                 c        │");
    assert_eq!(r[5], "│00000000  7b 22 75 73 65 72  {\"user   │");
    h.press("m");
    let screen = render(&h, 80, 24);
    assert!(rows(&screen)[0].contains("· text · wrap on"), "{screen}");
}

#[test]
fn wrap_off_cuts_with_an_ellipsis_and_scrolls_sideways() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return string.rep('0123456789', 15)", &[], &[], "");
    h.keys("<F5> <A-2> v");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(r[0].contains("· text · wrap on"), "{screen}");
    let digits = "0123456789".repeat(15);
    // Wrap on: 78 characters a row, the rest on the next.
    assert_eq!(r[2], format!("│{}│", &digits[..78]));
    assert_eq!(r[3], format!("│{:<78}│", &digits[78..]));
    h.press("w");
    assert_eq!(
        h.app.status,
        "wrap off: ← → scroll sideways (a cut line ends in …)"
    );
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(r[0].contains("· text · wrap off"), "{screen}");
    assert_eq!(r[2], format!("│{}…│", &digits[..77]));
    assert_eq!(r[3], format!("│{:<78}│", "Lua value returned"));
    h.press("<Right>");
    let screen = render(&h, 80, 24);
    assert_eq!(rows(&screen)[2], format!("│{}…│", &digits[39..116]));
    h.press("<Right>");
    let screen = render(&h, 80, 24);
    assert_eq!(rows(&screen)[2], format!("│{:<78}│", &digits[78..]));
    h.press("w");
    assert_eq!(h.app.status, "wrap on: long lines go on over the next rows");
    h.press("<Right>");
    assert_eq!(
        h.app.status,
        "wrap is on: every character is in view (w turns it off)"
    );
}

#[test]
fn slash_searches_n_moves_and_y_yanks_through_osc_52() {
    let mut h = json_run();
    h.keys("j v");
    render(&h, 80, 24);
    h.press("/");
    h.type_text("E");
    let screen = render(&h, 80, 24);
    assert!(
        screen.contains("│/E   Enter searches, Esc cancels"),
        "the search being typed shows on the last row: {screen}"
    );
    h.press("<Enter>");
    // Any case: "e" of the command's note and labels, and of the pretty reply.
    assert_eq!(h.app.status, "13 matches for 'E' (n next, N previous)");
    let screen = render(&h, 80, 24);
    assert!(rows(&screen)[0].contains("· match 1/13"), "{screen}");
    h.press("n");
    assert_eq!(h.app.status, "match 2/13");
    h.keys("n n n n n n n n n n n");
    assert_eq!(h.app.status, "match 13/13");
    h.press("n");
    assert_eq!(h.app.status, "match 1/13 (wrapped around)");
    h.press("N");
    assert_eq!(h.app.status, "match 13/13 (wrapped around)");
    h.press("y");
    let yanked = String::from_utf8(h.clipboard.last().unwrap().clone()).unwrap();
    assert!(yanked.starts_with("command\n(not JSON"), "{yanked}");
    assert!(
        yanked.ends_with("  \"note\": {\n    \"nested\": true\n  }\n}"),
        "{yanked}"
    );
    assert_eq!(
        h.app.status,
        format!(
            "yanked {} bytes (JSON) to the system clipboard",
            yanked.len()
        )
    );
    // What reaches the terminal: one OSC 52 sequence, base64 inside.
    let sequence = evalbench::tui::editing::osc52(yanked.as_bytes());
    assert!(sequence.starts_with("\x1b]52;c;Y29tbWFuZA"), "{sequence:?}");
    assert!(sequence.ends_with('\x07'));
    // A key the inspector does not know says what its keys are; the pane behind gets nothing.
    h.press("x");
    assert_eq!(
        h.app.status,
        "the inspector: w wrap · m form · / search · n N · y yank · Esc closes"
    );
    assert!(h.app.overlay.is_some());
}

#[test]
fn j_k_and_pages_scroll_a_long_value() {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "local t = {} for i = 1, 60 do t[i] = 'line ' .. i end return table.concat(t, '\\n')",
        &[],
        &[],
        "",
    );
    h.keys("<F5> <A-2> v");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(r[0].contains("rows 1-20/"), "{screen}");
    assert_eq!(
        r[2],
        "│line 1                                                                        │"
    );
    h.keys("j j");
    let r2 = render(&h, 80, 24);
    assert_eq!(
        rows(&r2)[2],
        "│line 3                                                                        │"
    );
    h.press("<PageDown>");
    let r3 = render(&h, 80, 24);
    assert_eq!(
        rows(&r3)[2],
        "│line 22                                                                       │"
    );
    h.press("<End>");
    let end = render(&h, 80, 24);
    assert!(end.contains("│line 60 "), "{end}");
    h.press("<Home>");
    let top = render(&h, 80, 24);
    assert_eq!(
        rows(&top)[2],
        "│line 1                                                                        │"
    );
}

#[test]
fn v_where_there_is_nothing_to_inspect_says_why() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1", &[], &[], "");
    h.keys("<A-1> v");
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.status, "nothing to inspect yet: F5 runs the script");
    h.keys("<F5> <A-1> v");
    assert_eq!(
        h.app.status,
        "the run made no redis.call: nothing to inspect in the trace"
    );
}

#[test]
fn big_v_inspects_a_seed_key_in_the_keyspace_tab() {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "return 1",
        &[],
        &[],
        r#"{"h": {"type": "hash", "value": {"field": "{\"a\":1}"}}}"#,
    );
    h.keys("<A-3> V");
    let screen = render(&h, 80, 24);
    let r = rows(&screen);
    assert!(
        r[0].contains("Inspect: key 'h' · JSON · wrap on"),
        "{screen}"
    );
    let body: Vec<&str> = r[1..10]
        .iter()
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').trim_end())
        .collect();
    assert_eq!(
        body,
        [
            "{",
            "  \"type\": \"hash\",",
            "  \"value\": {",
            "    \"field\": {",
            "      \"a\": 1",
            "    }",
            "  }",
            "}",
            ""
        ]
    );
}

fn live(server: &common::RedisServer) -> Harness {
    common::isolate_app_dirs();
    let target = evalbench::engine::live::TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..Default::default()
    }
    .resolve()
    .expect("target");
    Harness::new("return 1", &[], &[], "")
        .with_live(target, "redis test-server")
        .expect("connect")
}

/// The value pane's rows (inside the border) of the Server tab, below its title row.
fn value_rows(screen: &str, title: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.contains(title))
        .unwrap_or_else(|| panic!("no {title:?} in {screen}"));
    let left = lines[top].find('┌').unwrap();
    let left = lines[top][..left].chars().count();
    lines[top + 1..]
        .iter()
        .take_while(|l| l.chars().nth(left).is_none_or(|c| c != '└'))
        .map(|l| {
            let row: String = l.chars().skip(left + 1).collect();
            row.trim_end().trim_end_matches('│').to_string()
        })
        .collect()
}

#[test]
fn the_server_tabs_string_rows_fit_the_pane_and_show_every_byte() {
    let Some((server, mut conn)) = common::server_with(&[]) else {
        return;
    };
    let digits = "0123456789".repeat(10);
    conn.cmd(&["SET", "text", &digits]);
    let binary: Vec<u8> = (0u8..=99).map(|b| b.wrapping_mul(37)).collect();
    conn.cmd_bytes(&[b"SET", b"blob", &binary]);
    let mut h = live(&server);
    h.keys("<A-5> o");
    h.type_text("text\n");
    // 100 columns: the pane is 45 wide, 43 inside its border.
    let screen = render(&h, 100, 30);
    let rows = value_rows(&screen, "string 'text'");
    assert!(rows.iter().all(|r| r.chars().count() <= 43), "{screen}");
    assert!(!screen.contains('…'), "nothing cut: {screen}");
    assert_eq!(rows[0], &digits[..43]);
    assert_eq!(rows.concat().trim_end(), digits, "{screen}");
    // Binary: hex rows as wide as the pane (8 bytes each), every byte on one.
    h.press("o");
    h.type_text("blob\n");
    let screen = render(&h, 100, 30);
    let rows = value_rows(&screen, "string 'blob'");
    assert_eq!(rows[0], "00000000  00 25 4a 6f 94 b9 de 03  .%Jo....");
    assert!(rows.iter().all(|r| r.chars().count() <= 43), "{screen}");
    let hex: Vec<u8> = rows
        .iter()
        .filter(|r| r.starts_with('0'))
        .flat_map(|r| {
            r[10..34]
                .split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    // The pane shows the first rows; the inspector (v) the whole value.
    assert_eq!(hex, binary[..hex.len()], "{screen}");
    h.press("v");
    let whole = render(&h, 100, 30);
    assert!(whole.contains("Inspect: string 'blob' · hex"), "{whole}");
    assert!(whole.contains("│00000050  90 b5 da ff 24 49 6e 93 b8 dd 02 27 4c 71 96 bb e0 05 2a 4f  ....$In....'Lq....*O"), "{whole}");
}

#[test]
fn a_compile_error_shows_in_full_at_its_line_and_in_the_trace() {
    common::isolate_app_dirs();
    let mut h = Harness::new("local x = 1\nlocal y = = 2\nreturn x", &[], &[], "");
    h.keys("<F5> <A-1>");
    let screen = render(&h, 100, 30);
    let r = rows(&screen);
    // Beside the line: the compiler's words, not its preamble, cut with an ellipsis here.
    assert!(
        r[2].starts_with("│  2 local y = = 2  ◀ compile error: unexpected symbo…│"),
        "{screen}"
    );
    // The editor's bottom border has them whole.
    assert!(
        r[23].starts_with("└ ✗ line 2: compile error: unexpected symbol near '=' ┘"),
        "{screen}"
    );
    let wide = render(&h, 200, 60);
    assert!(
        wide.contains("│  2 local y = = 2  ◀ compile error: unexpected symbol near '='  "),
        "{wide}"
    );
    // The Trace has no call to list: it says why, in full.
    let trace: String = r[2..8]
        .iter()
        .map(|l| l.split('│').nth(3).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        trace.split_whitespace().collect::<Vec<_>>().join(" "),
        "No redis.call in this run. It stopped with an error at line 2: ERR Error compiling script (new function): user_script:2: unexpected symbol near '='",
        "{screen}"
    );
}

#[test]
fn a_cut_trace_reply_ends_in_an_ellipsis_and_the_marks_stay() {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "redis.call('SET', KEYS[1], string.rep('v', 200))\nreturn redis.call('GET', KEYS[1])",
        &["k"],
        &[],
        "",
    );
    h.keys("<F5> <A-1>");
    for (w, hgt) in [(80, 24), (100, 30), (200, 60)] {
        let screen = render(&h, w, hgt);
        let set_row = screen
            .lines()
            .find(|l| l.contains("SET k"))
            .unwrap_or_else(|| panic!("{screen}"));
        // The command is cut (…) in its column; the write mark W is still there.
        assert!(set_row.contains("SET k vvv"), "{screen}");
        assert!(set_row.contains("… "), "{w}x{hgt}: {set_row}");
        assert!(
            set_row.trim_end_matches('│').trim_end().ends_with('W'),
            "{w}x{hgt}: {set_row}"
        );
        let get_row = screen.lines().find(|l| l.contains("GET k")).unwrap();
        assert!(get_row.contains("\"vvvv"), "{get_row}");
        assert!(
            get_row.contains("…"),
            "{w}x{hgt}: the 200-byte reply is cut: {get_row}"
        );
    }
}

#[test]
fn the_crossslot_mark_survives_narrow_terminals() {
    common::isolate_app_dirs();
    let h = Harness::new(
        "return 1",
        &[
            "user:1000:profile",
            "user:2000:profile",
            "order:3000:items",
            "cart:4000",
        ],
        &[],
        "",
    );
    for (w, hgt) in [(80, 24), (100, 30), (200, 60)] {
        let screen = render(&h, w, hgt);
        assert!(
            screen.contains("⚠ 4 slots (CROSSSLOT)"),
            "{w}x{hgt}: {screen}"
        );
    }
}

#[test]
fn the_overview_reads_in_human_units_and_names_the_users_script_in_the_slow_log() {
    let Some((server, mut conn)) = common::server_with(&[("slowlog-log-slower-than", "0")]) else {
        return;
    };
    conn.cmd(&["SET", "k", "v"]);
    common::isolate_app_dirs();
    let target = evalbench::engine::live::TargetSpec {
        url: Some(format!("redis://127.0.0.1:{}", server.port)),
        ..Default::default()
    }
    .resolve()
    .expect("target");
    let mut h = Harness::new(
        "-- reads the key\nreturn redis.call('GET', KEYS[1])",
        &["k"],
        &[],
        "",
    )
    .with_live(target, "redis test-server")
    .expect("connect");
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().map(|r| r.report.reply.clone()),
        Some(evalbench::engine::Reply::bulk("v")),
        "{}",
        h.app.status
    );
    // The Server tab's own reads stay out of the slow log from here on.
    conn.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "10000000"]);
    h.keys("<A-5> i");
    let screen = render(&h, 200, 40);
    // Units people read: no "uptime (s) 495", no "maxmemory 0B".
    assert!(screen.contains(" · uptime "), "{screen}");
    assert!(!screen.contains("uptime (s)"), "{screen}");
    assert!(screen.contains(" · maxmemory no limit"), "{screen}");
    // The slow log names the script as the user wrote it, never the traced copy's prelude.
    assert!(!screen.contains("__eb_"), "{screen}");
    let line = screen
        .lines()
        .find(|l| l.contains("  EVAL_RO ‹untitled: return redis.call('GET', KEYS[1])› 1 k  "))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        line.contains(" µs  EVAL") || line.contains(" ms  EVAL"),
        "{line}"
    );
}

#[test]
fn the_server_tabs_hash_values_line_up() {
    let Some((server, mut conn)) = common::server_with(&[]) else {
        return;
    };
    conn.cmd(&["HSET", "h", "a", "1", "longer_field", "2", "mid", "three"]);
    let mut h = live(&server);
    h.keys("<A-5> o");
    h.type_text("h\n");
    let screen = render(&h, 100, 30);
    let rows = value_rows(&screen, "hash 'h'");
    let mut shown: Vec<&str> = rows
        .iter()
        .map(|r| r.trim_end())
        .filter(|r| !r.is_empty())
        .collect();
    shown.sort();
    assert_eq!(
        shown,
        ["a             1", "longer_field  2", "mid           three"],
        "{screen}"
    );
}

#[test]
fn a_failing_tests_keyspace_reads_as_typed_differences_and_v_shows_expected_and_got() {
    common::isolate_app_dirs();
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let script = "redis.call('ZADD', KEYS[1], 5, 'bob', 3, 'carol')\nreturn 1\n";
    let path = dir.join("lb.lua");
    std::fs::write(&path, script).unwrap();
    std::fs::write(
        dir.join("lb.test.toml"),
        "[[case]]\nname = \"scores\"\nkeys = [\"lb\"]\nseed = { lb = { type = \"zset\", value = [[\"ann\", 1], [\"bob\", 2]] } }\nreply = { int = 1 }\nkeyspace = { lb = { type = \"zset\", value = [[\"ann\", 1], [\"bob\", 2], [\"dave\", 4]] } }\n",
    )
    .unwrap();
    let mut h = Harness::new(script, &["lb"], &[], "");
    h.app.editor = evalbench::tui::editor::EditorState::new(script, Some(path));
    h.press("<C-t>");
    assert_eq!(h.app.tab, Tab::Tests);
    let screen = render(&h, 200, 40);
    assert!(
        screen.contains("line 1: key \"lb\" (zset), expected → got: bob 2 → 5, +carol 3, -dave 4"),
        "{screen}"
    );
    assert!(!screen.contains("{\"type\""), "{screen}");
    h.press("v");
    let screen = render(&h, 100, 40);
    let r = rows(&screen);
    assert!(r[0].contains("Inspect: case \"scores\" · JSON"), "{screen}");
    assert_eq!(r[1].trim_end_matches('│').trim_end(), "│differences");
    assert!(screen.contains("│expected "), "{screen}");
    assert!(screen.contains("│got "), "{screen}");
    h.press("<End>");
    let end = render(&h, 100, 40);
    assert!(end.contains("│          \"carol\","), "{end}");
}
