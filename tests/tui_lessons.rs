//! Lessons in the workbench by keys (TestBackend): the picker, the task and hints in the Lesson
//! tab, a check failing then passing, reset asked first with the user's script kept in undo.
#![cfg(feature = "tui")]

mod common;

use evalbench::tui::app::{Confirm, Overlay, Tab};
use evalbench::tui::harness::Harness;

fn text(h: &Harness) -> String {
    h.app.editor.textarea.lines().join("\n")
}

/// Wait for a lesson check running on its thread (its answer is taken by housekeeping).
fn wait_for_check(h: &mut Harness) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while evalbench::tui::lessons::waiting(&h.app) {
        assert!(
            std::time::Instant::now() < deadline,
            "the check did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.settle();
    }
}

const LESSON_2_START: &str = include_str!("../samples/lessons/02-rate-limiter/start.lua");
const LESSON_2_SOLUTION: &str = include_str!("../samples/lessons/02-rate-limiter/solution.lua");

#[test]
fn a_lesson_from_the_picker_to_a_passing_check() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1", &[], &[], "");
    // Keys that need a lesson say how to open one.
    h.press("<A-c>");
    assert_eq!(h.app.status, "no lesson is open: Alt-L opens one");

    h.press("<A-l>");
    assert!(matches!(h.app.overlay, Some(Overlay::Lessons(0))));
    let screen = h.render(120, 40);
    assert!(
        screen.contains(" 1. An atomic counter with a window  (4 checks)"),
        "{screen}"
    );
    assert!(
        screen.contains(" 4. Take stock, never below zero  (6 checks)"),
        "{screen}"
    );
    h.keys("<Down> <Enter>");
    assert!(h.app.overlay.is_none());
    assert_eq!(text(&h), LESSON_2_START);
    assert_eq!(h.app.tab, Tab::Lesson);
    assert_eq!(h.app.inputs.keys_text(), "rl:alice");
    assert_eq!(h.app.inputs.argv_text(), "2 60");
    assert_eq!(
        h.app.status,
        "lesson 2: A fixed-window rate limiter — Alt-C checks your script, Alt-H shows a hint"
    );
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Lesson 2 of 4: A fixed-window rate limiter"),
        "{screen}"
    );
    assert!(
        screen.contains("0 of 3 hints shown (Alt-H shows the next)"),
        "{screen}"
    );

    // The starting script fails the checks, each failing case with what differs.
    h.press("<A-c>");
    wait_for_check(&mut h);
    assert_eq!(h.app.status, "0 of 4 checks pass");
    let screen = h.render(200, 60);
    assert!(
        screen.contains("FAIL the call past the limit is denied"),
        "{screen}"
    );
    assert!(
        screen.contains("step 2: expected (integer) 0, got (integer) 1"),
        "{screen}"
    );

    // Hints one at a time.
    h.press("<A-h>");
    assert_eq!(h.app.status, "hint 1 of 3 shown in the Lesson tab");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("Hint 1: INCR first, then compare"),
        "{screen}"
    );
    assert!(!screen.contains("Hint 2:"), "{screen}");

    // Write the solution; the check passes.
    h.press("<C-a>");
    h.paste(LESSON_2_SOLUTION);
    h.press("<A-c>");
    wait_for_check(&mut h);
    assert_eq!(h.app.status, "all 4 checks pass: lesson done");
    let screen = h.render(120, 40);
    assert!(
        screen.contains("ok   a new window allows again"),
        "{screen}"
    );

    // Reset asks; n keeps the script, y restores the start and Ctrl-Z brings the solution back.
    h.press("<A-r>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::ResetLesson))
    ));
    h.press("n");
    assert_eq!(text(&h), LESSON_2_SOLUTION);
    h.keys("<A-r> y");
    assert_eq!(text(&h), LESSON_2_START);
    assert_eq!(
        h.app.status,
        "back to the starting script (Ctrl-Z brings yours back)"
    );
    h.app.focus = evalbench::tui::app::Focus::Editor;
    h.press("<C-z>");
    assert_eq!(text(&h), LESSON_2_SOLUTION);
}

#[test]
fn opening_a_lesson_over_unsaved_changes_asks_first() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1", &[], &[], "");
    h.type_text("-- mine\n");
    assert!(h.app.editor.modified);
    h.keys("<A-l> <Enter>");
    assert!(matches!(
        h.app.overlay,
        Some(Overlay::Confirm(Confirm::OpenLesson(0)))
    ));
    h.press("n");
    assert_eq!(text(&h), "-- mine\nreturn 1");
    assert!(h.app.lesson.is_none());
    h.keys("<A-l> <Down> <Down> <Enter> y");
    assert_eq!(
        text(&h),
        include_str!("../samples/lessons/03-lock-release/start.lua")
    );
    assert_eq!(h.app.lesson.as_ref().unwrap().lesson.number, 3);
}

#[test]
fn the_task_names_the_check_key_and_esc_stops_a_check_that_never_ends() {
    common::isolate_app_dirs();
    let mut h = Harness::new("return 1", &[], &[], "");
    h.keys("<A-l> <Enter>");
    let screen = h.render(120, 40);
    assert!(screen.contains("Check with Alt-C (or"), "{screen}");
    assert!(!screen.contains("check key"), "{screen}");
    assert!(!screen.contains("{check}"), "{screen}");
    // A script that loops: Esc stops its check at once (before any run's own limit).
    h.app.lesson.as_mut().unwrap().run_limit_ms = 600_000;
    h.press("<C-a>");
    h.paste("while true do end");
    h.press("<A-c>");
    assert!(evalbench::tui::lessons::waiting(&h.app));
    assert_eq!(h.app.status, "checking… (Esc cancels)");
    let screen = h.render(120, 40);
    assert!(screen.contains("Checking… (Esc cancels)"), "{screen}");
    h.press("<Esc>");
    assert_eq!(h.app.status, "cancelling the check…");
    wait_for_check(&mut h);
    assert_eq!(h.app.status, "0 of 4 checks pass; cancelled");
    let screen = h.render(120, 40);
    assert!(screen.contains("stopped: cancelled"), "{screen}");
}

#[test]
fn alt_l_offers_the_lessons_of_the_configured_folder() {
    common::isolate_app_dirs();
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let lesson = dir.join("01-double");
    std::fs::create_dir_all(&lesson).unwrap();
    std::fs::write(
        lesson.join("lesson.toml"),
        "title = \"Double it\"\ntask = \"Return twice ARGV[1] as a number. Check with {check}.\"\n\n[[property]]\nname = \"twice any number\"\nvars = { n = [0, 20] }\ncheck = \"expect(run({}, {n}), 2 * n, 'twice ' .. n)\"\n",
    )
    .unwrap();
    std::fs::write(lesson.join("start.lua"), "return 0\n").unwrap();
    std::fs::write(
        lesson.join("solution.lua"),
        "return 2 * tonumber(ARGV[1])\n",
    )
    .unwrap();
    std::fs::write(
        lesson.join("solution.test.toml"),
        "[[case]]\nname = \"two\"\nargv = [\"1\"]\nreply = { int = 2 }\n",
    )
    .unwrap();
    let mut h = Harness::new("return 1", &[], &[], "");
    h.app.config.lessons_dir = Some(dir.clone());
    h.press("<A-l>");
    let screen = h.render(120, 40);
    assert!(screen.contains(" 1. Double it  (2 checks)"), "{screen}");
    h.press("<Enter>");
    assert_eq!(text(&h), "return 0\n");
    let screen = h.render(120, 40);
    assert!(screen.contains("Lesson 1 of 1: Double it"), "{screen}");
    assert!(screen.contains("Check with Alt-C."), "{screen}");
    h.press("<A-c>");
    wait_for_check(&mut h);
    assert_eq!(h.app.status, "0 of 2 checks pass");
    let screen = h.render(200, 60);
    assert!(screen.contains("when n = 1:"), "{screen}");
    assert!(
        screen.contains("twice 1: expected (integer) 2, got (integer) 0"),
        "{screen}"
    );
}
