//! The workbench's Race tab by keys: Alt-8 runs the editor's script as 2 clients under the four
//! strategies, lists the outcomes, and `]` / `[` replay the chosen one step by step with the
//! keyspace then.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::Tab;
use evalbench::tui::harness::Harness;

const STOCK: &str = "local stock = tonumber(redis.call('GET', KEYS[1]))\nif stock > 0 then\n  redis.call('SET', KEYS[1], stock - 1)\n  return 1\nend\nreturn 0";

/// Press Alt-8 and wait for the lab's thread, as the event loop's ticks do.
fn race(h: &mut Harness) {
    h.press("<A-8>");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the race lab did not finish in 30 s");
}

fn stock() -> Harness {
    common::isolate_app_dirs();
    Harness::new(STOCK, &["stock"], &[], r#"{"stock": "1"}"#)
}

#[test]
fn alt_8_runs_the_script_as_a_race_lab_and_replays_the_losing_interleaving() {
    let mut h = stock();
    let before = h.render(120, 40);
    assert!(!before.contains("Race"), "no Race tab before a lab ran");
    race(&mut h);
    assert_eq!(h.app.tab, Tab::Race);
    let screen = h.render(120, 40);
    // The outcomes: plain's lost update (both clients sold the one item) first.
    assert!(
        screen.contains(r#"plain       4 sched. LOST   stock: "1" → "0""#),
        "{screen}"
    );
    assert!(
        screen.contains(r#"script      1 sched. serial stock: "1" → "0""#),
        "{screen}"
    );
    assert!(
        screen.contains("multi       1 sched. error  keyspace as seeded"),
        "{screen}"
    );
    assert!(
        screen.contains("Schedule 1 2 1 2 (1/4, Enter: next) · step 1/4"),
        "{screen}"
    );
    assert!(
        screen.contains("keyspace after step 1: keyspace as seeded"),
        "{screen}"
    );
    // Step to the second SET: both clients wrote 0.
    h.keys("] ] ]");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Schedule 1 2 1 2 (1/4, Enter: next) · step 4/4"),
        "{screen}"
    );
    assert!(
        screen.contains(" 4. client 2: SET stock 0 -> OK"),
        "{screen}"
    );
    assert!(
        screen.contains(r#"keyspace after step 4: stock: "1" → "0""#),
        "{screen}"
    );
    assert!(screen.contains("client 1 success: (integer) 1"), "{screen}");
    assert!(screen.contains("client 2 success: (integer) 1"), "{screen}");
    insta::assert_snapshot!("race_lost_update_step_4_120x40", screen);
    // Back one step, then another outcome: its replay starts at step 1.
    h.keys("[");
    assert!(h
        .render(120, 40)
        .contains("keyspace after step 3: stock: \"1\" → \"0\""));
    h.keys("<Down>");
    let screen = h.render(120, 40);
    assert!(screen.contains("Schedule 1 1 2 · step 1/3"), "{screen}");
}

#[test]
fn a_script_that_does_not_compile_says_where_and_opens_no_tab() {
    common::isolate_app_dirs();
    let mut h = Harness::new("local x = = 1", &["k"], &[], "");
    race(&mut h);
    assert_eq!(h.app.tab, Tab::Trace);
    assert_eq!(
        h.app.status,
        "race lab: (editor):1:1: logic:1: unexpected symbol near '='"
    );
}

#[test]
fn a_lab_file_in_the_editor_runs_as_written_and_shows_the_broken_invariant() {
    common::isolate_app_dirs();
    let mut h = Harness::new("", &[], &[], "");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/labs/lock_release.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    h.app.editor = evalbench::tui::editor::EditorState::new(&text, Some(path));
    race(&mut h);
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Race (2 clients) · outcome 1/10: lock release"),
        "{screen}"
    );
    // Client 1's DEL after client 2 took the lock: nobody holds it.
    assert!(
        screen.contains("plain       1 sched. BROKEN -lock string "),
        "{screen}"
    );
    // Choose that outcome (the third of plain's) and step to the DEL.
    h.keys("<Down> <Down> ] ] ]");
    let screen = h.render(120, 40);
    assert!(screen.contains("Schedule 1 2 2 1 · step 4/4"), "{screen}");
    assert!(
        screen.contains(" 4. client 1: DEL lock -> (integer) 1"),
        "{screen}"
    );
    assert!(
        screen.contains("keyspace after step 4: -lock string"),
        "{screen}"
    );
    assert!(
        screen.contains("broken: redis.call('EXISTS', 'lock') == 1 (false)"),
        "{screen}"
    );
}

#[test]
fn on_a_small_terminal_the_race_tab_shows_an_outcome_with_what_each_client_got_and_a_step() {
    let mut h = stock();
    race(&mut h);
    let screen = h.render(80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let title = rows
        .iter()
        .position(|l| l.contains("Race (2 clients) · outcome 1/"))
        .unwrap_or_else(|| panic!("{screen}"));
    // The first outcome (plain's lost update: both clients sold the one item) and what each got.
    assert_eq!(
        rows[title + 1].trim_end(),
        "┃plain       4 sched. LOST   stock: \"1\" → \"0\"  1:(integer) 1 2:(integer) 1     ┃",
        "{screen}"
    );
    // The panes keep eight rows at 80x24: the steps show under the schedule.
    assert!(
        screen.contains("│ 1. client 1: GET stock -> \"1\"  "),
        "{screen}"
    );
}

/// A lab of many steps shows that it runs and Esc stops it: no report, the workbench free again.
#[test]
fn esc_cancels_a_long_race_lab() {
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "for i = 1, 2000 do redis.call('INCR', KEYS[1]) end\nreturn 1",
        &["c"],
        &[],
        "{}",
    );
    h.press("<A-8>");
    assert!(h.app.race_pending.is_some());
    // The lab's thread may already have told its progress when the key's effects settle: either
    // line is what the user can see, and both say how to stop.
    let status = h.app.status.clone();
    let progress = status.starts_with("race lab: ")
        && status.ends_with(" steps… (Esc stops)")
        && status.contains(" schedules, ");
    assert!(
        status == "race lab: 2 clients, running every interleaving… (Esc stops)" || progress,
        "{status}"
    );
    h.press("<Esc>");
    assert_eq!(h.app.status, "race lab: cancelling…");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(h.app.race_pending.is_none(), "the lab did not stop in 30 s");
    assert_eq!(h.app.status, "race lab: cancelled");
    assert!(h.app.race.is_none());
}

fn stock_script() -> Harness {
    common::isolate_app_dirs();
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/stock_decrement.lua"),
    )
    .unwrap();
    Harness::new(
        &script,
        &["stock:sku-123"],
        &["3"],
        r#"{"stock:sku-123": "10"}"#,
    )
}

#[test]
fn an_error_is_no_lost_update_and_rows_out_of_view_are_counted_at_100x28() {
    let mut h = stock_script();
    race(&mut h);
    let screen = h.render(100, 28);
    assert!(!screen.contains("LOST"), "{screen}");
    assert!(
        screen.contains("multi       2 sched. error  keyspace as se…"),
        "{screen}"
    );
    // Nine outcome rows, eight shown: the bottom border counts the rest.
    assert!(
        screen.contains("┏❯Race (2 clients) · outcome 1/9: (editor)"),
        "{screen}"
    );
    assert!(screen.contains("┗ ↓1 more ━"), "{screen}");
    h.keys("<End>");
    let screen = h.render(100, 28);
    assert!(screen.contains("┗ ↑1 more ━"), "{screen}");
    assert!(!screen.contains("↓1 more"), "{screen}");
    // WATCH's retries in the outcome's detail (the row is cut at this width); at 200 wide on the
    // row, after the key's change from the seed.
    h.keys("<Up> <Up>");
    let screen = h.render(100, 28);
    assert!(
        screen.contains("client 1 retried (1 WATCH retry)"),
        "{screen}"
    );
    let screen = h.render(200, 28);
    assert!(
        screen.contains(r#"stock:sku-123: "10" → "4"  1:(integer) 4 (1 retry)"#),
        "{screen}"
    );
}

#[test]
fn enter_replays_the_outcomes_next_schedule() {
    let mut h = stock();
    race(&mut h);
    // Plain's lost update is reached by four orders: each one replayed in turn.
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Schedule 1 2 1 2 (1/4, Enter: next) · step 1/4"),
        "{screen}"
    );
    h.keys("<Enter>");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Schedule 1 2 2 1 (2/4, Enter: next) · step 1/4"),
        "{screen}"
    );
    h.keys("] ] ]");
    let screen = h.render(120, 40);
    assert!(
        screen.contains(" 3. client 2: SET stock 0 -> OK"),
        "{screen}"
    );
    assert!(
        screen.contains(" 4. client 1: SET stock 0 -> OK"),
        "{screen}"
    );
    h.keys("<Enter> <Enter> <Enter>");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Schedule 1 2 1 2 (1/4, Enter: next) · step 1/4"),
        "{screen}"
    );
}

#[test]
fn a_lab_file_runs_on_f5_and_is_checked_as_toml_not_linted_as_lua() {
    common::isolate_app_dirs();
    let mut h = Harness::new("", &[], &[], "");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/labs/lock_release.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    h.app.editor = evalbench::tui::editor::EditorState::new(&text, Some(path.clone()));
    h.press("<F5>");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(h.app.tab, Tab::Race);
    assert!(h.app.editor.error.is_none());
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Race (2 clients) · outcome 1/10: lock release"),
        "{screen}"
    );
    // The lab as TOML: a good file has no finding; a bad logic line is placed in the file.
    let diagnostics = evalbench::tui::lint_diagnostics::toml_diagnostics(&path, &text);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let broken = text.replace("return redis.call('DEL', KEYS[1])", "return = 1");
    let found: Vec<(usize, String)> =
        evalbench::tui::lint_diagnostics::toml_diagnostics(&path, &broken)
            .into_iter()
            .map(|d| (d.line, d.message))
            .collect();
    assert_eq!(
        found,
        vec![(11, "logic:3: unexpected symbol near '='".to_string())]
    );
    let found: Vec<(usize, usize, String)> =
        evalbench::tui::lint_diagnostics::toml_diagnostics(&path, "clients = [\n")
            .into_iter()
            .map(|d| (d.line, d.column, d.message))
            .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 2, "{found:?}");
}

#[test]
fn a_lab_file_in_the_editor_is_linted_as_a_lab_not_as_lua() {
    common::isolate_app_dirs();
    let mut h = Harness::new("", &[], &[], "");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/labs/lock_release.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("return redis.call('DEL', KEYS[1])", "return = 1");
    h.app.editor = evalbench::tui::editor::EditorState::new(&text, Some(path));
    h.app.lint.enabled = true;
    h.app.lint.idle = std::time::Duration::ZERO;
    let sha = h.app.editor.sha1();
    let waited = std::time::Instant::now();
    h.settle();
    while !h.app.lint.current(&sha) {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(30),
            "the lint never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        h.settle();
    }
    let found: Vec<(usize, String)> = h
        .app
        .lint
        .diagnostics()
        .iter()
        .map(|d| (d.line, d.message.clone()))
        .collect();
    // The logic's syntax error at its line in the file; nothing about `[[client]]` as Lua.
    assert_eq!(
        found,
        vec![(11, "logic:3: unexpected symbol near '='".to_string())]
    );
}

/// The cells of `text` on the screen's row that holds it: its foreground colours.
fn colours_of(h: &Harness, needle: &str) -> Vec<Option<ratatui::style::Color>> {
    let buffer = h.render_buffer(200, 40).unwrap();
    for y in 0..buffer.area.height {
        let row: Vec<String> = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        let text: String = row.concat();
        if let Some(at) = text.find(needle) {
            let start = text[..at].chars().count() as u16;
            return (start..start + needle.chars().count() as u16)
                .map(|x| {
                    let fg = buffer[(x, y)].fg;
                    (fg != ratatui::style::Color::Reset).then_some(fg)
                })
                .collect();
        }
    }
    panic!("{needle:?} is not on the screen:\n{}", h.render(200, 40));
}

#[test]
fn each_client_has_its_colour_beside_its_number_and_plus_minus_change_the_count() {
    let mut h = stock();
    race(&mut h);
    let (one, two) = (h.theme.client(1).fg, h.theme.client(2).fg);
    assert_ne!(one, two);
    // The step list: the client's number in its colour (the selected step is reversed).
    h.press("]");
    assert_eq!(
        colours_of(&h, " 2. client 2: GET stock"),
        [
            vec![None; 4],
            vec![two; "client 2".len()],
            vec![None; ": GET stock".len()]
        ]
        .concat()
    );
    // How each client ended, and what each got in the outcome row.
    assert_eq!(colours_of(&h, "client 1 success"), {
        let mut c = vec![one; "client 1".len()];
        c.extend(vec![None; " success".len()]);
        c
    });
    assert_eq!(
        colours_of(&h, " 1:(integer) 1 2:(integer) 1"),
        [
            vec![one; " 1:(integer) 1".len()],
            vec![two; " 2:(integer) 1".len()]
        ]
        .concat()
    );
    // + runs the lab again with a client more, - with one fewer; never out of 2..8.
    h.press("+");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let screen = h.render(120, 40);
    assert!(screen.contains("Race (3 clients) · outcome 1/"), "{screen}");
    assert_eq!(h.app.race.as_ref().unwrap().report.clients, 3);
    let three = h.theme.client(3).fg;
    assert_ne!(three, one);
    assert_ne!(three, two);
    assert_eq!(
        colours_of(&h, "client 3 ")[..8],
        vec![three; 8][..],
        "{screen}"
    );
    h.press("-");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(h.app.race.as_ref().unwrap().report.clients, 2);
    h.press("-");
    assert_eq!(
        h.app.status,
        "race lab: 2 clients already, the fewest a lab runs (2 to 8)"
    );
    assert!(h.app.race_pending.is_none());
}

/// A lab written from docs/tools.md alone, in a folder outside the repository, runs on F5: the
/// write-back from a stale read is the lost update, and WATCH's retry shows.
#[test]
fn a_lab_from_the_docs_in_a_folder_of_its_own_runs_in_the_workbench() {
    common::isolate_app_dirs();
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("stale.toml");
    let text = "name = \"stale write-back\"\nclients = 2\nkeys = [\"note\"]\nlogic = '''\nif ARGV[1] == 'writer' then\n  redis.call('SET', KEYS[1], 'new')\n  return 'wrote'\nend\nlocal v = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], v .. '+mark')\nreturn v\n'''\nseed = { note = \"old\" }\n\n[[client]]\nargv = [\"reader\"]\n\n[[client]]\nargv = [\"writer\"]\n";
    std::fs::write(&path, text).unwrap();
    let mut h = Harness::new("", &[], &[], "");
    h.app.editor = evalbench::tui::editor::EditorState::new(text, Some(path));
    h.press("<F5>");
    for _ in 0..3000 {
        h.settle();
        if h.app.race_pending.is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(h.app.tab, Tab::Race);
    h.press("<A-z>");
    let screen = h.render(120, 40);
    assert!(
        screen
            .contains(r#"plain       1 sched. LOST   note: "old" → "old+mark"  1:"old" 2:"wrote""#),
        "{screen}"
    );
    assert!(
        screen.contains(
            r#"watch       5 sched. retry  note: "old" → "new+mark"  1:"new" (1 retry) 2:"wrote""#
        ),
        "{screen}"
    );
}
