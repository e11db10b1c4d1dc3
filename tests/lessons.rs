//! Lessons (issue 14): every lesson folder is bundled, its reference solution passes its checks
//! and its starting script fails them; `evalbench lesson list|show|check`.

use evalbench::engine::lessons;
use std::path::Path;
use std::process::{Command, Output};

fn evalbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evalbench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run evalbench")
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_lesson_folder_is_bundled_with_what_a_lesson_needs() {
    let all = lessons::all().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/lessons");
    let mut folders: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let bundled: Vec<&str> = all.iter().map(|l| l.slug).collect();
    assert_eq!(
        folders, bundled,
        "add each folder of samples/lessons to engine/lessons/bundled.rs"
    );
    assert!(all.len() >= 4);
    for l in &all {
        assert!(!l.title.is_empty() && !l.task.is_empty(), "{}", l.slug);
        assert!(l.hints.len() >= 2, "{}: hints", l.slug);
        assert!(l.checks.cases.len() >= 3, "{}: checks", l.slug);
        // What is bundled is what the folder holds.
        let on_disk = std::fs::read_to_string(dir.join(l.slug).join("start.lua")).unwrap();
        assert_eq!(on_disk, l.start);
    }
}

#[test]
fn each_solution_passes_its_checks_and_each_starting_script_fails_them() {
    for l in lessons::all().unwrap() {
        let solution = l.check(l.solution.as_bytes());
        assert!(
            solution.all_passed(),
            "{}: the solution fails:\n{:?}",
            l.slug,
            solution.lines()
        );
        // A reference solution is a model: it lints clean.
        let findings: Vec<String> = evalbench::engine::analysis::lint(l.solution)
            .into_iter()
            .map(|d| format!("{}:{} {}", d.line, d.column, d.rule))
            .collect();
        assert_eq!(
            findings,
            Vec::<String>::new(),
            "{}: solution.lua lint",
            l.slug
        );
        let start = l.check(l.start.as_bytes());
        assert!(
            !start.all_passed(),
            "{}: the starting script passes every check already",
            l.slug
        );
    }
}

#[test]
fn lesson_list_and_show() {
    let out = evalbench(&["lesson", "list"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout_of(&out),
        " 1  01-atomic-counter       An atomic counter with a window  (3 checks, 3 hints)
 2  02-rate-limiter         A fixed-window rate limiter  (3 checks, 3 hints)
 3  03-lock-release         Release a lock only if it is yours  (3 checks, 3 hints)
 4  04-stock-decrement      Take stock, never below zero  (4 checks, 3 hints)
"
    );
    let out = evalbench(&["lesson", "show", "lock-release", "--hints", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout_of(&out);
    assert!(
        text.starts_with("Lesson 3: Release a lock only if it is yours\n\nKEYS[1] is a lock"),
        "{text}"
    );
    assert!(
        text.contains("Starting script (start.lua):\n\n-- Lesson 3: release"),
        "{text}"
    );
    assert!(
        text.ends_with("Hint 1: GET the lock and compare it with ARGV[1] in the script: nothing runs between the GET and the DEL.\n(2 hints left: --hints 2)\n"),
        "{text}"
    );
    let out = evalbench(&["lesson", "show", "9"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "evalbench: no lesson 9: there are lessons 1 to 4 (evalbench lesson list)\n"
    );
}

#[test]
fn lesson_check_says_which_checks_fail_and_exits_1_until_all_pass() {
    let out = evalbench(&[
        "lesson",
        "check",
        "3",
        "samples/lessons/03-lock-release/start.lua",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_of(&out),
        "Lesson 3: Release a lock only if it is yours — samples/lessons/03-lock-release/start.lua
  ok   the owner releases its lock
  FAIL another owner's lock is kept
         expected reply {\"int\":0}, got reply {\"int\":1}
         key \"lock:orders\": expected {\"value\":\"tok-2\",\"type\":\"string\"}, but it does not exist
  ok   no lock: nothing to release
2 of 3 checks pass
"
    );
    let out = evalbench(&[
        "lesson",
        "check",
        "3",
        "samples/lessons/03-lock-release/solution.lua",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout_of(&out).ends_with("all 3 checks pass: lesson done\n"));
}
