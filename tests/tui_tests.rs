//! Tests in the workbench, by keys through the synchronous harness: the last run saved
//! as a new case of the script's `.test.toml` (Alt-T, name prefilled), the file's cases run on the
//! editor's text into the Tests tab (Ctrl-T), the diff of a failing case, and Enter loading a case's
//! KEYS, ARGV, seed and clock into the form. Screens are compared whole.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Focus, Tab};
use evalbench::tui::editor::EditorState;
use evalbench::tui::harness::Harness;

const COUNTER: &str = "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n > 3 then\n  return redis.error_reply('ERR over the cap')\nend\nreturn n\n";

/// A fresh folder per test (tests run in parallel).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("evalbench-tuitests-{name}-"))
        .tempdir()
        .unwrap()
}

/// The counter script saved as `counter.lua` in `dir`, open in the workbench with KEYS c, ARGV 2
/// and the seed c = 1.
fn counter(dir: &std::path::Path) -> Harness {
    common::isolate_app_dirs();
    let path = dir.join("counter.lua");
    std::fs::write(&path, COUNTER).unwrap();
    let mut h = Harness::new(COUNTER, &["c"], &["2"], r#"{"c": "1"}"#);
    h.app.editor = EditorState::new(COUNTER, Some(path));
    h
}

/// The right-hand panes of a 120x24 screen (from column 66, above the status bar), rows trimmed.
fn panes(h: &Harness) -> String {
    h.render(120, 24)
        .lines()
        .take(22)
        .map(|l| {
            l.chars()
                .skip(66)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn save_as_case_writes_the_run_and_the_tests_tab_shows_it_passing() {
    let dir_tmp = scratch("save");
    let dir = dir_tmp.path().to_path_buf();
    let mut h = counter(&dir);
    h.press("<A-t>");
    assert_eq!(
        h.app.status,
        "run the script first (F5): a case saves the run's KEYS, ARGV, seed and result"
    );
    h.press("<F5>");
    h.press("<A-t>");
    let prompt = h.render(120, 24);
    assert!(
        prompt.contains("Save the last run as a case of ") && prompt.contains("case 1"),
        "{prompt}"
    );
    h.type_text("adds to the seed").press("<Enter>");
    assert_eq!(h.effects, vec!["run", "tests"]);
    let test_path = dir.join("counter.test.toml");
    assert_eq!(
        std::fs::read_to_string(&test_path).unwrap(),
        "[[case]]\nname = \"adds to the seed\"\nkeys = [\"c\"]\nargv = [\"2\"]\nclock_ms = 1700000000000\nseed = { c = \"1\" }\nreply = { int = 3 }\nkeyspace = { c = \"3\" }\n"
    );
    assert_eq!(h.app.tab, Tab::Tests);
    assert_eq!(h.app.status, "tests: 1 passed, 0 failed");
    // A second case: the cap reached, an error reply; the name is suggested after the first.
    h.app.inputs = evalbench::tui::inputs::InputsState::from_lists(&["c".into()], &["9".into()]);
    h.press("<F5>").press("<A-t>");
    assert!(h.render(120, 24).contains("case 2"));
    h.type_text("over the cap").press("<Enter>");
    assert_eq!(h.app.status, "tests: 2 passed, 0 failed");
    assert!(std::fs::read_to_string(&test_path)
        .unwrap()
        .ends_with("\n\n[[case]]\nname = \"over the cap\"\nkeys = [\"c\"]\nargv = [\"9\"]\nclock_ms = 1700000000000\nseed = { c = \"1\" }\nerror = \"ERR over the cap\"\nkeyspace = { c = \"10\" }\n"));
    // The same name again is refused, nothing written.
    let before = std::fs::read_to_string(&test_path).unwrap();
    h.press("<A-t>").type_text("over the cap").press("<Enter>");
    assert_eq!(
        h.app.status,
        "not saved: a case named \"over the cap\" exists already: case names must differ"
    );
    assert_eq!(std::fs::read_to_string(&test_path).unwrap(), before);
    // The CLI agrees: the saved cases pass.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(["test", "counter.test.toml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_failing_case_shows_its_diff_and_enter_loads_it_into_the_form() {
    let dir_tmp = scratch("failing");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"counts\"\nkeys = [\"c\"]\nargv = [\"1\"]\nreply = { int = 1 }\n\n[[case]]\nname = \"capped\"\nkeys = [\"hits\"]\nargv = [\"2\"]\nseed = { hits = { type = \"string\", value = \"3\", ttl_ms = 5000 } }\nerror = \"ERR over the cap\"\n",
    )
    .unwrap();
    let mut h = counter(&dir);
    // The editor's text is tested, saved or not: the cap's message changed.
    let edited = COUNTER.replace("ERR over the cap", "ERR capped");
    h.app.editor = EditorState::new(&edited, Some(dir.join("counter.lua")));
    h.press("<C-t>");
    assert_eq!(h.app.status, "tests: 1 passed, 1 failed");
    assert_eq!(
        panes(&h),
        r#"1 Tra │ 2 Rep │ 3 Key │ 4 War │ 6 Deb │ 9 Tests
┏❯Tests counter.test.toml: 1 passed, 1 failed━━━━━━━━┓
┃ok    counts                                        ┃
┃FAIL  capped                                        ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┃                                                    ┃
┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
┌Case at line 7──────────────────────────────────────┐
│line 7: expected error "ERR over the cap", got error│
│"ERR capped"                                        │
│Enter loads its KEYS, ARGV and seed into the form   │
│                                                    │
│                                                    │
└────────────────────────────────────────────────────┘"#
    );
    // The lines the cases ran, counted in the editor's gutter (the cap's line once, by "capped").
    let screen = h.render(120, 24);
    let gutter: Vec<String> = screen
        .lines()
        .skip(1)
        .take(5)
        .map(|r| {
            r.chars()
                .take(40)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    assert_eq!(
        gutter,
        vec![
            "│   1    2 local n = redis.call('INCRBY'",
            "│   2    2 if n > 3 then",
            "│   3    1   return redis.error_reply('E",
            "│   4      end",
            "│   5    1 return n"
        ],
        "{screen}"
    );
    // The failing case is selected.
    assert_eq!(h.app.tests.list.selected, 1);
    h.press("<Enter>");
    assert_eq!(h.app.inputs.keys_text(), "hits");
    assert_eq!(h.app.inputs.argv_text(), "2");
    assert_eq!(
        h.app.status,
        "loaded case \"capped\" into the form: KEYS, ARGV, seed and clock; F5 runs it"
    );
    // The seed at the case's clock: the TTL counts from it.
    assert_eq!(
        h.app.seed_now_ms,
        evalbench::engine::testing::DEFAULT_CLOCK_MS
    );
    assert_eq!(
        evalbench::engine::keyspace::keyspace_to_json(&h.app.seed, h.app.seed_now_ms),
        serde_json::json!({"hits": {"type": "string", "value": "3", "ttl_ms": 5000}})
    );
    // Running it in the form gives what the test saw.
    h.press("<F5>");
    assert_eq!(
        h.app.last_run.as_ref().unwrap().report.reply.to_cli(),
        "(error) ERR capped"
    );
    // Up to the passing case: its detail.
    h.app.focus = Focus::Panes;
    h.app.tab = Tab::Tests;
    h.press("<Up>");
    assert!(panes(&h).contains("│passed (1 run)"), "{}", panes(&h));
}

#[test]
fn without_a_file_name_or_a_test_file_it_says_what_to_do() {
    common::isolate_app_dirs();
    let mut h = Harness::new(COUNTER, &["c"], &["1"], "");
    h.press("<C-t>");
    assert_eq!(
        h.app.status,
        "save the script first (Ctrl-S): its test file goes beside it"
    );
    h.press("<A-9>");
    assert_eq!(
        h.app.status,
        "no test results yet: Ctrl-T runs the script's test file"
    );
    let dir_tmp = scratch("none");
    let dir = dir_tmp.path().to_path_buf();
    let mut h = counter(&dir);
    h.press("<C-t>");
    assert_eq!(h.app.tab, Tab::Tests);
    assert!(panes(&h).contains("Tests counter.test.toml: could not run"));
    assert_eq!(
        h.app.tests.error.as_deref(),
        Some(
            format!(
                "{} does not exist: run the script and save the run as a case (Alt-T)",
                dir.join("counter.test.toml").display()
            )
            .as_str()
        )
    );
    // A mistake in the file is shown at its place.
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"a\"\nrepy = 1\n",
    )
    .unwrap();
    h.press("<C-t>");
    assert!(h.app.tests.error.as_deref().unwrap().starts_with(&format!(
        "{}:3:1: unknown field `repy`",
        dir.join("counter.test.toml").display()
    )));
}

/// Lint while typing: a lint that cannot end until the test lets it (a gate) runs while keys are
/// typed, so the test itself would hang if linting held up typing; its findings of the old text are
/// dropped, the new text is linted, and the finding shows in the gutter and in Warnings.
#[test]
fn lint_runs_off_the_ui_thread_and_typing_goes_on_while_it_runs() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    common::isolate_app_dirs();
    let mut h = Harness::new("local n = 1\nreturn n\n", &[], &[], "");
    let gate = Arc::new(AtomicBool::new(false));
    let lints = Arc::new(AtomicUsize::new(0));
    let (g, l) = (gate.clone(), lints.clone());
    h.app.lint.enabled = true;
    h.app.lint.idle = Duration::ZERO;
    h.app.lint.linter = Arc::new(move |text: &str, _profile, _keys| {
        l.fetch_add(1, Ordering::SeqCst);
        let waited = Instant::now();
        while !g.load(Ordering::SeqCst) && waited.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(1));
        }
        evalbench::engine::analysis::lint(text)
    });
    h.settle();
    assert_eq!(h.effects, vec!["lint"]);
    // The lint of the first text is held at the gate; typing goes on.
    h.keys("<Down> <Home>").type_text("x = 1\n");
    assert_eq!(h.app.editor.text(), "local n = 1\nx = 1\nreturn n\n");
    assert!(h.app.lint.diagnostics().is_empty());
    let waited = Instant::now();
    while lints.load(Ordering::SeqCst) == 0 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(1)); // its thread starting
    }
    h.settle();
    assert_eq!(lints.load(Ordering::SeqCst), 1, "one lint at a time");
    gate.store(true, Ordering::SeqCst);
    let sha = h.app.editor.sha1();
    let waited = Instant::now();
    while !h.app.lint.current(&sha) {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the lint never came"
        );
        std::thread::sleep(Duration::from_millis(2));
        h.settle();
    }
    // The old text's findings were dropped and the new text linted.
    assert_eq!(lints.load(Ordering::SeqCst), 2);
    let found: Vec<(&str, usize, usize)> = h
        .app
        .lint
        .diagnostics()
        .iter()
        .map(|d| (d.rule, d.line, d.column))
        .collect();
    assert_eq!(found, vec![("global-variable", 2, 1)]);
    let screen = h.render(120, 24);
    let editor_rows: Vec<&str> = screen.lines().skip(1).take(3).collect();
    assert_eq!(
        editor_rows
            .iter()
            .map(|r| r
                .chars()
                .take(16)
                .collect::<String>()
                .trim_end()
                .to_string())
            .collect::<Vec<_>>(),
        vec!["┃  1 local n = 1", "┃  2✗x = 1", "┃  3 return n"]
    );
    h.press("<A-4>");
    let shown: Vec<String> = panes(&h).lines().take(7).map(str::to_string).collect();
    assert_eq!(
        shown.join("\n"),
        r#"1 Tra │ 2 Rep │ 3 Key │ 4 Warnings (1) │ 6 Deb
┏❯Warnings━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃[lint error global-variable] line 2:1: `x` is a     ┃
┃global: Redis refuses it (Script attempted to create┃
┃global variable 'x')                                ┃
┃  fix: declare it `local` (functions too: `local    ┃
┃function f() ... end`)                              ┃"#
    );
}

#[test]
fn lint_waits_until_the_text_rests() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1\n", &[], &[], "");
    h.app.lint.enabled = true;
    h.app.lint.idle = std::time::Duration::from_secs(3600);
    h.type_text("x = 1\n");
    assert!(h.effects.is_empty(), "{:?}", h.effects);
    assert!(h.app.lint.busy(), "a lint is due");
    assert!(h.app.lint.diagnostics().is_empty());
}

#[test]
fn on_a_small_terminal_the_failing_case_shows_its_first_difference_under_the_list() {
    let dir_tmp = scratch("small");
    let dir = dir_tmp.path().to_path_buf();
    std::fs::write(
        dir.join("counter.test.toml"),
        "[[case]]\nname = \"capped\"\nkeys = [\"hits\"]\nargv = [\"2\"]\nseed = { hits = \"3\" }\nerror = \"ERR over the cap\"\n",
    )
    .unwrap();
    let mut h = counter(&dir);
    let edited = COUNTER.replace("ERR over the cap", "ERR capped");
    h.app.editor = EditorState::new(&edited, Some(dir.join("counter.lua")));
    h.press("<C-t>");
    assert_eq!(h.app.status, "tests: 0 passed, 1 failed");
    // At 80x24 the panes keep eight rows: the differences pane shows under the list.
    let screen = h.render(80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|l| l.contains("FAIL  capped"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert_eq!(
        rows[at + 3].trim_end(),
        "│line 1: expected error \"ERR over the cap\", got error \"ERR capped\"             │",
        "{screen}"
    );
}

/// The workbench lints with the run's KEYS (the sidecar's when the script is opened), as
/// `evalbench lint` and the language server do: KEYS[2] past one key is a finding, and gone once
/// the KEYS field holds two.
#[test]
fn lint_reads_the_keys_field_as_the_sidecars_keys() {
    use std::time::{Duration, Instant};
    common::isolate_app_dirs();
    let mut h = Harness::new(
        "local v = redis.call('GET', KEYS[2])\nreturn v\n",
        &["user:1"],
        &[],
        "",
    );
    h.app.lint.enabled = true;
    h.app.lint.idle = Duration::ZERO;
    let settled = |h: &mut Harness| {
        let waited = Instant::now();
        h.settle();
        while h.app.lint.busy() {
            assert!(
                waited.elapsed() < Duration::from_secs(30),
                "the lint never came"
            );
            std::thread::sleep(Duration::from_millis(2));
            h.settle();
        }
        h.app
            .lint
            .diagnostics()
            .iter()
            .map(|d| format!("{}:{} {}: {}", d.line, d.column, d.rule, d.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        settled(&mut h),
        vec!["1:29 undeclared-key: KEYS[2] is not declared: the sidecar passes 1 key (\"user:1\"), so KEYS[2] is nil"]
    );
    h.press("<A-4>");
    let shown: Vec<String> = panes(&h).lines().take(3).map(str::to_string).collect();
    assert_eq!(
        shown.join("\n"),
        "1 Tra │ 2 Rep │ 3 Key │ 4 Warnings (1) │ 6 Deb\n┏❯Warnings━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓\n┃[lint warning undeclared-key] line 1:29: KEYS[2] is ┃"
    );
    h.app.inputs = evalbench::tui::inputs::InputsState::from_lists(
        &["user:1".to_string(), "user:2".to_string()],
        &[],
    );
    assert_eq!(
        settled(&mut h),
        vec!["1:29 cross-slot: \"user:2\" hashes to slot 6777 and \"user:1\" to slot 10778: a Redis Cluster answers CROSSSLOT; give them one {hash tag}"]
    );
    h.app.inputs = evalbench::tui::inputs::InputsState::from_lists(
        &["{user}:1".to_string(), "{user}:2".to_string()],
        &[],
    );
    assert_eq!(settled(&mut h), Vec::<String>::new());
}
