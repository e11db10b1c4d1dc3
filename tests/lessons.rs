//! Lessons: every lesson folder is bundled, its reference solution passes its checks
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
    let bundled: Vec<&str> = all.iter().map(|l| l.slug.as_str()).collect();
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
        let on_disk = std::fs::read_to_string(dir.join(&l.slug).join("start.lua")).unwrap();
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
        let findings: Vec<String> = evalbench::engine::analysis::lint(&l.solution)
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
        " 1  01-atomic-counter       An atomic counter with a window  (4 checks, 3 hints)
 2  02-rate-limiter         A fixed-window rate limiter  (4 checks, 3 hints)
 3  03-lock-release         Release a lock only if it is yours  (4 checks, 3 hints)
 4  04-stock-decrement      Take stock, never below zero  (6 checks, 3 hints)
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
    // The task names the check key, not "the check key".
    let text = stdout_of(&evalbench(&["lesson", "show", "1"]));
    assert!(
        text.contains("Check with Alt-C in the workbench (or `evalbench lesson check 1 FILE`)"),
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
         expected (integer) 0, got (integer) 1
         with KEYS [\"lock:orders\"] ARGV [\"tok-1\"] seed {\"lock:orders\":{\"ttl_ms\":30000,\"type\":\"string\",\"value\":\"tok-2\"}}
         key \"lock:orders\": expected {\"value\":\"tok-2\",\"type\":\"string\"}, but it does not exist
  ok   no lock: nothing to release
  FAIL only the owner's token releases, any other lock is kept as it was (over 5 inputs)
         when caller = 1, expiring = 0, held = 1, owner = 2:
         another owner's lock: expected (integer) 0, got (integer) 1
         with KEYS [\"lock:orders\"] ARGV [\"tok-1\"] seed {\"lock:orders\":{\"type\":\"string\",\"value\":\"tok-2\"}}
2 of 4 checks pass
"
    );
    let out = evalbench(&[
        "lesson",
        "check",
        "3",
        "samples/lessons/03-lock-release/solution.lua",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout_of(&out).ends_with("all 4 checks pass: lesson done\n"));
}

/// For each lesson, plausible wrong solutions (each failing its checks) and different correct
/// ones (each passing them).
/// A lesson's number, its wrong solutions (what is wrong, the script) and its correct ones.
type Mutants = (
    usize,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

const MUTANTS: &[Mutants] = &[
    (
        1,
        &[
            (
                "read then write, no TTL",
                "local n = tonumber(redis.call('GET', KEYS[1]) or '0') + ARGV[1]\nredis.call('SET', KEYS[1], n)\nreturn n",
            ),
            (
                "the TTL set on every call: the window moves",
                "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nredis.call('EXPIRE', KEYS[1], ARGV[2])\nreturn n",
            ),
            (
                "adds one, not ARGV[1]",
                "local n = redis.call('INCR', KEYS[1])\nif n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn n",
            ),
            (
                "the TTL only when the count is ARGV[1]: a second call that equals it moves the window",
                "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n == tonumber(ARGV[1]) or n == 2 * tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn n",
            ),
            (
                "SET with EX on every call",
                "local n = tonumber(redis.call('GET', KEYS[1]) or '0') + ARGV[1]\nredis.call('SET', KEYS[1], n, 'EX', ARGV[2])\nreturn n",
            ),
        ],
        &[
            include_str!("../samples/lessons/01-atomic-counter/solution.lua"),
            "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n == tonumber(ARGV[1]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn n",
            "local existed = redis.call('EXISTS', KEYS[1]) == 1\nlocal n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif not existed then redis.call('PEXPIRE', KEYS[1], ARGV[2] * 1000) end\nreturn n",
            "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return tonumber(ARGV[1]) end\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])",
        ],
    ),
    (
        2,
        &[
            (
                "off by one: count >= limit",
                "local c = redis.call('INCR', KEYS[1])\nif c == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nif c >= tonumber(ARGV[1]) then return 0 end\nreturn 1",
            ),
            (
                "missing TTL",
                "local c = redis.call('INCR', KEYS[1])\nif c > tonumber(ARGV[1]) then return 0 end\nreturn 1",
            ),
            (
                "the TTL on every call: the window moves",
                "local c = redis.call('INCR', KEYS[1])\nredis.call('EXPIRE', KEYS[1], ARGV[2])\nif c > tonumber(ARGV[1]) then return 0 end\nreturn 1",
            ),
            (
                "string comparison",
                "local c = redis.call('INCR', KEYS[1])\nif c == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nif tostring(c) > ARGV[1] then return 0 end\nreturn 1",
            ),
            (
                "denies nothing",
                "local c = redis.call('INCR', KEYS[1])\nif c == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn 1",
            ),
        ],
        &[
            include_str!("../samples/lessons/02-rate-limiter/solution.lua"),
            // Does not count denied calls.
            "local c = tonumber(redis.call('GET', KEYS[1]) or '0')\nif c >= tonumber(ARGV[1]) then return 0 end\nif redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn 1",
            "local c = redis.call('INCR', KEYS[1])\nif redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end\nreturn c <= tonumber(ARGV[1]) and 1 or 0",
            "if redis.call('SET', KEYS[1], 1, 'NX', 'EX', ARGV[2]) then return 1 end\nif redis.call('INCR', KEYS[1]) > tonumber(ARGV[1]) then return 0 end\nreturn 1",
        ],
    ),
    (
        3,
        &[
            (
                "deletes any lock",
                "return redis.call('DEL', KEYS[1])",
            ),
            (
                "compares the other way",
                "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.call('DEL', KEYS[1]) end\nreturn 0",
            ),
            (
                "rewrites the lock it keeps, losing its TTL",
                "local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nif v then redis.call('SET', KEYS[1], v) end\nreturn 0",
            ),
            (
                "creates a lock when there is none",
                "local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nif not v then redis.call('SET', KEYS[1], 'free') end\nreturn 0",
            ),
        ],
        &[
            include_str!("../samples/lessons/03-lock-release/solution.lua"),
            "local v = redis.call('GET', KEYS[1])\nif v and v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end\nreturn 0",
            "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\nreturn redis.call('UNLINK', KEYS[1])",
            "local v = redis.call('GET', KEYS[1])\nif v ~= ARGV[1] then return 0 end\nredis.call('DEL', KEYS[1])\nreturn 1",
        ],
    ),
    (
        4,
        &[
            (
                "string comparison",
                "local s = redis.call('GET', KEYS[1]) or '0'\nif s < ARGV[1] then return -1 end\nreturn redis.call('DECRBY', KEYS[1], ARGV[1])",
            ),
            (
                "off by one: refuses the last units",
                "local s = tonumber(redis.call('GET', KEYS[1]) or '0')\nif s <= tonumber(ARGV[1]) then return -1 end\nreturn redis.call('DECRBY', KEYS[1], ARGV[1])",
            ),
            (
                "DECRBY first, undone when negative: a missing item is created",
                "local s = redis.call('DECRBY', KEYS[1], ARGV[1])\nif s < 0 then redis.call('INCRBY', KEYS[1], ARGV[1]) return -1 end\nreturn s",
            ),
            (
                "the read half of a read-then-write split in two scripts: nothing is taken",
                "local s = tonumber(redis.call('GET', KEYS[1]) or '0')\nif s < tonumber(ARGV[1]) then return -1 end\nreturn s - tonumber(ARGV[1])",
            ),
            (
                "takes one unit whatever is asked",
                "local s = tonumber(redis.call('GET', KEYS[1]) or '0')\nif s < tonumber(ARGV[1]) then return -1 end\nreturn redis.call('DECR', KEYS[1])",
            ),
        ],
        &[
            include_str!("../samples/lessons/04-stock-decrement/solution.lua"),
            "local s = tonumber(redis.call('GET', KEYS[1]))\nlocal q = tonumber(ARGV[1])\nif not s or s < q then return -1 end\nreturn redis.call('DECRBY', KEYS[1], q)",
            "local s = redis.call('GET', KEYS[1])\nif not s then return -1 end\nlocal left = tonumber(s) - tonumber(ARGV[1])\nif left < 0 then return -1 end\nredis.call('SET', KEYS[1], left)\nreturn left",
            "if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end\nlocal left = redis.call('DECRBY', KEYS[1], ARGV[1])\nif left < 0 then redis.call('INCRBY', KEYS[1], ARGV[1]) return -1 end\nreturn left",
        ],
    ),
];

#[test]
fn every_wrong_solution_fails_its_lesson_and_every_correct_one_passes() {
    let all = evalbench::engine::lessons::all().unwrap();
    for (number, wrong, right) in MUTANTS {
        let lesson = &all[number - 1];
        assert!(right.len() >= 3, "lesson {number}: three correct solutions");
        for (what, script) in *wrong {
            let result = lesson.check(script.as_bytes());
            assert!(
                !result.all_passed(),
                "lesson {number}: a wrong solution ({what}) passed:\n{script}"
            );
        }
        for script in *right {
            let result = lesson.check(script.as_bytes());
            let lines: Vec<String> = result.lines().into_iter().map(|(_, l)| l).collect();
            assert!(
                result.all_passed(),
                "lesson {number}: a correct solution failed:\n{script}\n{}",
                lines.join("\n")
            );
        }
    }
}

#[test]
fn a_property_failure_names_the_inputs_in_redis_cli_words() {
    let all = evalbench::engine::lessons::all().unwrap();
    // Stock 10, take 9: as strings "10" < "9", so the script refuses.
    let script = "local s = redis.call('GET', KEYS[1]) or '0'\nif s < ARGV[1] then return -1 end\nreturn redis.call('DECRBY', KEYS[1], ARGV[1])";
    let lines: Vec<String> = all[3]
        .check(script.as_bytes())
        .lines()
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(
        lines[4..8],
        [
            "FAIL never below zero, never more than asked: every stock 0..12, every quantity 1..12 (over 24 inputs)",
            "       when qty = 2, stock = 10:",
            "       enough stock: the stock left: expected (integer) 8, got (integer) -1",
            "       with KEYS [\"stock:sku-1\"] ARGV [\"2\"] seed {\"stock:sku-1\":{\"type\":\"string\",\"value\":\"10\"}}",
        ]
    );
}

#[test]
fn a_script_that_never_ends_is_stopped_and_the_check_says_so() {
    let all = evalbench::engine::lessons::all().unwrap();
    let control =
        evalbench::engine::lessons::CheckControl::new(std::time::Duration::from_secs(60), 200);
    let result = all[3].check_with(b"while true do end", &control);
    assert_eq!(result.cases.len(), 1);
    assert_eq!(
        result.stopped.as_deref(),
        Some("the script ran longer than 200 ms on \"enough stock: take it and return what is left\" and was stopped; the other checks were not run (a loop that never ends?)")
    );
    assert_eq!(
        result.summary(),
        "0 of 6 checks pass; the script ran longer than 200 ms on \"enough stock: take it and return what is left\" and was stopped; the other checks were not run (a loop that never ends?)"
    );
    // Cancelled from another thread: the run in progress ends, no other starts.
    let control = std::sync::Arc::new(evalbench::engine::lessons::CheckControl::new(
        std::time::Duration::from_secs(600),
        600_000,
    ));
    let stop = control.clone();
    let lesson = all[3].clone();
    let check = std::thread::spawn(move || lesson.check_with(b"while true do end", &control));
    // Cancel whenever it is: before the first run starts or during it, the check ends cancelled.
    stop.cancel();
    let result = check.join().unwrap();
    assert_eq!(result.stopped.as_deref(), Some("cancelled"));
    assert!(result.cases.is_empty());
}

#[test]
fn a_lesson_written_in_a_folder_of_its_own_is_listed_shown_and_checked() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    let lesson = dir.join("01-set-if-greater");
    std::fs::create_dir_all(&lesson).unwrap();
    std::fs::write(
        lesson.join("lesson.toml"),
        r#"title = "Keep the highest score"
task = "Set KEYS[1] to ARGV[1] only if it is greater than the score there; return the score kept. Check with {check}."
hints = ["tonumber() both sides", "a missing score counts as none"]

[[property]]
name = "the highest score is kept, as a number"
vars = { old = [0, 12], new = [0, 12] }
check = '''
seed('score', old)
local kept = math.max(old, new)
expect(run({'score'}, {new}), kept, 'the score kept')
expect(value('score'), tostring(kept), 'the key after')
'''
"#,
    )
    .unwrap();
    std::fs::write(
        lesson.join("start.lua"),
        "return redis.call('SET', KEYS[1], ARGV[1])\n",
    )
    .unwrap();
    let solution = "local old = tonumber(redis.call('GET', KEYS[1]) or '-1')\nlocal new = tonumber(ARGV[1])\nif new > old then redis.call('SET', KEYS[1], new) return new end\nreturn old\n";
    std::fs::write(lesson.join("solution.lua"), solution).unwrap();
    std::fs::write(
        lesson.join("solution.test.toml"),
        "[[case]]\nname = \"a higher score replaces\"\nkeys = [\"score\"]\nargv = [\"5\"]\nseed = { score = \"3\" }\nreply = { int = 5 }\n",
    )
    .unwrap();
    let root = dir.to_str().unwrap();
    let out = evalbench(&["lesson", "list", "--lessons", root]);
    assert_eq!(
        stdout_of(&out),
        " 1  01-set-if-greater       Keep the highest score  (2 checks, 2 hints)\n"
    );
    let out = evalbench(&["lesson", "show", "set-if-greater", "--lessons", root]);
    assert!(
        stdout_of(&out).contains("return the score kept. Check with Alt-C in the workbench."),
        "{}",
        stdout_of(&out)
    );
    let script = dir.join("mine.lua");
    // Compares strings: "10" < "9".
    std::fs::write(
        &script,
        "local old = redis.call('GET', KEYS[1]) or ''\nif ARGV[1] > old then redis.call('SET', KEYS[1], ARGV[1]) return tonumber(ARGV[1]) end\nreturn tonumber(old)\n",
    )
    .unwrap();
    let out = evalbench(&[
        "lesson",
        "check",
        "1",
        script.to_str().unwrap(),
        "--lessons",
        root,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_of(&out).contains("         when new = 2, old = 10:\n         the score kept: expected (integer) 10, got (integer) 2\n"),
        "{}",
        stdout_of(&out)
    );
    std::fs::write(&script, solution).unwrap();
    let out = evalbench(&[
        "lesson",
        "check",
        "1",
        script.to_str().unwrap(),
        "--lessons",
        root,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    // A folder missing a file says which.
    std::fs::remove_file(lesson.join("solution.lua")).unwrap();
    let out = evalbench(&["lesson", "list", "--lessons", root]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("01-set-if-greater/solution.lua: missing (a lesson folder holds lesson.toml, start.lua, solution.lua and solution.test.toml)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn lesson_new_writes_a_lesson_whose_solution_passes_and_whose_start_fails() {
    let tmp = tempfile::TempDir::new().unwrap();
    let class = tmp.path().join("class");
    let root = class.to_str().unwrap();
    let full = || std::fs::canonicalize(&class).unwrap().display().to_string();
    let out = evalbench(&["lesson", "new", "05-highest-score", "--dir", root]);
    let folder = class.join("05-highest-score");
    let shown = folder.display().to_string();
    assert_eq!(
        stdout_of(&out),
        format!(
            "wrote {shown}: lesson.toml (title, task, hints, properties), start.lua, solution.lua, solution.test.toml\n\
             edit them (docs/tools.md, \"Lessons\"), then check that the solution passes and the start does not:\n\
             \x20 evalbench lesson --lessons {root} check 05-highest-score {shown}/solution.lua\n\
             \x20 evalbench lesson --lessons {root} check 05-highest-score {shown}/start.lua\n\
             in the workbench: lessons_dir = \"{}\" in config.toml, then Alt-L\n",
            full()
        )
    );
    // The two commands it prints do what it says.
    let check = |file: &str| {
        evalbench(&[
            "lesson",
            "--lessons",
            root,
            "check",
            "05-highest-score",
            folder.join(file).to_str().unwrap(),
        ])
    };
    let out = check("solution.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    assert!(stdout_of(&out).ends_with("all 4 checks pass: lesson done\n"));
    let out = check("start.lua");
    assert_eq!(out.status.code(), Some(1), "{}", stdout_of(&out));
    assert!(
        stdout_of(&out).contains("         when new = 0, old = 1:\n         the score kept: expected (integer) 1, got (integer) 0\n"),
        "{}",
        stdout_of(&out)
    );
    let out = evalbench(&["lesson", "--lessons", root, "list"]);
    assert_eq!(
        stdout_of(&out),
        " 1  05-highest-score        Highest score  (4 checks, 2 hints)\n"
    );
    let out = evalbench(&["lesson", "--lessons", root, "show", "highest-score"]);
    assert!(
        stdout_of(&out).contains(
            "return the score kept, as a number. Check your script with Alt-C in the workbench."
        ),
        "{}",
        stdout_of(&out)
    );
    // Its checks are a test file `evalbench test` runs on the solution.
    let out = evalbench(&["test", folder.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout_of(&out));
    // Never over a lesson that exists, nor with a name that cannot be a folder.
    let out = evalbench(&["lesson", "new", "05-highest-score", "--dir", root]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("evalbench: {shown}: already exists; give another name, or remove it first\n")
    );
    let out = evalbench(&["lesson", "--lessons", root, "new", "a/b"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a/b: '/' cannot be in a lesson's name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
